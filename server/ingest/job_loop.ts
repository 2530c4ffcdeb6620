/**
 * The message loop of a kept worker thread (worker_pool.ts), the worker's
 * side: a `job` message starts a job (startJob returns the handler for the
 * job's other messages), the job calls onEnd when it has ended cleanly, and
 * the next `job` starts the next one. `idle` is posted once, when the
 * thread has loaded its code. After a job ends the thread collects its
 * garbage (ingest_memory.ts collectGarbage).
 */
import type { MessagePort } from 'node:worker_threads';
import { detachOnce } from './detaching_protector.ts';
import { collectGarbage } from './ingest_memory.ts';

export function serveJobs<I, M extends { type: string }>(
  port: MessagePort,
  startJob: (input: I, onEnd: () => void) => (m: M) => void,
): void {
  // Before any job's code is optimized (detaching_protector.ts).
  detachOnce();
  let job: ((m: M) => void) | null = null;
  port.on('message', (m: M | { type: 'job'; input: I }) => {
    if (m.type === 'job') {
      const current = startJob((m as { input: I }).input, () => {
        if (job === current) job = null;
        // The job's garbage goes now, not whenever this thread next allocates
        // (it may idle in the pool until the next ingest): after the job's
        // last message is posted, while the other threads still work.
        setImmediate(collectGarbage);
      });
      job = current;
      return;
    }
    job?.(m as M);
  });
  port.postMessage({ type: 'idle' });
}
