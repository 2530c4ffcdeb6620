/**
 * What a shift+drag range holds, for the tracks it covers (Perfetto's area
 * selection): per thread, the time in each scheduling state (Running, R, R+,
 * D, S...) clipped to the range; CPU time per thread on the covered CPUs;
 * event counts by name; and the slices (shrinker calls, reclaim stalls, work
 * items) overlapping the range, per category and name, with count and the
 * sum, mean and longest of their durations.
 *
 * Covered tracks: `thread#N` (that thread's states, events and slices),
 * `cpu#N` (CPU time and events on that CPU), `slice#CAT` (that category's
 * slices); none given: every thread and CPU.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { TraceMeta } from '../api/trace_engines.ts';
import { intLit, ParamList } from './field_filter.ts';
import { threadStateEndSql } from '../model/thread_state_end.ts';
import { readRows } from './sandbox.ts';
import type { RangeSummary } from '../../shared/contract/query.ts';

export type { StateTime, CpuTime, SliceStats, RangeSummary } from '../../shared/contract/query.ts';
export interface Covered {
  threads: number[] | 'all';
  cpus: number[] | 'all';
  categories: string[] | 'all';
}

/** Covered tracks from track uris (none: everything). */
export function coveredBy(uris: string[]): Covered {
  if (uris.length === 0) return { threads: 'all', cpus: 'all', categories: 'all' };
  const threads: number[] = [];
  const cpus: number[] = [];
  const categories: string[] = [];
  for (const u of uris) {
    const m = /^(thread|cpu|slice)#(.+)$/.exec(u);
    if (!m) continue;
    if (m[1] === 'thread' && /^\d{1,10}$/.test(m[2]!)) threads.push(Number(m[2]));
    else if (m[1] === 'cpu' && /^\d{1,6}$/.test(m[2]!)) cpus.push(Number(m[2]));
    else if (m[1] === 'slice' && /^[\w.-]{1,64}$/.test(m[2]!)) categories.push(m[2]!);
  }
  return { threads, cpus, categories };
}

const num = (v: unknown): number => (typeof v === 'bigint' ? Number(v) : (v as number));

export async function rangeSummary(
  conn: DuckDBConnection,
  meta: TraceMeta,
  t0: bigint,
  t1: bigint,
  cov: Covered,
): Promise<RangeSummary> {
  const a0 = meta.base + t0;
  const a1 = meta.base + t1;
  const out: RangeSummary = {
    t0: Number(t0),
    t1: Number(t1),
    covered: cov,
    threadStates: [],
    cpuTime: [],
    eventCounts: [],
    slices: [],
  };
  const has = (t: string) => meta.tables.has(t);
  // Numbers the server computed are literals (see intLit); text (slice categories) is bound.
  const list = (p: ParamList, xs: Array<number | string>) =>
    xs.map((x) => (typeof x === 'number' ? intLit(x) : p.add(x))).join(', ');
  /** A row's end: open rows end at the trace's end, a thread's open exit state where it begins (thread_state_end.ts). */
  const rowEnd = (table: 'thread_state' | 'sched_slice' | 'slice') =>
    table === 'thread_state'
      ? threadStateEndSql(meta.last)
      : `CASE WHEN dur < 0 THEN ${intLit(meta.last)} ELSE ts + dur END`;
  /** A row overlapping [a0, a1): its clipped duration. */
  const clipped = (_p: ParamList, table: 'thread_state' | 'sched_slice' | 'slice') =>
    `greatest(0, least(${rowEnd(table)}, ${intLit(a1)}) - greatest(ts, ${intLit(a0)}))`;
  const overlap = (_p: ParamList, table: 'thread_state' | 'sched_slice' | 'slice') =>
    `ts < ${intLit(a1)} AND ts >= ${intLit(a0 - meta.maxDur[table])} AND (${rowEnd(table)}) > ${intLit(a0)}`;

  if (has('thread_state') && (cov.threads === 'all' || cov.threads.length > 0)) {
    const p = new ParamList();
    const who = cov.threads === 'all' ? '' : `AND s.utid IN (${list(p, cov.threads)})`;
    const rows = await readRows<Record<string, unknown>>(
      conn,
      `SELECT s.utid, t.tid, t.name, s.state, sum(${clipped(p, 'thread_state')}) AS d, count(*) AS n
       FROM thread_state s LEFT JOIN thread t USING (utid)
       WHERE ${overlap(p, 'thread_state')} ${who}
       GROUP BY 1, 2, 3, 4 HAVING d > 0 ORDER BY 1, d DESC LIMIT 5000`,
      p.values as never,
    );
    out.threadStates = rows.map((r) => ({
      utid: num(r.utid),
      tid: r.tid as number | null,
      name: r.name as string | null,
      state: String(r.state),
      durNs: num(r.d),
      count: num(r.n),
    }));
  }
  if (has('sched_slice') && (cov.cpus === 'all' || cov.cpus.length > 0)) {
    const p = new ParamList();
    const where = cov.cpus === 'all' ? '' : `AND s.cpu IN (${list(p, cov.cpus)})`;
    const rows = await readRows<Record<string, unknown>>(
      conn,
      `SELECT s.utid, t.tid, t.name, sum(${clipped(p, 'sched_slice')}) AS d, list(DISTINCT s.cpu ORDER BY s.cpu) AS cpus
       FROM sched_slice s LEFT JOIN thread t USING (utid)
       WHERE ${overlap(p, 'sched_slice')} ${where}
       GROUP BY 1, 2, 3 HAVING d > 0 ORDER BY d DESC LIMIT 500`,
      p.values as never,
    );
    out.cpuTime = rows.map((r) => ({
      utid: num(r.utid),
      tid: r.tid as number | null,
      name: r.name as string | null,
      durNs: num(r.d),
      cpus: (r.cpus as number[]).map(num),
    }));
  }
  {
    const p = new ParamList();
    const who: string[] = [];
    if (cov.cpus !== 'all' && cov.cpus.length) who.push(`cpu IN (${list(p, cov.cpus)})`);
    if (cov.threads !== 'all' && cov.threads.length) who.push(`utid IN (${list(p, cov.threads)})`);
    const everything = cov.cpus === 'all' || cov.threads === 'all';
    if (everything || who.length) {
      const rows = await readRows<{ name: string; n: bigint }>(
        conn,
        `SELECT name, count(*) AS n FROM ftrace_event WHERE ts >= ${intLit(a0)} AND ts < ${intLit(a1)} ${everything ? '' : `AND (${who.join(' OR ')})`}
         GROUP BY 1 ORDER BY 2 DESC, 1`,
        p.values as never,
      );
      out.eventCounts = rows.map((r) => ({ name: r.name, count: num(r.n) }));
    }
  }
  if (has('slice')) {
    const p = new ParamList();
    const who: string[] = [];
    if (cov.categories !== 'all' && cov.categories.length) who.push(`category IN (${list(p, cov.categories)})`);
    if (cov.threads !== 'all' && cov.threads.length) who.push(`utid IN (${list(p, cov.threads)})`);
    const everything = cov.categories === 'all' || cov.threads === 'all';
    if (everything || who.length) {
      const rows = await readRows<Record<string, unknown>>(
        conn,
        `SELECT category, name, count(*) AS n, sum(greatest(dur, 0)) AS s, avg(greatest(dur, 0)) AS a, max(dur) AS m, count(*) FILTER (WHERE dur < 0) AS open
         FROM slice WHERE ${overlap(p, 'slice')} ${everything ? '' : `AND (${who.join(' OR ')})`}
         GROUP BY 1, 2 ORDER BY s DESC LIMIT 500`,
        p.values as never,
      );
      out.slices = rows.map((r) => ({
        category: String(r.category),
        name: r.name as string | null,
        count: num(r.n),
        sumNs: num(r.s),
        avgNs: Math.round(Number(r.a)),
        maxNs: num(r.m),
        open: num(r.open),
      }));
    }
  }
  return out;
}
