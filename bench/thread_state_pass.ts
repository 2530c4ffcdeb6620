/**
 * An experiment, not the product (issue 29, fifth session of 2026-11-29):
 * thread_state built without the window of its statement in
 * queries/model/derive_sched.sql,
 * by a small state machine per thread in one pass over the scheduler tables
 * read back in their stored order. Exact on every model tried, but it did
 * not pay (bench/README.md, "Session of 2026-11-29 (fifth)"): handing its
 * result back to DuckDB costs what the window's sort saves. Kept so that
 * nobody tries it again blind; bench/thread_state_compare.ts runs it.
 *
 * What it relies on (and declines, writing nothing, otherwise):
 *  - each of sched_switch, sched_waking (or sched_wakeup), sched_wakeup_new
 *    is stored in (ts, id) order, so one merge of the three gives every
 *    thread's moments in the SQL's (ts, kind, id) order without a sort.
 *    trace.dat and in-order text are stored so; Perfetto traces (per-CPU
 *    bundles) and out-of-order text are not;
 *  - no ts or id is NULL and each is exact as a double (|v| < 2^53);
 *  - each tid has one utid in `thread` (the SQL's join would repeat a
 *    moment per utid).
 * The pass writes, per stored row of each table, the utid of the row's
 * thread_state row (NULL: none) and its dur into a narrow table beside it,
 * and one INSERT builds the rows from the tables POSITIONAL JOINed to those
 * (writing the rows from JS instead, strings included, cost more).
 */
import { ColumnAppender } from '../server/model/column_appender.ts';
import { ColumnChunk, type ColumnSpec } from '../server/model/column_chunk.ts';
import type { Engine } from '../server/engine/engine.ts';
import type { DuckDBVector } from '@duckdb/node-api';

const SWITCH_OUT = 0;
const WAKEUP = 1;
const SWITCH_IN = 2;
const EXACT = 2 ** 53;

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** One table's moments, read back in stored order. */
interface Stream {
  kind: number;
  id: Float64Array;
  ts: Float64Array;
  /** utid of the thread the moment is about (through `thread`), -1 when none */
  utid: Int32Array;
  /** per row: the utid of its thread_state row, -1 when it makes none */
  kept: Int32Array;
  /** per row: its thread_state row's dur (-1: open at the end of the trace) */
  dur: Float64Array;
  at: number;
}

/**
 * Writes thread_state (empty before) from the scheduler tables; null when
 * the input is not one this pass handles (see above): nothing was written.
 * Else the process CPU ms of each phase, in order.
 */
export async function writeThreadStates(engine: Engine): Promise<Record<string, number> | null> {
  const phases: Record<string, number> = {};
  let last = cpuMs();
  const mark = (phase: string) => {
    const now = cpuMs();
    phases[phase] = now - last;
    last = now;
  };
  const [{ waking }] = await engine.query<{ waking: boolean }>('SELECT EXISTS (SELECT 1 FROM sched_waking) AS waking');
  const wakeTable = waking ? 'sched_waking' : 'sched_wakeup';
  const tables = ['sched_switch', wakeTable, 'sched_wakeup_new'];
  // Bounds, NULLs and duplicate tids first: cheap aggregates, before reading anything row by row.
  const [check] = await engine.query<{ bad: boolean }>(
    `SELECT (${tables
      .map(
        (t) =>
          `(SELECT coalesce(max(greatest(abs(ts), abs(id))) >= ${EXACT} OR bool_or(ts IS NULL OR id IS NULL), false) FROM ${t})`,
      )
      .join(' OR ')}
       OR (SELECT count(tid) <> count(DISTINCT tid) FROM thread)) AS bad`,
  );
  if (!check || check.bad) return null;

  mark('checks');
  const threads = await readDoubles(engine, 'SELECT utid::DOUBLE, tid::DOUBLE FROM thread WHERE tid IS NOT NULL');
  const [threadUtid, threadTid] = threads;
  let threadCount = 0;
  const utidOf = new Map<number, number>();
  for (let i = 0; i < threadUtid!.length; i++) {
    utidOf.set(threadTid![i]!, threadUtid![i]!);
    threadCount = Math.max(threadCount, threadUtid![i]! + 1);
  }
  /** tids -> utids, -1 for a tid without a thread (NULL included). */
  const utids = (tids: Float64Array) => {
    const out = new Int32Array(tids.length);
    for (let i = 0; i < tids.length; i++) out[i] = utidOf.get(tids[i]!) ?? -1;
    return out;
  };

  // Stored order: plain scans, no ORDER BY (DuckDB keeps insertion order).
  // Every column as a DOUBLE, NULL as NaN, read straight from the vectors.
  const orNaN = (c: string) => `coalesce(${c}::DOUBLE, 'NaN'::DOUBLE)`;
  const [swId, swTs, swPrev, swBlocks, swNext] = await readDoubles(
    engine,
    `SELECT id::DOUBLE, ts::DOUBLE, ${orNaN('prev_pid')}, coalesce(prev_state NOT LIKE 'R%', false)::DOUBLE, ${orNaN('next_pid')}
     FROM sched_switch`,
  );
  const wakes = (t: string) => readDoubles(engine, `SELECT id::DOUBLE, ts::DOUBLE, ${orNaN('pid')} FROM ${t}`);
  const [wkId, wkTs, wkPid] = await wakes(wakeTable);
  const [wnId, wnTs, wnPid] = await wakes('sched_wakeup_new');
  const stream = (kind: number, id: Float64Array, ts: Float64Array, tids: Float64Array): Stream => ({
    kind,
    id,
    ts,
    utid: utids(tids),
    kept: new Int32Array(ts.length).fill(-1),
    dur: new Float64Array(ts.length).fill(-1),
    at: 0,
  });
  const streams = [
    stream(SWITCH_OUT, swId!, swTs!, swPrev!),
    stream(WAKEUP, wkId!, wkTs!, wkPid!),
    stream(WAKEUP, wnId!, wnTs!, wnPid!),
    stream(SWITCH_IN, swId!, swTs!, swNext!),
  ];
  mark('read');
  if (!streams.every(inTimeOrder)) return null;
  mark('order');

  // Per utid: whether its last moment (kept or not) blocked, and its last
  // kept moment (stream, row), whose dur the next kept one ends.
  const lastBlocks = new Uint8Array(threadCount);
  const openStream = new Int8Array(threadCount).fill(-1);
  const openRow = new Int32Array(threadCount);
  const openTs = new Float64Array(threadCount);
  for (;;) {
    // The next moment in (ts, kind, id) order: the least of the four streams' heads.
    let next = -1;
    let nextTs = 0;
    let nextId = 0;
    let nextKind = 0;
    for (let k = 0; k < 4; k++) {
      const s = streams[k]!;
      if (s.at >= s.ts.length) continue;
      const ts = s.ts[s.at]!;
      const id = s.id[s.at]!;
      if (next < 0 || ts < nextTs || (ts === nextTs && (s.kind < nextKind || (s.kind === nextKind && id < nextId)))) {
        next = k;
        nextTs = ts;
        nextId = id;
        nextKind = s.kind;
      }
    }
    if (next < 0) break;
    const s = streams[next]!;
    const i = s.at++;
    const u = s.utid[i]!;
    if (u <= 0) continue; // no thread (the SQL's join), or the idle task (utid 0)
    // A wakeup counts only if the thread's previous moment blocked.
    if (nextKind === WAKEUP && lastBlocks[u] === 0) continue;
    // The open moment ends here: a blocking one at its next moment, any
    // other at the next switch, and a wakeup that is kept follows a
    // blocking moment, so either way this moment's ts.
    const open = openStream[u]!;
    if (open >= 0) streams[open]!.dur[openRow[u]!] = nextTs - openTs[u]!;
    s.kept[i] = u;
    openStream[u] = next;
    openRow[u] = i;
    openTs[u] = nextTs;
    lastBlocks[u] = nextKind === SWITCH_OUT ? swBlocks![i]! : 0;
  }

  // Each moment's utid (NULL: no row) and dur, in the stored order of its
  // table: the rows are then one INSERT from the tables beside them.
  mark('loop');
  const [out, wk, wn, sin] = streams;
  try {
    await engine.exec(`CREATE TABLE _thread_state_switch (out_utid INTEGER, out_dur BIGINT, in_utid INTEGER, in_dur BIGINT);
      CREATE TABLE _thread_state_waking (utid INTEGER, dur BIGINT);
      CREATE TABLE _thread_state_wakeup_new (utid INTEGER, dur BIGINT)`);
    await appendMoments(engine, '_thread_state_switch', [out!, sin!]);
    await appendMoments(engine, '_thread_state_waking', [wk!]);
    await appendMoments(engine, '_thread_state_wakeup_new', [wn!]);
    mark('append');
    await engine.exec(`INSERT INTO thread_state
      SELECT s.id * 3, s.ts, m.out_dur, NULL, m.out_utid, s.prev_state, NULL, NULL, NULL, NULL
      FROM sched_switch s POSITIONAL JOIN _thread_state_switch m WHERE m.out_utid IS NOT NULL
      UNION ALL
      SELECT s.id * 3 + 2, s.ts, m.in_dur, s.cpu, m.in_utid, 'Running', NULL, NULL, NULL, NULL
      FROM sched_switch s POSITIONAL JOIN _thread_state_switch m WHERE m.in_utid IS NOT NULL
      UNION ALL
      SELECT w.id * 3 + 1, w.ts, m.dur, w.target_cpu, m.utid, 'R', NULL, NULL, w.utid, w.id
      FROM ${wakeTable} w POSITIONAL JOIN _thread_state_waking m WHERE m.utid IS NOT NULL
      UNION ALL
      SELECT w.id * 3 + 1, w.ts, m.dur, w.target_cpu, m.utid, 'R', NULL, NULL, w.utid, w.id
      FROM sched_wakeup_new w POSITIONAL JOIN _thread_state_wakeup_new m WHERE m.utid IS NOT NULL`);
  } finally {
    await engine.exec(`DROP TABLE IF EXISTS _thread_state_switch; DROP TABLE IF EXISTS _thread_state_waking;
      DROP TABLE IF EXISTS _thread_state_wakeup_new`);
  }
  mark('insert');
  return phases;
}

/** Appends streams' (kept utid, dur) pairs side by side, one row per stored row. */
async function appendMoments(engine: Engine, table: string, streams: Stream[]): Promise<void> {
  const columns: ColumnSpec[] = streams.flatMap((_, k) => [
    { name: `utid${k}`, kind: 'i32' as const },
    { name: `dur${k}`, kind: 'i64' as const },
  ]);
  // ColumnAppender flushes every 16k rows, each flush a fixed ~10 ms here (an
  // INSERT planned, the table's last blocks pinned: column_appender.ts); one
  // flush at the close made the append phase ~40-80 ms cheaper on
  // memcg_walk.v7 (measured with an option this experiment did not keep).
  const appender = await ColumnAppender.create(engine.connection, table, columns);
  try {
    const chunk = new ColumnChunk(columns, (d) => appender.append(d));
    const rows = streams[0]!.kept.length;
    for (let r = 0; r < rows; r++) {
      chunk.startRow();
      for (let k = 0; k < streams.length; k++) {
        const u = streams[k]!.kept[r]!;
        if (u < 0) {
          chunk.setNull(2 * k);
          chunk.setNull(2 * k + 1);
        } else {
          chunk.setInt(2 * k, u);
          chunk.setInt(2 * k + 1, streams[k]!.dur[r]!);
        }
      }
      chunk.endRow();
    }
    chunk.flush();
  } finally {
    appender.close();
  }
}

/** Whether a stream's rows are in (ts, id) order. */
function inTimeOrder(s: Stream): boolean {
  const { ts, id } = s;
  for (let i = 1; i < ts.length; i++) {
    const a = ts[i - 1]!;
    const b = ts[i]!;
    if (b < a || (b === a && id[i]! <= id[i - 1]!)) return false;
  }
  return true;
}

/**
 * A query's columns (each a DOUBLE without NULLs) as Float64Arrays, copied
 * from the result's vectors: Engine.queryColumns pushes each value into an
 * array (~150 of the first version's ~1000 CPU ms on memcg_walk.v7).
 */
async function readDoubles(engine: Engine, sql: string): Promise<Float64Array[]> {
  const result = await engine.connection.run(sql);
  const chunks = Array.from({ length: result.chunkCount }, (_, c) => result.getChunk(c));
  const rows = chunks.reduce((n, c) => n + c.rowCount, 0);
  const columns = Array.from({ length: result.columnCount }, () => new Float64Array(rows));
  let at = 0;
  for (const chunk of chunks) {
    columns.forEach((column, i) => {
      const vector = chunk.getColumnVector(i);
      const items = (vector as unknown as { items?: unknown }).items;
      if (items instanceof Float64Array && items.length === chunk.rowCount) column.set(items, at);
      else for (let r = 0; r < chunk.rowCount; r++) column[at + r] = Number((vector as DuckDBVector).getItem(r));
    });
    at += chunk.rowCount;
  }
  return columns;
}
