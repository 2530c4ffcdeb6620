/**
 * "Open in Perfetto": the trace with stallscope's findings and notes as a
 * Perfetto trace (GET /api/traces/:id/export.perfetto-trace,
 * server/export/perfetto/).
 *
 * - "Perfetto trace" downloads the file (ui.perfetto.dev's "Open trace
 *   file", or trace_processor_shell, read it).
 * - "Open in Perfetto" opens ui.perfetto.dev and hands it the file with the
 *   protocol Perfetto documents for opening a trace from another page:
 *   post 'PING' until the UI answers 'PONG', then post
 *   {perfetto: {buffer, title, url}}. Where the UI cannot be reached (an
 *   air-gapped network, a blocked pop-up) no PONG comes: the file is
 *   downloaded instead and the button says so.
 */
import { useState } from 'react';

export const PERFETTO_UI_ORIGIN = 'https://ui.perfetto.dev';
/** How long the UI gets to answer PING before we give up and download. */
const PONG_TIMEOUT_MS = 15_000;

async function fetchExport(traceId: string): Promise<{ buffer: ArrayBuffer; name: string }> {
  const res = await fetch(`/api/traces/${encodeURIComponent(traceId)}/export.perfetto-trace`);
  if (!res.ok)
    throw new Error(((await res.json().catch(() => null)) as { error?: string } | null)?.error ?? `HTTP ${res.status}`);
  const name =
    /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'stallscope.perfetto-trace';
  return { buffer: await res.arrayBuffer(), name };
}

function saveFile(buffer: ArrayBuffer, name: string): void {
  const url = URL.createObjectURL(new Blob([buffer], { type: 'application/octet-stream' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * Hands a trace to a Perfetto UI window: PING every 100 ms until it answers
 * PONG (only messages from that window and origin count), then posts the
 * buffer. Resolves true once posted, false on timeout or a closed window.
 */
export function postToPerfettoUi(
  win: Window,
  buffer: ArrayBuffer,
  title: string,
  url: string,
  origin = PERFETTO_UI_ORIGIN,
  timeoutMs = PONG_TIMEOUT_MS,
): Promise<boolean> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      clearInterval(ping);
      clearTimeout(timer);
      window.removeEventListener('message', onMessage);
      resolve(ok);
    };
    const onMessage = (e: MessageEvent) => {
      if (e.origin !== origin || e.source !== win || e.data !== 'PONG') return;
      win.postMessage({ perfetto: { buffer, title, url } }, origin);
      finish(true);
    };
    window.addEventListener('message', onMessage);
    const ping = setInterval(() => {
      if (win.closed) return finish(false);
      win.postMessage('PING', origin);
    }, 100);
    const timer = setTimeout(() => finish(false), timeoutMs);
  });
}

export function OpenInPerfetto({ traceId, title }: { traceId: string; title: string }) {
  const [status, setStatus] = useState<string | null>(null);

  const download = async () => {
    setStatus('exporting…');
    try {
      const { buffer, name } = await fetchExport(traceId);
      saveFile(buffer, name);
      setStatus(null);
    } catch (e) {
      setStatus(`export failed: ${(e as Error).message}`);
    }
  };

  const open = async () => {
    // Opened in the click itself, before any await: pop-up blockers allow that.
    const win = window.open(PERFETTO_UI_ORIGIN, '_blank');
    setStatus('exporting…');
    try {
      const { buffer, name } = await fetchExport(traceId);
      if (!win) {
        saveFile(buffer, name);
        setStatus('pop-up blocked: downloaded instead');
        return;
      }
      setStatus('waiting for ui.perfetto.dev…');
      const ok = await postToPerfettoUi(win, buffer, `stallscope: ${title}`, location.href);
      if (ok) setStatus(null);
      else {
        saveFile(buffer, name);
        setStatus('ui.perfetto.dev did not answer: downloaded instead');
      }
    } catch (e) {
      setStatus(`export failed: ${(e as Error).message}`);
    }
  };

  return (
    <span className="open-in-perfetto" data-testid="open-in-perfetto">
      <button
        className="link"
        onClick={download}
        data-testid="export-perfetto"
        title="The trace with its findings and notes as a Perfetto trace file"
      >
        Perfetto trace
      </button>
      <button
        className="link"
        onClick={open}
        data-testid="open-perfetto"
        title="Open the trace with its findings in ui.perfetto.dev"
      >
        Open in Perfetto
      </button>
      {status && (
        <span className="muted" data-testid="perfetto-status">
          {status}
        </span>
      )}
    </span>
  );
}
