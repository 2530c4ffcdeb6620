/**
 * The EventSink that turns decoded events into rows of the trace model.
 *
 * Pure JS: rows are built in column chunks (column_chunk.ts) and handed to
 * `onChunk`, which appends them to DuckDB directly (model_writer.ts) or
 * posts them to the thread that owns DuckDB (ingest/store_worker.ts).
 * Per-thread state (utid, name) stays here because there are few threads;
 * string fields of typed tables are interned so each distinct string is
 * stored once (typed_rows.ts).
 *
 * Given a RawRecordTarget, the builder also takes trace.dat records and text
 * events raw (RawRecordSink, RawTextSink): it frames them (id, thread,
 * counts) and passes them on in batches; the field worker decodes their
 * fields into typed rows.
 */
import type {
  DecodedEvent,
  DirectRows,
  DirectRowSink,
  EventFields,
  FramedShapeRows,
  ShapeRowColumns,
  ShapeRowSink,
  RawFieldSpec,
  PerfettoFieldSpec,
  RawRecords,
  RawRecordSink,
  RawTextRecords,
  RawTextSink,
  SkippedInput,
  TraceHeader,
} from '../decode/decoded_event.ts';
import { SID_BASE_MAIN } from './args_rows.ts';
import type { ChunkData } from './column_chunk.ts';
import { packCommon, type BuilderResult, type ModelLayout, type ThreadInfo } from './model_layout.ts';
import { NEW_BUFFERS, type BufferSource } from './buffer_source.ts';
import { COMMON_NULL, RecordBatchWriter, type RecordBatchData } from './record_batch.ts';
import { TableRowWriter, TypedRows, commonOf, type TypedTarget } from './typed_rows.ts';
import { typedTableFor } from './typed_tables.ts';
import { SHAPE_LEAD, SHAPE_TABLE_BASE, UntypedRows, type ShapeRows } from './untyped_rows.ts';
import { KeptRaw } from '../decode/ftrace_text/kept_raw.ts';

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

/**
 * The typed tables whose rows need nothing beyond their own fields: those
 * can be written from a record alone (directRows), also on another thread
 * (rawRecords). Scheduler tables that name tasks (sched_switch's prev_comm
 * and next_comm...) stay with the builder, which tracks those names.
 */
export function rowsNeedOnlyFields(table: string): boolean {
  return TASK_NAME_FIELDS[table] === undefined;
}

/**
 * Whether a text event goes to the field worker when there is one: every
 * event but those of the scheduler tables that name tasks, whose names the
 * builder tracks as it meets them.
 */
function takesText(name: string): boolean {
  const table = typedTableFor(name);
  return table === null || rowsNeedOnlyFields(table);
}

/** How the fields of raw records are decoded: trace.dat's spec, or text events' own parsers. */
export type RawSpec = RawFieldSpec | PerfettoFieldSpec | { format: 'text' };

/**
 * Where raw records go when the builder takes them: the main thread's end
 * of the field worker (ingest/field_worker_client.ts).
 */
export interface RawRecordTarget {
  /** Called once, before the first batch: how to decode fields, the ts base, and which tables the batches fill. */
  start(spec: RawSpec, tsBaseNs: bigint, tables: string[]): void;
  batch(b: RecordBatchData): void;
  /** Where batches get their buffers (the ones the field worker sent back). */
  readonly batchMemory?: BufferSource;
}

/** Page bytes per text batch: a block of lines is up to 1 MiB (decompress.ts READ_CHUNK_BYTES). */
const TEXT_BATCH_BYTES = 2 << 20;

interface EventNameInfo {
  name: string;
  /** name_id: order of first appearance. */
  id: number;
  system: string | null;
  count: number;
  /** Typed table receiving this event, null: generic (_ftrace_event + args). */
  target: TypedTarget | null;
  /** Dictionary id of the name in the target's `event` column, -1 if it has none, -2 until the first row. */
  eventValue: number;
  /** Whether the raw batches' reader has been told this name (text records). */
  rawNamed: boolean;
}

/** Largest tid kept in the dense tid index: the kernel's pid_max limit (2^22). */
const MAX_DENSE_TID = 1 << 22;
/** Largest CPU number kept in the dense CPU index (text may name any number). */
const MAX_DENSE_CPU = 1 << 14;

/** Whether `i` is an integer index in [0, n): an entry of a dense index rather than of a Map. */
function isIndexBelow(i: number, n: number): boolean {
  return i === (i | 0) && i >= 0 && i < n;
}

/** A copy of `a` long enough to index `i` (at least double its length). */
function grown(a: Int32Array<ArrayBuffer>, i: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(Math.min(MAX_DENSE_TID, Math.max(a.length * 2, i + 1)));
  b.set(a);
  return b;
}

export class ModelBuilder implements DirectRowSink, ShapeRowSink, RawRecordSink, RawTextSink {
  private headerInfo: TraceHeader | null = null;
  private nextId = 0;

  /** Events without a typed table (or whose text did not parse): shape tables, else _ftrace_event and _args. */
  private readonly untyped: UntypedRows;
  /** Text events keep `raw` only where their fields do not print it back (kept_raw.ts). */
  private readonly keptRaw = new KeptRaw();
  private readonly typed: TypedRows;
  /** Per event name, in order of first appearance (index = name_id): one lookup per event. */
  private readonly names = new Map<string, EventNameInfo>();
  private readonly nameList: EventNameInfo[] = [];

  private readonly threads = new Map<number, ThreadInfo>();
  /** Names (and tgids) the trace states for threads outside its events (threadName()), by tid. */
  private readonly statedNames = new Map<number, { name: string | null; tgid: number | null }>();
  /** utids whose name is a stated one: event comms do not replace it. */
  private readonly fixedName = new Set<number>();
  /** Last printed comm of a thread with a stated name (its history without repeats). */
  private readonly lastPrinted = new Map<number, string>();
  /**
   * utid + 1 by tid (0: not seen), for tids below MAX_DENSE_TID; grown on
   * demand. trace.dat events alternate between CPUs and tasks, so most
   * events miss the last-thread shortcut, and a Map lookup per event cost
   * ~0.4 s of a 10M-event ingest.
   */
  private utidByTid: Int32Array<ArrayBuffer> = new Int32Array(1024);
  private readonly threadList: ThreadInfo[] = [];
  private readonly nameHistory: { utid: number; ts: number; name: string }[] = [];
  /** [cpu, events, firstTs, lastTs] by CPU number (a Map: text may name any CPU number). */
  private readonly cpus = new Map<number, [number, number, number, number]>();
  /** The same entries by CPU number, for CPU numbers below MAX_DENSE_CPU (the Map keeps first-seen order). */
  private readonly cpuSlots: ([number, number, number, number] | null)[] = [];
  private lastCpu: [number, number, number, number] | null = null;
  private lastThread: ThreadInfo;

  private readonly lost: { cpu: number; count: number | null; where: number }[] = [];
  private readonly problems: SkippedInput[] = [];
  private problemCount = 0;
  private unparsed = 0;

  private rawBatches: RecordBatchWriter | null = null;

  constructor(
    layout: ModelLayout,
    onChunk: (table: number, data: ChunkData) => void,
    private readonly rawTarget: RawRecordTarget | null = null,
    /** Where chunks get their buffers (the ones the store worker sent back). */
    chunkMemory: BufferSource = NEW_BUFFERS,
  ) {
    this.untyped = new UntypedRows(layout, onChunk, SHAPE_TABLE_BASE, SID_BASE_MAIN, chunkMemory);
    this.typed = new TypedRows(layout, onChunk, chunkMemory);
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
    this.typed.setBase(header.tsBaseNs);
    this.untyped.setBase(header.tsBaseNs, header.format === 'tracefs_text' || header.format === 'trace_cmd_report');
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
    const raw = this.keptRaw.of(e.name, e.raw, fields);
    this.untyped.write(id, e.ts, e.cpu, utid, info.id, e.flags, e.preemptCount, e.where, raw, fields);
  }

  /** DirectRowSink: events whose typed rows need nothing beyond their own fields. */
  directRows(name: string, system: string | null): DirectRows | null {
    const table = typedTableFor(name);
    const target = table ? this.typed.target(table) : undefined;
    if (target === undefined) return null;
    if (rowsNeedOnlyFields(table!)) return new BuilderDirectRows(this, this.typed, target, name, system);
    // Scheduler rows that name tasks: direct too, the names noted from the row's own columns
    // (fork and exit, a few events a trace, also set the thread's fork/exit time: writeTyped()).
    const named = DIRECT_TASK_NAME_TABLES.has(table!) ? TASK_NAME_FIELDS[table!] : undefined;
    const columns = named === undefined ? null : taskNameColumns(target, named);
    if (columns === null) return null;
    return new BuilderDirectRows(this, this.typed, target, name, system, columns);
  }

  /** ShapeRowSink: shape rows start after SHAPE_LEAD columns (binary inputs: no `raw`). */
  readonly shapeLead = SHAPE_LEAD;

  /** ShapeRowSink: events without a typed table, their rows written by the decoder's shape reader. */
  shapeRows(name: string, system: string | null, keys: string[], fixedKinds: Int8Array): FramedShapeRows | null {
    if (typedTableFor(name) !== null) return null;
    let info: EventNameInfo | null = null;
    let rows: ShapeRows | null = null;
    let flags = 0;
    let preemptCount = 0;
    return {
      frame: (ts, cpu, pid, comm, f, p, where): ShapeRowColumns => {
        // The name is registered on its first event, as event() does: name ids follow first appearance.
        info ??= this.nameInfo(name, system);
        const utid = this.frame(info, ts, cpu, pid, comm, null);
        rows ??= this.untyped.shapeRows(info.id, keys, fixedKinds);
        rows.id = this.framedId;
        rows.ts = ts;
        rows.cpu = cpu;
        rows.utid = utid;
        rows.common = commonOf(f, p);
        rows.where = where;
        flags = f;
        preemptCount = p;
        return rows;
      },
      general: (fields) => {
        const r = rows!;
        this.untyped.write(r.id, r.ts, r.cpu, r.utid, info!.id, flags, preemptCount, r.where, null, fields);
      },
    };
  }

  /** A task's name as a scheduler event prints it (comm of pid), at ts. */
  noteTaskName(pid: number, comm: string, ts: number): void {
    this.noteTaskComm(this.threadOf(pid, ts), comm, ts);
  }

  /**
   * RawRecordSink: with a RawRecordTarget, the records of every format whose
   * typed rows need only their own fields are framed here and decoded on the
   * target's thread.
   */
  rawRecords(spec: RawFieldSpec | PerfettoFieldSpec): RawRecords | null {
    const target = this.rawTarget;
    if (target === null || !this.headerInfo) return null;
    // Typed rows that need only their own fields, and events without a typed table (rows of their shape, untyped_rows.ts).
    const taken = new Map(
      spec.formats
        .filter((f) => this.rawTable(f.name) !== null || typedTableFor(f.name) === null)
        .map((f) => [f.id, f]),
    );
    if (taken.size === 0) return null;
    const batches = (this.rawBatches = new RecordBatchWriter((b) => target.batch(b), undefined, target.batchMemory));
    target.start(spec, this.headerInfo.tsBaseNs, [
      ...new Set([...taken.values()].map((f) => this.rawTable(f.name)).filter((t) => t !== null)),
    ]);
    const byFormat: (EventNameInfo | undefined)[] = [];
    return {
      takes: (formatId) => taken.has(formatId),
      page: (buf, start, end) => batches.page(buf, start, end),
      record: (formatId, ts, cpu, pid, comm, flags, preemptCount, where, off, len) => {
        // Registered on its first event, as event() does: name ids follow first appearance.
        let info = byFormat[formatId];
        if (info === undefined) {
          const f = taken.get(formatId)!;
          info = byFormat[formatId] = this.nameInfo(f.name, f.system);
          // Untyped rows carry the name_id: the batches' reader is told it (as for text names).
          if (info.target === null) batches.name(info.id, f.name, f.system);
        }
        const utid = this.frame(info, ts, cpu, pid, comm, null);
        batches.add(
          formatId,
          this.framedId,
          ts,
          cpu,
          utid,
          packCommon(flags, preemptCount) ?? COMMON_NULL,
          where,
          off,
          len,
        );
      },
    };
  }

  /**
   * RawTextSink: with a RawRecordTarget, text events are framed here and
   * their argument text is parsed on the target's thread, by the decoder's
   * own parsers: events of typed tables whose rows need only their own
   * fields, and events without a typed table (their `_ftrace_event` and
   * `_args` rows; the field worker keeps its own string dictionary).
   */
  rawText(): RawTextRecords | null {
    const target = this.rawTarget;
    if (target === null || !this.headerInfo) return null;
    const tables = this.typed.tables().filter(rowsNeedOnlyFields);
    const batches = (this.rawBatches = new RecordBatchWriter(
      (b) => target.batch(b),
      TEXT_BATCH_BYTES,
      target.batchMemory,
    ));
    target.start({ format: 'text' }, this.headerInfo.tsBaseNs, tables);
    // The batches' reader is told a name with its first event.
    const nameOf = (name: string, system: string | null): EventNameInfo => {
      const info = this.nameInfo(name, system);
      if (!info.rawNamed) {
        batches.name(info.id, name, system);
        info.rawNamed = true;
      }
      return info;
    };
    return {
      takes: (name) => takesText(name),
      page: (buf, start, end) => batches.page(buf, start, end),
      record: (name, system, ts, cpu, pid, comm, tgid, flags, preemptCount, where, off, len) => {
        const info = nameOf(name, system);
        const utid = this.frame(info, ts, cpu, pid, comm, tgid);
        batches.add(
          info.id,
          this.framedId,
          ts,
          cpu,
          utid,
          packCommon(flags, preemptCount) ?? COMMON_NULL,
          where,
          off,
          len,
        );
      },
      recordText: (name, system, ts, cpu, pid, comm, tgid, flags, preemptCount, where, args) => {
        const info = nameOf(name, system);
        const utid = this.frame(info, ts, cpu, pid, comm, tgid);
        batches.addText(
          info.id,
          this.framedId,
          ts,
          cpu,
          utid,
          packCommon(flags, preemptCount) ?? COMMON_NULL,
          where,
          args,
        );
      },
      continuation: (text) => batches.continuation(text),
    };
  }

  /** The typed table an event's rows go to when the raw target takes them, else null. */
  private rawTable(name: string): string | null {
    const table = typedTableFor(name);
    return table !== null && this.typed.target(table) !== undefined && rowsNeedOnlyFields(table) ? table : null;
  }

  /** The per-name record of an event name (registered on its first event). */
  nameInfo(name: string, system: string | null): EventNameInfo {
    return this.names.get(name) ?? this.newName(name, system);
  }

  /** Id of the event frame() framed last. */
  framedId = -1;

  /**
   * Frames an event whose typed row is written elsewhere (a TableRowWriter
   * here, or the field worker): assigns its id (framedId), finds its
   * thread, counts it. Returns the utid.
   */
  frame(info: EventNameInfo, ts: number, cpu: number, pid: number, comm: string | null, tgid: number | null): number {
    if (!this.headerInfo) throw new Error('decoder sent an event before the header');
    this.framedId = this.nextId++;
    return this.startEvent(info, ts, cpu, pid, comm, tgid);
  }

  /** Bookkeeping every event shares: its thread (named from the line prefix), per-name and per-CPU counts. */
  private startEvent(
    info: EventNameInfo,
    ts: number,
    cpuNo: number,
    pid: number,
    comm: string | null,
    tgid: number | null,
  ): number {
    // Events come in runs of one CPU and one task: skip both map lookups then.
    let thread = this.lastThread;
    if (thread.tid !== pid) thread = this.lastThread = this.threadOf(pid, ts);
    if (tgid !== null && tgid > 0 && thread.tgid === null) thread.tgid = tgid;
    // The line prefix's name only names threads not named yet: `report -l`
    // cuts names to 8 characters and `<...>` means unknown.
    if (comm !== null && thread.name === null && comm !== '<...>' && comm !== '') {
      thread.name = comm;
      this.nameHistory.push({ utid: thread.utid, ts, name: comm });
    }
    info.count++;
    let cpu = this.lastCpu;
    if (cpu === null || cpu[0] !== cpuNo) cpu = this.lastCpu = this.cpuOf(cpuNo);
    if (cpu === null) this.newCpu(cpuNo, ts);
    else {
      cpu[1]++;
      if (ts < cpu[2]) cpu[2] = ts;
      if (ts > cpu[3]) cpu[3] = ts;
    }
    return thread.utid;
  }

  /** First event of a name: its name_id and typed table. */
  private newName(name: string, system: string | null): EventNameInfo {
    const table = typedTableFor(name);
    const target = table ? (this.typed.target(table) ?? null) : null;
    const info: EventNameInfo = {
      name,
      id: this.nameList.length,
      system,
      count: 0,
      target,
      eventValue: -2,
      rawNamed: false,
    };
    this.names.set(name, info);
    this.nameList.push(info);
    return info;
  }

  lostEvents(cpu: number, count: number | null, where: number): void {
    this.lost.push({ cpu, count, where });
  }

  threadName(tid: number, name: string | null, tgid: number | null): void {
    this.statedNames.set(tid, { name, tgid });
    // A thread created before (utid 0, the idle task, always is) takes it now.
    const t = isIndexBelow(tid, this.utidByTid.length)
      ? this.threadList[this.utidByTid[tid]! - 1]
      : this.threads.get(tid);
    if (t) this.applyStated(t, 0);
  }

  /** A stated name and tgid for a thread met now (at ts). */
  private applyStated(t: ThreadInfo, ts: number): void {
    const stated = this.statedNames.get(t.tid);
    if (!stated) return;
    if (stated.tgid !== null && stated.tgid > 0) t.tgid = stated.tgid;
    if (stated.name !== null && stated.name !== '') {
      this.fixedName.add(t.utid);
      if (t.name !== stated.name) {
        t.name = stated.name;
        this.nameHistory.push({ utid: t.utid, ts, name: stated.name });
      }
    }
  }

  skipped(problem: SkippedInput): void {
    this.problemCount++;
    if (this.problems.length < MAX_PROBLEMS_KEPT)
      this.problems.push({ ...problem, excerpt: problem.excerpt.slice(0, 200) });
  }

  /**
   * Hands over the last partial chunks (and raw batch) and everything
   * learned. With a RawRecordTarget, the dictionaries of the tables it
   * filled are the field worker's, merged by the store (mergeDicts).
   */
  finish(): BuilderResult {
    this.untyped.flush();
    this.typed.flush();
    this.rawBatches?.flush();
    return {
      header: this.headerInfo,
      eventsTotal: this.nextId,
      eventNames: this.nameList.map((n) => [n.name, n.system, n.count]),
      strings: this.untyped.stringRows(),
      shapes: this.untyped.shapeResults(),
      dicts: this.typed.dictLists(),
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

  private writeTyped(
    t: TypedTarget,
    id: number,
    e: DecodedEvent,
    utid: number,
    name: EventNameInfo,
    fields: EventFields,
  ): void {
    if (name.eventValue === -2) name.eventValue = this.typed.eventValue(t, name.name);
    this.typed.head(t, id, e.ts, e.cpu, utid, name.eventValue);
    this.typed.fields(t, fields);
    this.typed.tail(t, packCommon(e.flags, e.preemptCount), e.where);

    const nameFields = TASK_NAME_FIELDS[t.layout.table];
    if (nameFields) {
      for (let k = 0; k < nameFields.length; k++) {
        const comm = fields[nameFields[k][0]];
        const pid = fields[nameFields[k][1]];
        if (typeof comm === 'string' && typeof pid === 'number')
          this.noteTaskComm(this.threadOf(pid, e.ts), comm, e.ts);
      }
      if (t.layout.table === 'sched_process_fork' && typeof fields.child_pid === 'number') {
        this.threadOf(fields.child_pid).forkTs = e.ts;
      } else if (t.layout.table === 'sched_process_exit' && typeof fields.pid === 'number') {
        this.threadOf(fields.pid).exitTs = e.ts;
      }
    }
  }

  // ---- threads -----------------------------------------------------------

  /** The thread of a tid, created (at ts) on its first appearance. */
  private threadOf(tid: number, ts = 0): ThreadInfo {
    let t = isIndexBelow(tid, this.utidByTid.length)
      ? this.threadList[this.utidByTid[tid]! - 1]
      : this.threads.get(tid);
    if (!t) {
      t = { utid: this.threadList.length, tid, name: null, tgid: null, forkTs: null, exitTs: null };
      this.threads.set(tid, t);
      this.threadList.push(t);
      if (isIndexBelow(tid, MAX_DENSE_TID)) {
        if (tid >= this.utidByTid.length) this.utidByTid = grown(this.utidByTid, tid);
        this.utidByTid[tid] = t.utid + 1;
      }
      if (this.statedNames.size > 0) this.applyStated(t, ts);
    }
    return t;
  }

  // ---- CPUs --------------------------------------------------------------

  private cpuOf(cpuNo: number): [number, number, number, number] | null {
    return (isIndexBelow(cpuNo, this.cpuSlots.length) ? this.cpuSlots[cpuNo] : this.cpus.get(cpuNo)) ?? null;
  }

  private newCpu(cpuNo: number, ts: number): void {
    const cpu: [number, number, number, number] = [cpuNo, 1, ts, ts];
    this.cpus.set(cpuNo, cpu);
    if (isIndexBelow(cpuNo, MAX_DENSE_CPU)) {
      while (this.cpuSlots.length <= cpuNo) this.cpuSlots.push(null);
      this.cpuSlots[cpuNo] = cpu;
    }
  }

  /** Names printed by scheduler events are authoritative: record changes. */
  private noteTaskComm(t: ThreadInfo, comm: string, ts: number): void {
    if (t.name === comm || comm === '' || comm === '<...>') return;
    if (this.fixedName.has(t.utid)) {
      // A stated name stays the thread's name; the printed one is history.
      if (this.lastPrinted.get(t.utid) !== comm) {
        this.lastPrinted.set(t.utid, comm);
        this.nameHistory.push({ utid: t.utid, ts, name: comm });
      }
      return;
    }
    t.name = comm;
    this.nameHistory.push({ utid: t.utid, ts, name: comm });
  }
}

/** Task-naming tables written through DirectRows (TASK_NAME_FIELDS minus fork and exit). */
const DIRECT_TASK_NAME_TABLES = new Set([
  'sched_switch',
  'sched_waking',
  'sched_wakeup',
  'sched_wakeup_new',
  'sched_migrate_task',
]);

/**
 * The [comm column, pid column] indexes of a table's task-naming field
 * pairs, flat; null unless each comm is a text column and each pid an
 * INTEGER one (what end() reads back).
 */
function taskNameColumns(target: TypedTarget, pairs: [string, string][]): Int32Array | null {
  const layout = target.layout;
  const out: number[] = [];
  for (const [comm, pid] of pairs) {
    const c = layout.fieldColumns.find((f) => f.name === comm);
    const p = layout.fieldColumns.find((f) => f.name === pid);
    if (c === undefined || p === undefined || c.dict < 0 || layout.columns[p.index]!.kind !== 'i32') return null;
    out.push(c.index, p.index);
  }
  return Int32Array.from(out);
}

/**
 * DirectRows of one event name, on the builder's thread: begin() frames the
 * event (id, thread, counts) before the row is written. With taskNames
 * (scheduler rows that name tasks), end() notes each named task's comm, as
 * writeTyped() does from a fields object: the comm is the text the compiled
 * reader wrote into the comm column, the pid the integer in the pid column.
 */
class BuilderDirectRows extends TableRowWriter implements DirectRows {
  private info: EventNameInfo | null = null;
  /**
   * The row's time (NaN before the first row). A double from the start: a
   * trace's times pass 2^30 ns after its first second, and a field that
   * starts as a small integer and changes kind changes every instance's
   * hidden class mid-trace, which threw away the optimized begin(), end()
   * and their callers (`node --trace-deopt`: wrong map; begin() compiled 5
   * times on a 1.3M-event Perfetto trace, 4 of them small since).
   */
  private ts = NaN;
  /** Columns this event's format lacks (the compiled reader calls absent() on them every row). */
  private readonly absentColumn: Uint8Array;

  constructor(
    private readonly builder: ModelBuilder,
    rows: TypedRows,
    target: TypedTarget,
    private readonly eventName: string,
    private readonly system: string | null,
    /** [comm column, pid column] pairs, flat; empty: rows name no task. */
    private readonly taskNames: Int32Array = new Int32Array(0),
  ) {
    super(rows, target, eventName);
    this.absentColumn = new Uint8Array(target.layout.columns.length);
  }

  override absent(column: number): void {
    this.absentColumn[column] = 1;
    super.absent(column);
  }

  override end(): void {
    const names = this.taskNames;
    for (let k = 0; k < names.length; k += 2) {
      const commCol = names[k]!;
      const pidCol = names[k + 1]!;
      if (this.absentColumn[commCol] === 1 || this.absentColumn[pidCol] === 1) continue;
      const comm = this.lastText(commCol);
      if (comm !== null) this.builder.noteTaskName(this.arrays[pidCol]![this.row]!, comm, this.ts);
    }
    super.end();
  }

  begin(
    ts: number,
    cpu: number,
    pid: number,
    comm: string | null,
    flags: number | null,
    preemptCount: number | null,
    where: number,
    tgid: number | null = null,
  ): void {
    // The name is registered on its first event, as event() does: name ids follow first appearance.
    const info = this.info ?? (this.info = this.builder.nameInfo(this.eventName, this.system));
    this.ts = ts;
    const utid = this.builder.frame(info, ts, cpu, pid, comm, tgid);
    this.startRow(this.builder.framedId, ts, cpu, utid, packCommon(flags, preemptCount), where);
  }
}
