/**
 * Backpressure between ingest threads: a producer that posted N messages
 * waits, blocking, until the consumer's counter in shared memory reaches a
 * target, or the consumer has flagged a failure. The producers' callbacks
 * are synchronous (a builder's chunk callback), hence Atomics.wait.
 */

/** A wait for another thread failed: that thread's own error says why. */
export class WorkerStalled extends Error {}

/** No consumer takes a minute for a few MB of rows: past this it is gone. */
const STALL_MS = 60_000;

export function waitForCounter(
  shared: Int32Array,
  counter: number,
  target: number,
  failedFlag: number,
  who: string,
): void {
  let last = Atomics.load(shared, counter);
  let idleMs = 0;
  while (last < target) {
    if (Atomics.load(shared, failedFlag) !== 0) throw new WorkerStalled(`${who} failed`);
    if (Atomics.wait(shared, counter, last, 1000) === 'timed-out') {
      idleMs += 1000;
      if (idleMs >= STALL_MS) throw new WorkerStalled(`${who} stopped consuming rows for ${STALL_MS / 1000} s`);
    } else idleMs = 0;
    last = Atomics.load(shared, counter);
  }
}
