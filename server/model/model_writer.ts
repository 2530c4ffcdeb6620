/**
 * The EventSink that turns decoded events into the trace model (schema.sql).
 *
 * One pass, bounded memory: rows go to DuckDB in 2048-row chunks as they
 * arrive. Per-thread state (utid, name) is kept in JS because there are few
 * threads. String fields of typed tables are interned (string -> small int)
 * while appending and resolved into the real VARCHAR columns in one SQL pass
 * at the end, because a native call per string would halve ingest speed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type {
  DecodedEvent,
  EventFields,
  EventSink,
  SkippedInput,
  TraceHeader,
} from '../decode/decoded_event.ts';
import type { Engine } from '../engine/engine.ts';
import { ColumnAppender, type ColumnKind, type ColumnSpec } from './column_appender.ts';
import { FIELD_ALIASES, TYPED_TABLES, typedTableFor } from './typed_tables.ts';

const QUERIES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../queries');
export const SCHEMA_SQL_PATH = path.join(QUERIES_DIR, 'schema.sql');

const TWO_32 = 4294967296;
/** Columns a typed table's storage has beyond its documented ones (see prepare()). */
const STORAGE_EXTRA_COLUMNS: ColumnSpec[] = [
  { name: 'name_id', kind: 'i32' },
  { name: 'common_flags', kind: 'i32' },
  { name: 'preempt_count', kind: 'i32' },
  { name: 'source_where', kind: 'i64' },
];
/** Skipped inputs kept in full; beyond this only counted (a garbage file has millions). */
const MAX_PROBLEMS_KEPT = 1000;
/** Field names that carry a task name, per typed table: [comm field, pid field]. */
const TASK_NAME_FIELDS: Record<string, [string, string][]> = {
  sched_switch: [
    ['prev_comm', 'prev_pid'],
    ['next_comm', 'next_pid'],
  ],
  sched_waking: [['comm', 'pid']],
  sched_wakeup: [['comm', 'pid']],
  sched_wakeup_new: [['comm', 'pid']],
  sched_migrate_task: [['comm', 'pid']],
  sched_process_fork: [
    ['parent_comm', 'parent_pid'],
    ['child_comm', 'child_pid'],
  ],
  sched_process_exit: [['comm', 'pid']],
};

interface TypedColumn {
  index: number;
  /** The column name, which is also the field name looked up first. */
  name: string;
  /** Other field names that fill this column, in order of preference. */
  aliases: string[];
  /** VARCHAR column stored as an interned string id in the staging table. */
  interned: boolean;
}

interface TypedTableWriter {
  table: string;
  appender: ColumnAppender;
  /** Columns filled from event fields (all but id, ts, cpu, utid, event). */
  fieldColumns: TypedColumn[];
  /** Index of the `event` column (tables receiving several events), else -1. */
  eventColumn: number;
  /** Number of documented columns; storage-only columns follow. */
  width: number;
}

interface ThreadInfo {
  utid: number;
  tid: number;
  name: string | null;
  tgid: number | null;
  forkTs: bigint | null;
  exitTs: bigint | null;
}

interface CpuInfo {
  events: number;
  firstTs: number;
  lastTs: number;
}

export interface WriterSummary {
  format: string;
  formatVersion: string | null;
  cpus: number;
  eventsTotal: number;
  eventsByName: Record<string, number>;
  firstTsNs: bigint | null;
  lastTsNs: bigint | null;
  lostEvents: number;
  lostEventNotices: number;
  unparsedEvents: number;
  skippedInputs: number;
  firstSkipped: SkippedInput[];
  meta: Record<string, string>;
}

export class ModelWriter implements EventSink {
  private headerInfo: TraceHeader | null = null;
  private baseHi = 0;
  private baseLo = 0;
  private nextId = 0;

  private ftraceEvent!: ColumnAppender;
  private args!: ColumnAppender;
  private typedWriters = new Map<string, TypedTableWriter>();
  private tableForEvent = new Map<string, TypedTableWriter | null>();

  private eventNames = new Map<string, number>();
  private eventSystems: (string | null)[] = [];
  private eventCounts: number[] = [];
  private strings = new Map<string, number>();

  private threads = new Map<number, ThreadInfo>();
  private nameHistory: { utid: number; ts: number; name: string }[] = [];
  private cpus = new Map<number, CpuInfo>();

  private lost: { cpu: number; count: number | null; where: number; afterId: number }[] = [];
  private problems: SkippedInput[] = [];
  private problemCount = 0;
  private unparsed = 0;

  private constructor(private readonly engine: Engine) {}

  /** Creates the schema in an empty database and prepares appenders. */
  static async create(engine: Engine): Promise<ModelWriter> {
    const writer = new ModelWriter(engine);
    await engine.exec(fs.readFileSync(SCHEMA_SQL_PATH, 'utf8'));
    await writer.prepare();
    return writer;
  }

  private async prepare(): Promise<void> {
    const con = this.engine.connection;
    await this.engine.exec('CREATE TABLE _string (sid INTEGER, str VARCHAR)');
    this.ftraceEvent = await ColumnAppender.create(con, '_ftrace_event', [
      { name: 'id', kind: 'i64' },
      { name: 'ts', kind: 'i64' },
      { name: 'cpu', kind: 'i32' },
      { name: 'utid', kind: 'i32' },
      { name: 'name_id', kind: 'i32' },
      { name: 'common_flags', kind: 'i32' },
      { name: 'preempt_count', kind: 'i32' },
      { name: 'arg_set_id', kind: 'i64' },
      { name: 'raw', kind: 'str' },
      { name: 'source_where', kind: 'i64' },
    ]);
    this.args = await ColumnAppender.create(con, 'args', [
      { name: 'arg_set_id', kind: 'i64' },
      { name: 'flat_key', kind: 'str' },
      { name: 'key', kind: 'str' },
      { name: 'int_value', kind: 'i64' },
      { name: 'string_value', kind: 'str' },
      { name: 'real_value', kind: 'f64' },
      { name: 'value_type', kind: 'str' },
    ]);
    for (const table of TYPED_TABLES) {
      const cols = await this.engine.query<{ column_name: string; data_type: string }>(
        `SELECT column_name, data_type FROM information_schema.columns
         WHERE table_name = $t ORDER BY ordinal_position`,
        { t: table },
      );
      const aliases = FIELD_ALIASES[table] ?? {};
      const specs: ColumnSpec[] = [];
      const leading = cols.slice(0, 4).map((c) => c.column_name).join(',');
      if (leading !== 'id,ts,cpu,utid') throw new Error(`schema.sql: ${table} must start with id, ts, cpu, utid`);
      const fieldColumns: TypedColumn[] = [];
      const finalColumns: { name: string; interned: boolean }[] = [];
      let eventColumn = -1;
      cols.forEach((c, index) => {
        const interned = c.data_type === 'VARCHAR';
        const kind: ColumnKind =
          interned || c.data_type === 'INTEGER' ? 'i32' : c.data_type === 'DOUBLE' ? 'f64' : 'i64';
        specs.push({ name: c.column_name, kind });
        finalColumns.push({ name: c.column_name, interned });
        if (c.column_name === 'event') eventColumn = index;
        else if (index >= 4) {
          fieldColumns.push({ index, name: c.column_name, aliases: aliases[c.column_name] ?? [], interned });
        }
      });
      // Storage: the documented columns (strings as ids into _string) plus
      // what ftrace_event needs, so each event is written exactly once.
      for (const extra of STORAGE_EXTRA_COLUMNS) specs.push(extra);
      const staging = `_stage_${table}`;
      const ddl = specs
        .map((s) => `"${s.name}" ${s.kind === 'i32' ? 'INTEGER' : s.kind === 'f64' ? 'DOUBLE' : 'BIGINT'}`)
        .join(', ');
      const select = finalColumns.map((c, i) => (c.interned ? `j${i}.str AS "${c.name}"` : `s."${c.name}"`)).join(', ');
      const joins = finalColumns
        .map((c, i) => (c.interned ? ` LEFT JOIN _string j${i} ON j${i}.sid = s."${c.name}"` : ''))
        .join('');
      await this.engine.exec(
        `DROP TABLE ${table};
         CREATE TABLE ${staging} (${ddl});
         CREATE VIEW ${table} AS SELECT ${select} FROM ${staging} s${joins};`,
      );
      this.typedWriters.set(table, {
        table,
        appender: await ColumnAppender.create(con, staging, specs),
        fieldColumns,
        eventColumn,
        width: cols.length,
      });
    }
    const branches = [
      'SELECT id, ts, cpu, utid, name_id, common_flags, preempt_count, arg_set_id, raw, source_where FROM _ftrace_event',
      ...TYPED_TABLES.map(
        (t) =>
          `SELECT id, ts, cpu, utid, name_id, common_flags, preempt_count, NULL, NULL, source_where FROM _stage_${t}`,
      ),
    ];
    await this.engine.exec(
      `CREATE VIEW ftrace_event AS
       SELECT e.id, e.ts, e.cpu, e.cpu AS ucpu, e.utid, n.name, n.system, e.common_flags,
              e.preempt_count, e.arg_set_id, e.raw, e.source_where
       FROM (${branches.join('\n UNION ALL ')}) e JOIN _event_name n USING (name_id)`,
    );
  }

  // ---- EventSink ---------------------------------------------------------

  header(header: TraceHeader): void {
    if (this.headerInfo) return;
    this.headerInfo = header;
    const base = header.tsBaseNs;
    this.baseHi = Number(base >> 32n);
    this.baseLo = Number(base & 0xffffffffn);
  }

  event(e: DecodedEvent): void {
    if (!this.headerInfo) throw new Error('decoder sent an event before the header');
    const id = this.nextId++;
    const utid = this.utidFor(e.pid, e.tgid);
    if (e.comm !== null) this.noteContextComm(utid, e.comm, e.ts);

    let nameId = this.eventNames.get(e.name);
    if (nameId === undefined) {
      nameId = this.eventNames.size;
      this.eventNames.set(e.name, nameId);
      this.eventSystems.push(e.system);
      this.eventCounts.push(0);
    }
    this.eventCounts[nameId]++;

    let cpuInfo = this.cpus.get(e.cpu);
    if (!cpuInfo) {
      cpuInfo = { events: 0, firstTs: e.ts, lastTs: e.ts };
      this.cpus.set(e.cpu, cpuInfo);
    }
    cpuInfo.events++;
    if (e.ts < cpuInfo.firstTs) cpuInfo.firstTs = e.ts;
    if (e.ts > cpuInfo.lastTs) cpuInfo.lastTs = e.ts;

    let typed = this.tableForEvent.get(e.name);
    if (typed === undefined) {
      const table = typedTableFor(e.name);
      typed = table ? this.typedWriters.get(table)! : null;
      this.tableForEvent.set(e.name, typed);
    }
    const fields = e.fields;
    if (fields === null) this.unparsed++;
    const isTyped = typed !== null && fields !== null;
    const hasArgs = !isTyped && fields !== null && hasKeys(fields);

    if (isTyped) {
      this.writeTyped(typed!, id, e, utid, nameId, fields!);
      return;
    }
    const fe = this.ftraceEvent;
    fe.setInt(0, id);
    this.setTs(fe, 1, e.ts);
    fe.setInt(2, e.cpu);
    fe.setInt(3, utid);
    fe.setInt(4, nameId);
    fe.set(5, e.flags);
    fe.set(6, e.preemptCount);
    fe.set(7, hasArgs ? id : null);
    fe.set(8, e.raw);
    fe.setInt(9, e.where);
    fe.endRow();
    if (hasArgs) this.writeArgs(id, fields!);
  }

  lostEvents(cpu: number, count: number | null, where: number): void {
    this.lost.push({ cpu, count, where, afterId: this.nextId });
  }

  skipped(problem: SkippedInput): void {
    this.problemCount++;
    if (this.problems.length < MAX_PROBLEMS_KEPT) {
      this.problems.push({ ...problem, excerpt: problem.excerpt.slice(0, 200) });
    }
  }

  // ---- rows --------------------------------------------------------------

  /** Writes absolute ts = base + rel without bigint: rel is an exact number < 2^53. */
  private setTs(app: ColumnAppender, col: number, rel: number): void {
    const relHi = Math.floor(rel / TWO_32);
    let lo = this.baseLo + (rel - relHi * TWO_32);
    let hi = this.baseHi + relHi;
    if (lo >= TWO_32) {
      lo -= TWO_32;
      hi += 1;
    }
    app.setI64Parts(col, lo, hi);
  }

  private writeTyped(
    w: TypedTableWriter,
    id: number,
    e: DecodedEvent,
    utid: number,
    nameId: number,
    fields: EventFields,
  ): void {
    const app = w.appender;
    const extra = w.width;
    app.setInt(extra, nameId);
    app.set(extra + 1, e.flags);
    app.set(extra + 2, e.preemptCount);
    app.setInt(extra + 3, e.where);
    // Schema convention (checked in prepare): id, ts, cpu, utid come first.
    app.setInt(0, id);
    this.setTs(app, 1, e.ts);
    app.setInt(2, e.cpu);
    app.setInt(3, utid);
    if (w.eventColumn >= 0) app.setInt(w.eventColumn, this.intern(e.name));
    const cols = w.fieldColumns;
    for (let k = 0; k < cols.length; k++) {
      const col = cols[k];
      let value = fields[col.name];
      if (value === undefined) {
        for (let a = 0; a < col.aliases.length && value === undefined; a++) value = fields[col.aliases[a]];
      }
      if (value === undefined) app.setNull(col.index);
      else if (col.interned) app.setInt(col.index, this.intern(typeof value === 'string' ? value : String(value)));
      else if (typeof value === 'number') app.setNumber(col.index, value);
      else if (typeof value === 'string') app.set(col.index, parseIntegerText(value));
      else app.set(col.index, value);
    }
    app.endRow();

    const nameFields = TASK_NAME_FIELDS[w.table];
    if (nameFields) {
      for (const [commField, pidField] of nameFields) {
        const comm = fields[commField];
        const pid = fields[pidField];
        if (typeof comm === 'string' && typeof pid === 'number') {
          this.noteTaskComm(this.utidFor(pid, null), comm, e.ts);
        }
      }
      if (w.table === 'sched_process_fork' && typeof fields.child_pid === 'number') {
        this.threadOf(fields.child_pid).forkTs = this.absTs(e.ts);
      }
      if (w.table === 'sched_process_exit' && typeof fields.pid === 'number') {
        this.threadOf(fields.pid).exitTs = this.absTs(e.ts);
      }
    }
  }

  private writeArgs(id: number, fields: EventFields): void {
    const a = this.args;
    for (const key in fields) {
      const v = fields[key];
      a.setInt(0, id);
      a.set(1, key);
      a.set(2, key);
      if (typeof v === 'string') {
        a.set(3, null);
        a.set(4, v);
        a.set(6, 'string');
      } else {
        a.set(3, v);
        a.set(4, null);
        a.set(6, 'int');
      }
      a.set(5, null);
      a.endRow();
    }
  }

  private intern(s: string): number {
    let sid = this.strings.get(s);
    if (sid === undefined) {
      sid = this.strings.size;
      this.strings.set(s, sid);
    }
    return sid;
  }

  // ---- threads -----------------------------------------------------------

  private threadOf(tid: number): ThreadInfo {
    let t = this.threads.get(tid);
    if (!t) {
      t = { utid: this.threads.size, tid, name: null, tgid: null, forkTs: null, exitTs: null };
      this.threads.set(tid, t);
    }
    return t;
  }

  private utidFor(tid: number, tgid: number | null): number {
    // utid 0 is the idle task: create it first so tid 0 always maps to 0.
    if (this.threads.size === 0) this.threadOf(0);
    const t = this.threadOf(tid);
    if (tgid !== null && tgid > 0 && t.tgid === null) t.tgid = tgid;
    return t.utid;
  }

  /** Names printed by the scheduler events are authoritative: record changes. */
  private noteTaskComm(utid: number, comm: string, ts: number): void {
    const t = this.threadByUtid(utid);
    if (!t || t.name === comm || comm === '' || comm === '<...>') return;
    t.name = comm;
    this.nameHistory.push({ utid, ts, name: comm });
  }

  /**
   * The running task's name from the line prefix only names threads not yet
   * named: `report -l` cuts names to 8 characters and `<...>` means unknown.
   */
  private noteContextComm(utid: number, comm: string, ts: number): void {
    const t = this.threadByUtid(utid);
    if (!t || t.name !== null || comm === '<...>' || comm === '') return;
    t.name = comm;
    this.nameHistory.push({ utid, ts, name: comm });
  }

  private utidIndex: ThreadInfo[] = [];
  private threadByUtid(utid: number): ThreadInfo | undefined {
    let t = this.utidIndex[utid];
    if (!t) {
      for (const th of this.threads.values()) this.utidIndex[th.utid] = th;
      t = this.utidIndex[utid];
    }
    return t;
  }

  private absTs(rel: number): bigint {
    return this.headerInfo!.tsBaseNs + BigInt(rel);
  }

  // ---- finish ------------------------------------------------------------

  /**
   * Flushes all rows and writes the tables that need the whole trace
   * (threads, cpus, strings, trace_info). Derived tables are separate
   * (see derive_model.ts).
   */
  async finish(): Promise<WriterSummary> {
    const header = this.headerInfo;
    this.ftraceEvent.close();
    this.args.close();
    for (const w of this.typedWriters.values()) w.appender.close();
    const con = this.engine.connection;

    const small = async (table: string, cols: ColumnSpec[], rows: unknown[][]) => {
      const app = await ColumnAppender.create(con, table, cols);
      for (const r of rows) {
        r.forEach((v, i) => app.set(i, v as number | string | bigint | null));
        app.endRow();
      }
      app.close();
    };

    await small(
      '_string',
      [
        { name: 'sid', kind: 'i32' },
        { name: 'str', kind: 'str' },
      ],
      [...this.strings].map(([s, sid]) => [sid, s]),
    );
    await small(
      '_event_name',
      [
        { name: 'name_id', kind: 'i32' },
        { name: 'name', kind: 'str' },
        { name: 'system', kind: 'str' },
      ],
      [...this.eventNames].map(([name, id]) => [id, name, this.eventSystems[id]]),
    );

    const base = header?.tsBaseNs ?? 0n;
    const abs = (rel: number) => base + BigInt(rel);
    const threads = [...this.threads.values()];
    const tgids = [...new Set(threads.map((t) => t.tgid).filter((g): g is number => g !== null))].sort(
      (a, b) => a - b,
    );
    const upidOf = new Map(tgids.map((pid, i) => [pid, i]));
    // thread has a BOOLEAN column, which ColumnAppender does not write.
    await this.insertRows(
      'thread',
      threads.map((t) => [
        t.utid,
        t.tid,
        t.tid === 0 ? t.name ?? 'swapper' : t.name,
        t.tgid === null ? null : upidOf.get(t.tgid)!,
        t.forkTs,
        t.exitTs,
        t.tgid === null ? null : t.tgid === t.tid,
      ]),
    );
    await this.insertRows(
      'process',
      tgids.map((pid) => [upidOf.get(pid)!, pid, this.threads.get(pid)?.name ?? null]),
    );
    await small(
      'thread_name_history',
      [
        { name: 'utid', kind: 'i32' },
        { name: 'ts', kind: 'i64' },
        { name: 'name', kind: 'str' },
      ],
      this.nameHistory.map((h) => [h.utid, abs(h.ts), h.name]),
    );
    const cpuRows = [...this.cpus].sort((a, b) => a[0] - b[0]);
    await small(
      'cpu',
      [
        { name: 'ucpu', kind: 'i32' },
        { name: 'cpu', kind: 'i32' },
        { name: 'event_count', kind: 'i64' },
        { name: 'first_ts', kind: 'i64' },
        { name: 'last_ts', kind: 'i64' },
      ],
      cpuRows.map(([cpu, c]) => [cpu, cpu, c.events, abs(c.firstTs), abs(c.lastTs)]),
    );
    await small(
      'lost_events',
      [
        { name: 'cpu', kind: 'i32' },
        { name: 'ts', kind: 'i64' },
        { name: 'count', kind: 'i64' },
        { name: 'source_where', kind: 'i64' },
      ],
      this.lost.map((l) => [l.cpu, null, l.count, l.where]),
    );
    await small(
      'ingest_problem',
      [
        { name: 'source_where', kind: 'i64' },
        { name: 'unit', kind: 'str' },
        { name: 'reason', kind: 'str' },
        { name: 'excerpt', kind: 'str' },
      ],
      this.problems.map((p) => [p.where, p.unit, p.reason, p.excerpt]),
    );

    let firstTs: bigint | null = null;
    let lastTs: bigint | null = null;
    for (const c of this.cpus.values()) {
      const f = abs(c.firstTs);
      const l = abs(c.lastTs);
      if (firstTs === null || f < firstTs) firstTs = f;
      if (lastTs === null || l > lastTs) lastTs = l;
    }
    const eventsByName: Record<string, number> = {};
    for (const [name, id] of [...this.eventNames].sort((a, b) => a[0].localeCompare(b[0]))) {
      eventsByName[name] = this.eventCounts[id];
    }
    const maxCpu = cpuRows.length ? cpuRows[cpuRows.length - 1][0] + 1 : 0;
    return {
      format: header?.format ?? 'unknown',
      formatVersion: header?.formatVersion ?? null,
      cpus: Math.max(header?.cpus ?? 0, maxCpu),
      eventsTotal: this.nextId,
      eventsByName,
      firstTsNs: firstTs,
      lastTsNs: lastTs,
      lostEvents: this.lost.reduce((s, l) => s + (l.count ?? 0), 0),
      lostEventNotices: this.lost.length,
      unparsedEvents: this.unparsed,
      skippedInputs: this.problemCount,
      firstSkipped: this.problems.slice(0, 10),
      meta: { ...(header?.meta ?? {}) },
    };
  }

  /** Inserts a few rows with bound parameters (for tables with BOOLEAN columns). */
  private async insertRows(table: string, rows: unknown[][]): Promise<void> {
    if (rows.length === 0) return;
    const width = rows[0].length;
    const BATCH = 500;
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = rows.slice(i, i + BATCH);
      const placeholders = batch
        .map((_, r) => `(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(', ')})`)
        .join(', ');
      await this.engine.query(
        `INSERT INTO ${table} VALUES ${placeholders}`,
        batch.flat() as (string | number | bigint | boolean | null)[],
      );
    }
  }
}

function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

/** A field printed as text where the column is an integer: decimal or 0x-hex, else NULL. */
function parseIntegerText(s: string): number | bigint | null {
  if (/^-?\d+$/.test(s)) {
    const n = Number(s);
    return Number.isSafeInteger(n) ? n : BigInt(s);
  }
  if (/^0x[0-9a-f]+$/i.test(s)) {
    const b = BigInt(s);
    return b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : BigInt.asIntN(64, b);
  }
  return null;
}
