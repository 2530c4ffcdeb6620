/**
 * A share link to a trace this stallscope does not have: the page says
 * exactly which file the link needs (from the facts its fragment carries:
 * name, size, sha256, format, kernel, recording time when known) and takes
 * that file by drop or file picker. The upload names the sha256 it must have
 * (`?expect=`): the server refuses any other file before ingesting it, and
 * the page shows both hashes. The right file is ingested and the linked view
 * opens, with the link's notes.
 *
 * The facts are only displayed: no path or URL from a link is ever read.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, api } from '../api/client.ts';
import { DropZone } from '../upload/drop_zone.tsx';
import { UploadStatus, ingestingState, uploadingState, type Upload } from '../upload/upload_status.tsx';
import { viewStore } from '../state/view_store.ts';
import { EMPTY_VIEW } from '../state/view_state.ts';
import { formatBytes, formatCount } from '../time_axis/time_format.ts';
import { useLink } from './link_state.ts';

interface Refusal {
  name: string;
  actual: string;
  message: string;
}

export function MissingTrace({ traceId, onReady }: { traceId: string; onReady(): void }) {
  const facts = useLink((s) => (s.status === 'ok' && s.payload?.trace.sha256 === traceId ? s.payload.trace : null));
  const reading = useLink((s) => s.status === 'reading');
  const [upload, setUpload] = useState<Upload | null>(null);
  const [refused, setRefused] = useState<Refusal | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const cancelRef = useRef<(() => void) | null>(null);
  useEffect(() => () => cancelRef.current?.(), []);

  const start = useCallback(
    async (file: File) => {
      cancelRef.current?.();
      setRefused(null);
      const fail = (error: string) =>
        setUpload({ name: file.name, file, phase: 'failed', fraction: null, detail: '', error });
      setUpload({ name: file.name, file, phase: 'uploading', fraction: 0, detail: formatBytes(file.size) });
      try {
        const { jobId } = await api.upload(file, (sent, total) => setUpload(uploadingState(file, sent, total)), {
          expectSha256: traceId,
        });
        cancelRef.current = api.followJob(
          jobId,
          (s) => {
            if (s.phase === 'failed') return fail(s.error ?? s.message ?? 'ingest failed');
            setUpload(ingestingState(file, s));
            if (s.phase === 'done') {
              if (s.traceId === traceId) onReady();
              else fail(`the server ingested it as trace ${s.traceId ?? '?'}, not ${traceId}`);
            }
          },
          fail,
        );
      } catch (e) {
        const body = (e as ApiError).body as { actual?: string } | null;
        if (e instanceof ApiError && e.status === 409 && body?.actual) {
          setUpload(null);
          setRefused({ name: file.name, actual: body.actual, message: e.message });
          return;
        }
        fail(e instanceof ApiError ? e.message : String(e));
      }
    },
    [traceId, onReady],
  );

  const name = facts?.name ?? 'the trace file';
  return (
    <div className="missing-trace start-page" data-testid="missing-trace" data-trace-id={traceId}>
      <header className="start-header">
        <h1>This link needs a trace you do not have here yet</h1>
        <p>
          The link opens a view of a trace that is not in this stallscope's library.
          {facts
            ? ' Add this exact file (it is recognised by its content, whatever its name):'
            : ' It names the trace only by its content hash:'}
        </p>
      </header>
      <table className="trace-facts-table" data-testid="missing-trace-facts">
        <tbody>
          {facts && (
            <tr>
              <th>File</th>
              <td data-testid="missing-name">{facts.name}</td>
            </tr>
          )}
          {facts && (
            <tr>
              <th>Size</th>
              <td data-testid="missing-size">
                {formatBytes(facts.size)} ({facts.size.toLocaleString('en')} bytes)
              </td>
            </tr>
          )}
          <tr>
            <th>sha256</th>
            <td>
              <code data-testid="missing-sha256">{traceId}</code>
            </td>
          </tr>
          {facts?.format && (
            <tr>
              <th>Format</th>
              <td>{facts.format}</td>
            </tr>
          )}
          {facts?.kernel && (
            <tr>
              <th>Kernel</th>
              <td data-testid="missing-kernel">{facts.kernel}</td>
            </tr>
          )}
          {facts?.cpus != null && (
            <tr>
              <th>CPUs</th>
              <td>{facts.cpus}</td>
            </tr>
          )}
          {facts?.events != null && (
            <tr>
              <th>Events</th>
              <td>{formatCount(facts.events)}</td>
            </tr>
          )}
          <tr>
            <th>Recorded</th>
            <td data-testid="missing-recorded">
              {facts?.recorded ? (
                new Date(facts.recorded)
                  .toISOString()
                  .replace('T', ' ')
                  .replace(/\.\d+Z$/, ' UTC')
              ) : (
                <span className="muted">not known (the file does not say)</span>
              )}
            </td>
          </tr>
        </tbody>
      </table>
      {!facts && !reading && (
        <p className="muted" data-testid="missing-no-facts">
          The link does not say more about the file (it was made by an older stallscope, or its notes could not be
          read): any file with this sha256 opens it.
        </p>
      )}
      <DropZone
        testId="missing-drop-zone"
        inputTestId="missing-file-input"
        inputRef={inputRef}
        onFiles={(files) => void start(files[0]!)}
        onChoose={() => inputRef.current?.click()}
      >
        <div className="drop-title">Drop {name} here</div>
        <div className="drop-sub">
          or <span className="link">choose it</span> — it is checked against the sha256 above before anything is added
        </div>
      </DropZone>
      {refused && (
        <div className="upload-status failed" data-testid="missing-refused" role="alert">
          <strong>Refused: {refused.name} is not the trace this link needs.</strong> Nothing was added to the library.
          <table className="trace-facts-table">
            <tbody>
              <tr>
                <th>{refused.name}</th>
                <td>
                  <code data-testid="refused-actual">{refused.actual}</code>
                </td>
              </tr>
              <tr>
                <th>The link needs</th>
                <td>
                  <code data-testid="refused-expected">{traceId}</code>
                </td>
              </tr>
            </tbody>
          </table>
        </div>
      )}
      {upload && (
        <UploadStatus
          upload={upload}
          onRetry={upload.file ? () => void start(upload.file!) : undefined}
          onChoose={() => inputRef.current?.click()}
        />
      )}
      <p className="muted">
        From a shell: <code>stallscope open '&lt;this link&gt;' path/to/{facts?.name ?? 'trace.dat'}</code> checks the
        file, adds it and opens this view.
      </p>
      <button data-testid="missing-back" onClick={() => viewStore.update({ ...EMPTY_VIEW }, { history: 'push' })}>
        Back to the library
      </button>
    </div>
  );
}
