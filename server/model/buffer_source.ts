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

/**
 * Buffers handed back by their consumer on the same thread (the in-process
 * load appends each chunk synchronously, so its buffer is free once
 * appended): a fresh ArrayBuffer per chunk left ~60 MB of garbage external
 * memory between collections on a 1M-event ingest.
 */
export class PooledBuffers implements BufferSource {
  private readonly idle = new Map<number, ArrayBuffer[]>();

  take(bytes: number, zeroed = true): ArrayBuffer {
    const b = this.idle.get(bytes)?.pop();
    if (b === undefined) return new ArrayBuffer(bytes);
    if (zeroed) new Uint8Array(b).fill(0);
    return b;
  }

  /** A buffer no one uses any more. */
  give(buffer: ArrayBuffer): void {
    let list = this.idle.get(buffer.byteLength);
    if (list === undefined) this.idle.set(buffer.byteLength, (list = []));
    if (list.length < 64) list.push(buffer);
  }
}
