/**
 * Start page: drop a trace (or pick one), watch it upload and ingest with a
 * real progress bar, or open one from the library. Dropping (or picking)
 * several files ingests each in turn and opens their comparison, the first
 * file as the baseline unless the user picks another.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, api } from '../api/client.ts';
import type { JobState, TraceRecord } from '../api/types.ts';
import { DropZone } from '../upload/drop_zone.tsx';
import { UploadStatus, ingestingState, progressOf, uploadingState, type Upload } from '../upload/upload_status.tsx';
import { viewStore } from '../state/view_store.ts';
import { desktopOpenDialog, onDesktopOpen } from '../desktop/desktop_bridge.ts';
import { formatBytes, formatCount } from '../time_axis/time_format.ts';
import { OutdatedModel } from './outdated_model.tsx';
import { OpenLinkBox } from '../links/open_link.tsx';
import { openCompare } from '../compare/compare_route.ts';
import { openFleet } from '../fleet/fleet_route.ts';
import type { FleetDatasetInfo } from '../../shared/contract/fleet.ts';

/** The fleet datasets the server was started with (serve --fleet DIR); nothing when there are none. */
function FleetList() {
  const [datasets, setDatasets] = useState<FleetDatasetInfo[]>([]);
  useEffect(() => {
    api.fleets().then(
      (r) => setDatasets(r.datasets),
      () => setDatasets([]),
    );
  }, []);
  if (datasets.length === 0) return null;
  return (
    <section className="library" data-testid="fleet-list">
      <h2>Fleet</h2>
      <ul>
        {datasets.map((d) => (
          <li key={d.name}>
            <a
              href={`?fleet=${encodeURIComponent(d.name)}`}
              data-testid="fleet-dataset"
              onClick={(e) => {
                e.preventDefault();
                openFleet({ name: d.name, by: null, baseline: null });
              }}
            >
              {d.name}
            </a>
            <span className="muted">
              {' '}
              {d.traces} traces{d.failures ? `, ${d.failures} failed` : ''}; labels: {d.labels.join(', ') || 'none'}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** One file of a multi-file drop: its upload's progress, then its trace (or its error). */
interface BatchItem {
  upload: Upload;
  traceId?: string;
}

/** Uploads a file and follows its job to the end: the trace id, or an Error whose message names the file. */
function ingestFile(file: File, onState: (u: Upload) => void, cancels: Set<() => void>): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const fail = (error: string) => reject(new Error(explain(error, file.name)));
    onState({ name: file.name, file, phase: 'uploading', fraction: 0, detail: formatBytes(file.size) });
    api
      .upload(file, (sent, total) => onState(uploadingState(file, sent, total)))
      .then(
        ({ jobId }) => {
          const cancel = api.followJob(
            jobId,
            (s) => {
              if (s.phase === 'failed') return fail(s.error ?? s.message ?? 'ingest failed');
              onState(ingestingState(file, s));
              if (s.phase === 'done') {
                cancels.delete(cancel);
                if (s.traceId) resolve(s.traceId);
                else fail('the server finished without a trace');
              }
            },
            fail,
            {
              onReconnecting: () =>
                onState({ name: file.name, file, phase: 'reconnecting', fraction: null, detail: '' }),
            },
          );
          cancels.add(cancel);
        },
        (e) => fail(e instanceof ApiError ? e.message : String(e)),
      );
  });
}

export function StartPage() {
  const [traces, setTraces] = useState<TraceRecord[] | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const [upload, setUpload] = useState<Upload | null>(null);
  /** Traces ticked for comparing, in the order ticked (the first is the baseline). */
  const [picked, setPicked] = useState<string[]>([]);
  const inputRef = useRef<HTMLInputElement>(null);
  const cancelRef = useRef<(() => void) | null>(null);

  const [jobs, setJobs] = useState<JobState[]>([]);
  /** A multi-file drop in progress (or finished with an error): one entry per file, in the order dropped. */
  const [batch, setBatch] = useState<BatchItem[] | null>(null);
  /** Which of the batch's files is the comparison's baseline (index into batch); a ref too, read when the last finishes. */
  const [baseline, setBaselineState] = useState(0);
  const baselineRef = useRef(0);
  const setBaseline = (i: number) => {
    baselineRef.current = i;
    setBaselineState(i);
  };
  const batchCancels = useRef(new Set<() => void>());
  const refresh = useCallback(() => {
    api.traces().then(
      (r) => {
        setTraces(r.traces);
        setJobs(r.jobs);
        setListError(null);
      },
      (e: Error) => setListError(e.message),
    );
  }, []);

  useEffect(() => {
    refresh();
    const cancels = batchCancels.current;
    return () => {
      cancelRef.current?.();
      for (const c of cancels) c();
    };
  }, [refresh]);

  // While something is ingesting (another tab, or this page was reloaded), keep the library fresh.
  const busy =
    (traces ?? []).some((t) => t.status === 'ingesting') ||
    jobs.some((j) => j.phase !== 'done' && j.phase !== 'failed');
  useEffect(() => {
    if (!busy) return;
    const id = setInterval(refresh, 2000);
    return () => clearInterval(id);
  }, [busy, refresh]);

  /** Follows an ingest job to its end: progress, then the trace (or the error). `file`: an upload's, to retry. */
  const follow = useCallback(
    (jobId: string, name: string, file?: File) => {
      const fail = (error: string) => {
        setUpload({ name, file, phase: 'failed', fraction: null, detail: '', error: explain(error, name) });
        refresh();
      };
      cancelRef.current = api.followJob(
        jobId,
        (s) => {
          if (s.phase === 'failed') return fail(s.error ?? s.message ?? 'ingest failed');
          const bytes = s.bytesTotal
            ? `${formatBytes(s.bytesDone)} of ${formatBytes(s.bytesTotal)}`
            : formatBytes(s.bytesDone);
          setUpload({
            name,
            file,
            phase: s.phase,
            fraction: progressOf(s),
            detail: `${s.events ? `${formatCount(s.events)} events · ` : ''}${s.phase === 'decoding' || s.phase === 'hashing' || s.phase === 'decompressing' ? bytes : ''}`,
          });
          if (s.phase === 'done' && s.traceId) {
            viewStore.update({ trace: s.traceId, t0: null, t1: null, sel: null }, { history: 'push' });
          }
        },
        fail,
        {
          onReconnecting: () =>
            setUpload((u) => (u && u.phase !== 'failed' ? { ...u, phase: 'reconnecting', fraction: null } : u)),
        },
      );
    },
    [refresh],
  );

  const start = useCallback(
    async (file: File) => {
      cancelRef.current?.();
      setBatch(null);
      setUpload({ name: file.name, file, phase: 'uploading', fraction: 0, detail: formatBytes(file.size) });
      try {
        const { jobId } = await api.upload(file, (sent, total) => setUpload(uploadingState(file, sent, total)));
        follow(jobId, file.name, file);
      } catch (e) {
        const error = e instanceof ApiError ? e.message : String(e);
        setUpload({
          name: file.name,
          file,
          phase: 'failed',
          fraction: null,
          detail: '',
          error: explain(error, file.name),
        });
        refresh();
      }
    },
    [follow, refresh],
  );

  /**
   * Several files: each is uploaded and ingested in turn (one at a time, so the
   * first finishes first and the machine is not asked for N ingests at once).
   * A file that fails is reported by name and the others go on; when every file
   * is in, the comparison opens; if some failed, the ones that made it can still
   * be compared (a button) and are in the library either way.
   */
  const startBatch = useCallback(
    async (files: File[]) => {
      cancelRef.current?.();
      setUpload(null);
      setBaseline(0);
      const items: BatchItem[] = files.map((f) => ({
        upload: { name: f.name, file: f, phase: 'uploading', fraction: 0, detail: 'waiting' },
      }));
      setBatch(items);
      const update = (i: number, patch: Partial<BatchItem>) => {
        items[i] = { ...items[i]!, ...patch };
        setBatch([...items]);
      };
      for (let i = 0; i < files.length; i++) {
        const file = files[i]!;
        try {
          const traceId = await ingestFile(file, (u) => update(i, { upload: u }), batchCancels.current);
          update(i, { traceId });
        } catch (e) {
          update(i, {
            upload: { name: file.name, file, phase: 'failed', fraction: null, detail: '', error: (e as Error).message },
          });
        }
      }
      refresh();
      if (items.every((it) => it.traceId)) openBatchCompare(items, baselineRef.current);
    },
    [refresh],
  );
  const startFiles = (files: File[]) => {
    if (files.length === 1) void start(files[0]!);
    else if (files.length > 1) void startBatch(files);
  };

  // Files the desktop window opens by path (app/desktop/desktop_bridge.ts): followed like uploads.
  useEffect(
    () =>
      onDesktopOpen((o) => {
        cancelRef.current?.();
        if (o.jobId === undefined)
          setUpload({ name: o.name, phase: 'failed', fraction: null, detail: '', error: explain(o.error, o.name) });
        else follow(o.jobId, o.name);
      }),
    [follow],
  );
  const choose = () => desktopOpenDialog() || inputRef.current?.click();

  const batchIn = batch?.filter((it) => it.traceId) ?? [];
  const batchDone = batch !== null && batch.every((it) => it.traceId || it.upload.phase === 'failed');

  return (
    <div className="start-page" data-testid="start-page">
      <header className="start-header">
        <h1>stallscope</h1>
        <p>
          Find memory-reclaim and scheduler stalls in Linux ftrace traces: trace.dat (trace-cmd record), trace-cmd
          report text or tracefs text, optionally gzip/zstd/xz-compressed.
        </p>
      </header>
      <DropZone
        testId="drop-zone"
        inputTestId="file-input"
        inputRef={inputRef}
        multiple
        onFiles={startFiles}
        onChoose={choose}
      >
        <div className="drop-title">Drop a trace file here</div>
        <div className="drop-sub">
          or <span className="link">choose a file</span> — multi-GB traces are fine; they stream to the server
        </div>
        <div className="drop-sub">Drop (or choose) two or more to compare them; the first is the baseline</div>
      </DropZone>
      {batch && (
        <section className="compare-batch" data-testid="compare-batch">
          <div className="muted">
            Comparing {batch.length} files
            {batchDone ? '' : ': each is added to the library in turn, then the comparison opens'}. Baseline:
          </div>
          {batch.map((it, i) => (
            <div
              key={i}
              className="compare-batch-file"
              data-testid="compare-batch-file"
              data-name={it.upload.name}
              data-trace-id={it.traceId ?? ''}
            >
              <label className="compare-batch-baseline">
                <input
                  type="radio"
                  name="compare-baseline"
                  data-testid="compare-batch-baseline"
                  aria-label={`baseline ${it.upload.name}`}
                  checked={baseline === i}
                  disabled={it.upload.phase === 'failed'}
                  onChange={() => setBaseline(i)}
                />
              </label>
              <UploadStatus upload={it.upload} onChoose={choose} />
            </div>
          ))}
          {batchDone && batchIn.length < batch.length && (
            <div className="compare-batch-actions">
              {batchIn.length >= 2 ? (
                <button data-testid="compare-batch-open" onClick={() => openBatchCompare(batch, baseline)}>
                  Compare the {batchIn.length} that were added
                </button>
              ) : (
                <span className="muted" data-testid="compare-batch-short">
                  Fewer than two files were added: nothing to compare.{' '}
                  {batchIn.length === 1 ? `${batchIn[0]!.upload.name} is in the library.` : ''}
                </span>
              )}
              <button onClick={() => setBatch(null)}>Dismiss</button>
            </div>
          )}
        </section>
      )}
      {upload && (
        <UploadStatus
          upload={upload}
          onRetry={upload.file && !isNotATrace(upload.error ?? '') ? () => void start(upload.file!) : undefined}
          onChoose={choose}
        />
      )}
      {!upload &&
        !batch &&
        jobs
          .filter((j) => j.phase !== 'done' && j.phase !== 'failed')
          .map((j) => (
            <UploadStatus
              key={j.jobId}
              upload={{
                name: j.name,
                phase: j.phase,
                fraction: progressOf(j),
                detail: j.events ? `${formatCount(j.events)} events` : '',
              }}
              onChoose={choose}
            />
          ))}
      <OpenLinkBox />
      <FleetList />
      <section className="library" data-testid="library">
        <h2>Library</h2>
        {listError && <div className="error">Could not load the library: {listError}</div>}
        {traces && traces.length === 0 && <div className="muted">No traces yet. Drop one above.</div>}
        {traces && traces.length > 0 && (
          <div className="library-compare">
            <button
              data-testid="compare-selected"
              disabled={picked.length < 2}
              onClick={() => openCompare(picked.map((id) => [id]))}
            >
              Compare {picked.length >= 2 ? picked.length : ''} selected
            </button>
            <span className="muted">tick two or more traces; the first ticked is the baseline</span>
          </div>
        )}
        {traces && traces.length > 0 && (
          <table className="library-table">
            <thead>
              <tr>
                <th aria-label="compare" />
                <th>Name</th>
                <th>Format</th>
                <th>Kernel</th>
                <th className="num">CPUs</th>
                <th className="num">Events</th>
                <th className="num">Size</th>
                <th>Findings</th>
                <th>Added</th>
              </tr>
            </thead>
            <tbody>
              {traces.map((t) => (
                <tr
                  key={t.id}
                  data-testid="library-row"
                  data-trace-id={t.id}
                  data-status={t.status}
                  className={t.status === 'ready' ? 'clickable' : 'inactive'}
                  onClick={() =>
                    t.status === 'ready' &&
                    viewStore.update({ trace: t.id, t0: null, t1: null, sel: null }, { history: 'push' })
                  }
                >
                  <td onClick={(e) => e.stopPropagation()}>
                    {t.status === 'ready' && (
                      <input
                        type="checkbox"
                        data-testid="compare-pick"
                        aria-label={`compare ${t.name}`}
                        checked={picked.includes(t.id)}
                        onChange={(e) =>
                          setPicked((p) => (e.target.checked ? [...p, t.id] : p.filter((x) => x !== t.id)))
                        }
                      />
                    )}
                  </td>
                  <td className="name">
                    {t.name}
                    {t.status !== 'ready' && (
                      <span className={`status ${t.status}`}>
                        {t.status}
                        {t.error ? `: ${t.error}` : ''}
                      </span>
                    )}
                    {t.status === 'ready' && t.outdated && <OutdatedModel record={t} />}
                  </td>
                  <td>
                    {t.format ?? ''}
                    {t.formatVersion ? ` v${t.formatVersion}` : ''}
                  </td>
                  <td>{t.kernel ?? ''}</td>
                  <td className="num">{t.status === 'ready' ? (t.cpus ?? '') : ''}</td>
                  <td className="num">{t.status === 'ready' ? formatCount(t.eventsTotal) : ''}</td>
                  <td className="num">{t.sizeBytes ? formatBytes(t.sizeBytes) : ''}</td>
                  <td>
                    {t.status === 'ready' &&
                      (t.findingsComputed === false ? (
                        <span
                          className="muted"
                          data-testid="findings-not-run"
                          title="The detectors run when the trace is first opened (it was ingested by the command line)"
                        >
                          not run yet
                        </span>
                      ) : (
                        <SeverityCounts counts={t.findingsBySeverity} />
                      ))}
                  </td>
                  <td className="muted">{t.addedAt ? new Date(t.addedAt).toLocaleString() : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}

/** Opens the comparison of a batch's added traces, in the order dropped with the baseline moved first. */
function openBatchCompare(items: BatchItem[], baseline: number): void {
  const ids = items.map((it) => it.traceId);
  const first = ids[baseline] ? [ids[baseline]!] : [];
  const rest = ids.filter((id, i): id is string => id !== undefined && i !== baseline);
  const order = [...first, ...rest];
  if (order.length >= 2) openCompare(order.map((id) => [id]));
}

/** The file itself is the problem: sending it again cannot help. */
function isNotATrace(message: string): boolean {
  return /not a trace|no (ftrace )?events|unknown format|unrecogni[sz]ed|not recogni[sz]ed|magic|not an? (ftrace|trace)|is empty|larger than the limit/i.test(
    message,
  );
}

function explain(message: string, name: string): string {
  if (
    /not a trace|no (ftrace )?events|unknown format|unrecogni[sz]ed|not recogni[sz]ed|magic|not an? (ftrace|trace)/i.test(
      message,
    )
  ) {
    return `${name} is not a trace stallscope can read. ${message}`;
  }
  return message;
}

export function SeverityCounts({ counts }: { counts: Record<'info' | 'warn' | 'critical', number> }) {
  return (
    <span className="sev-counts">
      {(['critical', 'warn', 'info'] as const).map((s) =>
        counts[s] ? (
          <span key={s} className={`sev-chip ${s}`} data-testid={`count-${s}`} title={`${counts[s]} ${s}`}>
            {counts[s]} {s}
          </span>
        ) : null,
      )}
      {!counts.critical && !counts.warn && !counts.info && <span className="muted">none</span>}
    </span>
  );
}
