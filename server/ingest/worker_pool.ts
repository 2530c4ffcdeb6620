/**
 * The ingest's worker threads (store_worker.ts, field_worker.ts), kept
 * between ingests.
 *
 * Why: a new thread loads its bundle (and, for the store, DuckDB's native
 * addon) and runs its first events in V8's slow tiers while four compiler
 * threads optimise the same functions again. On this 2-CPU VM that was
 * about 1.5 CPU-s per ingest, most of a 72 MB trace.dat's ingest beyond
 * its steady-state cost. A thread that already ingested a trace keeps its
 * optimised code, so the server's second and later uploads skip it, and a
 * thread started when the server starts (prestart) has booted before the
 * first upload.
 *
 * A thread goes back to the pool only after a job that ended cleanly (the
 * store committed and closed its database; the field worker handed its last
 * chunk over). After a failure or an abort it is terminated: nothing of a
 * failed ingest carries over to the next one. Idle threads are unref'd, so
 * they never keep a process (the CLI, a test) alive.
 */
import { Worker } from 'node:worker_threads';
import { WORKER_YOUNG_GENERATION_MB } from './ingest_memory.ts';
import { workerEntry, type WorkerName } from './worker_bundle.ts';

/** Idle threads kept per kind: one ingest's worth. Concurrent ingests start more; past this they end with their jobs. */
const MAX_IDLE = 1;

interface Idle {
  worker: Worker;
  /** The code it runs: a rebuilt bundle (changed sources) means a new thread. */
  entry: string;
}

class WorkerPool {
  private readonly idle: Idle[] = [];
  /** Threads started and not yet terminated: taken ones and idle ones. */
  private live = 0;
  /** Threads started since the process began. */
  private started = 0;

  constructor(readonly kind: WorkerName) {}

  /** An idle thread running `entry`, or a new one. It is ref'd: the caller's job keeps the process alive. */
  take(entry: string | URL): Worker {
    const key = String(entry);
    for (;;) {
      const i = this.idle.pop();
      if (i === undefined) break;
      if (i.entry === key) {
        i.worker.ref();
        return i.worker;
      }
      void i.worker.terminate();
    }
    return this.start(entry);
  }

  /** A thread whose job ended cleanly: kept for the next ingest (or terminated past MAX_IDLE). */
  give(worker: Worker, entry: string | URL): void {
    if (this.idle.length >= MAX_IDLE) {
      void worker.terminate();
      return;
    }
    worker.unref();
    this.idle.push({ worker, entry: String(entry) });
  }

  /** A thread whose job failed or was aborted. */
  discard(worker: Worker): Promise<number> {
    return worker.terminate();
  }

  /**
   * Starts an idle thread now (if none is idle) and resolves once it has
   * loaded its code. It can be taken at once; it stays ref'd while it boots
   * (an unref'd thread's `idle` would not keep the process waiting for it).
   */
  async prestart(entry: string | URL): Promise<void> {
    if (this.idle.some((i) => i.entry === String(entry))) return;
    const worker = this.start(entry);
    const booted = new Promise<void>((resolve, reject) => {
      const onMessage = (m: { type?: string }) => {
        if (m?.type !== 'idle') return;
        worker.off('message', onMessage);
        resolve();
      };
      worker.on('message', onMessage);
      worker.once('exit', (code) => reject(new Error(`${this.kind}: exited with code ${code} while starting`)));
    });
    this.idle.push({ worker, entry: String(entry) });
    try {
      await booted;
    } finally {
      // Still idle (not taken by an ingest meanwhile): it must not keep the process alive.
      if (this.idle.some((i) => i.worker === worker)) worker.unref();
    }
  }

  /** Terminates the idle threads (taken ones end with their jobs). */
  async closeIdle(): Promise<void> {
    await Promise.all(this.idle.splice(0).map((i) => i.worker.terminate()));
  }

  /** Threads of this kind: started so far, alive now, idle now (for tests). */
  get threads(): { started: number; live: number; idle: number } {
    return { started: this.started, live: this.live, idle: this.idle.length };
  }

  private start(entry: string | URL): Worker {
    // A bounded young generation (ingest_memory.ts): V8's default, sized by the machine, took ~20 MB more each.
    const worker = new Worker(entry, { resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
    this.live++;
    this.started++;
    worker.once('exit', () => {
      this.live--;
      // An idle thread that died is not handed out again.
      const at = this.idle.findIndex((i) => i.worker === worker);
      if (at >= 0) this.idle.splice(at, 1);
    });
    // Errors reach the job's replies (worker_replies.ts); an idle thread's
    // error must not be an unhandled 'error' event.
    worker.on('error', () => undefined);
    return worker;
  }
}

export const storeWorkers = new WorkerPool('store_worker');
export const fieldWorkers = new WorkerPool('field_worker');

/**
 * Boots one store and one field thread now, so the next ingest finds them
 * loaded: the server calls it once it is up. Resolves when both have loaded
 * their code.
 */
export async function prestartIngestThreads(): Promise<void> {
  const [store, field] = await Promise.all([workerEntry('store_worker'), workerEntry('field_worker')]);
  await Promise.all([storeWorkers.prestart(store), fieldWorkers.prestart(field)]);
}
