/**
 * The main thread's handle on store_worker.ts: starts it, hands it column
 * chunks (with backpressure), and collects what it wrote.
 *
 * The worker is started before the ingest hashes the file, so loading
 * DuckDB in a new thread and creating the schema (~0.35 s) overlaps with
 * hashing instead of delaying the first event.
 */
import { Worker } from 'node:worker_threads';
import { chunkTransferList, type ChunkData } from '../model/column_chunk.ts';
import { SCHEMA_SQL_PATH, type BuilderResult, type ModelLayout, type WriterSummary } from '../model/model_store.ts';
import { CONSUMED, FAILED, MAX_IN_FLIGHT, type FromStoreWorker, type StoreWorkerInput, type ToStoreWorker } from './store_protocol.ts';
import { storeWorkerBundle } from './worker_bundle.ts';

/** The database the events are loaded into. */
export interface LoadTarget {
  dbPath: string;
  memoryLimit: string;
  tempDirectory: string;
}

/** A wait for the worker failed: the worker's own error (finish() or close()) says why. */
export class StoreWorkerStalled extends Error {}

export class StoreWorkerClient {
  private posted = 0;
  private finished = false;
  private closed: Promise<void> | null = null;
  private layout: Promise<ModelLayout> | null = null;

  private constructor(
    private readonly worker: Worker,
    private readonly counters: Int32Array,
    private readonly replies: WorkerReplies,
  ) {}

  /** Starts the worker: it opens the database and creates the schema right away. */
  static async start(target: LoadTarget): Promise<StoreWorkerClient> {
    // The bundled worker starts in milliseconds; the TypeScript entry (through
    // tsx's loader) is the fallback if esbuild cannot run.
    const workerPath = await storeWorkerBundle().catch(() => new URL('./store_worker.mjs', import.meta.url));
    const control = new SharedArrayBuffer(8);
    const input: StoreWorkerInput = { ...target, schemaSqlPath: SCHEMA_SQL_PATH, control };
    const worker = new Worker(workerPath, { workerData: input });
    return new StoreWorkerClient(worker, new Int32Array(control), workerReplies(worker));
  }

  /** The tables' layout, once the schema exists. */
  ready(): Promise<ModelLayout> {
    this.layout ??= this.replies.expect('ready').then((m) => m.layout);
    return this.layout;
  }

  /**
   * Hands a chunk over (its buffers are transferred). Blocks while
   * MAX_IN_FLIGHT chunks (a few MB) wait in the worker's queue, so memory
   * stays bounded however fast decoding runs; the builder's chunk callback is
   * synchronous, hence Atomics.wait.
   */
  append(table: number, data: ChunkData): void {
    this.waitUntilConsumed(this.posted - MAX_IN_FLIGHT + 1);
    this.worker.postMessage({ type: 'chunk', table, data } satisfies ToStoreWorker, chunkTransferList(data));
    this.posted++;
  }

  /** Writes the whole-trace tables and commits; the worker then closes the database. */
  async finish(result: BuilderResult): Promise<WriterSummary> {
    this.worker.postMessage({ type: 'finish', result } satisfies ToStoreWorker);
    const done = await this.replies.expect('done');
    this.finished = true;
    return done.summary;
  }

  /**
   * The worker's own error, after a StoreWorkerStalled: throws it (or a
   * plain failure if it left without one).
   */
  async rethrowFailure(): Promise<never> {
    await this.replies.expect('done');
    throw new Error('store worker: stopped without an error');
  }

  /** Stops the worker; unless finished, it first closes the database (a second at most). Idempotent. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      if (!this.finished) {
        this.worker.postMessage({ type: 'abort' } satisfies ToStoreWorker);
        await this.replies.exited(1000);
      }
      await this.worker.terminate();
    })();
    return this.closed;
  }

  private waitUntilConsumed(consumed: number): void {
    const counters = this.counters;
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
}

interface WorkerReplies {
  expect<T extends FromStoreWorker['type']>(type: T): Promise<Extract<FromStoreWorker, { type: T }>>;
  /** Resolves when the worker has exited or `ms` have passed. */
  exited(ms: number): Promise<void>;
}

/** The worker's messages, awaited one at a time; an error or exit rejects. */
function workerReplies(worker: Worker): WorkerReplies {
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
