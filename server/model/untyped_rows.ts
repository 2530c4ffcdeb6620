/**
 * Rows of events without a typed table ("untyped" events: kmem, block, irq,
 * timer, most writeback events...), stored one row per event in a table of
 * the event's *shape*: its name and its fields' names and kinds, in order.
 *
 *   _shape_<n> (id, ts, cpu, utid, f STRUCT(common, source_where, [raw,] v0, v1, ...))
 *
 * Each field is one column: an integer (`int`), an integer the print format
 * shows as 0x-hex text (`hex`: pointers, `0x%lx`; stored as its 64 bits and
 * read back by the `args` view as '0x' || lower(hex(v)), the same text), or
 * text: `str`, an id into that column's own dictionary, or `text`, the text
 * itself, for a field whose values rarely repeat (hashed pointers in the
 * kernel's text): a shape's `str` field whose dictionary is full gets a
 * second shape with `text` there. `raw` (text inputs only) is the printed
 * argument text. The `args` and `ftrace_event` views read these tables as
 * they read `_args` and `_ftrace_event` (model_store.ts), so readers see the
 * same rows.
 *
 * Why: `_args` stores one row per field. A kmem trace is ~75% untyped events
 * of 2-7 fields, ~4.5M `_args` rows per million events, and appending them
 * was most of its ingest (DuckDB 2.3-2.5 s per 1M events on one core); the
 * same values as one row per event in typed columns: ~0.4 s
 * (bench/README.md, "Twentieth session").
 *
 * Events whose fields do not fit a shape (a value neither an integer below
 * 2^63 nor text, more than MAX_SHAPES shapes, more than MAX_FIELDS fields)
 * keep the general form: an `_ftrace_event` row and `_args` rows
 * (args_rows.ts). Events without fields: an `_ftrace_event` row.
 *
 * Two threads write untyped rows (the builder, the field worker), each with
 * its own range of shape tables (shapeBase) and dictionaries; a shape is
 * declared by the first chunk of its table (ChunkData.shape), which the
 * store creates before appending it.
 */
import type { EventFields, FieldValue, ShapeRowColumns } from '../decode/decoded_event.ts';
import { latin1 } from '../decode/ftrace_text/fields/intern.ts';
import { ArgsRows, hasArgs, MAX_INTERNED, type StringRows } from './args_rows.ts';
import { ColumnChunk, SMALL_FIRST_CHUNK_ROWS, type ChunkData, type ColumnSpec } from './column_chunk.ts';
import { NEW_BUFFERS, type BufferSource } from './buffer_source.ts';
import {
  ARGS_TABLE,
  FLAGS_UNKNOWN,
  FTRACE_EVENT_TABLE,
  packCommon,
  PREEMPT_UNKNOWN,
  type ModelLayout,
} from './model_layout.ts';

export type ShapeKind = 'int' | 'hex' | 'str' | 'text';

/** One field of a shape: its name and how its column stores it. */
export interface ShapeField {
  key: string;
  kind: ShapeKind;
}

/** What the store needs to create a shape's table: plain data, it crosses threads with the first chunk. */
export interface ShapeDecl {
  /** The chunk destination (model_layout.ts SHAPE_TABLE_BASE + n), also the table's name: `_shape_<table - SHAPE_TABLE_BASE>`. */
  table: number;
  /** The event's name_id (the builder's numbering). */
  nameId: number;
  fields: ShapeField[];
  /** Storage columns: id, ts, cpu, utid, common, source_where, raw (text inputs), then per field `v<k>`. */
  columns: ColumnSpec[];
}

/** A shape as the store writes its views: its declaration and each text field's dictionary (by field index). */
export interface ShapeResult extends ShapeDecl {
  dicts: (string[] | null)[];
}

/** Chunk destinations from here on are shape tables (model_layout.ts keeps 0.. for the fixed tables). */
export const SHAPE_TABLE_BASE = 1 << 16;
/** Shape tables one writer may create; past them, events keep `_args` rows. Each holds a chunk buffer (~50-150 KB). */
export const MAX_SHAPES = 512;
/**
 * Events of a shape kept as `_ftrace_event` + `_args` rows before the shape
 * becomes a table (its next events are its table's rows). An open shape
 * table costs memory whatever its rows: a DuckDB appender and the row group
 * it fills (a block per column), and its chunk buffer here. Most event
 * names of a `trace-cmd record -e all` hold few events (there 136 of 382
 * names have under 64, 170 under 256: 8k of 3.9M events), so they stay
 * `_args` rows, which the views read as they read the shape tables; the
 * first K events of a busy shape cost `_args` rows too (~4.5 per event;
 * 359 shapes x 256 events there). Measured in bench/README.md, "Session of
 * 2026-11-29: many event kinds".
 */
export const SHAPE_TABLE_AFTER = 256;
/** Shapes of the field worker start here (the builder's at 0). */
export const SHAPE_BASE_FIELD_WORKER = 1 << 12;
/** Fields a shape may have. */
export const MAX_FIELDS = 64;
/** Strings one `str` column's dictionary holds at most (MAX_INTERNED in all of a writer's). */
export const MAX_FIELD_STRINGS = 1 << 16;

/** Leading columns of a shape table, before its fields (model_store.ts keeps the first 4 as plain columns). */
export const SHAPE_LEAD_COLUMNS: ColumnSpec[] = [
  { name: 'id', kind: 'i64' },
  { name: 'ts', kind: 'i64' },
  { name: 'cpu', kind: 'i32' },
  { name: 'utid', kind: 'i32' },
  { name: 'common', kind: 'i32' },
  { name: 'source_where', kind: 'i64' },
];
/** The printed argument text, after SHAPE_LEAD_COLUMNS in the shapes of text inputs. */
const RAW_COLUMN: ColumnSpec = { name: 'raw', kind: 'str' };
/** Columns before the fields in a shape of a binary input (no `raw`): ShapeRowColumns' field k is column SHAPE_LEAD + k. */
export const SHAPE_LEAD = SHAPE_LEAD_COLUMNS.length;
const COMMON = 4;
const WHERE = 5;
const RAW = 6;

const TWO_32 = 4294967296;
const KIND_INT = 0;
const KIND_HEX = 1;
const KIND_STR = 2;
/** Text stored as itself (never what kindOf() answers: a shape's `str` field turns into it). */
const KIND_TEXT = 3;
const KIND_NONE = -1;
const KIND_NAMES: ShapeKind[] = ['int', 'hex', 'str', 'text'];
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

/**
 * Text that is an integer's `0x%lx` form: `0x`, then 1 to 16 lowercase hex
 * digits without a leading zero (or just `0x0`), which '0x' || lower(hex(v))
 * gives back exactly.
 */
export function isCanonicalHex(s: string): boolean {
  const n = s.length;
  if (n < 3 || n > 18 || s.charCodeAt(0) !== 48 || s.charCodeAt(1) !== 120) return false;
  const first = s.charCodeAt(2);
  if (first === 48) return n === 3;
  for (let i = 2; i < n; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

function kindOf(v: FieldValue): number {
  if (typeof v === 'number') return Number.isInteger(v) ? KIND_INT : KIND_NONE;
  if (typeof v === 'string') return isCanonicalHex(v) ? KIND_HEX : KIND_STR;
  return v >= I64_MIN && v <= I64_MAX ? KIND_INT : KIND_NONE;
}

interface Shape {
  decl: ShapeDecl;
  /** The shape's signature (shapeOf), to find its variants. */
  sig: string;
  keys: string[];
  kinds: Int8Array;
  /** Storage column of each field's value. */
  cols: Int32Array;
  /** Whether any field is `str` (a dictionary may be full). */
  hasDict: boolean;
  chunk: ColumnChunk;
  /** Per field: its dictionary (text fields), else null. */
  dicts: (Map<string, number> | null)[];
  /** Per field: the last text written and its id (flags and symbols repeat run after run). */
  lastText: (string | null)[];
  lastId: Int32Array;
  /** Strings in its largest dictionary (ShapeRows.begin: room for one more row's). */
  maxDict: number;
  declared: boolean;
  /** Events still to keep as `_args` rows before this shape's rows go to its table (SHAPE_TABLE_AFTER). */
  untilTable: number;
}

export class UntypedRows {
  private readonly ftraceEvent: ColumnChunk;
  private readonly args: ArgsRows;
  private readonly shapes: Shape[] = [];
  private readonly bySignature = new Map<string, Shape>();
  /**
   * Per name_id, the shapes its events had, the last one's first: most
   * events of a name have one or two (a flags field printed as words, or as
   * 0x0 when no flag is set).
   */
  private readonly byName: (Shape[] | undefined)[] = [];
  /** Strings all this writer's shape dictionaries may still take (MAX_INTERNED in all). */
  private dictBudget: number;
  /** Text inputs: each shape row keeps the event's printed argument text (`raw`); see setBase(). */
  private withRaw = false;
  private lead: ColumnSpec[] = SHAPE_LEAD_COLUMNS;
  private baseHi = 0;
  private baseLo = 0;

  constructor(
    layout: ModelLayout,
    private readonly onChunk: (table: number, data: ChunkData) => void,
    /** This writer's first shape table (SHAPE_TABLE_BASE + 0 or + SHAPE_BASE_FIELD_WORKER). */
    private readonly shapeBase: number,
    /** The args dictionary's first sid (args_rows.ts SID_BASE_*). */
    sidBase: number,
    private readonly memory: BufferSource = NEW_BUFFERS,
    maxInterned = MAX_INTERNED,
    /** SHAPE_TABLE_AFTER, or another count (tests). */
    private readonly shapeTableAfter = SHAPE_TABLE_AFTER,
  ) {
    this.ftraceEvent = new ColumnChunk(layout.ftraceEvent, (d) => onChunk(FTRACE_EVENT_TABLE, d), memory);
    this.args = new ArgsRows(new ColumnChunk(layout.args, (d) => onChunk(ARGS_TABLE, d), memory), sidBase, maxInterned);
    this.dictBudget = maxInterned;
  }

  /**
   * The absolute ns that row timestamps are relative to (TraceHeader.tsBaseNs),
   * and whether the input is text (shape rows then keep `raw`); before the first row.
   */
  setBase(tsBaseNs: bigint, text: boolean): void {
    this.withRaw = text;
    this.lead = text ? [...SHAPE_LEAD_COLUMNS, RAW_COLUMN] : SHAPE_LEAD_COLUMNS;
    this.baseHi = Number(tsBaseNs >> 32n);
    this.baseLo = Number(tsBaseNs & 0xffffffffn);
  }

  /**
   * One untyped event (or one whose text did not parse: `fields` null):
   * a row of its shape's table, else `_ftrace_event` (+ `_args`) rows.
   */
  write(
    id: number,
    ts: number,
    cpu: number,
    utid: number,
    nameId: number,
    flags: number | null,
    preemptCount: number | null,
    where: number,
    raw: string | null,
    fields: EventFields | null,
  ): void {
    if (
      fields !== null &&
      this.writeShaped(id, ts, cpu, utid, nameId, packCommon(flags, preemptCount), where, raw, fields)
    )
      return;
    this.writeUnshaped(id, ts, cpu, utid, nameId, flags, preemptCount, where, raw, fields);
  }

  /**
   * write() of an event whose flags and preempt count are packed
   * (packCommon: the field worker's batches carry them so), without
   * unpacking them into an array per event.
   */
  writePacked(
    id: number,
    ts: number,
    cpu: number,
    utid: number,
    nameId: number,
    common: number | null,
    where: number,
    raw: string | null,
    fields: EventFields | null,
  ): void {
    if (fields !== null && this.writeShaped(id, ts, cpu, utid, nameId, common, where, raw, fields)) return;
    const flags = common === null || (common & FLAGS_UNKNOWN) !== 0 ? null : common & 255;
    const preemptCount = common === null || (common & PREEMPT_UNKNOWN) !== 0 ? null : (common >> 8) & 255;
    this.writeUnshaped(id, ts, cpu, utid, nameId, flags, preemptCount, where, raw, fields);
  }

  /** A row of the fields' shape's table; false when they fit no shape. */
  private writeShaped(
    id: number,
    ts: number,
    cpu: number,
    utid: number,
    nameId: number,
    common: number | null,
    where: number,
    raw: string | null,
    fields: EventFields,
  ): boolean {
    let shape = this.shapeFor(nameId, fields);
    // A text its dictionary cannot take: the shape with that field as text (repeatedly, for several).
    for (let k: number; shape !== null && shape.hasDict && (k = this.fullDictField(shape, fields)) >= 0;)
      shape = this.textVariant(shape, k);
    if (shape === null) return false;
    if (shape.untilTable > 0) {
      shape.untilTable--;
      return false;
    }
    this.writeShapeRow(shape, id, ts, cpu, utid, common, where, raw, fields);
    return true;
  }

  /** `_ftrace_event` (+ `_args`) rows of an event that has no shape row. */
  private writeUnshaped(
    id: number,
    ts: number,
    cpu: number,
    utid: number,
    nameId: number,
    flags: number | null,
    preemptCount: number | null,
    where: number,
    raw: string | null,
    fields: EventFields | null,
  ): void {
    const withArgs = hasArgs(fields);
    const fe = this.ftraceEvent;
    fe.startRow();
    fe.setInt(0, id);
    this.writeTs(fe.arrays[1] as Int32Array, fe.rows, ts);
    fe.setInt(2, cpu);
    fe.setInt(3, utid);
    fe.setInt(4, nameId);
    fe.set(5, flags);
    fe.set(6, preemptCount);
    fe.set(7, withArgs ? id : null);
    fe.set(8, raw);
    fe.setInt(9, where);
    fe.endRow();
    if (withArgs) this.args.write(id, fields!);
  }

  /** Hands over every partial chunk. */
  flush(): void {
    this.ftraceEvent.flush();
    this.args.flush();
    for (const s of this.shapes) this.flushShape(s);
  }

  /** The args dictionary as `_string` rows. */
  stringRows(): StringRows {
    return this.args.stringRows();
  }

  /** The shapes written, with their dictionaries (call after flush()). */
  shapeResults(): ShapeResult[] {
    return this.shapes
      .filter((s) => s.declared)
      .map((s) => ({ ...s.decl, dicts: s.dicts.map((d) => (d === null ? null : [...d.keys()])) }));
  }

  /** The shape of these fields: one of the name's recent ones, else by signature (created on first sight); null when they fit none. */
  private shapeFor(nameId: number, fields: EventFields): Shape | null {
    let list = this.byName[nameId];
    if (list !== undefined) {
      if (fits(list[0]!, fields)) return list[0]!;
      for (let i = 1; i < list.length; i++) {
        const s = list[i]!;
        if (fits(s, fields)) {
          list[i] = list[0]!;
          list[0] = s;
          return s;
        }
      }
    }
    const s = this.shapeOf(nameId, fields);
    if (s === null) return null;
    if (list === undefined) this.byName[nameId] = list = [];
    list.unshift(s);
    if (list.length > 4) list.pop();
    return s;
  }

  /** The shape of these fields (created on first sight), or null when they fit none. */
  private shapeOf(nameId: number, fields: EventFields): Shape | null {
    // Most misses are events with a value that fits no shape (a u64 of 2^63 or
    // more: block_dirty_buffer's sector of an unmapped buffer, 95% of them in
    // build_search.v7): found without the keys, kinds and signature below,
    // which were ~150 MB of the field worker's allocations there.
    let n = 0;
    for (const key in fields) {
      if (n === MAX_FIELDS || kindOf(fields[key]!) === KIND_NONE) return null;
      n++;
    }
    if (n === 0) return null;
    const keys: string[] = [];
    const kinds: number[] = [];
    let sig = `${nameId}`;
    for (const key in fields) {
      const kind = kindOf(fields[key]!);
      if (kind === KIND_NONE || keys.length === MAX_FIELDS) return null;
      keys.push(key);
      kinds.push(kind);
      sig += `\u0000${kind}${key}`;
    }
    if (keys.length === 0) return null;
    return this.bySignature.get(sig) ?? this.newShape(sig, nameId, keys, kinds);
  }

  /** A new shape table (null past MAX_SHAPES). */
  private newShape(sig: string, nameId: number, keys: string[], kinds: number[]): Shape | null {
    if (this.shapes.length >= MAX_SHAPES) return null;
    const table = this.shapeBase + this.shapes.length;
    const columns = [...this.lead];
    const cols = new Int32Array(keys.length);
    kinds.forEach((kind, k) => {
      cols[k] = columns.length;
      columns.push({ name: `v${k}`, kind: kind === KIND_STR ? 'i32' : kind === KIND_TEXT ? 'str' : 'i64' });
    });
    const decl: ShapeDecl = {
      table,
      nameId,
      fields: keys.map((key, k) => ({ key, kind: KIND_NAMES[kinds[k]!]! })),
      columns,
    };
    const shape: Shape = {
      decl,
      sig,
      keys,
      kinds: Int8Array.from(kinds),
      cols,
      hasDict: kinds.includes(KIND_STR),
      chunk: new ColumnChunk(columns, (d) => this.shapeChunk(shape, d), this.memory, SMALL_FIRST_CHUNK_ROWS),
      dicts: kinds.map((k) => (k === KIND_STR ? new Map<string, number>() : null)),
      lastText: kinds.map(() => null),
      lastId: new Int32Array(keys.length),
      maxDict: 0,
      declared: false,
      untilTable: this.shapeTableAfter,
    };
    this.shapes.push(shape);
    this.bySignature.set(sig, shape);
    return shape;
  }

  /**
   * The shape's variant with field k stored as text (its dictionary is
   * full): found or created, and put first among the name's shapes so the
   * name's next events try it first. Null past MAX_SHAPES.
   */
  private textVariant(s: Shape, k: number): Shape | null {
    const kinds = Array.from(s.kinds);
    kinds[k] = KIND_TEXT;
    const sig = `${s.sig}\u0001${kinds.join('')}`;
    const v = this.bySignature.get(sig) ?? this.newShape(sig, s.decl.nameId, s.keys, kinds);
    if (v === null) return null;
    const list = this.byName[s.decl.nameId]!;
    const at = list.indexOf(v);
    if (at > 0) list.splice(at, 1);
    if (at !== 0) list.unshift(v);
    return v;
  }

  /** Field k of a `str` field whose text the column's dictionary neither holds nor can take, else -1. */
  private fullDictField(s: Shape, fields: EventFields): number {
    const kinds = s.kinds;
    let k = 0;
    for (const key in fields) {
      if (kinds[k] === KIND_STR) {
        const v = fields[key] as string;
        if (s.lastText[k] !== v) {
          const dict = s.dicts[k]!;
          if ((dict.size >= MAX_FIELD_STRINGS || this.dictBudget <= 0) && !dict.has(v)) return k;
        }
      }
      k++;
    }
    return -1;
  }

  private shapeChunk(shape: Shape, data: ChunkData): void {
    if (!shape.declared) {
      // The first chunk declares the table: the store creates it before appending.
      data.shape = shape.decl;
      shape.declared = true;
    }
    this.onChunk(shape.decl.table, data);
  }

  private flushShape(s: Shape): void {
    s.chunk.flush();
  }

  private writeShapeRow(
    s: Shape,
    id: number,
    ts: number,
    cpu: number,
    utid: number,
    common: number | null,
    where: number,
    raw: string | null,
    fields: EventFields,
  ): void {
    this.writeLead(s.chunk, id, ts, cpu, utid, common, where, raw);
    const c = s.chunk;
    const A = c.arrays;
    const r = c.rows;
    const kinds = s.kinds;
    const cols = s.cols;
    let k = 0;
    for (const key in fields) {
      const v = fields[key]!;
      const col = cols[k]!;
      switch (kinds[k]) {
        case KIND_INT:
          if (typeof v === 'number') {
            const a = A[col] as Int32Array;
            const hi = Math.floor(v / TWO_32);
            a[2 * r] = v - hi * TWO_32;
            a[2 * r + 1] = hi;
          } else c.set(col, v);
          break;
        case KIND_HEX:
          writeHex(A[col] as Int32Array, r, v as string);
          break;
        case KIND_STR:
          this.writeText(s, k, col, c, v as string);
          break;
        default:
          c.set(col, v as string);
      }
      k++;
    }
    c.endRow();
  }

  /**
   * Rows of one event name written by a compiled shape reader
   * (event_decoder.ts CompiledEvent.shaped, binary inputs only): the rows
   * write() would write from the same fields, in the same shapes.
   */
  shapeRows(nameId: number, keys: string[], fixedKinds: Int8Array): ShapeRows {
    return new ShapeRows(this, nameId, keys, fixedKinds);
  }

  /** The shape of these keys and kinds (created on first sight), as shapeOf() finds it; null past MAX_SHAPES. */
  shapeWithKinds(nameId: number, keys: string[], kinds: number[]): Shape | null {
    let sig = `${nameId}`;
    for (let k = 0; k < keys.length; k++) sig += `\u0000${kinds[k]}${keys[k]}`;
    return this.bySignature.get(sig) ?? this.newShape(sig, nameId, keys, kinds);
  }

  /**
   * Whether every dictionary of the shape takes one more row's strings
   * whatever they are: else the row takes write(), which may turn to a
   * text variant of the shape. Variants are made only when a dictionary
   * is full, so a shape that passes has none that write() would prefer.
   */
  dictRoom(s: Shape): boolean {
    const n = s.keys.length;
    return this.dictBudget >= n && s.maxDict + n <= MAX_FIELD_STRINGS;
  }

  /** Starts a shape row and writes its leading columns (id, ts, cpu, utid, common, source_where[, raw]). */
  writeLead(
    c: ColumnChunk,
    id: number,
    ts: number,
    cpu: number,
    utid: number,
    common: number | null,
    where: number,
    raw: string | null,
  ): void {
    c.startRow();
    const A = c.arrays;
    const r = c.rows;
    const ids = A[0] as Int32Array;
    const idHi = Math.floor(id / TWO_32);
    ids[2 * r] = id - idHi * TWO_32;
    ids[2 * r + 1] = idHi;
    this.writeTs(A[1] as Int32Array, r, ts);
    A[2]![r] = cpu;
    A[3]![r] = utid;
    if (common === null) c.setNull(COMMON);
    else A[COMMON]![r] = common;
    const w = A[WHERE] as Int32Array;
    const whereHi = Math.floor(where / TWO_32);
    w[2 * r] = where - whereHi * TWO_32;
    w[2 * r + 1] = whereHi;
    if (this.withRaw) {
      if (raw === null) c.setNull(RAW);
      else c.set(RAW, raw);
    }
  }

  /** A `str` field's text as its dictionary id (the dictionary can take it: fullDictField, dictRoom). */
  writeText(s: Shape, k: number, col: number, c: ColumnChunk, v: string): void {
    if (s.lastText[k] !== v) {
      const dict = s.dicts[k]!;
      let id = dict.get(v);
      if (id === undefined) {
        id = dict.size;
        dict.set(v, id);
        this.dictBudget--;
        if (dict.size > s.maxDict) s.maxDict = dict.size;
      }
      s.lastText[k] = v;
      s.lastId[k] = id;
    }
    c.arrays[col]![c.rows] = s.lastId[k]!;
  }

  private writeTs(ints: Int32Array, row: number, rel: number): void {
    const relHi = Math.floor(rel / TWO_32);
    // lo < 2^33: the Int32Array store keeps its low 32 bits and hi takes the
    // carry, without a branch. The branch was first taken when the trace's
    // times crossed a 2^32 ns boundary, after V8 had optimized this and its
    // callers without it, and V8 threw that code away (`node --trace-deopt`).
    const lo = this.baseLo + (rel - relHi * TWO_32);
    ints[2 * row] = lo;
    ints[2 * row + 1] = this.baseHi + relHi + Math.floor(lo / TWO_32);
  }
}

/** Whether `fields` has exactly the shape's keys, in order, each of its kind. */
function fits(s: Shape, fields: EventFields): boolean {
  const keys = s.keys;
  const kinds = s.kinds;
  let k = 0;
  for (const key in fields) {
    if (k === keys.length || key !== keys[k]) return false;
    const kind = kindOf(fields[key]!);
    if (kind !== kinds[k] && !(kind === KIND_STR && kinds[k] === KIND_TEXT)) return false;
    k++;
  }
  return k === keys.length;
}

/**
 * A canonical `0x...` text's 64 bits as lo/hi words: the digits read one
 * by one (lowercase, isCanonicalHex), not parseInt() of two slices.
 */
function writeHex(a: Int32Array, r: number, s: string): void {
  const n = s.length;
  const split = n > 10 ? n - 8 : 2;
  let hi = 0;
  for (let i = 2; i < split; i++) hi = (hi << 4) | hexDigit(s.charCodeAt(i));
  let lo = 0;
  for (let i = split; i < n; i++) lo = (lo << 4) | hexDigit(s.charCodeAt(i));
  a[2 * r] = lo;
  a[2 * r + 1] = hi;
}

/** A lowercase hex digit's value. */
function hexDigit(c: number): number {
  return c <= 57 ? c - 48 : c - 87;
}

/**
 * ShapeRowColumns of one event name (UntypedRows.shapeRows): the record's
 * leading values are set before its reader runs; begin() finds the shape of
 * the kinds the reader found (the last one's, most often) and checks its
 * dictionaries' room.
 */
export class ShapeRows implements ShapeRowColumns {
  id = 0;
  ts = 0;
  cpu = 0;
  utid = 0;
  common: number | null = 0;
  where = 0;
  /** Text inputs: the row's `raw` (null: its fields print it back, kept_raw.ts); set before begin(). */
  raw: string | null = null;
  private shape: Shape | null = null;
  private lastCode = -1;
  private lastShape: Shape | null = null;
  private readonly byCode = new Map<number, Shape | null>();
  /**
   * Whether the last begin() answered null because the shape is not a table
   * yet (SHAPE_TABLE_AFTER): write() takes the row, and it is no sign that
   * the name's values fit no shape (the text path's give-up count).
   */
  deferred = false;
  /** Field index of each variable-kind field, in order. */
  private readonly variable: number[] = [];

  constructor(
    private readonly rows: UntypedRows,
    private readonly nameId: number,
    private readonly keys: string[],
    /** Per field: its kind when the format fixes it (KIND_INT, KIND_HEX), else -1. */
    private readonly fixedKinds: Int8Array,
  ) {
    fixedKinds.forEach((kind, k) => {
      if (kind < 0) this.variable.push(k);
    });
  }

  kindOf(v: FieldValue): number {
    return kindOf(v);
  }

  begin(code: number): ColumnChunk | null {
    let s: Shape | null;
    if (code === this.lastCode) s = this.lastShape;
    else {
      s = this.byCode.get(code) ?? this.resolve(code);
      this.lastCode = code;
      this.lastShape = s;
    }
    this.deferred = false;
    if (s === null || (s.hasDict && !this.rows.dictRoom(s))) return null;
    if (s.untilTable > 0) {
      // write() counts the event down (this shape's, as shapeOf() finds the same one).
      this.deferred = true;
      return null;
    }
    this.shape = s;
    this.rows.writeLead(s.chunk, this.id, this.ts, this.cpu, this.utid, this.common, this.where, this.raw);
    return s.chunk;
  }

  /** Field k's storage column in the row begun (SHAPE_LEAD + k, or one more after a text input's `raw`). */
  column(k: number): number {
    return this.shape!.cols[k]!;
  }

  /**
   * put() of a `str` value given as its ASCII bytes b[s, e): no string when
   * it is the field's last text (runs of flags repeat), else a fresh one,
   * as a slice of the text would be (interning values that rarely repeat,
   * a pointer or an offset printed as text, cost more than it saved).
   */
  putTextBytes(column: number, k: number, b: Uint8Array, s: number, e: number): void {
    const shape = this.shape!;
    const c = shape.chunk;
    const last = shape.lastText[k];
    if (last !== null && last !== undefined && last.length === e - s) {
      let i = 0;
      while (i < last.length && last.charCodeAt(i) === b[s + i]) i++;
      if (i === last.length) {
        c.arrays[column]![c.rows] = shape.lastId[k]!;
        return;
      }
    }
    this.rows.writeText(shape, k, column, c, latin1(b, s, e));
  }

  /** put() of a 0x-hex value given as its ASCII bytes b[s, e) (canonical: isCanonicalHex of its text). */
  putHexBytes(column: number, b: Uint8Array, s: number, e: number): void {
    const c = this.shape!.chunk;
    const n = e - s;
    const split = n > 10 ? e - 8 : s + 2;
    let hi = 0;
    for (let i = s + 2; i < split; i++) hi = (hi << 4) | hexDigit(b[i]!);
    let lo = 0;
    for (let i = split; i < e; i++) lo = (lo << 4) | hexDigit(b[i]!);
    const a = c.arrays[column] as Int32Array;
    const r = c.rows;
    a[2 * r] = lo;
    a[2 * r + 1] = hi;
  }

  put(column: number, k: number, kind: number, v: FieldValue): void {
    const c = this.shape!.chunk;
    switch (kind) {
      case KIND_INT:
        if (typeof v === 'number') {
          const a = c.arrays[column] as Int32Array;
          const r = c.rows;
          const hi = Math.floor(v / TWO_32);
          a[2 * r] = v - hi * TWO_32;
          a[2 * r + 1] = hi;
        } else c.set(column, v);
        break;
      case KIND_HEX:
        writeHex(c.arrays[column] as Int32Array, c.rows, v as string);
        break;
      default:
        this.rows.writeText(this.shape!, k, column, c, v as string);
    }
  }

  end(): void {
    this.shape!.chunk.endRow();
  }

  private resolve(code: number): Shape | null {
    const kinds = Array.from(this.fixedKinds, (k) => k as number);
    let rest = code;
    for (const k of this.variable) {
      kinds[k] = rest % 3;
      rest = Math.floor(rest / 3);
    }
    const s = this.rows.shapeWithKinds(this.nameId, this.keys, kinds);
    this.byCode.set(code, s);
    return s;
  }
}
