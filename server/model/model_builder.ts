/**
 * The EventSink that turns decoded events into rows of the trace model.
 *
 * Pure JS: rows are built in column chunks (column_chunk.ts) and handed to
 * `onChunk`, which appends them to DuckDB directly (model_writer.ts) or
 * posts them to the thread that owns DuckDB (ingest/decode_worker.ts).
 * Per-thread state (utid, name) stays here because there are few threads;
 * string fields of typed tables are interned so each distinct string is
 * stored once.
 */
import type { DecodedEvent, EventFields, EventSink, SkippedInput, TraceHeader } from '../decode/decoded_event.ts';
import { ColumnChunk, type ChunkData } from './column_chunk.ts';
import {
  ARGS_TABLE,
  FIRST_TYPED_TABLE,
  FTRACE_EVENT_TABLE,
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
    if (col.dict >= 0) {
      lines.push(`if (v === undefined) c.setNull(${i}); else c.setInt(${i}, internIn(${col.dict}, typeof v === 'string' ? v : String(v)));`);
    } else {
      lines.push(
        `if (v === undefined) c.setNull(${i});`,
        `else if (typeof v === 'number') c.setNumber(${i}, v);`,
        `else if (typeof v === 'string') c.set(${i}, parseIntegerText(v));`,
        `else c.set(${i}, v);`,
      );
    }
  }
  const make = new Function('parseIntegerText', `return function writeFields_${layout.table}(c, f, internIn) {\n${lines.join('\n')}\n};`);
  return make(parseIntegerText) as FieldWriter;
}

export class ModelBuilder implements EventSink {
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
    this.threadOf(0); // utid 0 is the idle task
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
    const thread = this.threadOf(e.pid);
    if (e.tgid !== null && e.tgid > 0 && thread.tgid === null) thread.tgid = e.tgid;
    // The line prefix's name only names threads not named yet: `report -l`
    // cuts names to 8 characters and `<...>` means unknown.
    if (e.comm !== null && thread.name === null && e.comm !== '<...>' && e.comm !== '') {
      thread.name = e.comm;
      this.nameHistory.push({ utid: thread.utid, ts: e.ts, name: e.comm });
    }

    const info = this.names.get(e.name) ?? this.newName(e);
    info.count++;
    const nameId = info.id;

    const cpu = this.cpus.get(e.cpu);
    if (cpu === undefined) this.cpus.set(e.cpu, [e.cpu, 1, e.ts, e.ts]);
    else {
      cpu[1]++;
      if (e.ts < cpu[2]) cpu[2] = e.ts;
      if (e.ts > cpu[3]) cpu[3] = e.ts;
    }

    const target = info.target;
    const fields = e.fields;
    if (fields === null) this.unparsed++;
    if (target !== null && fields !== null) {
      this.writeTyped(target, id, e, thread.utid, info, fields);
      return;
    }
    const hasArgs = fields !== null && hasKeys(fields);
    const fe = this.ftraceEvent;
    fe.setInt(0, id);
    this.setTs(fe, 1, e.ts);
    fe.setInt(2, e.cpu);
    fe.setInt(3, thread.utid);
    fe.setInt(4, nameId);
    fe.set(5, e.flags);
    fe.set(6, e.preemptCount);
    fe.set(7, hasArgs ? id : null);
    fe.set(8, e.raw);
    fe.setInt(9, e.where);
    fe.endRow();
    if (hasArgs) this.writeArgs(id, fields!);
  }

  /** First event of a name: its name_id, typed table and `event` column value. */
  private newName(e: DecodedEvent): EventNameInfo {
    const table = typedTableFor(e.name);
    const target = table ? (this.typed.get(table) ?? null) : null;
    const info: EventNameInfo = {
      name: e.name,
      id: this.nameList.length,
      system: e.system,
      count: 0,
      target,
      eventValue: target && target.layout.eventColumn >= 0 ? this.internIn(target.layout.eventDict, e.name) : -1,
    };
    this.names.set(e.name, info);
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
    const layout = t.layout;
    // Schema convention (checked by the store): id, ts, cpu, utid come first.
    c.setInt(0, id);
    this.setTs(c, 1, e.ts);
    c.setInt(2, e.cpu);
    c.setInt(3, utid);
    if (layout.eventColumn >= 0) c.setInt(layout.eventColumn, name.eventValue);
    t.writeFields(c, fields, this.internInBound);
    const extra = layout.width;
    c.setInt(extra, name.id);
    c.set(extra + 1, e.flags);
    c.set(extra + 2, e.preemptCount);
    c.setInt(extra + 3, e.where);
    c.endRow();

    const nameFields = t.nameFields;
    if (nameFields) {
      for (let k = 0; k < nameFields.length; k++) {
        const comm = fields[nameFields[k][0]];
        const pid = fields[nameFields[k][1]];
        if (typeof comm === 'string' && typeof pid === 'number') this.noteTaskComm(this.threadOf(pid), comm, e.ts);
      }
      if (layout.table === 'sched_process_fork' && typeof fields.child_pid === 'number') {
        this.threadOf(fields.child_pid).forkTs = e.ts;
      } else if (layout.table === 'sched_process_exit' && typeof fields.pid === 'number') {
        this.threadOf(fields.pid).exitTs = e.ts;
      }
    }
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

  private readonly internInBound = (dict: number, s: string): number => this.internIn(dict, s);

  /** Id of a string in one typed column's dictionary. */
  private internIn(dict: number, s: string): number {
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
