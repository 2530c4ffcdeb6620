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

/**
 * Wall ms this thread spent blocked here, by the thread waited for: printed
 * with $STALLSCOPE_TIMING, where it shows which consumer a producer waited
 * on (a field thread that booted late held the main thread 1.4 s in one
 * sched_wq.v7 ingest while the store thread idled).
 */
const blocked = new Map<string, number>();

/** Blocked ms by the thread waited for, since the last call (and resets). */
export function takeBlockedMs(): Map<string, number> {
  const out = new Map(blocked);
  blocked.clear();
  return out;
}

export function waitForCounter(
  shared: Int32Array,
  counter: number,
  target: number,
  failedFlag: number,
  who: string,
): void {
  const last = Atomics.load(shared, counter);
  if (last >= target) return;
  const started = performance.now();
  try {
    waitUntil(shared, counter, target, failedFlag, who, last);
  } finally {
    blocked.set(who, (blocked.get(who) ?? 0) + performance.now() - started);
  }
}

function waitUntil(
  shared: Int32Array,
  counter: number,
  target: number,
  failedFlag: number,
  who: string,
  last: number,
): void {
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
