/**
 * Messages between the ingest (main thread), field_worker.ts and
 * store_worker.ts when trace.dat fields are decoded on their own thread:
 *
 *   main --batches--> field worker --chunks--> store worker <--chunks-- main
 *
 * The field worker posts its chunks straight to the store worker on a
 * MessagePort of their own, then `end` with its dictionaries; the store
 * worker commits only after that `end`.
 */
import type { MessagePort } from 'node:worker_threads';
import type { RawSpec } from '../model/model_builder.ts';
import type { StringRows } from '../model/args_rows.ts';
import type { ChunkData } from '../model/column_chunk.ts';
import type { ModelLayout } from '../model/model_layout.ts';
import type { RecordBatchData } from '../model/record_batch.ts';
import type { ShapeResult } from '../model/untyped_rows.ts';

/**
 * Int32 slots of the field worker's control buffer: KiB of record batches
 * decoded (in_flight_bytes.ts; main posts at most ingest_memory.ts
 * IN_FLIGHT_BUDGET_BYTES ahead of it).
 */
export const BATCHES_CONSUMED_KIB = 0;
/** Set to 1 by the field worker when it failed (main may be blocked waiting for it). */
export const FIELD_FAILED = 1;
/** Bytes of the field worker's control buffer. */
export const FIELD_CONTROL_BYTES = 8;

export interface FieldWorkerInput {
  layout: ModelLayout;
  spec: RawSpec;
  /** TraceHeader.tsBaseNs as decimal text. */
  tsBaseNs: string;
  /** The typed tables the batches fill (only these are written). */
  tables: string[];
  /** SharedArrayBuffer of 2 Int32 slots: BATCHES_CONSUMED_KIB, FIELD_FAILED. */
  control: SharedArrayBuffer;
  /** The store worker's control buffer (store_protocol.ts): FIELD_CHUNKS_CONSUMED_KIB, FAILED. */
  storeControl: SharedArrayBuffer;
  /**
   * Where the chunks go: the store worker's end is its `fieldChannel`. The
   * store sends each chunk's buffer back on it (ArrayBuffer[] messages,
   * recycled_buffers.ts).
   */
  storePort: MessagePort;
  /** Where each batch's buffers go back to the main thread once decoded. */
  batchReturn: MessagePort;
}

/** Main thread -> field worker. */
export type ToFieldWorker =
  /** Decode one trace's batches (the thread is pooled, worker_pool.ts: one job after another). */
  | { type: 'job'; input: FieldWorkerInput }
  /** kib: what the batch counts in flight (in_flight_bytes.ts), released once decoded. */
  | { type: 'batch'; batch: RecordBatchData; kib: number }
  /** No more batches: flush, send `end` to the store, reply `done`. */
  | { type: 'finish' }
  /** Decoding failed: stop (the thread is terminated). */
  | { type: 'abort' };

/** Field worker -> main thread. `idle`: once, when the thread has loaded its code (worker_pool.ts prestart). */
export type FromFieldWorker = { type: 'idle' } | { type: 'done' } | { type: 'error'; message: string };

/** Field worker -> store worker, on the field channel. */
export type FieldToStore =
  | { type: 'chunk'; table: number; data: ChunkData; kib: number }
  /**
   * The last chunk was sent. dicts: the field worker's typed-column
   * dictionaries (dicts[dict][id]); strings: its args dictionary as
   * `_string` rows (args_rows.ts); shapes: its shape tables (untyped_rows.ts); unparsed: text events whose fields did
   * not parse (added to the builder's count).
   */
  | { type: 'end'; dicts: string[][]; strings: StringRows; shapes: ShapeResult[]; unparsed: number };
