/**
 * The main thread's handle on store_worker.ts: gives it a load (on an idle
 * thread from worker_pool.ts, or a new one), hands it column chunks (with
 * backpressure), and collects what it wrote.
 *
 * The load starts as soon as the ingest knows it builds (before decoding,
 * while the hash runs on a thread of its own; decoding does not wait for
 * the schema, layout_cache.ts), so a new thread's loading of DuckDB and the
 * schema's creation (~0.35 s) do not delay the first event.
 */
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import type { BufferSource } from '../model/buffer_source.ts';
import { chunkTransferList, type ChunkData } from '../model/column_chunk.ts';
import { SCHEMA_SQL_PATH, type BuilderResult, type ModelLayout, type WriterSummary } from '../model/model_store.ts';
import {
  CONSUMED_KIB,
  CONTROL_BYTES,
  FAILED,
  type FromStoreWorker,
  type StoreWorkerInput,
  type ToStoreWorker,
} from './store_protocol.ts';
import { RecycledBuffers } from './recycled_buffers.ts';
import { IN_FLIGHT_BUDGET_BYTES, STORE_MEMORY_LIMIT } from './ingest_memory.ts';
import { chunkBytes, InFlightBudget } from './in_flight_bytes.ts';
import { workerReplies, type WorkerReplies } from './worker_replies.ts';
import { workerEntry } from './worker_bundle.ts';
import { storeWorkers } from './worker_pool.ts';

/** The database the events are loaded into. */
export interface LoadTarget {
  dbPath: string;
  /** DuckDB's cap while deriving (and for an in-process load); the store thread's load uses loadMemoryLimit. */
  memoryLimit: string;
  tempDirectory: string;
  /** Block size of the new database file (ingest_memory.ts ingestBlockSize); undefined: DuckDB's default. */
  blockSize?: number;
  /** DuckDB's cap on the store thread while it loads (ingest_memory.ts storeMemoryLimit); default STORE_MEMORY_LIMIT. */
  loadMemoryLimit?: string;
}

export class StoreWorkerClient {
  private finished = false;
  private closed: Promise<void> | null = null;
  private layout: Promise<ModelLayout> | null = null;
  /** The chunks' bytes posted and not yet appended. */
  private readonly inFlight: InFlightBudget;

  private constructor(
    private readonly worker: Worker,
    private readonly entry: string | URL,
    private readonly counters: Int32Array,
    private readonly replies: WorkerReplies<FromStoreWorker>,
    private readonly returned: RecycledBuffers,
    /** DuckDB's caps of this load: while appending, and from `finish` on unless finish gives one. */
    readonly memoryLimits: { load: string; commit: string },
  ) {
    this.inFlight = new InFlightBudget(
      counters,
      CONSUMED_KIB,
      FAILED,
      IN_FLIGHT_BUDGET_BYTES / 1024,
      'the store worker',
    );
  }

  /** Hands the load to a store thread (a pooled one if idle): it opens the database and creates the schema right away. */
  static async start(
    target: LoadTarget,
    expectedLayout: ModelLayout | null = null,
    onSchema = false,
  ): Promise<StoreWorkerClient> {
    // The bundled worker starts in milliseconds; the TypeScript entry (through
    // tsx's loader) is the fallback if esbuild cannot run.
    const entry = await workerEntry('store_worker');
    const control = new SharedArrayBuffer(CONTROL_BYTES);
    const { port1, port2 } = new MessageChannel();
    const input: StoreWorkerInput = {
      ...target,
      // The load's own cap, lower than derive's (ingest_memory.ts), until it commits.
      memoryLimit: target.loadMemoryLimit ?? STORE_MEMORY_LIMIT,
      commitMemoryLimit: target.memoryLimit,
      schemaSqlPath: SCHEMA_SQL_PATH,
      control,
      expectedLayout,
      onSchema: onSchema && expectedLayout !== null,
      chunkReturn: port2,
    };
    const worker = storeWorkers.take(entry);
    const replies = workerReplies<FromStoreWorker>(worker, 'store worker');
    worker.postMessage({ type: 'job', input } satisfies ToStoreWorker, [port2]);
    return new StoreWorkerClient(worker, entry, new Int32Array(control), replies, new RecycledBuffers(port1), {
      load: input.memoryLimit,
      commit: input.commitMemoryLimit,
    });
  }

  /** Buffers for the chunks posted here: the worker sends each back once appended. */
  get chunkMemory(): BufferSource {
    return this.returned;
  }

  /** The tables' layout, once the schema exists. */
  ready(): Promise<ModelLayout> {
    this.layout ??= this.replies.expect('ready').then((m) => m.layout);
    return this.layout;
  }

  /**
   * Hands a chunk over (its buffers are transferred). Blocks while the
   * chunks waiting in the worker's queue hold IN_FLIGHT_BUDGET_BYTES, so
   * memory stays bounded however fast decoding runs; the builder's chunk
   * callback is synchronous, hence Atomics.wait (in_flight_bytes.ts).
   */
  append(table: number, data: ChunkData): void {
    const kib = this.inFlight.reserve(chunkBytes(data));
    this.worker.postMessage({ type: 'chunk', table, data, kib } satisfies ToStoreWorker, chunkTransferList(data));
  }

  /** The control buffer the field worker waits on (FIELD_CHUNKS_CONSUMED_KIB, FAILED). */
  get control(): SharedArrayBuffer {
    return this.counters.buffer as SharedArrayBuffer;
  }

  /** Chunks will also come from the field worker, on this port (its other end is the field worker's). */
  attachFieldChannel(port: MessagePort): void {
    this.worker.postMessage({ type: 'fieldChannel', port } satisfies ToStoreWorker, [port]);
  }

  /** Writes the whole-trace tables and commits, at `memoryLimit` if given (else the target's memoryLimit); the worker then closes the database. */
  async finish(result: BuilderResult, memoryLimit?: string): Promise<WriterSummary> {
    await this.ready(); // its reply comes first, also when the caller had the layout from the cache
    this.worker.postMessage({ type: 'finish', result, memoryLimit } satisfies ToStoreWorker);
    const done = await this.replies.expect('done');
    this.finished = true;
    if (process.env.STALLSCOPE_TIMING)
      process.stderr.write(
        `[timing] main thread: ${this.inFlight.describe('chunks to the store')}; ${this.returned.describe()}\n`,
      );
    return done.summary;
  }

  /** Whether the worker flagged a failure (rethrowFailure() gives its error). */
  failed(): boolean {
    return Atomics.load(this.counters, FAILED) !== 0;
  }

  /**
   * The worker's own error, after a WorkerStalled: throws it (or a
   * plain failure if it left without one).
   */
  async rethrowFailure(): Promise<never> {
    await this.ready();
    await this.replies.expect('done');
    throw new Error('store worker: stopped without an error');
  }

  /**
   * Ends this load. A finished one gives the thread back to the pool;
   * otherwise the thread first closes the database (a second at most) and is
   * terminated. Idempotent.
   */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.returned.close();
      if (this.finished) {
        this.replies.detach();
        storeWorkers.give(this.worker, this.entry);
        return;
      }
      this.worker.postMessage({ type: 'abort' } satisfies ToStoreWorker);
      await this.replies.exited(1000);
      this.replies.detach();
      await storeWorkers.discard(this.worker);
    })();
    return this.closed;
  }
}
