/** Messages between the ingest (main thread) and store_worker.ts. */
import type { MessagePort } from 'node:worker_threads';
import type { ChunkData } from '../model/column_chunk.ts';
import type { BuilderResult, ModelLayout } from '../model/model_layout.ts';
import type { WriterSummary } from '../model/model_store.ts';

/**
 * Int32 slots of the shared control buffer: KiB of the main thread's chunks
 * the worker has appended (in_flight_bytes.ts: each producer posts at most
 * ingest_memory.ts IN_FLIGHT_BUDGET_BYTES ahead of it).
 */
export const CONSUMED_KIB = 0;
/** Set to 1 by the worker when it failed (a producer may be blocked waiting for it). */
export const FAILED = 1;
/** KiB of the field worker's chunks appended (field_protocol.ts). */
export const FIELD_CHUNKS_CONSUMED_KIB = 2;
/** Bytes of the control buffer. */
export const CONTROL_BYTES = 12;

export interface StoreWorkerInput {
  dbPath: string;
  memoryLimit: string;
  /** DuckDB's cap from `finish` on (closing the appenders, COMMIT): derive's, which follows. */
  commitMemoryLimit: string;
  tempDirectory: string;
  /** Block size of the new database file (ingest_memory.ts ingestBlockSize); undefined: DuckDB's default. */
  blockSize?: number;
  schemaSqlPath: string;
  /** The layout the main thread already builds rows for (layout_cache.ts), checked against the schema; null: none. */
  expectedLayout: ModelLayout | null;
  /**
   * dbPath is a copy of the schema template (schema_template.ts), whose layout
   * is expectedLayout: the load starts on its schema instead of creating it.
   */
  onSchema: boolean;
  /** SharedArrayBuffer of 3 Int32 slots: CONSUMED_KIB, FAILED, FIELD_CHUNKS_CONSUMED_KIB. */
  control: SharedArrayBuffer;
  /** Where the main thread's chunk buffers go back once appended (recycled_buffers.ts); the field worker's go back on its channel. */
  chunkReturn: MessagePort;
}

/** Main thread -> worker. */
export type ToStoreWorker =
  /** Load one trace (the thread is pooled, worker_pool.ts: one job after another). */
  | { type: 'job'; input: StoreWorkerInput }
  /** kib: what the chunk counts in flight (in_flight_bytes.ts), released once appended. */
  | { type: 'chunk'; table: number; data: ChunkData; kib: number }
  /** Chunks will also come from the field worker, on this port (field_protocol.ts FieldToStore). */
  | { type: 'fieldChannel'; port: MessagePort }
  /** Commit once the field channel (if any) has ended; the result's dictionaries are merged with the field worker's. */
  | {
      type: 'finish';
      result: BuilderResult;
      /** DuckDB's cap for the closing flushes and COMMIT (ingest_memory.ts commitMemoryLimit); absent: commitMemoryLimit of the input. */
      memoryLimit?: string;
    }
  /** Decoding failed: close the database (the work dir is deleted; the thread is terminated). */
  | { type: 'abort' };

/** Worker -> main thread. */
export type FromStoreWorker =
  /** Once, when the thread has loaded its code (worker_pool.ts prestart). */
  | { type: 'idle' }
  | { type: 'ready'; layout: ModelLayout }
  | { type: 'done'; summary: WriterSummary }
  | { type: 'error'; message: string };
