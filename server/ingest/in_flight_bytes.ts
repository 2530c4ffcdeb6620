/**
 * Bytes in flight between two ingest threads: what a producer has posted and
 * its consumer has not yet handed back (a chunk or batch counts from its
 * postMessage until the consumer is done with it). Transferred buffers and
 * the serialised strings of a message live in malloc'd memory (glibc, not
 * V8's heap), so every message queued behind a slow consumer adds to the
 * process's resident size however small each one is.
 *
 * The producer counts what it posted in KiB; the consumer adds the same KiB
 * to a shared counter once done with the message (releaseInFlight), and the
 * producer waits (blocking: its callbacks are synchronous) while posting
 * the next message would take the difference past its budget. A message
 * counts one KiB more than its bytes: the message's envelope and, for a
 * queue of small messages, the count of them is bounded too.
 */
import { waitForCounter } from './wait_for_counter.ts';

/** Under $STALLSCOPE_TIMING: each budget's most KiB in flight (printed by the producer's thread). */
const TRACKING = !!process.env.STALLSCOPE_TIMING;

export class InFlightBudget {
  private postedKiB = 0;
  /** The most KiB in flight just after a post (tracked under $STALLSCOPE_TIMING only). */
  peakKiB = 0;

  /**
   * `shared[consumedSlot]`: the KiB the consumer has released; `failedSlot`:
   * its failure flag (a producer waiting for a failed consumer throws).
   */
  constructor(
    private readonly shared: Int32Array,
    private readonly consumedSlot: number,
    private readonly failedSlot: number,
    readonly budgetKiB: number,
    private readonly consumer: string,
  ) {}

  /**
   * Waits until a message of `bytes` fits in the budget, and counts it as
   * posted: returns the KiB the consumer must release once done with it. A
   * message larger than the whole budget waits until nothing is in flight.
   */
  reserve(bytes: number): number {
    const kib = Math.ceil(bytes / 1024) + 1;
    const target = this.postedKiB + Math.min(kib, this.budgetKiB) - this.budgetKiB;
    waitForCounter(this.shared, this.consumedSlot, target, this.failedSlot, this.consumer);
    this.postedKiB += kib;
    if (TRACKING) {
      const inFlight = this.postedKiB - Atomics.load(this.shared, this.consumedSlot);
      if (inFlight > this.peakKiB) this.peakKiB = inFlight;
    }
    return kib;
  }

  /** `[timing]` text: the peak against the budget. */
  describe(name: string): string {
    return `${name} in flight at most ${(this.peakKiB / 1024).toFixed(1)} of ${(this.budgetKiB / 1024).toFixed(0)} MB`;
  }
}

/** The consumer's side: `kib` (from reserve, sent with the message) is done with. */
export function releaseInFlight(shared: Int32Array, consumedSlot: number, kib: number): void {
  Atomics.add(shared, consumedSlot, kib);
  Atomics.notify(shared, consumedSlot);
}

/** A chunk's bytes: its buffer, and its string columns as cloned (a byte a char, two per value of framing). */
export function chunkBytes(data: {
  buffer: ArrayBuffer;
  columns: readonly { strings: readonly (string | null)[] | null }[];
}): number {
  let bytes = data.buffer.byteLength;
  for (const c of data.columns) {
    const strings = c.strings;
    if (strings === null) continue;
    for (let i = 0; i < strings.length; i++) bytes += (strings[i]?.length ?? 0) + 2;
  }
  return bytes;
}
