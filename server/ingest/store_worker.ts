/**
 * The thread that owns DuckDB while a trace's events are loaded: it creates
 * the schema, appends the column chunks the main thread posts (transferred,
 * not copied), writes the whole-trace tables and commits, then closes the
 * database so the main thread can open it to derive.
 *
 * Why a thread: decoding and row building are JavaScript; appending is
 * native work in DuckDB (copying vectors, compressing row groups at each
 * appender flush) that took about a third of the load on one thread. Here
 * the two overlap on two CPUs. The opposite split (decoding on the worker,
 * DuckDB on the main thread) measured slower: the builder's hot code ran
 * ~1.5x slower on the worker, which then was the bottleneck. A third thread
 * decodes most events' fields (field_worker.ts) and posts its chunks here on
 * a port of its own.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import { openDuckDb, type Engine } from '../engine/engine.ts';
import { flushTiming, type OpenAppenders } from '../model/column_appender.ts';
import type { ChunkData } from '../model/column_chunk.ts';
import { mergeDicts, sameLayout, type BuilderResult } from '../model/model_layout.ts';
import { ModelStore } from '../model/model_store.ts';
import type { FieldToStore } from './field_protocol.ts';
import { sendBuffersBack } from './recycled_buffers.ts';
import { releaseInFlight } from './in_flight_bytes.ts';
import { threadCpuNs } from './thread_cpu.ts';
import {
  CONSUMED_KIB,
  FAILED,
  FIELD_CHUNKS_CONSUMED_KIB,
  type FromStoreWorker,
  type StoreWorkerInput,
  type ToStoreWorker,
} from './store_protocol.ts';
import { serveJobs } from './job_loop.ts';
import { commitCapAfterLoad, withCommitFloor } from './ingest_memory.ts';
import { raiseCapWithShapeTables } from './load_cap.ts';

const port = parentPort!;

function post(message: FromStoreWorker): void {
  port.postMessage(message);
}

/**
 * Under $STALLSCOPE_TIMING, what this thread's CPU went to in one load:
 * printed as `[timing] store thread: ...` (CPU ms): appending (from the job's
 * start to `finish`, of which DuckDB's appender flushes) and finish + COMMIT,
 * and the COMMIT's memory cap.
 * The flushes are where the load's row groups are built, compressed and
 * written (and, past the store's memory cap, spilled and read back).
 */
function storeThreadTiming(): {
  finishing(): void;
  report(commitCap: string, open: OpenAppenders['stats']): void;
} | null {
  const start = process.env.STALLSCOPE_TIMING ? threadCpuNs() : null;
  if (start === null) return null;
  flushTiming.clock = () => threadCpuNs()!;
  flushTiming.cpuNs = 0;
  flushTiming.flushes = 0;
  let finishAt = start;
  let flushNs = 0;
  let flushes = 0;
  const ms = (ns: number) => (ns / 1e6).toFixed(0);
  return {
    finishing() {
      finishAt = threadCpuNs()!;
      flushNs = flushTiming.cpuNs;
      flushes = flushTiming.flushes;
    },
    report(commitCap, open) {
      flushTiming.clock = null;
      process.stderr.write(
        `[timing] store thread: appending ${ms(finishAt - start)} (flushes ${ms(flushNs)} in ${flushes}), ` +
          `finish+commit ${ms(threadCpuNs()! - finishAt)} (of which closing appenders' flushes ${ms(flushTiming.cpuNs - flushNs)}) CPU ms, commit cap ${commitCap}; ` +
          `open appenders' chunks at most ${(open.peakBytes / 1048576).toFixed(1)} MB (${open.closed} closed by the budget, ${open.collections} collections)\n`,
      );
    },
  };
}

/** Bytes DuckDB has spilled to its temp files so far: what a COMMIT reads back. */
async function spilledBytes(engine: Engine): Promise<number> {
  const [row] = await engine.query<{ bytes: bigint | null }>('SELECT sum(size) AS bytes FROM duckdb_temporary_files()');
  return Number(row?.bytes ?? 0);
}

/**
 * One trace's load: opens its database, appends chunks as they come (from
 * main, and from the field worker's channel), commits on `finish`. Messages
 * that arrive while the database opens wait in `early`.
 */
function startJob(input: StoreWorkerInput, onEnd: () => void): (m: ToStoreWorker) => void {
  const control = new Int32Array(input.control);
  const timing = storeThreadTiming();
  let failed = false;
  let engine: Engine | null = null;
  let store: ModelStore | null = null;
  const early: ToStoreWorker[] = [];

  /** The engine call in flight (its query runs on libuv's pool), if any. */
  let running: Promise<unknown> | null = null;
  /** `p`, an engine call, awaited with `running` set: an abort meanwhile leaves the close to its end. */
  const during = async <T>(p: Promise<T>): Promise<T> => {
    running = p;
    try {
      return await p;
    } finally {
      if (running === p) running = null;
    }
  };
  /**
   * Closes the database now, or when the engine call in flight ends. A
   * DuckDB connection must not be closed under a running query: the query's
   * thread then drops the last reference to its client context and destroys
   * it while holding the context's lock, which the destructor takes again.
   * That thread (one of libuv's four) deadlocks, and this worker can never
   * end: an abort during the schema's creation hung the ingest that
   * terminated it, and then the process's exit (seen with gdb; the fifth of
   * a run of aborts at random moments of the start-up hung).
   */
  const closeEngine = () => {
    const e = engine;
    engine = null;
    if (e === null) return;
    if (running === null) closeQuietly(e);
    else
      void running.then(
        () => closeQuietly(e),
        () => closeQuietly(e),
      );
  };

  const fail = (err: unknown) => {
    failed = true;
    closeEngine();
    Atomics.store(control, FAILED, 1);
    Atomics.notify(control, CONSUMED_KIB);
    Atomics.notify(control, FIELD_CHUNKS_CONSUMED_KIB);
    post({ type: 'error', message: (err as Error)?.message ?? String(err) });
    // Not reusable: the main thread terminates this thread.
  };

  // Appends a chunk, sends the buffer back for its next chunk (DuckDB copied
  // the values), then releases its KiB to its producer (counter: CONSUMED_KIB
  // or FIELD_CHUNKS_CONSUMED_KIB; in that order, so the producer the release
  // wakes finds the buffer on its port). A shape table's first chunk waits
  // for the table to be created (model_store.ts), and the chunks after it
  // with it.
  const appendChunk = (table: number, data: ChunkData, kib: number, counter: number, back: MessagePort) => {
    store!.append(table, data, () => {
      sendBuffersBack(back, [data.buffer]);
      releaseInFlight(control, counter, kib);
    });
  };

  // The field worker's channel, if it has one: its chunks, then `end`.
  let field: { port: MessagePort; end: Extract<FieldToStore, { type: 'end' }> | null } | null = null;
  let pendingFinish: { result: BuilderResult; memoryLimit: string } | null = null;
  const commit = (result: BuilderResult, memoryLimit: string) => {
    void (async () => {
      const end = field?.end;
      if (end) {
        result = {
          ...result,
          dicts: mergeDicts(result.dicts, end.dicts),
          strings: result.strings.concat(end.strings),
          shapes: result.shapes.concat(end.shapes),
          unparsed: result.unparsed + end.unparsed,
        };
      }
      timing?.finishing();
      // Decoding has ended and its threads' buffers are going: from here the
      // process holds what derive will, so the load gets derive's cap, or
      // less when it spilled rows the COMMIT reads back while the process
      // still holds much (ingest_memory.ts commitCapAfterLoad), but never
      // less than its tables need to commit (withCommitFloor). At the load's
      // cap, closing the appenders and the COMMIT evicted blocks to the spill
      // file (zstd) only to read them back a moment later: ~40% of the closing
      // flushes' CPU and ~10% of the COMMIT's (perf, sched_wq.v7).
      // The stored columns first: storedColumns() waits for the shape tables
      // still being created and the chunks queued behind them. A statement
      // run before that (the spill query) is in flight while that drain
      // appends, and an appender's flush on a connection with a statement in
      // flight fails with "Attempting to execute an unsuccessful or closed
      // pending query result": block_2m5.v7 failed so once, after all its
      // events were decoded, in a server that had just loaded the sample.
      const storedColumns = await during(store!.storedColumns());
      const spilled = await during(spilledBytes(engine!));
      const limit = withCommitFloor(commitCapAfterLoad(memoryLimit, input.commitMemoryLimit, spilled), storedColumns);
      await during(engine!.exec(`SET memory_limit = '${limit}'`));
      const summary = await during(store!.commitLoad(result));
      if (failed) return; // aborted meanwhile: closeEngine() closes it
      timing?.report(limit, store!.openAppenders.stats);
      closeEngine();
      input.chunkReturn.close();
      onEnd();
      post({ type: 'done', summary });
    })().catch(fail);
  };
  const onFieldMessage = (m: FieldToStore) => {
    if (failed || !field) return;
    try {
      if (m.type === 'chunk') {
        appendChunk(m.table, m.data, m.kib, FIELD_CHUNKS_CONSUMED_KIB, field.port);
        return;
      }
      field.end = m;
      field.port.close();
      if (pendingFinish) commit(pendingFinish.result, pendingFinish.memoryLimit);
    } catch (err) {
      fail(err);
    }
  };

  const handle = (m: ToStoreWorker) => {
    if (m.type === 'abort') {
      // Also after a failure: the main thread waits for this thread to end.
      failed = true;
      closeEngine();
      field?.port.close();
      input.chunkReturn.close();
      port.close(); // the thread ends: an aborted one is not reused
      return;
    }
    if (failed) return;
    if (store === null) {
      early.push(m);
      return;
    }
    try {
      if (m.type === 'chunk') {
        appendChunk(m.table, m.data, m.kib, CONSUMED_KIB, input.chunkReturn);
        return;
      }
      if (m.type === 'fieldChannel') {
        field = { port: m.port, end: null };
        m.port.on('message', onFieldMessage);
        return;
      }
      if (m.type === 'job') throw new Error('store worker: a job arrived before the last one ended');
      // finish: the field worker's chunks may still be queued on its port.
      const memoryLimit = m.memoryLimit ?? input.commitMemoryLimit;
      if (field && !field.end) pendingFinish = { result: m.result, memoryLimit };
      else commit(m.result, memoryLimit);
    } catch (err) {
      fail(err);
    }
  };

  void (async () => {
    // One DuckDB thread: appending is this thread's work anyway, and with a
    // second one the load took more CPU for nothing (10M-event trace.dat, five
    // runs each: 27-33 CPU-s, median 30.2, vs 31-34, median 33.4; wall median
    // 19.6 vs 20.7 s). Derive, later on the main thread, uses all cores.
    engine = await openDuckDb(input.dbPath, {
      memoryLimit: input.memoryLimit,
      tempDirectory: input.tempDirectory,
      blockSize: input.blockSize,
      threads: 1,
    });
    if (failed) {
      closeQuietly(engine); // aborted while opening
      return;
    }
    const opened = await during(
      input.onSchema && input.expectedLayout
        ? ModelStore.beginLoadOnSchema(engine, input.expectedLayout, input.schemaSqlPath)
        : ModelStore.beginLoad(engine, input.schemaSqlPath),
    );
    if (failed) return; // aborted meanwhile: closeEngine() closes it once beginLoad ended
    if (input.expectedLayout && !sameLayout(input.expectedLayout, opened.layout)) {
      // Rows built for another layout would land in the wrong columns.
      throw new Error(
        'the cached table layout does not match the schema (delete layout-*.json in the private cache directory, private_cache_dir.ts)',
      );
    }
    store = opened;
    store.onAsyncError = fail;
    raiseCapWithShapeTables(store, engine, input.memoryLimit);
    post({ type: 'ready', layout: opened.layout });
    for (const m of early.splice(0)) handle(m);
  })().catch(fail);
  return handle;
}

// Jobs, one after the other (worker_pool.ts keeps this thread between ingests).
serveJobs<StoreWorkerInput, Exclude<ToStoreWorker, { type: 'job' }>>(port, startJob);

function closeQuietly(e: Engine): void {
  try {
    e.close();
  } catch {
    // already closed
  }
}
