/**
 * Where column chunks (column_chunk.ts) and record batches (record_batch.ts)
 * get their memory.
 *
 * Both are handed to another thread whole (transferred), so each needs a
 * fresh buffer: by default a new ArrayBuffer. An ingest with worker threads
 * passes buffers its consumer sent back instead (ingest/recycled_buffers.ts):
 * a 10M-event ingest otherwise allocates ~3 GB of short-lived buffers, and
 * V8 answers the external-memory growth with frequent full GCs in every
 * thread.
 */
export interface BufferSource {
  /** A buffer of exactly `bytes` bytes, all zero unless `zeroed` is false (the caller writes every byte it hands on). */
  take(bytes: number, zeroed?: boolean): ArrayBuffer;
}

export const NEW_BUFFERS: BufferSource = {
  take: (bytes) => new ArrayBuffer(bytes),
};
