/**
 * An upload's detectors beside derive. Derive's one-thread steps
 * (derive_slices, derive_block: derive_model.ts oneThread) and the commit
 * leave one core of two idle, and most detectors read only the events,
 * threads and trace facts, committed before derive starts: those run then,
 * on a second connection of the ingest's database, and the upload's
 * detector run over the finished model takes their outputs
 * (run_detectors.ts runDetectorsAhead, RunOptions.ahead). Whatever reads
 * derive's tables (io_latency: block_request), or did not start before
 * derive's steps ended, runs there as before.
 */
import os from 'node:os';
import type { Engine } from '../engine/engine.ts';
import { type DetectorsAhead, runDetectorsAhead } from '../findings/run_detectors.ts';
import { derivedRelations } from '../model/derive_model.ts';

export interface DetectorsBesideDerive {
  /** Settles when they have all run, as stop(). */
  finished(): Promise<DetectorsAhead | null>;
  /**
   * No further detector starts; settles when the one running has ended
   * (the database must have no other transaction when derive commits),
   * with the outputs, or null when the run failed (the later run then runs
   * them all; the failure is on stderr).
   */
  stop(): Promise<DetectorsAhead | null>;
}

/** Starts the detectors that read none of derive's tables on a connection beside `engine`'s (which derives). */
export function startDetectorsBesideDerive(engine: Engine): DetectorsBesideDerive {
  let stopped = false;
  const run = (async () => {
    const beside = await engine.beside();
    return runDetectorsAhead(beside, {
      notYet: await derivedRelations(beside),
      samples: true,
      stopped: () => stopped,
    });
  })().catch((e: Error) => {
    process.stderr.write(`stallscope: detectors beside derive failed (they run after it): ${e.message}\n`);
    return null;
  });
  let settled = false;
  void run.then(() => (settled = true));
  return {
    async finished() {
      // Derive has given its one-thread steps' setting back. Those still running keep to the read engine's
      // threads (library.ts READ_ENGINE_THREADS: a thread pool of every core per query costs more CPU than it
      // gains on these statements), and derive's COMMIT gets the engine's own again.
      const [{ threads }] = await engine.query<{ threads: number }>(
        "SELECT CAST(current_setting('threads') AS INTEGER) AS threads",
      );
      const readThreads = Math.max(1, Math.floor(os.availableParallelism() / 2));
      if (settled || threads <= readThreads) return run;
      await engine.exec(`SET threads = ${readThreads}`);
      try {
        return await run;
      } finally {
        await engine.exec(`SET threads = ${threads}`);
      }
    },
    stop() {
      stopped = true;
      return run;
    },
  };
}
