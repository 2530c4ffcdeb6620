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
import { type Engine, READ_ENGINE_THREADS } from '../engine/engine.ts';
import { type DetectorsAhead, runDetectorsAhead } from '../findings/run_detectors.ts';
import { derivedRelations } from '../model/derive_model.ts';

export interface DetectorsBesideDerive {
  /**
   * Derive's steps are done: those still running keep to the read engine's
   * threads from now on, and derive's COMMIT runs beside them (a checkpoint
   * waits for no reader). Resolves once that is set, with their outcome, to
   * wait for before the database closes: the outputs, or null when the run
   * failed (the later run then runs every detector; the failure is on stderr).
   */
  afterDerive(): Promise<{ outputs: Promise<DetectorsAhead | null> }>;
  /** No further detector starts; settles, as `outputs`, when the one running has ended. */
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
    async afterDerive() {
      // Derive has set its one-thread steps' setting back. Those still running keep to the read engine's
      // threads (READ_ENGINE_THREADS: a thread pool of every core per query costs more CPU than
      // it gains on these statements), and the COMMIT, one thread, takes the other core. The database closes
      // after them: the setting need not come back.
      const [{ threads }] = await engine.query<{ threads: number }>(
        "SELECT CAST(current_setting('threads') AS INTEGER) AS threads",
      );
      if (!settled && threads > READ_ENGINE_THREADS) await engine.exec(`SET threads = ${READ_ENGINE_THREADS}`);
      return { outputs: run };
    },
    stop() {
      stopped = true;
      return run;
    },
  };
}
