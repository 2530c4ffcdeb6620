/**
 * The one contract between decoders and the trace model.
 *
 * Every decoder (tracefs text, `trace-cmd report` text, trace.dat) turns its
 * input into a stream of DecodedEvent values handed to an EventSink. The sink
 * (server/model/model_builder.ts) turns them into rows for DuckDB. Decoders
 * know nothing about DuckDB; the model knows nothing about file formats.
 *
 * Data flows one way: file -> decoder -> EventSink -> tables.
 */

/** A decoded event field. Integers that do not fit in 2^53 come as bigint. */
export type FieldValue = number | bigint | string;

/**
 * Event fields under the kernel's own field names, as the event's `format`
 * file on a current (6.x) kernel names them, e.g. for mm_shrink_slab_start:
 * `shr`, `shrink`, `nid`, `nr_objects_to_shrink`, `gfp_flags`, `cache_items`,
 * `delta`, `total_scan`, `priority`. Both text and binary decoders must produce
 * the same names and the same value conventions (see EVENT_FIELD_CONVENTIONS).
 */
export type EventFields = Record<string, FieldValue>;

/**
 * A field name as an object literal's key in compiled builder source. A
 * trace names the keys (its text, its format descriptions), and `"__proto__": v` in a literal sets the
 * object's prototype instead of making a field (a number is dropped, the
 * event loses the field); the computed form `["__proto__"]` makes an own
 * property like any other key.
 */
export function literalKey(key: string): string {
  return key === '__proto__' ? `[${JSON.stringify(key)}]` : JSON.stringify(key);
}

/** out[key] = value, also for `__proto__` (an own field, as literalKey). */
export function setField(out: EventFields, key: string, value: FieldValue): void {
  if (key === '__proto__')
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

export interface DecodedEvent {
  /**
   * Timestamp in ns, relative to TraceHeader.tsBaseNs (so it stays an exact
   * JS number: absolute boot-clock ns exceed 2^53 after ~104 days of uptime).
   */
  ts: number;
  cpu: number;
  /** common_pid: the thread that was running when the event fired (a tid). */
  pid: number;
  /** The running task's name if the source prints it (text), else null. */
  comm: string | null;
  /** The thread-group id if the source has it (`record-tgid` column), else null. */
  tgid: number | null;
  /** Event name without the system, e.g. `sched_switch`. */
  name: string;
  /** Event system (`sched`, `vmscan`, ...) when known, else null. */
  system: string | null;
  /**
   * common_flags as the kernel stores them (TRACE_FLAG_* bits, see
   * TRACE_FLAGS below), or null when the source has no flags column.
   */
  flags: number | null;
  /** common_preempt_count (low 4 bits preempt depth), or null if unknown. */
  preemptCount: number | null;
  /**
   * Parsed fields under kernel field names, or null when the decoder could not
   * parse the argument text (the event is still kept, with `raw`).
   */
  fields: EventFields | null;
  /**
   * The printed argument text (everything after `name:`), when the source is
   * text. Binary decoders leave it null. The model stores it
   * (`ftrace_event.raw`) only where `fields` do not print it back as an
   * excerpt would (ftrace_text/kept_raw.ts): text that did not parse, or an
   * event without a typed table whose fields print otherwise.
   */
  raw: string | null;
  /** Where in the input: 1-based line number (text) or byte offset (trace.dat). */
  where: number;
}

/**
 * CPU numbers at or past this are not a real machine's: Linux's NR_CPUS is
 * at most 8192 in mainline configs (x86 MAXSMP). Decoders treat such a CPU
 * number as damage (the line or section is skipped, or the file refused)
 * rather than size per-CPU state and the INTEGER `cpu` columns by it.
 */
export const MAX_CPUS = 65536;

/**
 * Linux's PID_MAX_LIMIT on 64-bit (pid_max cannot be set higher): a pid or
 * tgid past it is damage too, and would not fit the INTEGER `tid` columns
 * unchanged.
 */
export const MAX_PID = 4 * 1024 * 1024;

/**
 * ftrace's stack events: their fields are the frames (`caller`, one per
 * line), which trace.dat records hold past their format's declared size and
 * the text formats print as continuation lines.
 */
export function isStackEvent(name: string): boolean {
  return name === 'kernel_stack' || name === 'user_stack';
}

export type TraceFormat = 'tracefs_text' | 'trace_cmd_report' | 'trace_dat' | 'perfetto';

export interface TraceHeader {
  format: TraceFormat;
  /** e.g. '7' / '6' for trace.dat, trace-cmd's `version = 6` for report text, null for tracefs text and Perfetto traces. */
  formatVersion: string | null;
  /** CPUs the trace says it covers (header or highest CPU seen), null if unknown. */
  cpus: number | null;
  /** Absolute timestamp (ns) that DecodedEvent.ts values are relative to. */
  tsBaseNs: bigint;
  /** Free-form facts the file states (kernel release, clock, tracer, compression...). */
  meta: Record<string, string>;
}

/** Something in the input that could not be decoded and was skipped. */
export interface SkippedInput {
  /** 1-based line number (text) or byte offset (binary). */
  where: number;
  /** 'line' for text sources, 'offset' for binary ones. */
  unit: 'line' | 'offset';
  /** What was wrong, one line. */
  reason: string;
  /** A short excerpt of the offending input (at most ~200 chars), for the report. */
  excerpt: string;
}

export interface EventSink {
  /** Called once, before the first event. */
  header(header: TraceHeader): void;
  /** One call per event, in file order (trace.dat: merged across CPUs by ts). */
  event(event: DecodedEvent): void;
  /** The kernel or the recorder reported lost events on a CPU (count null if unknown). */
  lostEvents(cpu: number, count: number | null, where: number): void;
  /** Input that was skipped. Nothing may be dropped silently. */
  skipped(problem: SkippedInput): void;
  /**
   * Optional: a thread's name (and thread group) the trace states outside
   * its events, e.g. Perfetto's ProcessTree (read from /proc by the
   * recorder). Such a name is the thread's name, as in Perfetto's trace
   * processor: names events print (sched_switch comms) do not replace it,
   * though they still go to thread_name_history. Called after header(),
   * before the events; applies to threads the events then show.
   */
  threadName?(tid: number, name: string | null, tgid: number | null): void;
}

/**
 * An optional fast path a sink may offer binary decoders. Events the sink
 * stores in fixed columns can then be written straight from the record,
 * without a DecodedEvent and a fields object per event (allocating and
 * reading those was most of the cost of turning a large trace.dat into rows).
 * The decoder asks once per event format; null means "use event()". The
 * result must be what event() would have stored for the same event.
 */
export interface DirectRowSink extends EventSink {
  directRows(name: string, system: string | null): DirectRows | null;
}

/** How a column stores what a compiled field reader writes (see DirectRowColumns.arrays). */
export type DirectColumnKind = 'i32' | 'i64' | 'f64' | 'text';

/**
 * The columns of one event name's rows, as a compiled field reader fills
 * them. Integer fields are written straight into the row's arrays, so a
 * field costs a few byte reads and a store, not a call; text is handed over
 * by call, with a per-column cache keyed by the integer the text was made
 * from (flag bits, a symbol's or pointer's address).
 */
export interface DirectRowColumns {
  /**
   * The columns filled from fields: the field names that fill each, in order
   * of preference (the first one the event's format has wins), and how the
   * column stores values.
   */
  readonly fields: readonly { names: readonly string[]; column: number; kind: DirectColumnKind }[];
  /**
   * The current row's value arrays by column: an i32 column's value goes to
   * arrays[column][row]; an i64 column's low 32 bits to arrays[column][2 * row]
   * and high 32 bits (two's complement) to [2 * row + 1]; f64 to [row].
   */
  readonly arrays: (Int32Array | Float64Array)[];
  readonly row: number;
  /**
   * A text column whose value is determined by an integer (lo, hi: its two
   * 32-bit halves): true if the text for that integer is known and was
   * written; false, and text() must follow with it.
   */
  keyed(column: number, lo: number, hi: number): boolean;
  /** The text for the integer of the last keyed() call on this column. */
  text(column: number, value: FieldValue): void;
  /** Any field value, converted as event() converts it. */
  value(column: number, value: FieldValue): void;
  /** The event's format has none of the column's field names. */
  absent(column: number): void;
}

/**
 * Rows of one event without a typed table, in the table of its shape (its
 * fields' names and kinds: model/untyped_rows.ts), as a compiled reader
 * fills them: the reader finds each field's kind (0 integer, 1 0x-hex, 2
 * text: a fixed kind for integers and pointers, from the value for the
 * rest), begin() takes the shape of those kinds and writes the row's
 * leading columns, the reader writes the fields (integers and hex straight
 * into the arrays as two 32-bit words, the rest by put()), end() ends the
 * row. Field k's column is SHAPE_LEAD + k in every shape.
 */
export interface ShapeRowColumns {
  /** A value's kind (0 integer, 1 0x-hex, 2 text), -1 when it fits no shape (the event then takes the general path). */
  kindOf(value: FieldValue): number;
  /**
   * The chunk of the shape whose variable fields have these kinds (code:
   * kind of the j-th variable field times 3^j) with the row's leading
   * columns written; null: the event takes the general path, nothing written.
   */
  begin(code: number): { arrays: (Int32Array | Float64Array)[]; rows: number } | null;
  /** Field k's value of kind `kind` into column `column` of the row begun. */
  put(column: number, k: number, kind: number, value: FieldValue): void;
  end(): void;
}

/**
 * A sink that takes events without a typed table as rows of their shape,
 * written by a compiled shape reader (ShapeRowColumns) on the decoder's
 * thread: one object per event name, asked for when the decoder compiles
 * the format.
 */
export interface ShapeRowSink extends EventSink {
  /** Leading columns of a shape row: field k's column is shapeLead + k. */
  readonly shapeLead: number;
  /** Rows of one event name with these fields (fixedKinds: ShapeRowColumns' kinds, -1 where the value decides); null: the name has a typed table. */
  shapeRows(name: string, system: string | null, keys: string[], fixedKinds: Int8Array): FramedShapeRows | null;
}

/** One event name's shape rows on the decoder's thread (ShapeRowSink). */
export interface FramedShapeRows {
  /** Frames an event (as event() would: id, thread, counts) and returns the columns its shape reader fills. */
  frame(
    ts: number,
    cpu: number,
    pid: number,
    comm: string | null,
    flags: number,
    preemptCount: number,
    where: number,
  ): ShapeRowColumns;
  /** The fields of the event framed last, when its shape reader wrote nothing (as event() writes them). */
  general(fields: EventFields): void;
}

export function isShapeRowSink(sink: EventSink): sink is ShapeRowSink {
  return typeof (sink as Partial<ShapeRowSink>).shapeRows === 'function';
}

/** Rows of one event name, written column by column (see DirectRowSink). */
export interface DirectRows extends DirectRowColumns {
  /**
   * Starts a row with what a DecodedEvent carries besides fields and raw
   * (flags / preemptCount null: not recorded; tgid: a text line's, binary
   * inputs have none).
   */
  begin(
    ts: number,
    cpu: number,
    pid: number,
    comm: string | null,
    flags: number | null,
    preemptCount: number | null,
    where: number,
    tgid?: number | null,
  ): void;
  /** Ends the row begun last. */
  end(): void;
}

export function isDirectRowSink(sink: EventSink): sink is DirectRowSink {
  return typeof (sink as Partial<DirectRowSink>).directRows === 'function';
}

/**
 * Another optional fast path for binary decoders: the sink takes some
 * events as raw records, framed (time, CPU, task, position) but with their
 * fields still encoded, to decode the fields on another thread. The decoder
 * describes once how to decode them (RawFieldSpec); the sink answers which
 * formats it takes. What the sink finally stores must be what event() or
 * directRows() would have stored for the same events.
 *
 * Why: decoding fields and filling columns was half of the main thread's
 * work on a large trace.dat, while the thread appending to DuckDB waited.
 */
export interface RawRecordSink extends EventSink {
  /** Called once, after header(); null: take none. */
  rawRecords(spec: RawFieldSpec | PerfettoFieldSpec): RawRecords | null;
}

/** What decoding a trace.dat record's fields takes: plain data, it crosses threads. */
export interface RawFieldSpec {
  format: 'trace_dat';
  littleEndian: boolean;
  longSize: number;
  /** Every event format of the file: its id (common_type), name, system and `format` text. */
  formats: { id: number; name: string; system: string; text: string }[];
  /** The file's kallsyms text (for %pS fields), or null. */
  kallsyms: string | null;
  /** The file's printk formats text (trace_printk messages, bprint.ts), or null. */
  printk: string | null;
}

/**
 * What decoding a Perfetto ftrace event's fields takes (plain data, it
 * crosses threads): each record's bytes are its event message (the
 * FtraceEvent oneof member), read by the reader compiled from its kind's
 * fields (perfetto/event_fields.ts).
 */
export interface PerfettoFieldSpec {
  format: 'perfetto';
  /** Whether gfp_flags print by name (the trace's kernel has the 6.3+ bit layout). */
  gfpKnown: boolean;
  /** The event kinds offered: an id per kind (per sequence for generic events), its name, system and fields by field number. */
  formats: {
    id: number;
    name: string;
    system: string | null;
    /** A message of Perfetto's own for the event, not a generic event (event_fields.ts compileFieldReader). */
    typed: boolean;
    fields: ({ name: string; kind: string } | null)[];
  }[];
}

export interface RawRecords {
  /** Whether records of this format id go to record() (asked once per format). */
  takes(formatId: number): boolean;
  /**
   * The records that follow lie in buf[start, end) (one ring-buffer page),
   * until the next page() call. The sink may keep a copy of the whole page:
   * one copy per page costs far less than one per record. The decoder never
   * puts other bytes in a buffer it passed here, so (buf, start) names a page.
   */
  page(buf: Uint8Array, start: number, end: number): void;
  /** One record of the current page: the event's framing and its bytes buf[off, off + len) (common fields first). */
  record(
    formatId: number,
    ts: number,
    cpu: number,
    pid: number,
    comm: string | null,
    flags: number | null,
    preemptCount: number | null,
    where: number,
    off: number,
    len: number,
  ): void;
}

export function isRawRecordSink(sink: EventSink): sink is RawRecordSink {
  return typeof (sink as Partial<RawRecordSink>).rawRecords === 'function';
}

/**
 * RawRecordSink's counterpart for text decoders: the sink takes some
 * events with their argument text unparsed, to parse it on another thread
 * with the same parser (ftrace_text/raw_text_fields.ts). The decoder frames
 * each event from its line prefix; everything else is as RawRecordSink.
 */
export interface RawTextSink extends EventSink {
  /** Called once, after header(); null: take none. */
  rawText(): RawTextRecords | null;
}

export interface RawTextRecords {
  /** Whether events of this name go to record() (asked once per name). */
  takes(name: string): boolean;
  /**
   * The records that follow have their text in buf (ASCII: one byte per
   * character), until the next page() call: a block of lines. Every event
   * of a name the sink takes goes to record() or recordText(). As for
   * RawRecords.page, (buf, start) names the same bytes for the whole decode.
   */
  page(buf: Uint8Array, start: number, end: number): void;
  /** One event, framed from its line; its argument text is buf[off, off + len). flags / preemptCount null: no such column. */
  record(
    name: string,
    system: string | null,
    ts: number,
    cpu: number,
    pid: number,
    comm: string | null,
    tgid: number | null,
    flags: number | null,
    preemptCount: number | null,
    where: number,
    off: number,
    len: number,
  ): void;
  /** As record(), for an event whose text is not in a page (a line not in an ASCII block): its argument text. */
  recordText(
    name: string,
    system: string | null,
    ts: number,
    cpu: number,
    pid: number,
    comm: string | null,
    tgid: number | null,
    flags: number | null,
    preemptCount: number | null,
    where: number,
    args: string,
  ): void;
  /** A continuation line (` => frame` of a stack trace) of the event record() gave last: part of its raw text. */
  continuation(text: string): void;
}

export function isRawTextSink(sink: EventSink): sink is RawTextSink {
  return typeof (sink as Partial<RawTextSink>).rawText === 'function';
}

/** Reports decode progress, in bytes of the (decompressed) input consumed. */
export type ProgressFn = (bytesDone: number, bytesTotal: number | null) => void;

/**
 * A decoder reads a whole input stream and reports to a sink. It throws a
 * DecodeError when the input cannot be decoded at all (not a trace, header
 * unreadable); recoverable damage goes to sink.skipped().
 */
export class DecodeError extends Error {
  constructor(
    readonly file: string,
    /** Byte offset (binary) or line number (text) where decoding failed. */
    readonly where: number,
    readonly unit: 'line' | 'offset',
    /** What was wrong, without the file and place. */
    readonly reason: string,
  ) {
    super(`${file}: ${unit} ${where}: ${reason}`);
    this.name = 'DecodeError';
  }
}

/**
 * An input refused as a decompression bomb (decompress.ts): not a damaged
 * stream, whose prefix is worth keeping (compressed_prefix.ts), but one the
 * ingest must not read on.
 */
export class DecompressionBombError extends DecodeError {}

/** Kernel TRACE_FLAG_* bits of common_flags (include/linux/trace_events.h). */
export const TRACE_FLAGS = {
  IRQS_OFF: 0x01,
  IRQS_NOSUPPORT: 0x02,
  NEED_RESCHED: 0x04,
  HARDIRQ: 0x08,
  SOFTIRQ: 0x10,
  PREEMPT_RESCHED: 0x20,
  NMI: 0x40,
  BH_OFF: 0x80,
} as const;

/**
 * Value conventions both text and binary decoders follow for typed fields, so
 * the same recording gives the same values whichever file it comes from:
 *
 * - Function pointers printed with %pS (e.g. mm_shrink_slab_start.shrink):
 *   the bare symbol name, `super_cache_scan` (no `+0x0/0x1b0`); if no symbol
 *   is known, `0x` + lowercase hex.
 * - Other pointers (mm_shrink_slab_start.shr, page): `0x` + lowercase hex
 *   string (hashed pointers in tracefs text stay as printed, prefixed `0x`).
 * - Flag fields printed symbolically by the kernel (gfp_flags, reclaim_flags,
 *   sched_switch.prev_state): the printed symbolic string, e.g.
 *   `GFP_KERNEL|__GFP_ZERO`, `RECLAIM_WB_ANON|RECLAIM_WB_ASYNC`, `S`, `R+`.
 * - Enumerations printed symbolically (mm_vmscan_throttled.reason, lru):
 *   the printed symbol, e.g. `VMSCAN_THROTTLE_WRITEBACK`, `inactive_file`.
 * - Integers: numbers (bigint above 2^53). pfn is a number.
 * - Strings (comm fields): as printed, without padding.
 */
export const EVENT_FIELD_CONVENTIONS = true;
