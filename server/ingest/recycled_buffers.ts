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
import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { BufferSource } from '../model/buffer_source.ts';

/**
 * Idle buffers kept, in bytes: more come back than the producer needs at
 * once when it fills many tables (one chunk size per table, a shape table
 * each for untyped events); 256 per size held ~40 MB on a 1M-event trace
 * of 60 event names. Past it, the sizes least recently taken are freed
 * first: a size whose table has stopped growing would otherwise hold its
 * share for the rest of the ingest, and newer sizes be dropped instead
 * (the field worker's pool sat at its cap with 8 MB dropped on `-e all`).
 * $STALLSCOPE_IDLE_BUFFERS_MB overrides.
 */
const MAX_IDLE_BYTES = (Number(process.env.STALLSCOPE_IDLE_BUFFERS_MB) || 8) * 1048576;

export class RecycledBuffers implements BufferSource {
  /** Idle buffers by size; the Map's order is the sizes' last take, least recent first. */
  private readonly idle = new Map<number, ArrayBuffer[]>();
  private idleBytes = 0;
  /** Buffers taken from the port so far (reused), and newly allocated. */
  reused = 0;
  allocated = 0;
  allocatedBytes = 0;
  /** The most idle bytes held, and the bytes of those freed past MAX_IDLE_BYTES. */
  peakIdleBytes = 0;
  freedBytes = 0;
  /** Bytes taken and not yet back: being filled by this thread or in flight to the consumer; the most of them. */
  private outBytes = 0;
  peakOutBytes = 0;

  constructor(
    private readonly port: MessagePort,
    private readonly maxIdleBytes = MAX_IDLE_BYTES,
  ) {
    // Reading it synchronously must not keep the thread's event loop alive.
    port.unref();
  }

  take(bytes: number, zeroed = true): ArrayBuffer {
    this.drain();
    this.outBytes += bytes;
    if (this.outBytes > this.peakOutBytes) this.peakOutBytes = this.outBytes;
    let list = this.idle.get(bytes);
    // This size is the most recently taken now.
    if (list !== undefined) this.idle.delete(bytes);
    else list = [];
    this.idle.set(bytes, list);
    const b = list.pop();
    if (b === undefined) {
      this.allocated++;
      this.allocatedBytes += bytes;
      return new ArrayBuffer(bytes);
    }
    this.idleBytes -= bytes;
    this.reused++;
    if (zeroed) new Uint8Array(b).fill(0);
    return b;
  }

  /** `[timing]` text: how the buffers came and went. */
  describe(): string {
    const mb = (b: number) => (b / 1048576).toFixed(1);
    return `recycled ${this.reused}, allocated ${this.allocated} (${mb(this.allocatedBytes)} MB), out at most ${mb(this.peakOutBytes)} MB, idle at most ${mb(this.peakIdleBytes)} MB, freed ${mb(this.freedBytes)} MB`;
  }

  close(): void {
    this.port.close();
    this.idle.clear();
    this.idleBytes = 0;
  }

  private drain(): void {
    for (let m = receiveMessageOnPort(this.port); m !== undefined; m = receiveMessageOnPort(this.port)) {
      for (const b of m.message as ArrayBuffer[]) {
        this.outBytes -= b.byteLength;
        this.keep(b);
      }
    }
  }

  /** Keeps a returned buffer idle, freeing the least recently taken sizes' past maxIdleBytes (or this one, if its size is the least recent). */
  private keep(b: ArrayBuffer): void {
    const bytes = b.byteLength;
    if (bytes > this.maxIdleBytes) {
      this.free(b);
      return;
    }
    while (this.idleBytes + bytes > this.maxIdleBytes) {
      const [oldest, list] = this.idle.entries().next().value as [number, ArrayBuffer[]];
      if (oldest === bytes) {
        this.free(b);
        return;
      }
      const evicted = list.pop();
      if (list.length === 0) this.idle.delete(oldest);
      if (evicted !== undefined) {
        this.idleBytes -= oldest;
        this.free(evicted);
      }
    }
    let list = this.idle.get(bytes);
    if (list === undefined) this.idle.set(bytes, (list = []));
    list.push(b);
    this.idleBytes += bytes;
    if (this.idleBytes > this.peakIdleBytes) this.peakIdleBytes = this.idleBytes;
  }

  private free(b: ArrayBuffer): void {
    this.freedBytes += b.byteLength;
    freeNow(b);
  }
}

/**
 * Frees a buffer's memory now: V8 frees an ArrayBuffer's (malloc'd) backing
 * store only when it collects the buffer, which it does after ~64 MB more
 * external allocation, so a dropped one stayed resident meanwhile (the field
 * worker's dropped chunk buffers, 8 MB on a `-e all` trace.dat). A buffer
 * transferred in a message to a port whose other end is closed is detached
 * here and its backing store freed with the dropped message.
 */
function freeNow(buffer: ArrayBuffer): void {
  drain ??= closedPort();
  drain.postMessage(null, [buffer]);
}

let drain: MessagePort | undefined;

function closedPort(): MessagePort {
  const { port1, port2 } = new MessageChannel();
  port2.close();
  port1.unref();
  return port1;
}

/** Hands buffers back to their producer (transferred: this thread must not use them again). */
export function sendBuffersBack(port: MessagePort, buffers: ArrayBuffer[]): void {
  port.postMessage(buffers, buffers);
}
