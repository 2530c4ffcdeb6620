/**
 * Issue 29 option (a), measured before building it: sched_slice and
 * thread_state made in one pass over the scheduler events in stream (id)
 * order, as a tracker beside the ModelBuilder would make them while
 * decoding (Perfetto's SchedEventTracker / ThreadStateTracker), instead of
 * queries/model/derive_sched.sql's windows after it.
 *
 *   npx tsx bench/sched_tracker_check.ts MODEL.duckdb [--reps N]
 *
 * On an ingested model (left unchanged: every write is rolled back) it
 * prints whether the tracker's rows equal the model's (EXCEPT ALL both
 * ways: derive_sched.sql is the oracle), the tracker's own CPU, and, in
 * alternating runs, the CPU of derive_sched.sql against appending the
 * tracker's rows through the store's ColumnAppender: what the store thread
 * would pay instead of the SQL.
 *
 * What a real tracker needs that this one takes from the finished model:
 * the tid -> utid map (the builder's, at the event), whether the trace has
 * any sched_waking (sched_wakeup counts only without: the SQL decides at the
 * end), and events in ts order (else the SQL stays the fallback: this
 * prints whether the model's ts are sorted in id order).
 */
import { openDuckDb, type Engine } from '../server/engine/engine.ts';
import { ColumnAppender } from '../server/model/column_appender.ts';
import { ColumnChunk, type ChunkData, type ColumnKind, type ColumnSpec } from '../server/model/column_chunk.ts';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DERIVE_SCHED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../queries/model/derive_sched.sql');

/** DuckDB types of the two tables' columns (queries/schema.sql) as the appender's kinds. */
const KIND_OF_TYPE: Record<string, ColumnKind> = {
  BIGINT: 'i64',
  INTEGER: 'i32',
  DOUBLE: 'f64',
  VARCHAR: 'str',
  BOOLEAN: 'bool',
};

/** A model table's columns, in order, read from the model itself: the tool follows schema.sql. */
async function tableColumns(engine: Engine, table: string): Promise<ColumnSpec[]> {
  const cols = await engine.query<{ column_name: string; data_type: string }>(
    `SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = '${table}' ORDER BY column_index`,
  );
  return cols.map((c) => {
    const kind = KIND_OF_TYPE[c.data_type];
    if (!kind) throw new Error(`${table}.${c.column_name}: no appender kind for ${c.data_type}`);
    return { name: c.column_name, kind };
  });
}

/** sched_slice's and thread_state's columns. */
interface OutputColumns {
  slice: ColumnSpec[];
  state: ColumnSpec[];
}

/** The scheduler events, as columns, in id order. */
interface SchedEvents {
  count: number;
  /** 0 sched_switch, 1 a wakeup (sched_waking, sched_wakeup without waking, sched_wakeup_new). */
  kind: Int8Array;
  id: Float64Array;
  ts: Float64Array;
  cpu: Int32Array;
  /** The event's own thread (the waker, for a wakeup). */
  utid: Int32Array;
  /** prev_pid, or the woken pid. */
  pidA: Int32Array;
  /** next_pid, or target_cpu (NaN when NULL). */
  numB: Float64Array;
  prio: Int32Array;
  prevState: (string | null)[];
}

async function readEvents(engine: Engine): Promise<SchedEvents> {
  const waking = await engine.query<{ n: bigint }>('SELECT count(*) AS n FROM sched_waking');
  const useWakeup = Number(waking[0]!.n) === 0;
  const rows = await engine.query<{
    k: number;
    id: bigint;
    ts: bigint;
    cpu: number;
    utid: number;
    a: number;
    b: number | null;
    st: string | null;
    prio: number | null;
  }>(`
    SELECT 0 AS k, id, ts, cpu, utid, prev_pid AS a, next_pid AS b, prev_state AS st, next_prio AS prio FROM sched_switch
    UNION ALL SELECT 1, id, ts, cpu, utid, pid, target_cpu, NULL, NULL FROM sched_waking
    UNION ALL SELECT 1, id, ts, cpu, utid, pid, target_cpu, NULL, NULL FROM sched_wakeup WHERE ${useWakeup}
    UNION ALL SELECT 1, id, ts, cpu, utid, pid, target_cpu, NULL, NULL FROM sched_wakeup_new
    ORDER BY id`);
  const n = rows.length;
  const ev: SchedEvents = {
    count: n,
    kind: new Int8Array(n),
    id: new Float64Array(n),
    ts: new Float64Array(n),
    cpu: new Int32Array(n),
    utid: new Int32Array(n),
    pidA: new Int32Array(n),
    numB: new Float64Array(n),
    prio: new Int32Array(n),
    prevState: new Array<string | null>(n),
  };
  rows.forEach((r, i) => {
    ev.kind[i] = r.k;
    ev.id[i] = Number(r.id);
    ev.ts[i] = Number(r.ts);
    ev.cpu[i] = r.cpu;
    ev.utid[i] = r.utid;
    ev.pidA[i] = r.a;
    ev.numB[i] = r.b ?? NaN;
    ev.prio[i] = r.prio ?? 0;
    ev.prevState[i] = r.st;
  });
  return ev;
}

/** A moment in a thread's life: switched out (0), woken (1), switched in (2). */
interface Moment {
  kind: number;
  id: number;
  ts: number;
  cpu: number | null;
  state: string | null;
  wakerUtid: number | null;
}

interface ThreadTrack {
  /** Moments at `groupTs` not yet taken: within one ts they go by (kind, id), as the SQL orders them. */
  group: Moment[];
  groupTs: number;
  prevBlocks: boolean;
  /** The last kept moment: its row is written when the next kept one gives its dur. */
  open: Moment | null;
}

/** derive_sched.sql's rules, one event at a time (see its comments). */
function track(
  ev: SchedEvents,
  utidOfTid: Map<number, number>,
  columns: OutputColumns,
): { slices: ChunkData[]; states: ChunkData[] } {
  const slices: ChunkData[] = [];
  const states: ChunkData[] = [];
  const sliceOut = new ColumnChunk(columns.slice, (d) => slices.push(d));
  const stateOut = new ColumnChunk(columns.state, (d) => states.push(d));
  const openSlice = new Map<number, { id: number; ts: number; utid: number; prio: number }>();
  const threads = new Map<number, ThreadTrack>();

  const writeSlice = (
    s: { id: number; ts: number; utid: number; prio: number },
    cpu: number,
    dur: number,
    end: string | null,
  ) => {
    sliceOut.startRow();
    sliceOut.set(0, s.id);
    sliceOut.set(1, s.ts);
    sliceOut.set(2, dur);
    sliceOut.set(3, cpu);
    sliceOut.set(4, s.utid);
    sliceOut.set(5, end);
    sliceOut.set(6, s.prio);
    sliceOut.endRow();
  };
  const writeState = (m: Moment, utid: number, dur: number) => {
    stateOut.startRow();
    stateOut.set(0, m.id * 3 + m.kind);
    stateOut.set(1, m.ts);
    stateOut.set(2, dur);
    stateOut.set(3, m.cpu);
    stateOut.set(4, utid);
    stateOut.set(5, m.state);
    stateOut.setNull(6);
    stateOut.setNull(7);
    stateOut.set(8, m.kind === 1 ? m.wakerUtid : null);
    stateOut.set(9, m.kind === 1 ? m.id : null);
    stateOut.endRow();
  };
  const take = (t: ThreadTrack, utid: number, m: Moment) => {
    // A wakeup counts only right after a blocking switch-out; a dropped one
    // leaves the open row to end at the next kept moment (the SQL's next_switch_ts).
    const kept = m.kind !== 1 || t.prevBlocks;
    t.prevBlocks = m.kind === 0 && m.state !== null && !m.state.startsWith('R');
    if (!kept) return;
    if (t.open) writeState(t.open, utid, m.ts - t.open.ts);
    t.open = m;
  };
  const takeGroup = (t: ThreadTrack, utid: number) => {
    if (t.group.length > 1) t.group.sort((x, y) => x.kind - y.kind || x.id - y.id);
    for (const m of t.group) take(t, utid, m);
    t.group = [];
  };
  const moment = (utid: number, m: Moment) => {
    let t = threads.get(utid);
    if (!t) threads.set(utid, (t = { group: [], groupTs: m.ts, prevBlocks: false, open: null }));
    if (t.group.length > 0 && t.groupTs !== m.ts) takeGroup(t, utid);
    t.groupTs = m.ts;
    t.group.push(m);
  };

  for (let i = 0; i < ev.count; i++) {
    const id = ev.id[i]!;
    const ts = ev.ts[i]!;
    if (ev.kind[i] === 0) {
      const cpu = ev.cpu[i]!;
      const prev = openSlice.get(cpu);
      if (prev) writeSlice(prev, cpu, ts - prev.ts, ev.prevState[i]!);
      const next = utidOfTid.get(ev.numB[i]!);
      openSlice.set(cpu, { id, ts, utid: next ?? 0, prio: ev.prio[i]! });
      const out = utidOfTid.get(ev.pidA[i]!);
      // The idle task (utid 0) has no thread_state; a pid without a thread row joins nothing.
      if (out !== undefined && out !== 0)
        moment(out, { kind: 0, id, ts, cpu: null, state: ev.prevState[i]!, wakerUtid: null });
      if (next !== undefined && next !== 0) moment(next, { kind: 2, id, ts, cpu, state: 'Running', wakerUtid: null });
    } else {
      const woken = utidOfTid.get(ev.pidA[i]!);
      const target = ev.numB[i]!;
      if (woken !== undefined && woken !== 0)
        moment(woken, {
          kind: 1,
          id,
          ts,
          cpu: Number.isNaN(target) ? null : target,
          state: 'R',
          wakerUtid: ev.utid[i]!,
        });
    }
  }
  for (const [cpu, s] of openSlice) writeSlice(s, cpu, -1, null);
  for (const [utid, t] of threads) {
    takeGroup(t, utid);
    if (t.open) writeState(t.open, utid, -1);
  }
  sliceOut.flush();
  stateOut.flush();
  return { slices, states };
}

async function append(engine: Engine, table: string, columns: ColumnSpec[], chunks: ChunkData[]): Promise<void> {
  const appender = await ColumnAppender.create(engine.connection, table, columns);
  for (const d of chunks) appender.append(d);
  appender.close();
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const c = process.cpuUsage(since);
  return Math.round((c.user + c.system) / 1000);
}

function spread(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${s[s.length >> 1]} (${s[0]}-${s[s.length - 1]})`;
}

async function main(): Promise<void> {
  const db = process.argv[2];
  if (!db) throw new Error('usage: npx tsx bench/sched_tracker_check.ts MODEL.duckdb [--reps N]');
  const repsAt = process.argv.indexOf('--reps');
  const reps = repsAt > 0 ? Number(process.argv[repsAt + 1]) : 5;
  const engine = await openDuckDb(db, { memoryLimit: '1GB' });
  try {
    const ev = await readEvents(engine);
    let sorted = true;
    for (let i = 1; i < ev.count && sorted; i++) sorted = ev.ts[i]! >= ev.ts[i - 1]!;
    const threads = await engine.query<{ tid: number; utid: number }>('SELECT tid, utid FROM thread');
    const utidOfTid = new Map(threads.map((t) => [t.tid, t.utid]));
    const columns: OutputColumns = {
      slice: await tableColumns(engine, 'sched_slice'),
      state: await tableColumns(engine, 'thread_state'),
    };

    const trackCpu: number[] = [];
    let rows = track(ev, utidOfTid, columns);
    for (let r = 0; r < reps; r++) {
      const c0 = process.cpuUsage();
      rows = track(ev, utidOfTid, columns);
      trackCpu.push(cpuMs(c0));
    }

    await engine.exec('BEGIN');
    await engine.exec('CREATE TEMP TABLE _check_slice AS FROM sched_slice LIMIT 0');
    await engine.exec('CREATE TEMP TABLE _check_state AS FROM thread_state LIMIT 0');
    await append(engine, '_check_slice', columns.slice, rows.slices);
    await append(engine, '_check_state', columns.state, rows.states);
    const same: Record<string, unknown> = {};
    for (const [mine, model] of [
      ['_check_slice', 'sched_slice'],
      ['_check_state', 'thread_state'],
    ] as const) {
      const [r] = await engine.query<Record<string, bigint>>(`SELECT
        (SELECT count(*) FROM ${model}) AS rows,
        (SELECT count(*) FROM (FROM ${mine} EXCEPT ALL FROM ${model})) AS extra,
        (SELECT count(*) FROM (FROM ${model} EXCEPT ALL FROM ${mine})) AS missing`);
      same[model] = Object.fromEntries(Object.entries(r!).map(([k, v]) => [k, Number(v)]));
    }
    await engine.exec('ROLLBACK');

    const sql = fs.readFileSync(DERIVE_SCHED, 'utf8');
    const sqlCpu: number[] = [];
    const appendCpu: number[] = [];
    for (let r = 0; r < reps; r++) {
      for (const how of ['sql', 'append'] as const) {
        await engine.exec('BEGIN; DELETE FROM sched_slice; DELETE FROM thread_state;');
        const c0 = process.cpuUsage();
        if (how === 'sql') await engine.exec(sql);
        else {
          await append(engine, 'sched_slice', columns.slice, rows.slices);
          await append(engine, 'thread_state', columns.state, rows.states);
        }
        (how === 'sql' ? sqlCpu : appendCpu).push(cpuMs(c0));
        await engine.exec('ROLLBACK');
      }
    }
    process.stdout.write(
      `${JSON.stringify(
        {
          events: ev.count,
          tsSortedInIdOrder: sorted,
          same,
          cpuMs: {
            tracker: spread(trackCpu),
            deriveSchedSql: spread(sqlCpu),
            appendTrackerRows: spread(appendCpu),
          },
        },
        null,
        1,
      )}\n`,
    );
  } finally {
    engine.close();
  }
}

await main();
