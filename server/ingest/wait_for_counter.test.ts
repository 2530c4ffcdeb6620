// The time a producer blocks on its consumer is counted by the thread it
// waited for (printed with $STALLSCOPE_TIMING): a real second thread bumps
// the counter after a known delay.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { takeBlockedMs, waitForCounter } from './wait_for_counter.ts';

const DELAY_MS = 150;

describe('waitForCounter', () => {
  it('counts the wall time blocked, by the thread waited for, and resets when taken', async () => {
    takeBlockedMs();
    const shared = new Int32Array(new SharedArrayBuffer(8));
    // Already there: no wait, nothing counted.
    waitForCounter(shared, 0, 0, 1, 'the consumer');
    expect(takeBlockedMs().size).toBe(0);

    const worker = new Worker(
      `const { workerData } = require('node:worker_threads');
       const s = new Int32Array(workerData);
       Atomics.wait(s, 1, 0, ${DELAY_MS});
       Atomics.add(s, 0, 1);
       Atomics.notify(s, 0);`,
      { eval: true, workerData: shared.buffer },
    );
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    const started = performance.now();
    waitForCounter(shared, 0, 1, 1, 'the consumer');
    const waited = performance.now() - started;
    await exited;

    const blocked = takeBlockedMs();
    expect([...blocked.keys()]).toEqual(['the consumer']);
    // The consumer's delay, give or take the thread's start-up, and never more than the caller saw.
    expect(blocked.get('the consumer')).toBeGreaterThanOrEqual(DELAY_MS - 5);
    expect(blocked.get('the consumer')).toBeLessThanOrEqual(waited + 1);
    expect(takeBlockedMs().size).toBe(0);
  });
});
