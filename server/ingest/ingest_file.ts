/**
 * Ingest: one trace file in, one complete DuckDB trace model out.
 *
 *   file -> (content hash) -> sniff/decompress -> decoder -> ModelBuilder
 *        -> ModelStore (on the store worker thread for large files)
 *        -> derive (sched_slice, thread_state, slices...) -> trace_info
 *
 * A trace is built in a private temporary directory and renamed into
 * `<dataDir>/traces/<sha256>/` only when every table is written, so a crash,
 * a kill or a decode error never leaves a half-built trace that looks
 * complete. The same content ingested again reuses the earlier result.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { decodeFile } from '../decode/decode_file.ts';
import { SNIFF_BYTES, sniffInput } from '../decode/sniff.ts';
import { DecodeError, type SkippedInput } from '../decode/decoded_event.ts';
import { openDuckDb, type Engine } from '../engine/engine.ts';
import { KEPT_PAGES_MAX_BYTES, pastDecodePeak, traceBuildStarted } from '../engine/allocator_decay.ts';
import { ONE_THREAD_FLUSH_EVERY_ROWS } from '../model/column_appender.ts';
import { deriveModel } from '../model/derive_model.ts';
import type { DetectorsAhead } from '../findings/run_detectors.ts';
import { type DetectorsBesideDerive, startDetectorsBesideDerive } from './detectors_beside_derive.ts';
import { PooledBuffers } from '../model/buffer_source.ts';
import type { ChunkData } from '../model/column_chunk.ts';
import { ModelBuilder } from '../model/model_builder.ts';
import { sameLayout, type ModelLayout } from '../model/model_layout.ts';
import { ModelStore, type WriterSummary } from '../model/model_store.ts';
import { MODEL_VERSION, modelVersionOf } from '../model/model_version.ts';
import { hashFile, hashFileInBackground } from './content_hash.ts';
import { dataDirPaths, isTraceId, resolveDataDir, type DataDirPaths } from './data_dir.ts';
import { FieldWorkerClient } from './field_worker_client.ts';
import { cachedLayout, rememberLayout } from './layout_cache.ts';
import { StoreWorkerClient, type LoadTarget } from './store_worker_client.ts';
import { PhaseTimer } from './phase_timer.ts';
import { detachOnce } from './detaching_protector.ts';
import { limitInlining } from './inlining_budget.ts';
import { WorkerStalled } from './wait_for_counter.ts';
import { raiseCapWithShapeTables } from './load_cap.ts';
import { oneThreadFlushTiming } from './one_thread_flush_timing.ts';
import { copySchemaTemplate, makeSchemaTemplate } from './schema_template.ts';
import { workerEntry } from './worker_bundle.ts';
import { fieldWorkers } from './worker_pool.ts';
import type {
  IngestProgress as WireIngestProgress,
  IngestPhase as WireIngestPhase,
} from '../../shared/contract/api.ts';
import {
  COLLECT_EVERY_EVENTS,
  COLLECT_FIRST_AT_EVENTS,
  collectGarbage,
  commitMemoryLimit,
  deriveMemoryLimit,
  freedPagesKept,
  freedPagesKeptThroughDerive,
  ingestBlockSize,
  ingestMemoryLimit,
  isLoadOutOfMemory,
  LARGE_LOAD_EVENTS,
  LOAD_RETRY_MEMORY_LIMIT,
  storeMemoryLimit,
  withCommitFloor,
} from './ingest_memory.ts';

/** The phases ingest itself goes through (the wire's IngestPhase adds 'detecting' and 'failed'). */
export type IngestPhase = Exclude<WireIngestPhase, 'detecting' | 'failed'>;

/**
 * The wire's progress (shared/contract/api.ts) in ingest's own phases, without
 * a message (only a failure carries one). While decoding, bytesDone counts
 * decompressed bytes.
 */
export type IngestProgress = Omit<WireIngestProgress, 'phase' | 'message'> & { phase: IngestPhase };

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
   * decodes (true), or do everything on this thread (false). Default: the
   * worker for files of STORE_WORKER_MIN_EVENTS or more (estimatedEvents;
   * Perfetto files: PERFETTO_STORE_WORKER_MIN_EVENTS);
   * $STALLSCOPE_STORE_WORKER=1 / =0 forces either way.
   */
  worker?: boolean;
  /**
   * Run the detectors that read none of derive's tables beside derive
   * (detectors_beside_derive.ts), into IngestResult.detectorsAhead: for a
   * caller about to run the detectors (an upload), not for `ingest` alone.
   */
  detectorsBesideDerive?: boolean;
}

/** What `info.json` holds: the facts about an ingested trace. */
export interface TraceSummary {
  id: string;
  /** The model version that built it (model_version.ts); absent in traces built before versions. */
  modelVersion?: number;
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
  /** The file is compressed and its decompression failed part-way: where and why (also in firstSkipped/ingest_problem). */
  cutOff?: { where: number; unit: string; reason: string } | null;
  meta: Record<string, string>;
  ingestedAt: string;
  /**
   * Wall seconds per phase: hash, setup (database and schema), decode
   * (decode + model writing), derive, commit (commit + checkpoint), total.
   */
  seconds: {
    hash: number;
    /** The hash ran on its own thread while decoding: `hash` is its own time, not time the ingest waited. */
    hashOverlapped?: boolean;
    setup?: number;
    decode: number;
    derive: number;
    commit?: number;
    total: number;
  };
}

export interface IngestResult {
  id: string;
  dbPath: string;
  summary: TraceSummary;
  /** True when an earlier ingest of the same content was reused. */
  reused: boolean;
  /**
   * The model version of an earlier ingest of the same content that this one
   * replaced because an older stallscope built it (not set otherwise).
   */
  replacedModelVersion?: number;
  /** With IngestOptions.detectorsBesideDerive: the outputs of the detectors run beside derive (null: none ran). */
  detectorsAhead?: DetectorsAhead | null;
}

/**
 * The file decoded but its model could not be built (e.g. DuckDB failed:
 * disk full, memory cap too small). Nothing was kept.
 */
export class IngestError extends Error {
  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    super(`${file}: building the trace model failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'IngestError';
  }
}

export { hashFile } from './content_hash.ts';

export async function ingestFile(file: string, opts: IngestOptions = {}): Promise<IngestResult> {
  const started = performance.now();
  limitInlining();
  detachOnce();
  const timer = new PhaseTimer();
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
  if (opts.contentSha256 !== undefined && !isTraceId(opts.contentSha256)) {
    throw new Error(`contentSha256 must be 64 lowercase hex digits, got ${JSON.stringify(opts.contentSha256)}`);
  }

  // The id first (hash, then reuse an earlier ingest of the same content)
  // when there may be one: a trace of the same size in the library or being
  // built here. Otherwise nothing can be reused, so hash while decoding.
  const hashFirst =
    opts.contentSha256 !== undefined ||
    inFlightSizes.has(stat.size) ||
    (!opts.force && (await libraryHasSize(dirs, stat.size)));
  report({ phase: hashFirst ? 'hashing' : 'decoding', bytesDone: 0, bytesTotal: stat.size, events: 0 });
  // The workspace (and the store thread's start-up) opens where the build
  // starts, which then owns it (buildIntoPlace discards it on failure). With
  // the id first it opens after the reuse check: an earlier ingest of the
  // same content is the likely case there (the same file again, `info` on an
  // ingested file, a duplicate upload), and a store load started for nothing
  // costs a thread's start-up, or ends a kept thread (worker_pool.ts ends a
  // thread whose load did not finish).
  const load = await estimatedLoad(file, stat.size);
  const withWorker = useStoreWorker(opts, load);
  const memoryLimit = ingestMemoryLimit(load.events);
  const blockSize = ingestBlockSize(load.events, load.perfetto);
  // The load's cap is decided when its workspace opens: it depends on what the process holds then.
  const openWork = (loadLimit?: string) =>
    openWorkspace(
      dirs.tmp,
      withWorker,
      memoryLimit,
      blockSize,
      loadLimit ?? storeMemoryLimit(process.memoryUsage.rss(), load.events),
    ).finally(() => timer.mark('workspace'));
  const restarted = () => report({ phase: 'decoding', bytesDone: 0, bytesTotal: stat.size, events: 0 });
  inFlightSizes.set(stat.size, (inFlightSizes.get(stat.size) ?? 0) + 1);
  // DuckDB's freed pages go back at once while the trace is built: its
  // decode and derive (allocator_decay.ts; whether they stay a second after
  // it is the caller's: keepingFreedPages).
  const built = traceBuildStarted();
  try {
    const common = { file, label, sizeBytes: stat.size, opts, report, started, dirs, timer };
    if (!hashFirst) {
      const hashing = hashFileInBackground(file, stat.size);
      try {
        return await wrapBuildError(
          label,
          retryingLoadCap(label, restarted, openWork, (work) =>
            buildIntoPlace({
              ...common,
              work,
              id: hashing.sha256,
              hashSeconds: () => hashing.seconds() ?? 0,
              hashOverlapped: true,
            }),
          ),
        );
      } finally {
        hashing.cancel();
      }
    }
    const id =
      opts.contentSha256 ??
      (await hashFile(file, (n) => report({ phase: 'hashing', bytesDone: n, bytesTotal: stat.size, events: 0 })));
    const hashSeconds = (performance.now() - started) / 1000;
    const finalDir = dirs.traceDir(id);
    if (!opts.force) {
      const earlier = await reuseExisting(finalDir, id, stat.size, report);
      if (earlier) return earlier;
      // The same content already being ingested by this process: wait for it.
      const running = inFlight.get(finalDir);
      if (running) {
        await running.catch(() => undefined);
        const after = await reuseExisting(finalDir, id, stat.size, report);
        if (after) return after;
      }
    }
    // In flight from here, before any await: a second ingest of the same
    // content must find this build and wait for it.
    const build = retryingLoadCap(label, restarted, openWork, (work) =>
      buildIntoPlace({
        ...common,
        work,
        id: Promise.resolve(id),
        hashSeconds: () => hashSeconds,
        hashOverlapped: false,
      }),
    );
    inFlight.set(finalDir, build);
    try {
      return await wrapBuildError(label, build);
    } finally {
      if (inFlight.get(finalDir) === build) inFlight.delete(finalDir);
    }
  } finally {
    built();
    const n = (inFlightSizes.get(stat.size) ?? 1) - 1;
    if (n > 0) inFlightSizes.set(stat.size, n);
    else inFlightSizes.delete(stat.size);
  }
}

/**
 * Builds in a fresh workspace; when the load ran out of DuckDB memory, builds
 * once more at LOAD_RETRY_MEMORY_LIMIT. The load's cap rises with the shape
 * tables it opens (withLoadFloor), but what a table pins grows with its rows
 * as well as its columns, so the floor is a measured guess, not a bound:
 * losing the trace is worse than decoding it twice (ingest_memory.ts
 * isLoadOutOfMemory).
 */
async function retryingLoadCap(
  label: string,
  restarted: () => void,
  openWork: (loadLimit?: string) => Promise<Workspace>,
  build: (work: Workspace) => Promise<IngestResult>,
): Promise<IngestResult> {
  try {
    return await build(await openWork());
  } catch (err) {
    if (!isLoadOutOfMemory(err)) throw err;
    process.emitWarning(
      `${label}: the load ran out of its DuckDB memory (${(err as Error).message.split('\n')[0]}); building again at ${LOAD_RETRY_MEMORY_LIMIT}`,
      { code: 'STALLSCOPE_LOAD_RETRY' },
    );
    restarted();
    return await build(await openWork(LOAD_RETRY_MEMORY_LIMIT));
  }
}

/** Decode errors as they are; anything else while building is one IngestError naming the file. */
async function wrapBuildError(label: string, build: Promise<IngestResult>): Promise<IngestResult> {
  try {
    return await build;
  } catch (err) {
    if (err instanceof DecodeError) throw err;
    throw new IngestError(label, err);
  }
}

/** The complete earlier ingest of this content, reported as done, or null. */
async function reuseExisting(
  finalDir: string,
  id: string,
  sizeBytes: number,
  report: (p: IngestProgress) => void,
): Promise<IngestResult | null> {
  const existing = await readSummary(finalDir);
  // A model built by another stallscope version is rebuilt (model_version.ts).
  if (!existing || modelVersionOf(existing) !== MODEL_VERSION) return null;
  report({ phase: 'done', bytesDone: sizeBytes, bytesTotal: sizeBytes, events: existing.eventsTotal });
  return { id, dbPath: path.join(finalDir, 'trace.duckdb'), summary: existing, reused: true };
}

/** Whether any trace in the library has this source size (so its content may be the same). */
async function libraryHasSize(dirs: DataDirPaths, sizeBytes: number): Promise<boolean> {
  let ids: string[];
  try {
    ids = await fs.readdir(dirs.traces);
  } catch {
    return false;
  }
  for (const id of ids) {
    if (!isTraceId(id)) continue;
    const s = await readSummary(path.join(dirs.traces, id));
    // An unreadable summary might be this content: hash first to be safe.
    if (s === null || s.sizeBytes === sizeBytes) return true;
  }
  return false;
}

/**
 * Files of fewer events (estimatedEvents) load on one thread: the workers'
 * start-up is not repaid. Counted in events, not bytes: a trace.dat v7
 * compresses 7-8x, and a 6.4 MB one holds a million events, which loaded
 * in 5.7-7.8 s with the workers against 9.5-12.5 s on one thread (CLI,
 * sched_wq.v7.dat, a loaded VM); 350k events (reclaim.v7.dat): the same
 * wall time either way, 0.3-0.6 CPU-s more with them.
 */
export const STORE_WORKER_MIN_EVENTS = 500_000;

/**
 * Perfetto files load on one thread up to more events: their decoding
 * thread has less to hand over (its typed and scheduler rows are written
 * straight into columns), so the workers' start-up, the chunks' transfer
 * and derive reopening the database cost more than they save. Copies of
 * perfetto_reclaim.pftrace (bench/perfetto_bench.ts replicate), CLI,
 * alternating pairs at load 8-12, one thread against the workers:
 *  - x40, 1.3M events, 6 pairs: 3.15-3.68 CPU-s (median 3.29) against
 *    3.70-4.24 (3.80); 294-303 against 308-317 MB; wall median 6.9 against 9.9 s;
 *  - x80, 2.6M, 3 pairs: 4.99-5.44 (5.40) against 5.93-6.12 (6.06); 320-329
 *    against 333-343 MB; wall median 12.4 against 15.7 s;
 *  - x160, 5.2M, 2 pairs: 9.8-10.6 against 10.3-11.0; 326-334 against
 *    355-357 MB; wall 17.8-47.7 against 9.2-25.2 s.
 * With one DuckDB thread on one-thread loads (below), load 4.4-8.5: x40 3
 * pairs 2.69-2.81 (2.79) against 3.51-3.61 (3.60), wall median 2.90 against
 * 4.09 s; x80 3 pairs 4.72-4.89 (4.82) against 6.10-6.20 (6.18), wall
 * 8.4-9.3 against 9.7-11.3 s; but x120 (3.9M), 2 pairs at load 5.3-6.0:
 * 6.75-6.92 against 8.20-8.60 CPU-s and wall 9.1-10.3 against 5.0-9.2 s, 335-339
 * against 345-349 MB: there the workers' overlap pays in wall time when the
 * machine has a core to spare, so files from 3M events keep them.
 */
export const PERFETTO_STORE_WORKER_MIN_EVENTS = 3_000_000;

function useStoreWorker(opts: IngestOptions, load: EstimatedLoad): boolean {
  const env = process.env.STALLSCOPE_STORE_WORKER;
  const min = load.perfetto ? PERFETTO_STORE_WORKER_MIN_EVENTS : STORE_WORKER_MIN_EVENTS;
  return opts.worker ?? (env === '1' ? true : env === '0' ? false : load.events >= min);
}

/** Bytes per event of an uncompressed trace.dat and of trace text (the bench corpus: 45-60 and 110-160). */
const DAT_BYTES_PER_EVENT = 55;
const TEXT_BYTES_PER_EVENT = 130;
/** How much smaller a zstd/zlib trace.dat v7, or a compressed file, is than its content (the corpus: 6.5-9x). */
const COMPRESSION_RATIO = 8;
/** Bytes per event of a Perfetto trace (tracebox recordings: 27 with compact_sched, 40 without). */
const PERFETTO_BYTES_PER_EVENT = 40;

/**
 * Roughly how many events a file holds, from its size and first bytes
 * (compressed or not, trace.dat or text): enough to choose how to load it.
 */
export async function estimatedEvents(file: string, sizeBytes: number): Promise<number> {
  return (await estimatedLoad(file, sizeBytes)).events;
}

interface EstimatedLoad {
  events: number;
  perfetto: boolean;
}

async function estimatedLoad(file: string, sizeBytes: number): Promise<EstimatedLoad> {
  const events = (n: number): EstimatedLoad => ({ events: n, perfetto: false });
  // Perfetto has no magic number: it sniffs from its first SNIFF_BYTES.
  const head = Buffer.alloc(SNIFF_BYTES);
  let n = 0;
  try {
    const fh = await fs.open(file, 'r');
    try {
      n = (await fh.read(head, 0, head.length, 0)).bytesRead;
    } finally {
      await fh.close();
    }
  } catch {
    return events(0);
  }
  const sniffed = sniffInput(head.subarray(0, n));
  if (sniffed.compression !== null) return events((sizeBytes * COMPRESSION_RATIO) / TEXT_BYTES_PER_EVENT);
  if (sniffed.format === 'perfetto') return { events: sizeBytes / PERFETTO_BYTES_PER_EVENT, perfetto: true };
  if (sniffed.format !== 'trace_dat') return events(sizeBytes / TEXT_BYTES_PER_EVENT);
  // trace.dat: magic (10 bytes), version "N\0", endianness, long size, page size (4); v7: compression name "zstd\0"...
  const versionEnd = head.indexOf(0, 10);
  const version = head.toString('latin1', 10, versionEnd);
  if (version !== '7' || versionEnd < 0) return events(sizeBytes / DAT_BYTES_PER_EVENT);
  const algoStart = versionEnd + 1 + 2 + 4;
  const algo = head.toString('latin1', algoStart, Math.max(algoStart, head.indexOf(0, algoStart)));
  return events(
    algo === '' || algo === 'none'
      ? sizeBytes / DAT_BYTES_PER_EVENT
      : (sizeBytes * COMPRESSION_RATIO) / DAT_BYTES_PER_EVENT,
  );
}

/** Ingests in flight in this process, by final trace directory (when hashed first). */
const inFlight = new Map<string, Promise<IngestResult>>();
/** Sizes of the files being ingested in this process: a second file of a size in flight is hashed first. */
const inFlightSizes = new Map<number, number>();

/**
 * Builds the trace in a private work dir, then moves it to its final place,
 * `<dataDir>/traces/<id>/`. The id may still be being computed (hashed on
 * its own thread while this decodes); the build waits for it only when it
 * writes the trace's facts.
 */
async function buildIntoPlace(x: {
  file: string;
  label: string;
  id: Promise<string>;
  sizeBytes: number;
  dirs: DataDirPaths;
  work: Workspace;
  opts: IngestOptions;
  report: (p: IngestProgress) => void;
  started: number;
  /** Seconds the hash took (on its own thread, or before the build). */
  hashSeconds: () => number;
  /** True when the hash ran while decoding (seconds.hash is then not on the critical path). */
  hashOverlapped: boolean;
  timer: PhaseTimer;
}): Promise<IngestResult> {
  const { opts, report, work } = x;
  const workDir = work.dir;
  try {
    const { summary, id, detectorsAhead } = await buildTrace(
      x.file,
      x.label,
      x.id,
      x.sizeBytes,
      work,
      opts,
      report,
      x.timer,
    );
    const finalDir = x.dirs.traceDir(id);
    summary.seconds.hash = x.hashSeconds();
    if (x.hashOverlapped) summary.seconds.hashOverlapped = true;
    summary.seconds.total = (performance.now() - x.started) / 1000;
    await fs.writeFile(path.join(workDir, 'info.json'), JSON.stringify(summary, null, 2));
    await fs.mkdir(path.dirname(finalDir), { recursive: true });
    if (!opts.force) {
      // Another process (or, when hashed while decoding, an earlier ingest
      // of the same content) finished first: keep theirs.
      const theirs = await reuseExisting(finalDir, id, x.sizeBytes, report);
      if (theirs) {
        await work.discard();
        return theirs;
      }
    }
    // What is there goes aside only when it is to be replaced: --force, a
    // model another version built, or a broken directory. A reader may then
    // briefly find none, but never a half-built one. A complete current
    // trace that lands after the check above is kept by the rename failing
    // (below), not replaced: the same content from the same code, and a
    // reader may be using it. The aside name is this build's own: two
    // ingests in one process must not share it.
    const old = `${finalDir}.old-${path.basename(workDir)}`;
    const previous = await readSummary(finalDir);
    const replaced =
      previous !== null && modelVersionOf(previous) !== MODEL_VERSION ? modelVersionOf(previous) : undefined;
    if (opts.force || replaced !== undefined || (previous === null && (await exists(finalDir)))) {
      await fs.rename(finalDir, old).catch(() => undefined);
    }
    try {
      await fs.rename(workDir, finalDir);
    } catch (err) {
      // Another ingest of the same content put its complete trace there
      // between the check above and this rename: keep theirs.
      const code = (err as NodeJS.ErrnoException).code;
      const theirs =
        code === 'ENOTEMPTY' || code === 'EEXIST' ? await reuseExisting(finalDir, id, x.sizeBytes, report) : null;
      if (!theirs) throw err;
      await work.discard();
      await fs.rm(old, { recursive: true, force: true });
      return theirs;
    }
    await fs.rm(old, { recursive: true, force: true });
    x.timer.mark('into place');
    x.timer.report(path.basename(x.file));
    report({ phase: 'done', bytesDone: x.sizeBytes, bytesTotal: x.sizeBytes, events: summary.eventsTotal });
    const result: IngestResult = {
      id,
      dbPath: path.join(finalDir, 'trace.duckdb'),
      summary,
      reused: false,
      detectorsAhead,
    };
    if (replaced !== undefined) result.replacedModelVersion = replaced;
    return result;
  } catch (err) {
    await work.discard();
    throw err;
  }
}

/**
 * A private build directory and, by default, the store worker already
 * opening the database in it; both exist before the file is hashed.
 */
interface Workspace {
  dir: string;
  target: LoadTarget;
  store: StoreWorkerClient | null;
  /** The layout an earlier ingest by the same code used (layout_cache.ts), if any. */
  cachedLayout: ModelLayout | null;
  /** The store worker's database is a copy of the schema template (schema_template.ts). */
  storeOnSchema: boolean;
  /** Stops the worker and deletes the directory. */
  discard(): Promise<void>;
}

async function openWorkspace(
  tmpRoot: string,
  withStoreWorker: boolean,
  memoryLimit: string,
  blockSize: number | undefined,
  loadMemoryLimit: string,
): Promise<Workspace> {
  await fs.mkdir(tmpRoot, { recursive: true });
  // The pid in the name lets removeStaleWork() clean up after a crash.
  const dir = await fs.mkdtemp(path.join(tmpRoot, `ingest-${process.pid}-`));
  const target: LoadTarget = {
    dbPath: path.join(dir, 'trace.duckdb'),
    // A fixed memory cap keeps peak memory independent of the trace's size:
    // past it DuckDB writes to disk and spills derive's sorts to the work dir
    // (ingest_memory.ts ingestMemoryLimit: a smaller one for large files).
    memoryLimit,
    tempDirectory: path.join(dir, 'spill'),
    blockSize,
    loadMemoryLimit,
  };
  let store: StoreWorkerClient | null = null;
  let layout: ModelLayout | null = null;
  let storeOnSchema = false;
  try {
    if (withStoreWorker) {
      // Both workers' bundles are found, or built by esbuild at once (the
      // first ingest after a code change): the field worker's was built after
      // the store worker's, and decoding waited for it ("workers ready"
      // 136-736 ms -> 1-3 ms wall, build_balance.v7, 3 alternating pairs).
      // The field thread also starts now, beside the store's, rather than
      // when the decoder first offers raw records (after the file's headers
      // and formats): it booted 0.5-1.6 s into a fresh process's decode, the
      // main thread had filled the batches in flight by then and waited for
      // it while the store thread idled (CPU profiles, sched_wq.v7).
      void workerEntry('field_worker')
        .then((entry) => fieldWorkers.prestart(entry))
        .catch(() => undefined);
      layout = await cachedLayout();
      // As a one-thread load does (loadInProcess): the schema copied from the
      // template, not created, when this code made one and its layout is cached.
      storeOnSchema = layout !== null && (await copySchemaTemplate(target.dbPath, target.blockSize));
      store = await StoreWorkerClient.start(target, layout, storeOnSchema);
    }
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    dir,
    target,
    store,
    cachedLayout: layout,
    storeOnSchema,
    async discard() {
      await store?.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
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
  idReady: Promise<string>,
  sizeBytes: number,
  work: Workspace,
  opts: IngestOptions,
  report: (p: IngestProgress) => void,
  timer: PhaseTimer,
): Promise<{ summary: TraceSummary; id: string; detectorsAhead: DetectorsAhead | null }> {
  const { dir: workDir, target } = work;
  const loaded = work.store
    ? await loadOnStoreWorker(file, label, workDir, work, work.store, report, timer)
    : await loadInProcess(file, label, workDir, target, report, timer);
  try {
    await work.store?.close();
    await fs.rm(path.join(workDir, 'decompressed.dat'), { force: true });
  } catch (err) {
    loaded.engine?.close();
    throw err;
  }
  timer.mark('store closed');

  // The events are committed (derive's scans of uncommitted, transaction-local
  // rows were 5x slower: 10M-event trace.dat, derive 50 s before, 10.4 s after).
  const engine =
    loaded.engine ??
    (await openDuckDb(target.dbPath, { memoryLimit: target.memoryLimit, tempDirectory: target.tempDirectory }));
  // And while derive runs and commits, as the store's COMMIT, when the
  // process holds no more than a fresh one's load (ingest_memory.ts).
  const resident = process.memoryUsage.rss();
  const keepPages = freedPagesKeptThroughDerive(resident, loaded.writerSummary.eventsTotal);
  // Derive's cap, lower when the process holds much (ingest_memory.ts deriveMemoryLimit).
  const deriveLimit = deriveMemoryLimit(resident, target.memoryLimit, keepPages ? KEPT_PAGES_MAX_BYTES : 0);
  timer.note(`derive cap ${deriveLimit}`);
  const deriving = keepPages ? pastDecodePeak() : () => {};
  const summaryOf = (id: string, deriveSeconds: number) =>
    toSummary(loaded.writerSummary, {
      id,
      name: opts.name ?? path.basename(file),
      sourcePath: path.resolve(file),
      sizeBytes,
      compression: loaded.compression,
      outOfOrderLines: loaded.outOfOrderLines,
      cutOff: loaded.cutOff,
      decodeSeconds: loaded.decodeSeconds,
      deriveSeconds,
    });
  // Not for a large trace: the detectors would share derive's cap (ingest_memory.ts LARGE_LOAD_EVENTS).
  const besideDerive = opts.detectorsBesideDerive === true && loaded.writerSummary.eventsTotal < LARGE_LOAD_EVENTS;
  let detectors: DetectorsBesideDerive | null = null;
  let detectorsAhead: DetectorsAhead | null = null;
  try {
    if (deriveLimit !== target.memoryLimit) await engine.exec(`SET memory_limit = '${deriveLimit}'`);
    if (besideDerive) {
      // The facts the detectors read (first and last ts, the events enabled) committed before derive, so that
      // they can run beside it; those that say the model is complete stay in derive's transaction.
      await writeTraceInfo(engine, traceInfoFacts(summaryOf(await idReady, 0)).slice(0, -TRACE_INFO_FINAL_FACTS));
      timer.mark('trace_info facts');
    }
    await engine.exec('BEGIN TRANSACTION');
    timer.mark('derive open');
    report({ phase: 'deriving', bytesDone: 0, bytesTotal: null, events: loaded.writerSummary.eventsTotal });
    const deriveStarted = performance.now();
    await deriveModel(
      engine,
      (step) => timer.mark(step.replace(/\.sql$/, '')),
      loaded.writerSummary.eventsByName,
      // From derive's first one-thread step: derive_sched uses both cores.
      (_step, oneThread) => {
        if (besideDerive && oneThread) detectors ??= startDetectorsBesideDerive(engine);
      },
    );
    const deriveSeconds = (performance.now() - deriveStarted) / 1000;
    const besideCommit = detectors ? await (detectors as DetectorsBesideDerive).afterDerive() : null;

    const summary = summaryOf(await idReady, deriveSeconds);
    const facts = traceInfoFacts(summary);
    await writeTraceInfo(engine, besideDerive ? facts.slice(-TRACE_INFO_FINAL_FACTS) : facts);
    timer.mark('trace_info');
    const commitStarted = performance.now();
    // The COMMIT checkpoints (writes the derived tables to the file once),
    // rather than writing them to the WAL for the CHECKPOINT below to copy
    // again: as ModelStore.commitLoad. The CHECKPOINT stays for what the
    // COMMIT leaves (a WAL below auto_checkpoint_skip_wal_threshold rows).
    await engine.exec("SET checkpoint_threshold = '0B'");
    await engine.exec('COMMIT');
    timer.mark('commit');
    await engine.exec('CHECKPOINT');
    timer.mark('checkpoint');
    summary.seconds.setup = loaded.setupSeconds;
    summary.seconds.commit = (performance.now() - commitStarted) / 1000;
    if (besideCommit) {
      // Before the spill directory goes: they may spill there.
      detectorsAhead = await besideCommit.outputs;
      detectors = null;
      timer.note(`${detectorsAhead?.outputs.size ?? 0} ran`);
      timer.mark('detectors beside derive');
    }
    await fs.rm(target.tempDirectory, { recursive: true, force: true });
    return { summary, id: summary.id, detectorsAhead };
  } finally {
    // A failed derive: the detectors' statement ends before the database closes (engine.ts close).
    await (detectors as DetectorsBesideDerive | null)?.stop();
    deriving();
    engine.close();
    timer.mark('close');
  }
}

/** The events of a file, committed to the database (which is closed again). */
interface Loaded {
  writerSummary: WriterSummary;
  compression: string[];
  outOfOrderLines: number;
  cutOff: SkippedInput | null;
  /** Waiting for the database and schema (0 when ready before hashing ended). */
  setupSeconds: number;
  /** Decoding, writing the events and committing them. */
  decodeSeconds: number;
  /**
   * The database, still open, when the events were written on this thread:
   * derive goes on with it (closing and opening it again cost ~0.1-0.2 CPU-s
   * of the ~1.5 s a 0.1M-event recording takes).
   */
  engine?: Engine;
}

/**
 * Decodes and builds rows on this thread while the store worker appends them
 * to DuckDB on another (files of STORE_WORKER_MIN_EVENTS or more). A third
 * thread decodes the fields of most events (field_worker.ts): this thread
 * then only frames them.
 */
async function loadOnStoreWorker(
  file: string,
  label: string,
  workDir: string,
  work: Workspace,
  store: StoreWorkerClient,
  report: (p: IngestProgress) => void,
  timer: PhaseTimer,
): Promise<Loaded> {
  const setupStarted = performance.now();
  // With a cached layout, decoding starts while the store worker is still
  // starting (it checks the layout before taking any chunk).
  const cached = work.cachedLayout;
  if (work.storeOnSchema) timer.note('store on the schema template');
  let layout = cached;
  if (layout === null) {
    layout = await store.ready();
    void rememberLayout(layout);
  }
  const fields = await FieldWorkerClient.prepare(layout, store);
  timer.mark('workers ready');
  const decodeStarted = performance.now();
  const builder = new ModelBuilder(layout, (table, data) => store.append(table, data), fields, store.chunkMemory);
  let decoded;
  let result;
  try {
    decoded = await decodeRows(file, label, workDir, builder, report);
    timer.mark('decode');
    result = builder.finish();
    await fields.finish();
    timer.mark('fields finish');
  } catch (err) {
    await fields.close();
    // A worker stopped consuming: its own error says why (the store's first,
    // since a failed store also stalls the field worker).
    if (err instanceof WorkerStalled || store.failed() || fields.failed()) {
      if (store.failed()) await store.rethrowFailure();
      if (fields.failed()) await fields.rethrowFailure();
    }
    throw err;
  }
  await fields.close();
  // The next ingests' schema, once the layout cache works (as loadInProcess
  // makes it): on a separate database, while the store appends its last chunks.
  if (!work.storeOnSchema && cached !== null) await makeSchemaTemplate(work.target.blockSize);
  // This thread's decode garbage (the ingest's peak; ingest_memory.ts) goes
  // before the store, at `finish`, raises its cap to derive's: the two must
  // not add up. The store is still appending the last chunks meanwhile.
  collectGarbage();
  // DuckDB's freed pages stay while the store finishes and commits
  // (allocator_decay.ts pastDecodePeak); not for a large trace, whose
  // COMMIT can be the ingest's peak (ingest_memory.ts).
  const keepPages = freedPagesKept(builder.eventCount);
  const committed = keepPages ? pastDecodePeak() : () => {};
  // The COMMIT's cap from what is resident now (ingest_memory.ts
  // commitMemoryLimit); the store worker uses it if the load spilled, and
  // raises it to what its tables need (commitCapAfterLoad, withCommitFloor).
  const commitLimit = commitMemoryLimit(
    process.memoryUsage.rss(),
    store.memoryLimits.load,
    store.memoryLimits.commit,
    keepPages ? KEPT_PAGES_MAX_BYTES : 0,
  );
  timer.note(`commit cap from resident ${commitLimit}`);
  let writerSummary;
  try {
    writerSummary = await store.finish(result, commitLimit);
  } finally {
    committed();
  }
  timer.mark('store finish+commit');
  return {
    writerSummary,
    ...decoded,
    setupSeconds: (decodeStarted - setupStarted) / 1000,
    decodeSeconds: (performance.now() - decodeStarted) / 1000,
  };
}

/** Decodes the file into the builder, reporting progress in events. */
function decodeRows(
  file: string,
  label: string,
  workDir: string,
  builder: ModelBuilder,
  report: (p: IngestProgress) => void,
) {
  let nextCollection = COLLECT_FIRST_AT_EVENTS;
  return decodeFile(file, builder, {
    label,
    scratchDir: workDir,
    onProgress: (phase, bytesDone, bytesTotal) => {
      // The decode loop's garbage, now and then (ingest_memory.ts COLLECT_FIRST_AT_EVENTS, COLLECT_EVERY_EVENTS).
      if (builder.eventCount >= nextCollection) {
        nextCollection = builder.eventCount + COLLECT_EVERY_EVENTS;
        collectGarbage();
      }
      report({ phase, bytesDone, bytesTotal, events: builder.eventCount });
    },
  });
}

/** Decoding and appending on this thread (smaller files, or IngestOptions.worker = false). */
async function loadInProcess(
  file: string,
  label: string,
  workDir: string,
  target: LoadTarget,
  report: (p: IngestProgress) => void,
  timer: PhaseTimer,
): Promise<Loaded> {
  const setupStarted = performance.now();
  // One DuckDB thread, for the load and for derive, which goes on with this
  // engine: a statement's calling thread polls for the result while another
  // DuckDB thread runs its tasks (pthread_mutex_lock/unlock, ExecuteTask,
  // IsResultReady: ~10% of a small ingest's perf samples), so the second
  // thread cost CPU and, on this shared 2-core machine, bought no wall time.
  // CLI, alternating pairs at load 8-10, default threads vs one:
  // perfetto_reclaim.pftrace 5 pairs 0.69-0.88 CPU-s (median 0.81) vs
  // 0.68-0.74 (0.70); reclaim.v7.dat 3 pairs 1.62-1.81 (1.70) vs 1.40-1.48
  // (1.45), 266-271 vs 243-247 MB; x40 Perfetto (1.3M events) 3 pairs
  // 3.07-3.40 (3.07) vs 2.76-2.80 (2.80). Derive alone on a second thread
  // (SET threads = 2 after the load) took that gain back on x40: 2.98-3.48
  // CPU-s. The store worker's load already runs on one (store_worker.ts).
  // While decoding, the load's own cap (as the store worker's load has it,
  // ingest_memory.ts storeMemoryLimit), then derive's for the COMMIT on: with
  // derive's 128MB during the appends, a 56 MB tracebox recording (1.76M
  // events once its block events were decoded) peaked at 382 MB in the CLI
  // and 414 MB on a fresh server.
  const loadCap = target.loadMemoryLimit ?? target.memoryLimit;
  const flushes = oneThreadFlushTiming();
  const open = async (
    layout: ModelLayout | null,
  ): Promise<{ engine: Engine; store: ModelStore; onTemplate: boolean }> => {
    // The schema, copied from the template when this code made one and its layout is cached (schema_template.ts).
    const onTemplate = layout !== null && (await copySchemaTemplate(target.dbPath, target.blockSize));
    const engine = await openDuckDb(target.dbPath, {
      memoryLimit: loadCap,
      tempDirectory: target.tempDirectory,
      blockSize: target.blockSize,
      threads: 1,
    });
    try {
      const store = onTemplate
        ? await ModelStore.beginLoadOnSchema(engine, layout)
        : await ModelStore.beginLoad(engine);
      raiseCapWithShapeTables(store, engine, loadCap);
      store.flushEveryRows(ONE_THREAD_FLUSH_EVERY_ROWS);
      return { engine, store, onTemplate };
    } catch (err) {
      engine.close();
      throw err;
    }
  };
  // With the tables' layout cached (layout_cache.ts, as the store worker's
  // loads use it), decoding starts at once and the database opens and
  // creates its schema meanwhile (its statements run on libuv's threads):
  // on this path they were 150-250 ms of a 0.35M-event file's ingest before
  // its first event was decoded (reclaim.v7: open, schema 123 ms). The
  // chunks built before the store is ready wait for it, in order.
  const layout = await cachedLayout();
  const opening = open(layout);
  // Not awaited until the decode ends: its failure must not be unhandled meanwhile.
  opening.catch(() => undefined);
  let ready: { engine: Engine; store: ModelStore; onTemplate: boolean } | null = null;
  let early: { table: number; data: ChunkData }[] | null = [];
  const buffers = new PooledBuffers();
  const append = (store: ModelStore, table: number, data: ChunkData) =>
    store.append(table, data, () => buffers.give(data.buffer));
  let openFailed: unknown = null;
  const storeReady = opening.then((r) => {
    // Checked before any chunk is appended, as the store worker does: rows built for another layout would land in the wrong columns.
    if (layout !== null && !sameLayout(layout, r.store.layout))
      throw new Error(
        'the cached table layout does not match the schema (delete layout-*.json in the private cache directory, private_cache_dir.ts)',
      );
    for (const e of early!) append(r.store, e.table, e.data);
    early = null;
    ready = r;
    return r;
  });
  // The decode stops at its next chunk once the store cannot take them.
  storeReady.catch((err: unknown) => (openFailed = err));
  if (layout === null) await storeReady; // the first ingest by this code: the layout comes from the schema
  timer.mark('open');
  const decodeStarted = performance.now();
  const builder = new ModelBuilder(
    layout ?? ready!.store.layout,
    (table, data) => {
      if (ready !== null) append(ready.store, table, data);
      else if (openFailed !== null) throw openFailed;
      else early!.push({ table, data });
    },
    null,
    buffers,
  );
  let decoded;
  try {
    decoded = await decodeRows(file, label, workDir, builder, report);
  } catch (err) {
    // The database is closed once open (an open that failed closed its own),
    // before the caller deletes its directory.
    await opening.then(
      (r) => r.engine.close(),
      () => undefined,
    );
    throw err;
  }
  timer.mark('decode');
  const { engine } = await opening;
  try {
    const { store, onTemplate } = await storeReady;
    if (layout === null) void rememberLayout(store.layout);
    // The next ingests' schema, once the layout cache works (a load on the template takes its layout).
    if (!onTemplate && layout !== null) await makeSchemaTemplate(target.blockSize);
    timer.mark('schema');
    // Derive's cap for the COMMIT on, never below what the load's tables need to commit (as the store worker's).
    await engine.exec(`SET memory_limit = '${withCommitFloor(target.memoryLimit, await store.storedColumns())}'`);
    flushes?.finishing();
    const writerSummary = await store.commitLoad(builder.finish());
    flushes?.report();
    timer.mark('finish+commit');
    return {
      writerSummary,
      ...decoded,
      setupSeconds: (decodeStarted - setupStarted) / 1000,
      decodeSeconds: (performance.now() - decodeStarted) / 1000,
      engine,
    };
  } catch (err) {
    engine.close();
    throw err;
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
    cutOff: SkippedInput | null;
    decodeSeconds: number;
    deriveSeconds: number;
  },
): TraceSummary {
  return {
    id: x.id,
    modelVersion: MODEL_VERSION,
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
    cutOff: x.cutOff && { where: x.cutOff.where, unit: x.cutOff.unit, reason: x.cutOff.reason },
    meta: w.meta,
    ingestedAt: new Date().toISOString(),
    seconds: { hash: 0, decode: x.decodeSeconds, derive: x.deriveSeconds, total: 0 },
  };
}

/** The last facts of traceInfoFacts (ingest_finished_at, complete): they say the model is complete. */
const TRACE_INFO_FINAL_FACTS = 2;

/** trace_info's rows (key, value), in the order they are written. */
function traceInfoFacts(s: TraceSummary): Array<[string, string]> {
  const facts: Record<string, string> = {
    ...Object.fromEntries(Object.entries(s.meta).map(([k, v]) => [`meta.${k}`, v])),
    id: s.id,
    model_version: String(MODEL_VERSION),
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
  return Object.entries(facts);
}

async function writeTraceInfo(engine: Engine, entries: Array<[string, string]>): Promise<void> {
  const placeholders = entries.map((_, i) => `($${i * 2 + 1}, $${i * 2 + 2})`).join(', ');
  await engine.query(`INSERT INTO trace_info VALUES ${placeholders}`, entries.flat());
}
