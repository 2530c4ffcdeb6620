/**
 * The EventSink that turns decoded events into rows of the trace model.
 *
 * Pure JS: rows are built in column chunks (column_chunk.ts) and handed to
 * `onChunk`, which appends them to DuckDB directly (model_writer.ts) or
 * posts them to the thread that owns DuckDB (ingest/store_worker.ts).
 * Per-thread state (utid, name) stays here because there are few threads;
 * string fields of typed tables are interned so each distinct string is
 * stored once.
 */
import type { DecodedEvent, DirectRows, DirectRowSink, EventFields, FieldValue, SkippedInput, TraceHeader } from '../decode/decoded_event.ts';
import { ColumnChunk, type ChunkData } from './column_chunk.ts';
import {
  ARGS_TABLE,
  FIRST_TYPED_TABLE,
  FTRACE_EVENT_TABLE,
  packCommon,
  type BuilderResult,
  type ModelLayout,
  type ThreadInfo,
  type TypedTableLayout,
} from './model_layout.ts';
import { typedTableFor } from './typed_tables.ts';

const TWO_32 = 4294967296;
/** Skipped inputs kept in full; beyond this only counted (a garbage file has millions). */
const MAX_PROBLEMS_KEPT = 1000;
/** Fields that name a task, per typed table: [comm field, pid field]. */
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

interface TypedTarget {
  layout: TypedTableLayout;
  chunk: ColumnChunk;
  nameFields: [string, string][] | undefined;
  /** Writes the table's field columns of the current row (compileFieldWriter). */
  writeFields: FieldWriter;
}

interface EventNameInfo {
  name: string;
  /** name_id: order of first appearance. */
  id: number;
  system: string | null;
  count: number;
  /** Typed table receiving this event, null: generic (_ftrace_event + args). */
  target: TypedTarget | null;
  /** Dictionary id of the name in the target's `event` column, -1 if it has none. */
  eventValue: number;
}

type FieldWriter = (c: ColumnChunk, fields: EventFields, internIn: (dict: number, s: string) => number) => void;

/**
 * Compiles, once per typed table, the code that copies event fields into its
 * columns: one property read per column with the field name as a constant
 * (V8 caches its place in the decoder's field objects) instead of a keyed
 * lookup per column and event: that loop was the builder's largest self time
 * in a CPU profile of a 1M-event trace.dat ingest (~0.5 s of ~2.5 s).
 * Field names are schema.sql's column names and aliases, JSON-quoted.
 */
function compileFieldWriter(layout: TypedTableLayout): FieldWriter {
  const lines: string[] = ['let v;'];
  for (const col of layout.fieldColumns) {
    const i = col.index;
    lines.push(`v = f[${JSON.stringify(col.name)}];`);
    for (const a of col.aliases) lines.push(`if (v === undefined) v = f[${JSON.stringify(a)}];`);
    lines.push(`if (v === undefined) c.setNull(${i}); else store(c, ${i}, ${col.dict}, v, internIn);`);
  }
  const make = new Function('store', `return function writeFields_${layout.table}(c, f, internIn) {\n${lines.join('\n')}\n};`);
  return make(storeFieldValue) as FieldWriter;
}

/**
 * How a field value is stored in a typed column, whichever path it comes
 * by (compileFieldWriter, TypedDirectRows): strings of VARCHAR columns by
 * dictionary id, numbers as they are, integers printed as text parsed.
 */
function storeFieldValue(c: ColumnChunk, column: number, dict: number, v: FieldValue, internIn: (dict: number, s: string) => number): void {
  if (dict >= 0) c.setInt(column, internIn(dict, typeof v === 'string' ? v : String(v)));
  else if (typeof v === 'number') c.setNumber(column, v);
  else if (typeof v === 'string') c.set(column, parseIntegerText(v));
  else c.set(column, v);
}

export class ModelBuilder implements DirectRowSink {
  private headerInfo: TraceHeader | null = null;
  private baseHi = 0;
  private baseLo = 0;
  private nextId = 0;

  private readonly ftraceEvent: ColumnChunk;
  private readonly args: ColumnChunk;
  private readonly typed = new Map<string, TypedTarget>();
  /** Per event name, in order of first appearance (index = name_id): one lookup per event. */
  private readonly names = new Map<string, EventNameInfo>();
  private readonly nameList: EventNameInfo[] = [];
  private readonly strings = new Map<string, number>();
  private readonly dicts: Map<string, number>[];

  private readonly threads = new Map<number, ThreadInfo>();
  private readonly threadList: ThreadInfo[] = [];
  private readonly nameHistory: { utid: number; ts: number; name: string }[] = [];
  /** [cpu, events, firstTs, lastTs] by CPU number (a Map: text may name any CPU number). */
  private readonly cpus = new Map<number, [number, number, number, number]>();
  private lastCpu: [number, number, number, number] | null = null;
  private lastThread: ThreadInfo;

  private readonly lost: { cpu: number; count: number | null; where: number }[] = [];
  private readonly problems: SkippedInput[] = [];
  private problemCount = 0;
  private unparsed = 0;

  constructor(layout: ModelLayout, onChunk: (table: number, data: ChunkData) => void) {
    this.dicts = Array.from({ length: layout.dictCount }, () => new Map<string, number>());
    this.ftraceEvent = new ColumnChunk(layout.ftraceEvent, (d) => onChunk(FTRACE_EVENT_TABLE, d));
    this.args = new ColumnChunk(layout.args, (d) => onChunk(ARGS_TABLE, d));
    layout.typed.forEach((t, i) => {
      this.typed.set(t.table, {
        layout: t,
        chunk: new ColumnChunk(t.columns, (d) => onChunk(FIRST_TYPED_TABLE + i, d)),
        nameFields: TASK_NAME_FIELDS[t.table],
        writeFields: compileFieldWriter(t),
      });
    });
    this.lastThread = this.threadOf(0); // utid 0 is the idle task
  }

  /** Events handed over so far. */
  get eventCount(): number {
    return this.nextId;
  }

  // ---- EventSink ---------------------------------------------------------

  header(header: TraceHeader): void {
    if (this.headerInfo) return;
    this.headerInfo = header;
    this.baseHi = Number(header.tsBaseNs >> 32n);
    this.baseLo = Number(header.tsBaseNs & 0xffffffffn);
  }

  event(e: DecodedEvent): void {
    if (!this.headerInfo) throw new Error('decoder sent an event before the header');
    const id = this.nextId++;
    const info = this.nameInfo(e.name, e.system);
    const utid = this.startEvent(info, e.ts, e.cpu, e.pid, e.comm, e.tgid);
    const target = info.target;
    const fields = e.fields;
    if (fields === null) this.unparsed++;
    if (target !== null && fields !== null) {
      this.writeTyped(target, id, e, utid, info, fields);
      return;
    }
    const hasArgs = fields !== null && hasKeys(fields);
    const fe = this.ftraceEvent;
    fe.setInt(0, id);
    this.setTs(fe, 1, e.ts);
    fe.setInt(2, e.cpu);
    fe.setInt(3, utid);
    fe.setInt(4, info.id);
    fe.set(5, e.flags);
    fe.set(6, e.preemptCount);
    fe.set(7, hasArgs ? id : null);
    fe.set(8, e.raw);
    fe.setInt(9, e.where);
    fe.endRow();
    if (hasArgs) this.writeArgs(id, fields!);
  }

  /**
   * DirectRowSink: events stored in a typed table whose rows need nothing
   * beyond their own fields. Scheduler tables that name tasks (sched_switch
   * prev_comm/next_comm...) keep the event() path, which tracks those names.
   */
  directRows(name: string, system: string | null): DirectRows | null {
    const table = typedTableFor(name);
    const target = table ? this.typed.get(table) : undefined;
    if (target === undefined || target.nameFields !== undefined) return null;
    return new TypedDirectRows(this, target, name, system);
  }

  /** The per-name record of an event name (registered on its first event). */
  nameInfo(name: string, system: string | null): EventNameInfo {
    return this.names.get(name) ?? this.newName(name, system);
  }

  /**
   * Starts a typed row: id, ts, cpu, utid and event columns, plus what every
   * event counts. The caller writes the fields and the tail (writeTypedTail).
   */
  beginTypedRow(t: TypedTarget, info: EventNameInfo, ts: number, cpu: number, pid: number, comm: string | null): void {
    if (!this.headerInfo) throw new Error('decoder sent an event before the header');
    const id = this.nextId++;
    const utid = this.startEvent(info, ts, cpu, pid, comm, null);
    this.writeTypedHead(t, id, ts, cpu, utid, info);
  }

  /** Bookkeeping every event shares: its thread (named from the line prefix), per-name and per-CPU counts. */
  private startEvent(info: EventNameInfo, ts: number, cpuNo: number, pid: number, comm: string | null, tgid: number | null): number {
    // Events come in runs of one CPU and one task: skip both map lookups then.
    let thread = this.lastThread;
    if (thread.tid !== pid) thread = this.lastThread = this.threadOf(pid);
    if (tgid !== null && tgid > 0 && thread.tgid === null) thread.tgid = tgid;
    // The line prefix's name only names threads not named yet: `report -l`
    // cuts names to 8 characters and `<...>` means unknown.
    if (comm !== null && thread.name === null && comm !== '<...>' && comm !== '') {
      thread.name = comm;
      this.nameHistory.push({ utid: thread.utid, ts, name: comm });
    }
    info.count++;
    let cpu = this.lastCpu;
    if (cpu === null || cpu[0] !== cpuNo) cpu = this.lastCpu = this.cpus.get(cpuNo) ?? null;
    if (cpu === null) this.cpus.set(cpuNo, [cpuNo, 1, ts, ts]);
    else {
      cpu[1]++;
      if (ts < cpu[2]) cpu[2] = ts;
      if (ts > cpu[3]) cpu[3] = ts;
    }
    return thread.utid;
  }

  /** First event of a name: its name_id, typed table and `event` column value. */
  private newName(name: string, system: string | null): EventNameInfo {
    const table = typedTableFor(name);
    const target = table ? (this.typed.get(table) ?? null) : null;
    const info: EventNameInfo = {
      name,
      id: this.nameList.length,
      system,
      count: 0,
      target,
      eventValue: target && target.layout.eventColumn >= 0 ? this.internIn(target.layout.eventDict, name) : -1,
    };
    this.names.set(name, info);
    this.nameList.push(info);
    return info;
  }

  lostEvents(cpu: number, count: number | null, where: number): void {
    this.lost.push({ cpu, count, where });
  }

  skipped(problem: SkippedInput): void {
    this.problemCount++;
    if (this.problems.length < MAX_PROBLEMS_KEPT) this.problems.push({ ...problem, excerpt: problem.excerpt.slice(0, 200) });
  }

  /** Hands over the last partial chunks and everything learned. */
  finish(): BuilderResult {
    this.ftraceEvent.flush();
    this.args.flush();
    for (const t of this.typed.values()) t.chunk.flush();
    return {
      header: this.headerInfo,
      eventsTotal: this.nextId,
      eventNames: this.nameList.map((n) => [n.name, n.system, n.count]),
      strings: [...this.strings.keys()],
      dicts: this.dicts.map((m) => [...m.keys()]),
      threads: this.threadList,
      nameHistory: this.nameHistory,
      cpus: [...this.cpus.values()],
      lost: this.lost,
      problems: this.problems,
      problemCount: this.problemCount,
      unparsed: this.unparsed,
    };
  }

  // ---- rows --------------------------------------------------------------

  /** Writes absolute ts = base + rel without bigint: rel is an exact number < 2^53. */
  private setTs(chunk: ColumnChunk, col: number, rel: number): void {
    const relHi = Math.floor(rel / TWO_32);
    let lo = this.baseLo + (rel - relHi * TWO_32);
    let hi = this.baseHi + relHi;
    if (lo >= TWO_32) {
      lo -= TWO_32;
      hi += 1;
    }
    chunk.setI64Parts(col, lo, hi);
  }

  private writeTyped(t: TypedTarget, id: number, e: DecodedEvent, utid: number, name: EventNameInfo, fields: EventFields): void {
    const c = t.chunk;
    this.writeTypedHead(t, id, e.ts, e.cpu, utid, name);
    t.writeFields(c, fields, this.internInBound);
    writeTypedTail(c, t.layout.width, e.flags, e.preemptCount, e.where);

    const nameFields = t.nameFields;
    if (nameFields) {
      for (let k = 0; k < nameFields.length; k++) {
        const comm = fields[nameFields[k][0]];
        const pid = fields[nameFields[k][1]];
        if (typeof comm === 'string' && typeof pid === 'number') this.noteTaskComm(this.threadOf(pid), comm, e.ts);
      }
      if (t.layout.table === 'sched_process_fork' && typeof fields.child_pid === 'number') {
        this.threadOf(fields.child_pid).forkTs = e.ts;
      } else if (t.layout.table === 'sched_process_exit' && typeof fields.pid === 'number') {
        this.threadOf(fields.pid).exitTs = e.ts;
      }
    }
  }

  private writeTypedHead(t: TypedTarget, id: number, ts: number, cpu: number, utid: number, name: EventNameInfo): void {
    const c = t.chunk;
    const layout = t.layout;
    // Schema convention (checked by the store): id, ts, cpu, utid come first.
    c.setInt(0, id);
    this.setTs(c, 1, ts);
    c.setInt(2, cpu);
    c.setInt(3, utid);
    if (layout.eventColumn >= 0) c.setInt(layout.eventColumn, name.eventValue);
  }

  private writeArgs(id: number, fields: EventFields): void {
    const a = this.args;
    let index = 0;
    for (const key in fields) {
      const v = fields[key];
      a.setInt(0, id);
      a.setInt(1, index++);
      a.setInt(2, this.intern(key));
      if (typeof v === 'string') {
        a.setNull(3);
        a.setInt(4, this.intern(v));
      } else {
        a.set(3, v);
        a.setNull(4);
      }
      a.endRow();
    }
  }

  readonly internInBound = (dict: number, s: string): number => this.internIn(dict, s);

  /** Id of a string in one typed column's dictionary. */
  internIn(dict: number, s: string): number {
    const map = this.dicts[dict];
    let id = map.get(s);
    if (id === undefined) {
      id = map.size;
      map.set(s, id);
    }
    return id;
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
      t = { utid: this.threadList.length, tid, name: null, tgid: null, forkTs: null, exitTs: null };
      this.threads.set(tid, t);
      this.threadList.push(t);
    }
    return t;
  }

  /** Names printed by scheduler events are authoritative: record changes. */
  private noteTaskComm(t: ThreadInfo, comm: string, ts: number): void {
    if (t.name === comm || comm === '' || comm === '<...>') return;
    t.name = comm;
    this.nameHistory.push({ utid: t.utid, ts, name: comm });
  }
}

/** The storage-only columns after a typed row's documented ones (model_store.ts STORAGE_EXTRA_COLUMNS); ends the row. */
function writeTypedTail(c: ColumnChunk, width: number, flags: number | null, preemptCount: number | null, where: number): void {
  const common = packCommon(flags, preemptCount);
  if (common === null) c.setNull(width);
  else c.setInt(width, common);
  c.setInt(width + 1, where);
  c.endRow();
}

/**
 * DirectRows of one event name stored in a typed table: what writeTyped()
 * does, fed field by field by a binary decoder's compiled reader.
 */
class TypedDirectRows implements DirectRows {
  readonly fields: { names: string[]; column: number; numeric: boolean }[];
  private info: EventNameInfo | null = null;
  private readonly chunk: ColumnChunk;
  /** Dictionary per column index, -1 for numeric columns. */
  private readonly dictOf: Int32Array;
  /** Per dictionary column: the last string written and its id. */
  private readonly lastString: (string | null)[];
  private readonly lastId: Int32Array;
  private flags = 0;
  private preemptCount = 0;
  private where = 0;

  constructor(
    private readonly builder: ModelBuilder,
    private readonly target: TypedTarget,
    private readonly name: string,
    private readonly system: string | null,
  ) {
    const layout = target.layout;
    this.chunk = target.chunk;
    this.fields = layout.fieldColumns.map((c) => ({ names: [c.name, ...c.aliases], column: c.index, numeric: c.dict < 0 }));
    this.dictOf = new Int32Array(layout.columns.length).fill(-1);
    for (const c of layout.fieldColumns) this.dictOf[c.index] = c.dict;
    this.lastString = new Array<string | null>(layout.columns.length).fill(null);
    this.lastId = new Int32Array(layout.columns.length);
  }

  begin(ts: number, cpu: number, pid: number, comm: string | null, flags: number, preemptCount: number, where: number): void {
    // The name is registered on its first event, as event() does: name ids follow first appearance.
    const info = this.info ?? (this.info = this.builder.nameInfo(this.name, this.system));
    this.flags = flags;
    this.preemptCount = preemptCount;
    this.where = where;
    this.builder.beginTypedRow(this.target, info, ts, cpu, pid, comm);
  }

  num(column: number, value: number): void {
    this.chunk.setNumber(column, value);
  }

  /** storeFieldValue(), with a last-value cache for dictionary strings. */
  value(column: number, v: FieldValue): void {
    const dict = this.dictOf[column];
    if (dict < 0) {
      storeFieldValue(this.chunk, column, dict, v, this.builder.internInBound);
      return;
    }
    // Flag and enum strings repeat run after run: skip the dictionary lookup then.
    const str = typeof v === 'string' ? v : String(v);
    if (this.lastString[column] !== str) {
      this.lastString[column] = str;
      this.lastId[column] = this.builder.internIn(dict, str);
    }
    this.chunk.setInt(column, this.lastId[column]);
  }

  absent(column: number): void {
    this.chunk.setNull(column);
  }

  end(): void {
    writeTypedTail(this.chunk, this.target.layout.width, this.flags, this.preemptCount, this.where);
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
