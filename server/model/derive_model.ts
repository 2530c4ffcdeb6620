/**
 * Runs the SQL in queries/model/ that derives tables from decoded events
 * (sched_slice, thread_state, slice, counter, flow), in dependency order.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Engine } from '../engine/engine.ts';

const MODEL_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../queries/model');

/**
 * Order matters: later files read tables the earlier ones fill. `needs`: the
 * events without which the step writes no row (null: always run), so a trace
 * holding none of them skips it (each step is a fixed 30-90 CPU ms even on
 * empty input, measured in the issue 29 note).
 *  - derive_sched: every sched_slice row is a sched_switch, and a
 *    thread_state row needs one too (a wakeup counts only after a blocking
 *    switch-out).
 *  - derive_block: block_request has one row per block_rq_issue; its
 *    counter tracks need global_dirty_state or a completed request.
 */
export const DERIVE_STEPS: ReadonlyArray<{ file: string; needs: readonly string[] | null }> = [
  { file: 'derive_sched.sql', needs: ['sched_switch'] },
  { file: 'derive_slices.sql', needs: null },
  { file: 'derive_block.sql', needs: ['block_rq_issue', 'global_dirty_state'] },
];

/**
 * Derive's ASOF joins always sort-merge. DuckDB (1.5) otherwise joins an
 * ASOF whose left side it estimates at <= 64 rows (asof_loop_join_threshold)
 * by a nested loop against every right row; it estimated derive_slices'
 * migrations (sched_migrate_task joined to thread) that small, and with
 * 1.5k real ones against 118k slices the flow statement took 230-620 CPU ms
 * instead of 33-73 (many_systems.v7; same rows: the issue 29 note). A small
 * left side costs the merge only the sort of the (filtered) right side.
 */
const ASOF_LOOP_JOIN_THRESHOLD = 0;

/**
 * `eventsByName`: the trace's event counts (the ingest's WriterSummary); with
 * them, steps whose events the trace does not hold are skipped. Without, every
 * step runs (re-deriving an existing model: bench, tests).
 */
export async function deriveModel(
  engine: Engine,
  onStep?: (step: string) => void,
  eventsByName?: Readonly<Record<string, number>>,
): Promise<Record<string, number>> {
  const timings: Record<string, number> = {};
  await engine.exec(`SET asof_loop_join_threshold = ${ASOF_LOOP_JOIN_THRESHOLD}`);
  try {
    for (const { file: step, needs } of DERIVE_STEPS) {
      if (eventsByName && needs && !needs.some((name) => (eventsByName[name] ?? 0) > 0)) continue;
      const file = path.join(MODEL_DIR, step);
      if (!fs.existsSync(file)) continue;
      const started = performance.now();
      try {
        await engine.exec(fs.readFileSync(file, 'utf8'));
      } catch (err) {
        throw new Error(`queries/model/${step}: ${(err as Error).message}`, { cause: err });
      }
      timings[step] = performance.now() - started;
      onStep?.(step);
    }
  } catch (err) {
    // A failed step leaves the transaction aborted, which refuses every statement until it
    // is rolled back: the RESET would fail too, and its error must not hide the step's.
    await engine.exec('RESET asof_loop_join_threshold').catch(() => {});
    throw err;
  }
  await engine.exec('RESET asof_loop_join_threshold');
  return timings;
}
