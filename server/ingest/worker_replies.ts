/**
 * A worker thread's replies to one job, awaited one at a time:
 * `expect('done')` waits for the next message and checks its type; an
 * `error` message, an uncaught error or the thread's exit rejects. A pooled
 * thread (worker_pool.ts) outlives the job: detach() stops listening, and
 * the `idle` a thread posts once it has loaded its code is not a reply.
 */
import type { Worker } from 'node:worker_threads';

type Reply = { type: string; message?: string };

export interface WorkerReplies<M extends Reply> {
  expect<T extends M['type']>(type: T): Promise<Extract<M, { type: T }>>;
  /** Resolves when the worker has exited or `ms` have passed. */
  exited(ms: number): Promise<void>;
  /** Stops listening to the thread (its job is over; the thread may go back to the pool). */
  detach(): void;
}

export function workerReplies<M extends Reply>(worker: Worker, who: string): WorkerReplies<M> {
  const queue: M[] = [];
  let failure: Error | null = null;
  let exit: () => void = () => {};
  const exitSeen = new Promise<void>((r) => (exit = r));
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  const onMessage = (m: M) => {
    if (m.type === 'idle') return;
    queue.push(m);
    notify();
  };
  const onError = (err: Error) => {
    failure ??= err;
    notify();
  };
  const onExit = (code: number) => {
    failure ??= new Error(`${who} exited with code ${code}`);
    notify();
    exit();
  };
  worker.on('message', onMessage);
  worker.on('error', onError);
  worker.on('exit', onExit);
  return {
    detach() {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    },
    exited: (ms) => Promise.race([exitSeen, new Promise<void>((r) => setTimeout(r, ms).unref())]),
    async expect(type) {
      for (;;) {
        const m = queue.shift();
        if (m?.type === 'error') throw new Error(`${who}: ${m.message}`);
        if (m?.type === type) return m as never;
        if (m) throw new Error(`${who}: expected '${type}', got '${m.type}'`);
        if (failure) throw failure;
        await new Promise<void>((r) => (wake = r));
      }
    },
  };
}
