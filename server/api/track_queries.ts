/**
 * One query per track kind, answering "what to draw in window [t0, t1) at px
 * pixel columns". Times in and out are ns relative to the trace's first event
 * (TraceMeta.base) so they stay exact JS numbers in the browser.
 *
 * Summarising (as Perfetto's summarised slices do): a slice at least one pixel
 * column wide (dur >= res, res = ns per column) comes back as itself, with its
 * id; the narrower ones are grouped per column bucket `(ts - t0) // res`, one
 * row per bucket carrying the bucket's extent, its count `n` and its dominant
 * value (the longest slice's task/state/name). A zoomed-in window therefore
 * returns raw slices and a zoomed-out one at most ~2 rows per pixel column,
 * whatever the trace size.
 *
 * All numbers interpolated into SQL are validated bigints; strings are bound.
 */
import { threadStateEndSql } from '../model/thread_state_end.ts';
import type { OpenTrace } from './trace_engines.ts';
import type { Columns, TrackData } from '../../shared/contract/tracks.ts';

export interface Window {
  /** Relative ns (from TraceMeta.base). */
  t0: bigint;
  t1: bigint;
  /** Pixel columns the window is drawn on. */
  px: number;
}

export type { Columns, TrackData } from '../../shared/contract/tracks.ts';

function bounds(tr: OpenTrace, w: Window) {
  const span = w.t1 - w.t0;
  const res = span / BigInt(w.px) > 0n ? span / BigInt(w.px) : 1n;
  return { a0: tr.meta.base + w.t0, a1: tr.meta.base + w.t1, res, base: tr.meta.base, last: tr.meta.last };
}

export function toColumns(rows: Record<string, unknown>[], keys: string[]): Columns {
  const cols: Columns = {};
  for (const k of keys) cols[k] = new Array(rows.length);
  rows.forEach((r, i) => {
    for (const k of keys) {
      const v = r[k];
      cols[k]![i] = typeof v === 'bigint' ? Number(v) : v === undefined ? null : (v as number | string | null);
    }
  });
  return cols;
}

export function result(
  w: Window,
  res: bigint,
  rows: Record<string, unknown>[],
  keys: string[],
  extra?: Record<string, unknown>,
): TrackData {
  return {
    t0: Number(w.t0),
    t1: Number(w.t1),
    px: w.px,
    res: Number(res),
    rows: rows.length,
    cols: toColumns(rows, keys),
    extra,
  };
}

/**
 * `arg_max(col, BUCKET_PICK)`: the column of the bucket's longest row, the
 * lowest id among equally long ones. One key for every column, so a bucket's
 * name, category and utid come from the same row, and the same on every run:
 * `arg_max(col, dur)` chose among equal durations by thread scheduling (two
 * workqueue buckets of sched_wq's overview differed between two runs).
 * Counters pick their last value by `(ts, id)` for the same reason.
 */
export const BUCKET_PICK = '(dur, -id)';

/**
 * The summarising query shared by every slice-like table.
 * `src` selects id, ts (abs), dur (abs, open slices closed at the trace end),
 * the key column `k` (which track a row belongs to, so one scan serves
 * several tracks) and the payload columns; `payload` lists them with their
 * bucket aggregate.
 *
 * `src` is NOT MATERIALIZED: each branch (rows kept whole, rows summarised)
 * scans the table with its own filter. DuckDB otherwise materialises a CTE
 * read twice, i.e. holds every source row in memory until both branches are
 * done: the threads of interest's thread_state rows of a 10M-event trace
 * (1.5M rows) took ~50-100 MB, the server's peak RSS after the ingest, and
 * twice the time of the two scans.
 */
export function binnedSql(
  src: string,
  payload: Array<{ col: string; agg: string }>,
  b: ReturnType<typeof bounds>,
  groupExtra = '',
): string {
  const rawCols = payload.map((p) => p.col).join(', ');
  const aggCols = payload.map((p) => `${p.agg} AS ${p.col}`).join(', ');
  return `
    WITH v AS NOT MATERIALIZED (${src})
    SELECT k, id, ts - ${b.base} AS ts, dur, 1 AS n, ${rawCols} FROM v WHERE dur >= ${b.res}
    UNION ALL
    SELECT k, CASE WHEN count(*) = 1 THEN any_value(id) END AS id,
           min(ts) - ${b.base} AS ts, greatest(max(ts + dur) - min(ts), 1) AS dur, count(*) AS n, ${aggCols}
    FROM v WHERE dur < ${b.res}
    GROUP BY k, (ts - ${b.a0}) // ${b.res}${groupExtra}
    ORDER BY k, ts`;
}

export const durExpr = (last: bigint) => `CASE WHEN dur < 0 THEN ${last} - ts ELSE dur END`;

/** A thread_state row's drawn length: to its end as the model defines it for readers (thread_state_end.ts). */
export const threadStateDurExpr = (last: bigint) => `(${threadStateEndSql(last)}) - ts`;

type Key = number | string;

/** Splits rows (sorted by k) into one TrackData per requested key. */
function perKey(
  w: Window,
  res: bigint,
  keys: Key[],
  rows: Record<string, unknown>[],
  cols: string[],
): Map<Key, TrackData> {
  const groups = new Map<string, Record<string, unknown>[]>(keys.map((k) => [String(k), []]));
  for (const r of rows) groups.get(String(r.k))?.push(r);
  return new Map(keys.map((k) => [k, result(w, res, groups.get(String(k))!, cols)]));
}

function intList(keys: number[]): string {
  return keys.map((k) => String(Math.trunc(k))).join(', ');
}

/** What ran on each CPU: sched_slice, coloured by task (utid). */
export async function cpuTracks(tr: OpenTrace, w: Window, cpus: number[]): Promise<Map<Key, TrackData>> {
  const b = bounds(tr, w);
  const cols = ['id', 'ts', 'dur', 'n', 'utid', 'end_state'];
  if (!tr.meta.tables.has('sched_slice')) return perKey(w, b.res, cpus, [], cols);
  const src = `SELECT cpu AS k, id, ts, ${durExpr(b.last)} AS dur, utid, end_state FROM sched_slice
    WHERE cpu IN (${intList(cpus)}) AND ts < ${b.a1} AND ts >= ${b.a0 - tr.meta.maxDur.sched_slice}
      AND ts + ${durExpr(b.last)} > ${b.a0}`;
  const rows = await tr.query(
    binnedSql(
      src,
      [
        { col: 'utid', agg: `arg_max(utid, ${BUCKET_PICK})` },
        { col: 'end_state', agg: 'NULL::VARCHAR' },
      ],
      b,
    ),
  );
  return perKey(w, b.res, cpus, rows, cols);
}

/** Threads: their scheduling states and their slices (reclaim, shrinker, work items). */
export async function threadTracks(tr: OpenTrace, w: Window, utids: number[]): Promise<Map<Key, TrackData>> {
  const b = bounds(tr, w);
  const stateCols = ['id', 'ts', 'dur', 'n', 'state', 'cpu'];
  const sliceCols = ['id', 'ts', 'dur', 'n', 'name', 'category', 'depth', 'begin_id', 'end_id'];
  const states = tr.meta.tables.has('thread_state')
    ? await tr.query(
        binnedSql(
          `SELECT utid AS k, id, ts, ${threadStateDurExpr(b.last)} AS dur, state, cpu FROM thread_state
         WHERE utid IN (${intList(utids)}) AND ts < ${b.a1} AND ts >= ${b.a0 - tr.meta.maxDur.thread_state}
           AND ts + ${threadStateDurExpr(b.last)} > ${b.a0}`,
          [
            { col: 'state', agg: `arg_max(state, ${BUCKET_PICK})` },
            { col: 'cpu', agg: 'NULL::INTEGER' },
          ],
          b,
        ),
      )
    : [];
  const slices = tr.meta.tables.has('slice')
    ? await tr.query(
        binnedSql(
          `SELECT utid AS k, id, ts, ${durExpr(b.last)} AS dur, name, category, depth, begin_id, end_id FROM slice
         WHERE utid IN (${intList(utids)}) AND ts < ${b.a1} AND ts >= ${b.a0 - tr.meta.maxDur.slice}
           AND ts + ${durExpr(b.last)} > ${b.a0}`,
          [
            { col: 'name', agg: `arg_max(name, ${BUCKET_PICK})` },
            { col: 'category', agg: `arg_max(category, ${BUCKET_PICK})` },
            { col: 'depth', agg: 'depth' },
            { col: 'begin_id', agg: 'CASE WHEN count(*) = 1 THEN any_value(begin_id) END' },
            { col: 'end_id', agg: 'CASE WHEN count(*) = 1 THEN any_value(end_id) END' },
          ],
          b,
          ', depth',
        ),
      )
    : [];
  const out = perKey(w, b.res, utids, states, stateCols);
  const sl = perKey(w, b.res, utids, slices, sliceCols);
  for (const u of utids) {
    const s = sl.get(u)!;
    out.get(u)!.extra = { slices: s.cols, sliceRows: s.rows };
  }
  return out;
}

/** Slices of some categories (shrinker, direct_reclaim, ...), across threads. */
export async function sliceTracks(tr: OpenTrace, w: Window, categories: string[]): Promise<Map<Key, TrackData>> {
  const b = bounds(tr, w);
  const cols = ['id', 'ts', 'dur', 'n', 'name', 'utid', 'depth', 'begin_id', 'end_id'];
  if (!tr.meta.tables.has('slice')) return perKey(w, b.res, categories, [], cols);
  const params: Record<string, string> = {};
  categories.forEach((c, i) => {
    params[`c${i}`] = c;
  });
  const rows = await tr.query(
    binnedSql(
      `SELECT category AS k, id, ts, ${durExpr(b.last)} AS dur, name, utid, depth, begin_id, end_id FROM slice
       WHERE category IN (${categories.map((_c, i) => `$c${i}`).join(', ')}) AND ts < ${b.a1} AND ts >= ${b.a0 - tr.meta.maxDur.slice}
         AND ts + ${durExpr(b.last)} > ${b.a0}`,
      [
        { col: 'name', agg: `arg_max(name, ${BUCKET_PICK})` },
        { col: 'utid', agg: `arg_max(utid, ${BUCKET_PICK})` },
        { col: 'depth', agg: '0' },
        { col: 'begin_id', agg: 'CASE WHEN count(*) = 1 THEN any_value(begin_id) END' },
        { col: 'end_id', agg: 'CASE WHEN count(*) = 1 THEN any_value(end_id) END' },
      ],
      b,
    ),
    params,
  );
  return perKey(w, b.res, categories, rows, cols);
}

const counterRanges = new WeakMap<OpenTrace, Promise<Map<string, { lo: number; hi: number }>>>();

/** Counter series: per pixel column min / max / last value (exact when zoomed in). */
export async function counterTracks(tr: OpenTrace, w: Window, ids: number[]): Promise<Map<Key, TrackData>> {
  const b = bounds(tr, w);
  const cols = ['id', 'ts', 'n', 'lo', 'hi', 'last'];
  if (!tr.meta.tables.has('counter')) return perKey(w, b.res, ids, [], cols);
  let ranges = counterRanges.get(tr);
  if (!ranges) {
    ranges = tr
      .query<{ k: number; lo: number; hi: number }>(
        `SELECT track_id AS k, min(value) AS lo, max(value) AS hi FROM counter GROUP BY 1`,
      )
      .then((rows) => new Map(rows.map((r) => [String(r.k), { lo: r.lo, hi: r.hi }])));
    counterRanges.set(tr, ranges);
  }
  const rows = await tr.query(`
    SELECT track_id AS k, CASE WHEN count(*) = 1 THEN any_value(id) END AS id, min(ts) - ${b.base} AS ts, count(*) AS n,
           min(value) AS lo, max(value) AS hi, arg_max(value, (ts, id)) AS last
    FROM counter WHERE track_id IN (${intList(ids)}) AND ts >= ${b.a0} AND ts < ${b.a1}
    GROUP BY track_id, (ts - ${b.a0}) // ${b.res} ORDER BY k, ts`);
  const prev = await tr.query<{ k: number; ts: bigint; value: number }>(`
    SELECT track_id AS k, max(ts) - ${b.base} AS ts, arg_max(value, (ts, id)) AS value
    FROM counter WHERE track_id IN (${intList(ids)}) AND ts < ${b.a0} GROUP BY track_id`);
  const prevBy = new Map(prev.map((p) => [String(p.k), p]));
  const range = await ranges;
  const out = perKey(w, b.res, ids, rows, cols);
  for (const id of ids) {
    const p = prevBy.get(String(id));
    const r = range.get(String(id));
    out.get(id)!.extra = { prev: p ? { ts: Number(p.ts), value: p.value } : null, lo: r?.lo ?? 0, hi: r?.hi ?? 0 };
  }
  return out;
}

/** Instant events (reclaim writing pages out): per pixel column count, the id when alone. */
export async function instantTrack(tr: OpenTrace, w: Window, name: 'writepage'): Promise<TrackData> {
  const b = bounds(tr, w);
  const keys = ['id', 'ts', 'n', 'cpu', 'utid'];
  const table = name === 'writepage' ? 'mm_vmscan_write_folio' : '';
  if (!tr.meta.tables.has(table)) return result(w, b.res, [], keys);
  const rows = await tr.query(`
    SELECT CASE WHEN count(*) = 1 THEN any_value(id) END AS id, min(ts) - ${b.base} AS ts, count(*) AS n,
           any_value(cpu) AS cpu, any_value(utid) AS utid
    FROM ${table} WHERE ts >= ${b.a0} AND ts < ${b.a1}
    GROUP BY (ts - ${b.a0}) // ${b.res} ORDER BY ts`);
  return result(w, b.res, rows, keys);
}

export const MAX_FLOWS = 2000;

/** Links whose span overlaps the window: both ends with their ts, CPU and thread. */
export async function flowTrack(tr: OpenTrace, w: Window, kind: string): Promise<TrackData> {
  const b = bounds(tr, w);
  const keys = ['id', 'out_id', 'out_ts', 'out_cpu', 'out_utid', 'in_id', 'in_ts', 'in_cpu', 'in_utid'];
  if (!tr.meta.tables.has('flow')) return result(w, b.res, [], keys);
  // Flows are short links; bound the event scan to the window widened by 1 s each side.
  // `e` NOT MATERIALIZED: each join end scans the events itself. Without it DuckDB's plan held the
  // window's events in memory: the whole window of a 10M-event trace took the process from 130 to
  // 525 MB (285 MB with the two scans, and 40% less time).
  const pad = 1_000_000_000n;
  const rows = await tr.query(
    `WITH e AS NOT MATERIALIZED (SELECT id, ts, cpu, utid FROM ftrace_event WHERE ts >= ${b.a0 - pad} AND ts < ${b.a1 + pad})
     SELECT f.id, a.id AS out_id, a.ts - ${b.base} AS out_ts, a.cpu AS out_cpu, a.utid AS out_utid,
            z.id AS in_id, z.ts - ${b.base} AS in_ts, z.cpu AS in_cpu, z.utid AS in_utid
     FROM flow f JOIN e a ON a.id = f.slice_out JOIN e z ON z.id = f.slice_in
     WHERE f.kind = $kind AND least(a.ts, z.ts) < ${b.a1} AND greatest(a.ts, z.ts) >= ${b.a0}
     ORDER BY a.ts LIMIT ${MAX_FLOWS}`,
    { kind },
  );
  return result(w, b.res, rows, keys);
}
