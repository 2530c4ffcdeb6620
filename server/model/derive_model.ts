/**
 * Runs the SQL in queries/model/ that derives tables from decoded events
 * (sched_slice, thread_state, slice, counter, flow), in dependency order.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Engine } from '../engine/engine.ts';
import { sqlWithoutEmptyBlocks } from './derive_guards.ts';

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
 *
 * `writes`: the model's tables the step fills (a test checks them against
 * its SQL): until derive commits they are empty to other connections, so
 * what reads them waits for the commit (derivedRelations).
 *
 * Within a step, blocks marked `-- @if-rows TABLE, ...` run only when one
 * of those tables holds a row (derive_guards.ts): a step's statements each
 * cost a fixed 10-50 CPU ms on empty input too.
 *
 * `oneThread`: the step runs on one DuckDB thread. With two, the statement's
 * calling thread polls for the result while DuckDB's other thread runs the
 * tasks (bench/README.md, issue 33), and these steps' statements (tens of
 * thousands of rows each, small joins and windows) gain little from the
 * second thread: on their own (derive of a copy of the model, 4 alternating
 * rounds, load 4-7), CPU ms 2 threads -> 1: sched_wq.v7 slice 106 -> 73,
 * _flow 125 -> 67; many_systems.v7 slice 81 -> 57, _flow 64 -> 49,
 * block_request 224 -> 129. derive_sched stays on the engine's threads: its
 * thread_state window over 445k moments (sched_wq) uses both cores (~180 ms
 * wall for ~340 CPU ms).
 */
export const DERIVE_STEPS: ReadonlyArray<{
  file: string;
  needs: readonly string[] | null;
  oneThread: boolean;
  writes: readonly string[];
}> = [
  { file: 'derive_sched.sql', needs: ['sched_switch'], oneThread: false, writes: ['sched_slice', 'thread_state'] },
  {
    file: 'derive_slices.sql',
    needs: null,
    oneThread: true,
    writes: ['slice', '_flow', 'counter_track', 'counter_source'],
  },
  {
    file: 'derive_block.sql',
    needs: ['block_rq_issue', 'global_dirty_state'],
    oneThread: true,
    writes: ['block_request', 'counter_track', 'counter_source'],
  },
];

/**
 * The relations derive fills (DERIVE_STEPS' writes) and the views that
 * read them, directly or through other views (lower case): what a reader
 * beside derive finds empty until derive commits.
 */
export async function derivedRelations(engine: Engine): Promise<Set<string>> {
  const derived = new Set(DERIVE_STEPS.flatMap((s) => s.writes));
  const views = (
    await engine.query<{ name: string; sql: string }>(
      'SELECT view_name AS name, sql FROM duckdb_views() WHERE NOT internal',
    )
  ).map((v) => ({ name: v.name.toLowerCase(), words: new Set(v.sql.toLowerCase().match(/[a-z_][a-z0-9_]*/g) ?? []) }));
  for (let grew = true; grew;) {
    grew = false;
    for (const v of views) {
      if (derived.has(v.name) || ![...derived].some((r) => v.words.has(r))) continue;
      derived.add(v.name);
      grew = true;
    }
  }
  return derived;
}

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
 * step runs (re-deriving an existing model: bench, tests). `beforeStep`:
 * called as each step that runs starts, with whether it runs on one thread.
 */
export async function deriveModel(
  engine: Engine,
  onStep?: (step: string) => void,
  eventsByName?: Readonly<Record<string, number>>,
  beforeStep?: (step: string, oneThread: boolean) => void,
): Promise<Record<string, number>> {
  const timings: Record<string, number> = {};
  await engine.exec(`SET asof_loop_join_threshold = ${ASOF_LOOP_JOIN_THRESHOLD}`);
  // The engine's own setting (one-thread loads open it with 1), restored after the steps.
  const [{ threads }] = await engine.query<{ threads: number }>(
    "SELECT CAST(current_setting('threads') AS INTEGER) AS threads",
  );
  let oneThread = false;
  const setOneThread = async (on: boolean) => {
    if (on === oneThread || threads <= 1) return;
    await engine.exec(`SET threads = ${on ? 1 : threads}`);
    oneThread = on;
  };
  try {
    for (const { file: step, needs, oneThread: stepOneThread } of DERIVE_STEPS) {
      if (eventsByName && needs && !needs.some((name) => (eventsByName[name] ?? 0) > 0)) continue;
      const file = path.join(MODEL_DIR, step);
      if (!fs.existsSync(file)) continue;
      await setOneThread(stepOneThread);
      beforeStep?.(step, stepOneThread);
      const started = performance.now();
      try {
        await engine.exec(await sqlWithoutEmptyBlocks(engine, fs.readFileSync(file, 'utf8'), `queries/model/${step}`));
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
    await setOneThread(false).catch(() => {});
    throw err;
  }
  await engine.exec('RESET asof_loop_join_threshold');
  await setOneThread(false);
  return timings;
}
