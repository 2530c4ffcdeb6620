/**
 * Ingest: one trace file in, one complete DuckDB trace model out.
 *
 *   file -> (content hash) -> sniff/decompress -> decoder -> ModelWriter
 *        -> derive (sched_slice, thread_state, slices...) -> trace_info
 *
 * A trace is built in a private temporary directory and renamed into
 * `<dataDir>/traces/<sha256>/` only when every table is written, so a crash,
 * a kill or a decode error never leaves a half-built trace that looks
 * complete. The same content ingested again reuses the earlier result.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { decodeFile } from '../decode/decode_file.ts';
import { DecodeError } from '../decode/decoded_event.ts';
import { Worker } from 'node:worker_threads';
import { openDuckDb } from '../engine/engine.ts';
import { deriveModel } from '../model/derive_model.ts';
import { ModelBuilder } from '../model/model_builder.ts';
import { chunkTransferList } from '../model/column_chunk.ts';
import { ModelStore, SCHEMA_SQL_PATH, type WriterSummary } from '../model/model_store.ts';
import { dataDirPaths, resolveDataDir } from './data_dir.ts';
import { CONSUMED, FAILED, MAX_IN_FLIGHT, type FromStoreWorker, type StoreWorkerInput, type ToStoreWorker } from './store_protocol.ts';
import { storeWorkerBundle } from './worker_bundle.ts';

export type IngestPhase = 'hashing' | 'decompressing' | 'decoding' | 'deriving' | 'done';

export interface IngestProgress {
  phase: IngestPhase;
  /** Bytes of the phase's input done so far (decompressed bytes while decoding). */
  bytesDone: number;
  /** Total bytes for the phase, null when unknown (compressed text input). */
  bytesTotal: number | null;
  /** Events decoded so far. */
  events: number;
}

export interface IngestOptions {
  dataDir?: string;
  /** Rebuild even if this content was ingested before. */
  force?: boolean;
  /** Name shown to users; defaults to the file's base name. */
  name?: string;
  onProgress?: (p: IngestProgress) => void;
  /**
   * The file's sha256 (hex), when the caller computed it from the very bytes
   * it wrote (the server hashes an upload as it streams it to disk): the
   * ingest then skips reading the whole file once more just to hash it.
   */
  contentSha256?: string;
  /**
   * Append to DuckDB on a worker thread (store_worker.ts) while this thread
   * decodes: on by default; false (or $STALLSCOPE_STORE_WORKER=0) does
   * everything on this thread.
   */
  worker?: boolean;
}

/** What `info.json` holds: the facts about an ingested trace. */
export interface TraceSummary {
  id: string;
  name: string;
  sourcePath: string;
  sizeBytes: number;
  compression: string[];
  format: string;
  formatVersion: string | null;
  cpus: number;
  eventsTotal: number;
  eventsByName: Record<string, number>;
  firstTsNs: string | null;
  lastTsNs: string | null;
  lostEvents: number;
  lostEventNotices: number;
  unparsedEvents: number;
  skippedInputs: number;
  firstSkipped: { where: number; unit: string; reason: string; excerpt: string }[];
  outOfOrderLines: number;
  meta: Record<string, string>;
  ingestedAt: string;
  /**
   * Wall seconds per phase: hash, setup (database and schema), decode
   * (decode + model writing), derive, commit (commit + checkpoint), total.
   */
  seconds: { hash: number; setup?: number; decode: number; derive: number; commit?: number; total: number };
}

export interface IngestResult {
  id: string;
  dbPath: string;
  summary: TraceSummary;
  /** True when an earlier ingest of the same content was reused. */
  reused: boolean;
}

/** sha256 of the file's bytes (as stored: compressed files hash compressed). */
export async function hashFile(file: string, onBytes?: (n: number) => void): Promise<string> {
  const hash = createHash('sha256');
  let done = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 22 })) {
    hash.update(chunk as Buffer);
    done += (chunk as Buffer).length;
    onBytes?.(done);
  }
  return hash.digest('hex');
}

export async function ingestFile(file: string, opts: IngestOptions = {}): Promise<IngestResult> {
  const started = performance.now();
  const label = file;
  let stat;
  try {
    stat = await fs.stat(file);
  } catch (err) {
    throw new DecodeError(label, 0, 'offset', `cannot read: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  if (!stat.isFile()) throw new DecodeError(label, 0, 'offset', 'not a regular file');
  const report = opts.onProgress ?? (() => {});
  const dirs = dataDirPaths(resolveDataDir(opts.dataDir));

  report({ phase: 'hashing', bytesDone: 0, bytesTotal: stat.size, events: 0 });
  if (opts.contentSha256 !== undefined && !/^[0-9a-f]{64}$/.test(opts.contentSha256)) {
    throw new Error(`contentSha256 must be 64 lowercase hex digits, got ${JSON.stringify(opts.contentSha256)}`);
  }
  const id =
    opts.contentSha256 ??
    (await hashFile(file, (n) => report({ phase: 'hashing', bytesDone: n, bytesTotal: stat.size, events: 0 })));
  const hashSeconds = (performance.now() - started) / 1000;
  const finalDir = dirs.traceDir(id);

  const reuse = async (): Promise<IngestResult | null> => {
    const existing = await readSummary(finalDir);
    if (!existing) return null;
    report({ phase: 'done', bytesDone: stat.size, bytesTotal: stat.size, events: existing.eventsTotal });
    return { id, dbPath: path.join(finalDir, 'trace.duckdb'), summary: existing, reused: true };
  };
  if (!opts.force) {
    const earlier = await reuse();
    if (earlier) return earlier;
    // The same content already being ingested by this process: wait for it.
    const running = inFlight.get(finalDir);
    if (running) {
      await running.catch(() => undefined);
      const after = await reuse();
      if (after) return after;
    }
  }
  const build = buildIntoPlace({ file, label, id, sizeBytes: stat.size, finalDir, tmpRoot: dirs.tmp, opts, report, started, hashSeconds, reuse });
  inFlight.set(finalDir, build);
  try {
    return await build;
  } finally {
    if (inFlight.get(finalDir) === build) inFlight.delete(finalDir);
  }
}

/**
 * DuckDB's memory cap while building a trace ($STALLSCOPE_INGEST_MEMORY
 * overrides). Its buffer pool is most of the ingest's memory: on the 10M-event
 * trace.dat of `npm run bench`, peak RSS was 894 MB at 1GB, 807 MB at 512MB
 * and 715 MB at 256MB (548 MB for a quarter of it), and 256MB was no slower
 * (26-28 s vs 30 s; text ingest within ~10% either way).
 */
const INGEST_MEMORY_LIMIT = process.env.STALLSCOPE_INGEST_MEMORY ?? '256MB';

function useStoreWorker(opts: IngestOptions): boolean {
  return opts.worker ?? process.env.STALLSCOPE_STORE_WORKER !== '0';
}

/** Ingests in flight in this process, by final trace directory. */
const inFlight = new Map<string, Promise<IngestResult>>();

/** Builds the trace in a private work dir, then moves it to `finalDir`. */
async function buildIntoPlace(x: {
  file: string;
  label: string;
  id: string;
  sizeBytes: number;
  finalDir: string;
  tmpRoot: string;
  opts: IngestOptions;
  report: (p: IngestProgress) => void;
  started: number;
  hashSeconds: number;
  reuse: () => Promise<IngestResult | null>;
}): Promise<IngestResult> {
  const { id, finalDir, opts, report } = x;
  await fs.mkdir(x.tmpRoot, { recursive: true });
  // The pid in the name lets removeStaleWork() clean up after a crash.
  const workDir = await fs.mkdtemp(path.join(x.tmpRoot, `${id.slice(0, 12)}-${process.pid}-`));
  try {
    const summary = await buildTrace(x.file, x.label, id, x.sizeBytes, workDir, opts, report);
    const { started, hashSeconds, reuse } = x;
    summary.seconds.hash = hashSeconds;
    summary.seconds.total = (performance.now() - started) / 1000;
    await fs.writeFile(path.join(workDir, 'info.json'), JSON.stringify(summary, null, 2));
    await fs.mkdir(path.dirname(finalDir), { recursive: true });
    if (!opts.force) {
      // Another process finished the same content first: keep theirs.
      const theirs = await reuse();
      if (theirs) {
        await fs.rm(workDir, { recursive: true, force: true });
        return theirs;
      }
    }
    // --force replaces: the old trace is moved aside first, so a reader may
    // briefly find none, but never a half-built one.
    const old = `${finalDir}.old-${process.pid}`;
    await fs.rm(old, { recursive: true, force: true });
    await fs.rename(finalDir, old).catch(() => undefined);
    await fs.rename(workDir, finalDir);
    await fs.rm(old, { recursive: true, force: true });
    report({ phase: 'done', bytesDone: x.sizeBytes, bytesTotal: x.sizeBytes, events: summary.eventsTotal });
    return { id, dbPath: path.join(finalDir, 'trace.duckdb'), summary, reused: false };
  } catch (err) {
    await fs.rm(workDir, { recursive: true, force: true });
    throw err;
  }
}

/** The summary of a completely ingested trace, or null if there is none. */
export async function readSummary(traceDir: string): Promise<TraceSummary | null> {
  try {
    const text = await fs.readFile(path.join(traceDir, 'info.json'), 'utf8');
    await fs.access(path.join(traceDir, 'trace.duckdb'));
    return JSON.parse(text) as TraceSummary;
  } catch {
    return null;
  }
}

async function buildTrace(
  file: string,
  label: string,
  id: string,
  sizeBytes: number,
  workDir: string,
  opts: IngestOptions,
  report: (p: IngestProgress) => void,
): Promise<TraceSummary> {
  const target: LoadTarget = {
    dbPath: path.join(workDir, 'trace.duckdb'),
    // A fixed memory cap keeps peak memory independent of the trace's size:
    // past it DuckDB writes to disk and spills derive's sorts to workDir.
    memoryLimit: INGEST_MEMORY_LIMIT,
    tempDirectory: path.join(workDir, 'spill'),
  };
  const loaded = useStoreWorker(opts)
    ? await loadOnStoreWorker(file, label, workDir, target, report)
    : await loadInProcess(file, label, workDir, target, report);
  await fs.rm(path.join(workDir, 'decompressed.dat'), { force: true });

  // The events are committed (derive's scans of uncommitted, transaction-local
  // rows were 5x slower: 10M-event trace.dat, derive 50 s before, 10.4 s after).
  const engine = await openDuckDb(target.dbPath, { memoryLimit: target.memoryLimit, tempDirectory: target.tempDirectory });
  try {
    await engine.exec('BEGIN TRANSACTION');
    report({ phase: 'deriving', bytesDone: 0, bytesTotal: null, events: loaded.writerSummary.eventsTotal });
    const deriveStarted = performance.now();
    await deriveModel(engine);
    const deriveSeconds = (performance.now() - deriveStarted) / 1000;

    const summary = toSummary(loaded.writerSummary, {
      id,
      name: opts.name ?? path.basename(file),
      sourcePath: path.resolve(file),
      sizeBytes,
      compression: loaded.compression,
      outOfOrderLines: loaded.outOfOrderLines,
      decodeSeconds: loaded.decodeSeconds,
      deriveSeconds,
    });
    await writeTraceInfo(engine, summary);
    const commitStarted = performance.now();
    await engine.exec('COMMIT');
    await engine.exec('CHECKPOINT');
    summary.seconds.setup = loaded.setupSeconds;
    summary.seconds.commit = (performance.now() - commitStarted) / 1000;
    await fs.rm(target.tempDirectory, { recursive: true, force: true });
    return summary;
  } finally {
    engine.close();
  }
}

/** The database the events are loaded into. */
interface LoadTarget {
  dbPath: string;
  memoryLimit: string;
  tempDirectory: string;
}

/** The events of a file, committed to the database (which is closed again). */
interface Loaded {
  writerSummary: WriterSummary;
  compression: string[];
  outOfOrderLines: number;
  /** Opening the database and creating the schema. */
  setupSeconds: number;
  /** Decoding, writing the events and committing them. */
  decodeSeconds: number;
}

/**
 * Decodes and builds rows on this thread while store_worker.ts appends them
 * to DuckDB on another (the default).
 */
async function loadOnStoreWorker(
  file: string,
  label: string,
  workDir: string,
  target: LoadTarget,
  report: (p: IngestProgress) => void,
): Promise<Loaded> {
  const setupStarted = performance.now();
  // The bundled worker starts in milliseconds; the TypeScript entry (through
  // tsx's loader) is the fallback if esbuild cannot run.
  const workerPath = await storeWorkerBundle().catch(() => new URL('./store_worker.mjs', import.meta.url));
  const control = new SharedArrayBuffer(8);
  const counters = new Int32Array(control);
  const input: StoreWorkerInput = { ...target, schemaSqlPath: SCHEMA_SQL_PATH, control };
  const worker = new Worker(workerPath, { workerData: input });
  const replies = workerReplies(worker);
  let finished = false;
  try {
    const ready = await replies.expect('ready');
    const decodeStarted = performance.now();
    let posted = 0;
    const builder = new ModelBuilder(ready.layout, (table, data) => {
      waitForStoreWorker(counters, posted - MAX_IN_FLIGHT + 1);
      worker.postMessage({ type: 'chunk', table, data } satisfies ToStoreWorker, chunkTransferList(data));
      posted++;
    });
    let decoded;
    try {
      decoded = await decodeFile(file, builder, {
        label,
        scratchDir: workDir,
        onProgress: (phase, bytesDone, bytesTotal) => report({ phase, bytesDone, bytesTotal, events: builder.eventCount }),
      });
    } catch (err) {
      // The worker's own error explains a failed wait better than the wait does.
      if (err instanceof StoreWorkerStalled) await replies.expect('done');
      throw err;
    }
    worker.postMessage({ type: 'finish', result: builder.finish() } satisfies ToStoreWorker);
    const done = await replies.expect('done');
    finished = true;
    return {
      writerSummary: done.summary,
      ...decoded,
      setupSeconds: (decodeStarted - setupStarted) / 1000,
      decodeSeconds: (performance.now() - decodeStarted) / 1000,
    };
  } finally {
    // On failure let the worker close DuckDB before it goes (a second later it is stopped regardless).
    if (!finished) {
      worker.postMessage({ type: 'abort' } satisfies ToStoreWorker);
      await replies.exited(1000);
    }
    await worker.terminate();
  }
}

class StoreWorkerStalled extends Error {}

/**
 * Blocks until the worker has consumed at least `consumed` chunks, so at most
 * MAX_IN_FLIGHT chunks (a few MB) wait in its queue however fast decoding
 * runs. The builder's chunk callback is synchronous, so this waits with
 * Atomics.wait; the worker sets FAILED if it cannot go on.
 */
function waitForStoreWorker(counters: Int32Array, consumed: number): void {
  let last = Atomics.load(counters, CONSUMED);
  let idleMs = 0;
  while (last < consumed) {
    if (Atomics.load(counters, FAILED) !== 0) throw new StoreWorkerStalled('the store worker failed');
    if (Atomics.wait(counters, CONSUMED, last, 1000) === 'timed-out') {
      idleMs += 1000;
      // 48 chunks never take a minute to append: the worker is gone.
      if (idleMs >= 60_000) throw new StoreWorkerStalled('the store worker stopped consuming rows for 60 s');
    } else idleMs = 0;
    last = Atomics.load(counters, CONSUMED);
  }
}

/** The worker's messages, awaited one at a time; an error or exit rejects. */
function workerReplies(worker: Worker): {
  expect<T extends FromStoreWorker['type']>(type: T): Promise<Extract<FromStoreWorker, { type: T }>>;
  /** Resolves when the worker has exited or `ms` have passed. */
  exited(ms: number): Promise<void>;
} {
  const queue: FromStoreWorker[] = [];
  let failure: Error | null = null;
  let exit: () => void = () => {};
  const exitSeen = new Promise<void>((r) => (exit = r));
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  worker.on('message', (m: FromStoreWorker) => {
    queue.push(m);
    notify();
  });
  worker.on('error', (err) => {
    failure ??= err;
    notify();
  });
  worker.on('exit', (code) => {
    failure ??= new Error(`store worker exited with code ${code}`);
    notify();
    exit();
  });
  return {
    exited: (ms) => Promise.race([exitSeen, new Promise<void>((r) => setTimeout(r, ms).unref())]),
    async expect(type) {
      for (;;) {
        const m = queue.shift();
        if (m?.type === 'error') throw new Error(`store worker: ${m.message}`);
        if (m?.type === type) return m as never;
        if (m) throw new Error(`store worker: expected '${type}', got '${m.type}'`);
        if (failure) throw failure;
        await new Promise<void>((r) => (wake = r));
      }
    },
  };
}

/** Decoding and appending on this thread (IngestOptions.worker = false). */
async function loadInProcess(
  file: string,
  label: string,
  workDir: string,
  target: LoadTarget,
  report: (p: IngestProgress) => void,
): Promise<Loaded> {
  const setupStarted = performance.now();
  const engine = await openDuckDb(target.dbPath, { memoryLimit: target.memoryLimit, tempDirectory: target.tempDirectory });
  try {
    // As store_worker.ts: one transaction for schema and events.
    await engine.exec('BEGIN TRANSACTION');
    const store = await ModelStore.create(engine);
    const decodeStarted = performance.now();
    const builder = new ModelBuilder(store.layout, (table, data) => store.append(table, data));
    const decoded = await decodeFile(file, builder, {
      label,
      scratchDir: workDir,
      onProgress: (phase, bytesDone, bytesTotal) => report({ phase, bytesDone, bytesTotal, events: builder.eventCount }),
    });
    const writerSummary = await store.finish(builder.finish());
    await engine.exec('COMMIT');
    return {
      writerSummary,
      ...decoded,
      setupSeconds: (decodeStarted - setupStarted) / 1000,
      decodeSeconds: (performance.now() - decodeStarted) / 1000,
    };
  } finally {
    engine.close();
  }
}

function toSummary(
  w: WriterSummary,
  x: {
    id: string;
    name: string;
    sourcePath: string;
    sizeBytes: number;
    compression: string[];
    outOfOrderLines: number;
    decodeSeconds: number;
    deriveSeconds: number;
  },
): TraceSummary {
  return {
    id: x.id,
    name: x.name,
    sourcePath: x.sourcePath,
    sizeBytes: x.sizeBytes,
    compression: x.compression,
    format: w.format,
    formatVersion: w.formatVersion,
    cpus: w.cpus,
    eventsTotal: w.eventsTotal,
    eventsByName: w.eventsByName,
    firstTsNs: w.firstTsNs?.toString() ?? null,
    lastTsNs: w.lastTsNs?.toString() ?? null,
    lostEvents: w.lostEvents,
    lostEventNotices: w.lostEventNotices,
    unparsedEvents: w.unparsedEvents,
    skippedInputs: w.skippedInputs,
    firstSkipped: w.firstSkipped,
    outOfOrderLines: x.outOfOrderLines,
    meta: w.meta,
    ingestedAt: new Date().toISOString(),
    seconds: { hash: 0, decode: x.decodeSeconds, derive: x.deriveSeconds, total: 0 },
  };
}

async function writeTraceInfo(engine: Awaited<ReturnType<typeof openDuckDb>>, s: TraceSummary): Promise<void> {
  const facts: Record<string, string> = {
    ...Object.fromEntries(Object.entries(s.meta).map(([k, v]) => [`meta.${k}`, v])),
    id: s.id,
    content_sha256: s.id,
    name: s.name,
    source_file: s.sourcePath,
    source_bytes: String(s.sizeBytes),
    compression: s.compression.join(',') || 'none',
    format: s.format,
    format_version: s.formatVersion ?? '',
    cpus: String(s.cpus),
    first_ts: s.firstTsNs ?? '',
    last_ts: s.lastTsNs ?? '',
    events_total: String(s.eventsTotal),
    lost_events: String(s.lostEvents),
    unparsed_events: String(s.unparsedEvents),
    skipped_inputs: String(s.skippedInputs),
    out_of_order_lines: String(s.outOfOrderLines),
    ingest_finished_at: s.ingestedAt,
    complete: 'true',
  };
  const entries = Object.entries(facts);
  const placeholders = entries.map((_, i) => `($${i * 2 + 1}, $${i * 2 + 2})`).join(', ');
  await engine.query(`INSERT INTO trace_info VALUES ${placeholders}`, entries.flat());
}
