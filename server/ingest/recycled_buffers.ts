/**
 * Buffers that travel back: a consumer thread, once done with a transferred
 * chunk or batch, sends its ArrayBuffers back on a MessagePort
 * (sendBuffersBack), and the producer takes them from there before
 * allocating new ones (RecycledBuffers, a BufferSource).
 *
 * The producer reads the port synchronously (receiveMessageOnPort): its
 * callbacks run inside a decode loop that does not return to the event loop
 * between chunks. A buffer is transferred, never shared, so a thread that
 * kept a view of one it gave away sees a detached (empty) buffer, not
 * another chunk's bytes.
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { BufferSource } from '../model/buffer_source.ts';

/**
 * Idle buffers kept, in bytes: more come back than the producer needs at
 * once when it fills many tables (one chunk size per table, a shape table
 * each for untyped events); 256 per size held ~40 MB on a 1M-event trace
 * of 60 event names.
 */
const MAX_IDLE_BYTES = 16 << 20;

export class RecycledBuffers implements BufferSource {
  private readonly idle = new Map<number, ArrayBuffer[]>();
  private idleBytes = 0;
  /** Buffers taken from the port so far (reused), and newly allocated. */
  reused = 0;
  allocated = 0;

  constructor(private readonly port: MessagePort) {
    // Reading it synchronously must not keep the thread's event loop alive.
    port.unref();
  }

  take(bytes: number, zeroed = true): ArrayBuffer {
    this.drain();
    const b = this.idle.get(bytes)?.pop();
    if (b === undefined) {
      this.allocated++;
      return new ArrayBuffer(bytes);
    }
    this.idleBytes -= bytes;
    this.reused++;
    if (zeroed) new Uint8Array(b).fill(0);
    return b;
  }

  close(): void {
    this.port.close();
    this.idle.clear();
    this.idleBytes = 0;
  }

  private drain(): void {
    for (let m = receiveMessageOnPort(this.port); m !== undefined; m = receiveMessageOnPort(this.port)) {
      for (const b of m.message as ArrayBuffer[]) {
        if (this.idleBytes + b.byteLength > MAX_IDLE_BYTES) continue;
        let list = this.idle.get(b.byteLength);
        if (list === undefined) this.idle.set(b.byteLength, (list = []));
        list.push(b);
        this.idleBytes += b.byteLength;
      }
    }
  }
}

/** Hands buffers back to their producer (transferred: this thread must not use them again). */
export function sendBuffersBack(port: MessagePort, buffers: ArrayBuffer[]): void {
  port.postMessage(buffers, buffers);
}
