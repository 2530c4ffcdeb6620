/**
 * A detector run on more than one connection of the trace's database at
 * once. The read engine runs each statement on one DuckDB thread
 * (library.ts READ_ENGINE_THREADS is half the cores, 1 on 2 cores), and the
 * detectors ran one after the other on one connection: after an upload the
 * timeline's summaries, on the API's connections, finished well before them
 * and the rest of the machine idled while the detectors went on (many_systems.v7:
 * io_latency's statement, summary and metrics ~1 s, migration_pingpong's ~0.6 s,
 * one after the other).
 *
 * What has to stay on one connection: a `@per_run` macro is materialised in
 * a TEMP table of the connection whose statement first called it (its other
 * callers read that table), so detectors whose files call the same per-run
 * macro form one group, and a group runs on one lane. Groups are taken from a
 * queue in the detectors' order by whichever lane is free. A lane first runs
 * the own statements (the findings) of the groups it takes, then, once the
 * queue is empty, their summaries, metrics and samples, as one connection
 * ran every statement before any summary (RunOptions.onFindingThreads).
 */
import { blankCommentsAndStrings, type DetectorDef } from './detector_registry.ts';

/**
 * The engine's lane the second connection of a run uses (Engine.beside):
 * lanes 1 and 2 are the API's (trace_engines.ts), whose summaries run
 * beside the detectors.
 */
export const DETECTOR_LANE = 3;

/** A connection a run's statements go to, with its own materialised per-run macros. */
export interface Lane<E> {
  engine: E;
  perRun: { release(): Promise<void> };
}

/**
 * The detectors (by index) that must share a connection, in groups ordered
 * by their first detector: those whose statements call a common `@per_run`
 * macro (by the same test PerRunTables.prepare makes), each else alone.
 */
export function detectorGroups(dets: readonly DetectorDef[], perRunNames: readonly string[]): number[][] {
  const callers = new Map<string, number[]>();
  const parent = dets.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  dets.forEach((d, i) => {
    const code = [d.sql, d.summarySql, d.metricsSql, d.samplesSql]
      .filter((x): x is string => x != null)
      .map(blankCommentsAndStrings)
      .join('\n');
    for (const name of perRunNames) {
      if (!new RegExp(`\\b${name}\\s*\\(`, 'i').test(code)) continue;
      const seen = callers.get(name);
      if (seen) parent[root(i)] = root(seen[0]!);
      else callers.set(name, [i]);
    }
  });
  const groups = new Map<number, number[]>();
  dets.forEach((_, i) => {
    const r = root(i);
    const g = groups.get(r);
    if (g) g.push(i);
    else groups.set(r, [i]);
  });
  return [...groups.values()].sort((a, b) => a[0]! - b[0]!);
}

/**
 * Runs `findings(i, lane)` of every detector, each group's on the next free
 * lane (a lane given as a promise joins once it resolves; null or rejected:
 * it takes none), then, once no group is left to take, `rest(i, lane)` of the groups
 * the lane took; `allFindings` once every `findings` has resolved. A failure stops the lanes from taking more groups; once every
 * lane has stopped, the failure of the first detector (in order) that
 * failed is thrown.
 */
export async function runOnLanes<L>(
  lanes: ReadonlyArray<L | Promise<L | null>>,
  groups: readonly number[][],
  findings: (i: number, lane: L) => Promise<void>,
  rest: (i: number, lane: L) => Promise<void>,
  allFindings: () => void,
): Promise<void> {
  let next = 0;
  let groupsLeft = groups.length;
  const failures: Array<{ i: number; error: unknown }> = [];
  const attempt = async (i: number, f: (i: number, lane: L) => Promise<void>, lane: L) => {
    try {
      await f(i, lane);
      return true;
    } catch (error) {
      failures.push({ i, error });
      return false;
    }
  };
  if (groupsLeft === 0) allFindings();
  const runLane = async (ready: L | Promise<L | null>) => {
    // A lane still being made starts when it is ready (the others have begun); one that could not be made takes nothing.
    const lane = await Promise.resolve(ready).catch(() => null);
    if (lane === null) return;
    const taken: number[][] = [];
    while (next < groups.length && failures.length === 0) {
      const g = groups[next++]!;
      taken.push(g);
      for (const i of g) if (!(await attempt(i, findings, lane))) return;
      if (--groupsLeft === 0 && failures.length === 0) allFindings();
    }
    for (const g of taken) for (const i of g) if (failures.length > 0 || !(await attempt(i, rest, lane))) return;
  };
  await Promise.all(lanes.map(runLane));
  if (failures.length > 0) throw failures.sort((a, b) => a.i - b.i)[0]!.error;
}
