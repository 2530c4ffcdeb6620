/**
 * The trace library: every trace in a data directory, plus the ingests in
 * flight. Used by the HTTP server and `stallscope open`.
 *
 * The directory is the truth: a trace is listed as ready only when
 * `traces/<sha>/info.json` exists, which ingest writes last. Ingests in
 * flight and failed ones live in memory (a restart forgets them, and
 * removeStaleWork() deletes their half-built files).
 */
import { SAMPLES_FILE, type TraceSamples, writeSamplesFile } from '../findings/samples.ts';
import { renameSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Engine, ReleasableEngine } from '../engine/engine.ts';
import { jsSafe, openReleasable, READ_ENGINE_THREADS } from '../engine/engine.ts';
import type { Finding } from '../findings/finding.ts';
import type { TraceRecord as WireTraceRecord } from '../../shared/contract/library.ts';
import type { IngestProgress } from '../../shared/contract/api.ts';
import { builtinDetectorsStamp, loadDetectors } from '../findings/detector_registry.ts';
import { type DetectorsAhead, runDetectors, type RunResult } from '../findings/run_detectors.ts';
import { userDetectorDir, userDetectorsStamp } from '../query/user_detectors.ts';
import { MODEL_VERSION, modelVersionOf } from '../model/model_version.ts';
import { dataDirPaths, isTraceId, removeStaleWork, type DataDirPaths } from './data_dir.ts';
import { collectGarbage, freedPagesKept } from './ingest_memory.ts';
import { keepingFreedPages } from '../engine/allocator_decay.ts';
import { hashFile, ingestFile, readSummary, type TraceSummary } from './ingest_file.ts';

/**
 * DuckDB's cap for a trace's read-only engine (the detectors and, beside
 * them, an upload's first view), with a directory to spill to. DuckDB's
 * default is 80% of the machine's memory, and on a large trace the buffer
 * pool grew with the trace while the upload's detectors and overview parts
 * ran side by side: that 'detecting' phase was the upload's peak,
 * many_systems.x10.v7 (10M events) 346-362 MB. With 64MB it is 295-315 and
 * the upload's peak is decoding's again (322-330 MB); 48MB cost 6-15% of
 * the detectors' CPU, 128MB gained nothing. A 1M-event trace's first view
 * takes the same CPU. A statement that cannot run within the cap (an
 * operator that cannot spill) runs again without it (liftCapOnOutOfMemory).
 * Measurements: issue-29xp note. $STALLSCOPE_READ_MEMORY overrides (a
 * DuckDB size).
 */
export const READ_ENGINE_MEMORY_LIMIT = process.env.STALLSCOPE_READ_MEMORY ?? '64MB';

/**
 * The ingest's phases and the library's own (detecting, failed): the
 * contract's IngestProgress, with the trace's id from 'detecting' on (its
 * model is in the library; JobState.traceId).
 */
export type LibraryProgress = IngestProgress & { traceId?: string };

/**
 * A trace of the library: the wire record (shared/contract/library.ts) with
 * every field the library always fills required (a failed ingest's record
 * has format '' and 0 cpus).
 */
export type TraceRecord = WireTraceRecord &
  Required<
    Pick<
      WireTraceRecord,
      | 'formatVersion'
      | 'kernel'
      | 'findingsComputed'
      | 'modelVersion'
      | 'outdated'
      | 'lostEvents'
      | 'lostEventNotices'
      | 'skippedInputs'
      | 'firstSkipped'
      | 'cutOff'
    >
  > & { format: string; cpus: number };

export interface FindingsFile {
  /** The built-in detectors it was computed with (builtinDetectorsStamp); absent in older files. */
  detectors?: string;
  findings: Finding[];
  summaries: Record<string, unknown[]>;
  timings: Record<string, number>;
  /** server/findings/run_detectors.ts RunResult's metrics, detectors (as `runs`) and overview. */
  metrics?: RunResult['metrics'];
  runs?: RunResult['detectors'];
  overview?: RunResult['overview'];
}

export interface IngestJob {
  jobId: string;
  name: string;
  traceId: string | null;
  progress: LibraryProgress;
  done: Promise<TraceRecord>;
  listeners: Set<(p: LibraryProgress, record?: TraceRecord) => void>;
}

export class TraceLibrary {
  private readonly engines = new Map<string, Promise<ReleasableEngine>>();
  private readonly jobs = new Map<string, IngestJob>();
  private readonly failed = new Map<string, TraceRecord>();
  private readonly findingsRuns = new Map<string, Promise<FindingsFile>>();
  /** samples.bin writes still under way, per trace: the findings (and an upload's done) do not wait for them. */
  private readonly samplesWrites = new Map<string, Promise<void>>();
  private jobCounter = 0;
  private engineCounter = 0;
  private readonly replacedListeners = new Set<(id: string) => void>();
  private detectorsStamp: Promise<string> | null = null;

  private constructor(readonly paths: DataDirPaths) {}

  static async open(dataDir: string): Promise<TraceLibrary> {
    const paths = dataDirPaths(dataDir);
    await fs.mkdir(paths.traces, { recursive: true });
    await fs.mkdir(paths.tmp, { recursive: true });
    await removeStaleWork(dataDir);
    const library = new TraceLibrary(paths);
    // Read now (~20 ms of hashing the files), not when the first upload's detectors are about to run.
    library.detectorsStamp = builtinDetectorsStamp();
    library.detectorsStamp.catch(() => undefined);
    // Read and validated now too (once per process: detector_registry.ts), not at the first upload's detector run,
    // where it was on the way to its first view. A failure is not kept: that run reads them again and reports it.
    loadDetectors().catch(() => undefined);
    return library;
  }

  /** Ready traces (newest first), then ingests in flight and failures. */
  async list(): Promise<TraceRecord[]> {
    const ids = (await fs.readdir(this.paths.traces)).filter(isTraceId);
    const ready: TraceRecord[] = [];
    for (const id of ids) {
      const r = await this.get(id);
      if (r) ready.push(r);
    }
    ready.sort((a, b) => b.addedAt.localeCompare(a.addedAt));
    const jobs = [...this.jobs.values()];
    // A job running its detectors has its model in place already: list it
    // once, as the job, until its findings are ready too.
    const detecting = new Set(jobs.map((j) => j.traceId).filter((id) => id !== null));
    const inFlight = jobs.map((j) => this.jobRecord(j));
    return [...inFlight, ...ready.filter((r) => !detecting.has(r.id)), ...this.failed.values()];
  }

  async get(id: string): Promise<TraceRecord | null> {
    if (!isTraceId(id)) return null;
    const summary = await readSummary(this.paths.traceDir(id));
    if (!summary) return null;
    const findings = await this.readFindingsFile(id);
    return toRecord(summary, findings);
  }

  getJob(jobId: string): IngestJob | undefined {
    return this.jobs.get(jobId) ?? [...this.jobs.values()].find((j) => j.traceId === jobId);
  }

  /**
   * Starts ingesting a file in the background; returns at once with a job
   * whose `done` settles with the ready record. `deleteAfter` removes the
   * file when done (uploads).
   */
  startIngest(
    file: string,
    opts: {
      name: string;
      deleteAfter?: boolean;
      contentSha256?: string;
      /** With the trace's id and the threads its findings name, as soon as the detectors found them (RunOptions). */
      onFindingThreads?: (traceId: string, utids: number[]) => void;
    },
  ): IngestJob {
    const jobId = `job-${Date.now().toString(36)}-${(this.jobCounter++).toString(36)}`;
    const job: IngestJob = {
      jobId,
      name: opts.name,
      traceId: null,
      progress: { phase: 'hashing', bytesDone: 0, bytesTotal: null, events: 0 },
      listeners: new Set(),
      done: Promise.resolve(null as unknown as TraceRecord),
    };
    const emit = (p: LibraryProgress, record?: TraceRecord) => {
      job.progress = p;
      for (const l of job.listeners) l(p, record);
    };
    this.jobs.set(jobId, job);
    job.done = (async () => {
      let keepFreedPages = () => {};
      try {
        let placed: LibraryProgress | null = null;
        this.releaseIdleEngines();
        // What the engines and the API's trimmed caches (routes/traces.ts LOADING_CACHE_BUDGETS) held is garbage now: gone before the decode's peak.
        collectGarbage();
        const result = await ingestFile(file, {
          dataDir: this.paths.root,
          name: opts.name,
          contentSha256: opts.contentSha256,
          // Its detectors run next: those that read none of derive's tables run beside derive.
          detectorsBesideDerive: true,
          onProgress: (p) => {
            // Again at each phase: an engine in use when the ingest began (a view of another trace) may be idle now.
            if (p.phase !== job.progress.phase) this.releaseIdleEngines();
            if (p.phase === 'done') placed = p;
            else emit(p);
          },
        });
        job.traceId = result.id;
        // DuckDB's freed pages stay a second through this upload's detectors and first view, not for a
        // large trace (engine/allocator_decay.ts, ingest_memory.ts freedPagesKept).
        if (freedPagesKept(result.summary.eventsTotal)) keepFreedPages = keepingFreedPages();
        // A model another version built was replaced: an engine here may
        // still have the old (unlinked) database open.
        if (result.replacedModelVersion !== undefined) await this.forget(result.id);
        // Only now with its id: what opens the trace (a first view's summaries, routes/traces.ts) opens the new model.
        emit({ ...(placed ?? job.progress), phase: 'detecting', traceId: result.id });
        const findingsStarted = performance.now();
        const findings = await this.findings(
          result.id,
          opts.onFindingThreads && ((utids) => opts.onFindingThreads!(result.id, utids)),
          result.detectorsAhead ?? undefined,
        );
        if (process.env.STALLSCOPE_TIMING)
          process.stderr.write(`[timing] findings ${(performance.now() - findingsStarted).toFixed(0)} ms\n`);
        // From what is in memory (the summary ingestFile wrote or found, the findings just written): reading
        // info.json and findings.json back queues behind the first view's DuckDB queries on libuv's threads
        // (2-250 ms under load, bench/README.md).
        const record = toRecord(result.summary, findings);
        emit(
          { phase: 'done', bytesDone: record.sizeBytes, bytesTotal: record.sizeBytes, events: record.eventsTotal },
          record,
        );
        return record;
      } catch (err) {
        const message = (err as Error).message;
        const record = failedRecord(jobId, opts.name, message);
        this.failed.set(jobId, record);
        emit({ ...job.progress, phase: 'failed', message }, record);
        throw err;
      } finally {
        keepFreedPages();
        this.jobs.delete(jobId);
        if (opts.deleteAfter) await fs.rm(file, { force: true });
      }
    })();
    job.done.catch(() => undefined);
    return job;
  }

  /** Ingests and waits (the CLI's `open`). */
  async ingest(
    file: string,
    opts: {
      name?: string;
      contentSha256?: string;
      onProgress?: (p: LibraryProgress) => void;
      onFindingThreads?: (traceId: string, utids: number[]) => void;
    } = {},
  ): Promise<TraceRecord> {
    const job = this.startIngest(file, {
      name: opts.name ?? path.basename(file),
      contentSha256: opts.contentSha256,
      onFindingThreads: opts.onFindingThreads,
    });
    if (opts.onProgress) job.listeners.add(opts.onProgress);
    return job.done;
  }

  /** A read-only engine over a ready trace (shared, cached). */
  openEngine(id: string): Promise<Engine> {
    let engine = this.engines.get(id);
    if (!engine) {
      const dbPath = path.join(this.paths.traceDir(id), 'trace.duckdb');
      // No external access: the detectors this engine runs include the user's own (saved from the query page).
      engine = openReleasable(dbPath, {
        readOnly: true,
        noExternalAccess: true,
        threads: READ_ENGINE_THREADS,
        memoryLimit: READ_ENGINE_MEMORY_LIMIT,
        liftCapOnOutOfMemory: true,
        // Named with this process's pid: removeStaleWork deletes it if the process dies with it in use.
        tempDirectory: path.join(this.paths.tmp, `read-${process.pid}-${(this.engineCounter++).toString(36)}`),
      });
      engine.catch(() => this.engines.delete(id));
      this.engines.set(id, engine);
    }
    return engine;
  }

  /**
   * Closes the read engines nobody is querying (they open again at their next
   * query): an ingest's peak RSS then does not carry the traces opened before
   * it (issue 29, "whatever was opened before").
   */
  private releaseIdleEngines(): void {
    for (const e of this.engines.values())
      e.then(
        (engine) => engine.releaseIfIdle(),
        () => undefined,
      );
  }

  /**
   * Called with a trace's id when an ingest replaced its model, so caches
   * over the old one (the API's engines and overviews) can be dropped.
   */
  onTraceReplaced(listener: (id: string) => void): void {
    this.replacedListeners.add(listener);
  }

  private async forget(id: string): Promise<void> {
    const engine = this.engines.get(id);
    this.engines.delete(id);
    for (const l of this.replacedListeners) l(id);
    // close() waits for the queries still running on it.
    (await engine?.catch(() => null))?.close();
  }

  /**
   * Detector output for a trace, computed once and cached in findings.json;
   * computed again when the built-in detectors changed since (an upgrade).
   * `onFindingThreads`, `ahead`: see RunOptions (used only by a run this call starts).
   */
  async findings(
    id: string,
    onFindingThreads?: (utids: number[]) => void,
    ahead?: DetectorsAhead,
  ): Promise<FindingsFile> {
    const cached = await this.readFindingsFile(id);
    if (cached && cached.detectors === (await this.currentDetectors())) return cached;
    // Concurrent callers (two uploads of the same content) share one run.
    let running = this.findingsRuns.get(id);
    if (!running) {
      running = this.computeFindings(id, onFindingThreads, ahead).finally(() => this.findingsRuns.delete(id));
      this.findingsRuns.set(id, running);
    }
    return running;
  }

  /**
   * The detectors' stamp: the built-in ones (read once per library: they do
   * not change while it runs), and the user's saved ones (read each time:
   * the query page adds them).
   */
  private async currentDetectors(): Promise<string> {
    const builtin = await (this.detectorsStamp ??= builtinDetectorsStamp());
    const user = await userDetectorsStamp(this.userDetectorDir);
    return user ? `${builtin}+${user}` : builtin;
  }

  /** The user's saved detectors (server/query/user_detectors.ts). */
  get userDetectorDir(): string {
    return userDetectorDir(this.paths.root);
  }

  private async computeFindings(
    id: string,
    onFindingThreads?: (utids: number[]) => void,
    ahead?: DetectorsAhead,
  ): Promise<FindingsFile> {
    const [engine, detectors] = await Promise.all([this.openEngine(id), this.currentDetectors()]);
    const result = await runWithUserDetectors(engine, this.userDetectorDir, onFindingThreads, ahead);
    const file: FindingsFile = {
      detectors,
      findings: result.findings,
      summaries: result.summaries,
      timings: result.timings,
      metrics: result.metrics,
      runs: result.detectors,
      overview: result.overview,
    };
    const target = path.join(this.paths.traceDir(id), 'findings.json');
    const tmp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    // Integers past 2^53 as strings: JSON.parse would round them (read back below).
    // Written with blocking calls: this file is on an upload's way to done, and libuv's 4 threads, where
    // promise fs calls queue, are held by the first view's DuckDB queries (a write of a few ms waited up to
    // ~500 ms under load, bench/README.md). A blocking write only copies into the page cache.
    writeFileSync(tmp, JSON.stringify(jsSafe(file)));
    renameSync(tmp, target);
    if (result.samples) this.keepSamples(id, result.samples, detectors);
    return file;
  }

  /**
   * Writes the per-event values behind the percentile metrics (samples.bin,
   * server/findings/samples.ts) without holding up the findings: only
   * comparing traces reads them, and the write's fs calls wait behind the
   * first view's DuckDB queries on libuv's threads. writeSamplesFile renames
   * a complete file into place, so a reader finds the whole file or none
   * (compare then computes them again); compare waits for samplesWritten().
   */
  private keepSamples(id: string, samples: TraceSamples, detectors: string): void {
    const file = path.join(this.paths.traceDir(id), SAMPLES_FILE);
    const write = writeSamplesFile(file, samples, detectors)
      .catch((e: Error) => {
        process.stderr.write(`stallscope: ${file} not written (compare computes it again): ${e.message}\n`);
      })
      .finally(() => {
        if (this.samplesWrites.get(id) === write) this.samplesWrites.delete(id);
      });
    this.samplesWrites.set(id, write);
  }

  /** Settles when the trace's samples.bin from its last detector run is in place (or its write failed). */
  samplesWritten(id: string): Promise<void> {
    return this.samplesWrites.get(id) ?? Promise.resolve();
  }

  /** Parsed findings.json per trace, while the file is unchanged (several requests read it when a trace opens). */
  private readonly findingsFiles = new Map<string, { stamp: string; file: Promise<FindingsFile | null> }>();

  private async readFindingsFile(id: string): Promise<FindingsFile | null> {
    const file = path.join(this.paths.traceDir(id), 'findings.json');
    let stamp: string;
    try {
      const st = await fs.stat(file);
      stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch {
      this.findingsFiles.delete(id);
      return null;
    }
    const known = this.findingsFiles.get(id);
    if (known?.stamp === stamp) return known.file;
    const parsed = this.parseFindingsFile(file);
    this.findingsFiles.set(id, { stamp, file: parsed });
    return parsed;
  }

  private async parseFindingsFile(jsonPath: string): Promise<FindingsFile | null> {
    try {
      const text = await fs.readFile(jsonPath, 'utf8');
      const file = JSON.parse(text) as FindingsFile;
      for (const f of file.findings) {
        f.ts_ns = BigInt(f.ts_ns);
        f.dur_ns = BigInt(f.dur_ns);
        f.event_ids = f.event_ids.map((e) => BigInt(e));
        if (f.impact_ns !== undefined) f.impact_ns = BigInt(f.impact_ns);
      }
      return file;
    } catch {
      return null;
    }
  }

  /** Ids whose content matches a file already in the library (for dedupe checks). */
  async idOf(file: string): Promise<string> {
    return hashFile(file);
  }

  async close(): Promise<void> {
    await Promise.all(this.samplesWrites.values());
    for (const e of this.engines.values()) (await e.catch(() => null))?.close();
    this.engines.clear();
  }

  private jobRecord(job: IngestJob): TraceRecord {
    return {
      ...failedRecord(job.jobId, job.name, ''),
      status: 'ingesting',
      error: undefined,
      sizeBytes: job.progress.bytesTotal ?? 0,
      eventsTotal: job.progress.events,
    };
  }
}

/** Skipped inputs a record names (the model's ingest_problem has them all). */
const FIRST_SKIPPED_SHOWN = 3;

function toRecord(s: TraceSummary, findings: FindingsFile | null): TraceRecord {
  const bySeverity = { info: 0, warn: 0, critical: 0 };
  for (const f of findings?.findings ?? []) bySeverity[f.severity]++;
  return {
    id: s.id,
    name: s.name,
    sizeBytes: s.sizeBytes,
    format: s.format,
    formatVersion: s.formatVersion,
    cpus: s.cpus,
    kernel: s.meta.kernel ?? s.meta.uname ?? null,
    eventsTotal: s.eventsTotal,
    firstTs: s.firstTsNs,
    lastTs: s.lastTsNs,
    findingsBySeverity: bySeverity,
    findingsComputed: findings !== null,
    addedAt: s.ingestedAt,
    modelVersion: modelVersionOf(s),
    outdated: modelVersionOf(s) !== MODEL_VERSION,
    status: 'ready',
    lostEvents: s.lostEvents,
    lostEventNotices: s.lostEventNotices ?? 0,
    skippedInputs: s.skippedInputs,
    firstSkipped: (s.firstSkipped ?? [])
      .slice(0, FIRST_SKIPPED_SHOWN)
      .map(({ where, unit, reason }) => ({ where, unit, reason })),
    cutOff: s.cutOff ?? null,
  };
}

function failedRecord(id: string, name: string, error: string): TraceRecord {
  return {
    id,
    name,
    sizeBytes: 0,
    format: '',
    formatVersion: null,
    cpus: 0,
    kernel: null,
    eventsTotal: 0,
    firstTs: null,
    lastTs: null,
    findingsBySeverity: { info: 0, warn: 0, critical: 0 },
    findingsComputed: false,
    addedAt: new Date().toISOString(),
    modelVersion: MODEL_VERSION,
    outdated: false,
    status: 'failed',
    error,
    lostEvents: 0,
    lostEventNotices: 0,
    skippedInputs: 0,
    firstSkipped: [],
    cutOff: null,
  };
}

/**
 * The built-in detectors and the user's saved ones, in one run. A saved
 * detector that no longer loads or runs (edited by hand, or a model change
 * broke it) must not cost the built-in findings: they are then run alone,
 * and the failure is reported on stderr.
 */
async function runWithUserDetectors(
  engine: Engine,
  userDir: string,
  onFindingThreads?: (utids: number[]) => void,
  ahead?: DetectorsAhead,
): Promise<RunResult> {
  const hasUser = await fs.readdir(userDir).then(
    (n) => n.some((x) => x.endsWith('.sql')),
    () => false,
  );
  if (!hasUser) return runDetectors(engine, { samples: true, onFindingThreads, ahead });
  try {
    return await runDetectors(engine, { extraDirs: [userDir], samples: true, onFindingThreads, ahead });
  } catch (e) {
    process.stderr.write(
      `stallscope: saved detectors in ${userDir} did not run, built-in detectors only: ${(e as Error).message}\n`,
    );
    return runDetectors(engine, { samples: true, onFindingThreads, ahead });
  }
}
