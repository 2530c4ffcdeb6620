/**
 * Rows of the typed event tables (`_stage_<table>`, see model_store.ts),
 * written column by column into chunks: what one event's row holds (id, ts,
 * cpu, utid, event name, its fields, common flags, source position) and the
 * per-column string dictionaries of VARCHAR columns.
 *
 * Two writers use it: the ModelBuilder (events framed and decoded on one
 * thread) and the field worker (ingest/field_worker.ts: records framed on
 * the main thread, their fields decoded there). Each table is written by
 * one of them only, so each dictionary has one owner.
 */
import type { DirectColumnKind, DirectRowColumns, EventFields, FieldValue } from '../decode/decoded_event.ts';
import { ColumnChunk, type ChunkData } from './column_chunk.ts';
import { NEW_BUFFERS, type BufferSource } from './buffer_source.ts';
import { FIRST_TYPED_TABLE, packCommon, type ModelLayout, type TypedTableLayout } from './model_layout.ts';

const TWO_32 = 4294967296;

type FieldWriter = (c: ColumnChunk, fields: EventFields, internIn: (dict: number, s: string) => number) => void;

/** One typed table: its layout, the chunk being filled, and how fields fill it. */
export interface TypedTarget {
  layout: TypedTableLayout;
  chunk: ColumnChunk;
  /** Writes the table's field columns of the current row from a fields object. */
  writeFields: FieldWriter;
}

export class TypedRows {
  private baseHi = 0;
  private baseLo = 0;
  private readonly targets = new Map<string, TypedTarget>();
  private readonly dicts: Map<string, number>[];

  constructor(
    layout: ModelLayout,
    onChunk: (table: number, data: ChunkData) => void,
    memory: BufferSource = NEW_BUFFERS,
  ) {
    this.dicts = Array.from({ length: layout.dictCount }, () => new Map<string, number>());
    layout.typed.forEach((t, i) => {
      this.targets.set(t.table, {
        layout: t,
        chunk: new ColumnChunk(t.columns, (d) => onChunk(FIRST_TYPED_TABLE + i, d), memory),
        writeFields: compileFieldWriter(t),
      });
    });
  }

  /** The absolute ns that row timestamps are relative to (TraceHeader.tsBaseNs). */
  setBase(tsBaseNs: bigint): void {
    this.baseHi = Number(tsBaseNs >> 32n);
    this.baseLo = Number(tsBaseNs & 0xffffffffn);
  }

  target(table: string): TypedTarget | undefined {
    return this.targets.get(table);
  }

  /** The typed tables, in layout order. */
  tables(): string[] {
    return [...this.targets.keys()];
  }

  /** Dictionary id of an event name in the table's `event` column, -1 if it has none. */
  eventValue(t: TypedTarget, name: string): number {
    return t.layout.eventColumn >= 0 ? this.internIn(t.layout.eventDict, name) : -1;
  }

  /** Starts a row: id, ts, cpu, utid and event columns. */
  head(t: TypedTarget, id: number, ts: number, cpu: number, utid: number, eventValue: number): void {
    // Schema convention (checked by the store): id, ts, cpu, utid come first.
    // Written into the arrays directly: this runs for millions of rows.
    const c = t.chunk;
    c.startRow();
    const A = c.arrays;
    const r = c.rows;
    const ids = A[0]!;
    const idHi = Math.floor(id / TWO_32);
    ids[2 * r] = id - idHi * TWO_32;
    ids[2 * r + 1] = idHi;
    this.writeTsAt(A[1] as Int32Array, r, ts);
    A[2]![r] = cpu;
    A[3]![r] = utid;
    if (eventValue >= 0) A[t.layout.eventColumn]![r] = eventValue;
  }

  /** The row's field columns from a fields object (columns the event lacks are NULL). */
  fields(t: TypedTarget, fields: EventFields): void {
    t.writeFields(t.chunk, fields, this.internInBound);
  }

  /** The storage-only columns after the documented ones (model_store.ts STORAGE_EXTRA_COLUMNS); ends the row. */
  tail(t: TypedTarget, common: number | null, where: number): void {
    const c = t.chunk;
    const width = t.layout.width;
    const A = c.arrays;
    const r = c.rows;
    if (common === null) c.setNull(width);
    else A[width]![r] = common;
    const w = A[width + 1]!;
    const whereHi = Math.floor(where / TWO_32);
    w[2 * r] = where - whereHi * TWO_32;
    w[2 * r + 1] = whereHi;
    c.endRow();
  }

  readonly internInBound = (dict: number, s: string): number => this.internIn(dict, s);

  /** Id of a string in one typed column's dictionary (ids in order of first appearance). */
  internIn(dict: number, s: string): number {
    const map = this.dicts[dict];
    let id = map.get(s);
    if (id === undefined) {
      id = map.size;
      map.set(s, id);
    }
    return id;
  }

  /** Hands over every partial chunk. */
  flush(): void {
    for (const t of this.targets.values()) t.chunk.flush();
  }

  /** The dictionaries: dicts[dict][id] = string. */
  dictLists(): string[][] {
    return this.dicts.map((m) => [...m.keys()]);
  }

  /** Writes absolute ts = base + rel into a BIGINT column, without bigint: rel is an exact number < 2^53. */
  writeTs(chunk: ColumnChunk, col: number, rel: number): void {
    this.writeTsAt(chunk.arrays[col] as Int32Array, chunk.rows, rel);
  }

  private writeTsAt(ints: Int32Array, row: number, rel: number): void {
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

/** Entries of each text column's key cache (see keyed()); the slot is the top 8 bits of a 32-bit hash. */
const KEY_SLOTS = 256;

/**
 * Rows of one event name in its typed table, written field by field by a
 * binary decoder's compiled reader (DirectRowColumns, decoded_event.ts), or
 * from a fields object. Start each row with startRow(), end it with end().
 */
export class TableRowWriter implements DirectRowColumns {
  readonly fields: { names: string[]; column: number; kind: DirectColumnKind }[];
  arrays: (Int32Array | Float64Array)[] = [];
  row = 0;
  private readonly chunk: ColumnChunk;
  /** Dictionary per column index, -1 for numeric columns. */
  private readonly dictOf: Int32Array;
  /** Per dictionary column: the last string written and its id. */
  private readonly lastString: (string | null)[];
  private readonly lastId: Int32Array;
  /**
   * Per text column, a direct-mapped cache from the integer a text was made
   * from (flag bits, symbol or pointer address; lo/hi halves) to its
   * dictionary id: the text is built and looked up only on a miss.
   */
  private readonly keyLo: Float64Array;
  private readonly keyHi: Float64Array;
  private readonly keyId: Int32Array;
  /** Per column: the slot and key of the last missed keyed() call, for text(). */
  private readonly missSlot: Int32Array;
  private readonly missLo: Float64Array;
  private readonly missHi: Float64Array;
  private eventValue = -2;
  private common: number | null = 0;
  private where = 0;

  constructor(
    private readonly rows: TypedRows,
    readonly target: TypedTarget,
    private readonly name: string,
  ) {
    const layout = target.layout;
    this.chunk = target.chunk;
    const n = layout.columns.length;
    this.fields = layout.fieldColumns.map((c) => ({
      names: [c.name, ...c.aliases],
      column: c.index,
      kind: c.dict >= 0 ? 'text' : (layout.columns[c.index]!.kind as 'i32' | 'i64' | 'f64'),
    }));
    this.dictOf = new Int32Array(n).fill(-1);
    for (const c of layout.fieldColumns) this.dictOf[c.index] = c.dict;
    this.lastString = new Array<string | null>(n).fill(null);
    this.lastId = new Int32Array(n);
    this.keyLo = new Float64Array(n * KEY_SLOTS).fill(NaN);
    this.keyHi = new Float64Array(n * KEY_SLOTS).fill(NaN);
    this.keyId = new Int32Array(n * KEY_SLOTS);
    this.missSlot = new Int32Array(n);
    this.missLo = new Float64Array(n);
    this.missHi = new Float64Array(n);
  }

  /** Starts a row; `common` is packCommon(flags, preemptCount). */
  startRow(id: number, ts: number, cpu: number, utid: number, common: number | null, where: number): void {
    // Interned on the first row, so dictionary ids follow first appearance.
    if (this.eventValue === -2) this.eventValue = this.rows.eventValue(this.target, this.name);
    this.common = common;
    this.where = where;
    this.rows.head(this.target, id, ts, cpu, utid, this.eventValue);
    // After head(), which started the row: its chunk's buffer may be new.
    this.arrays = this.chunk.arrays;
    this.row = this.chunk.rows;
  }

  keyed(column: number, lo: number, hi: number): boolean {
    // Multiplicative hash (top bits): pointers and symbols share their high
    // word and are aligned, so their low bits alone would crowd a few slots.
    const slot = column * KEY_SLOTS + (Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> 24);
    if (this.keyLo[slot] === lo && this.keyHi[slot] === hi) {
      this.arrays[column]![this.row] = this.keyId[slot]!;
      return true;
    }
    this.missSlot[column] = slot;
    this.missLo[column] = lo;
    this.missHi[column] = hi;
    return false;
  }

  text(column: number, v: FieldValue): void {
    const id = this.rows.internIn(this.dictOf[column]!, typeof v === 'string' ? v : String(v));
    const slot = this.missSlot[column]!;
    this.keyLo[slot] = this.missLo[column]!;
    this.keyHi[slot] = this.missHi[column]!;
    this.keyId[slot] = id;
    this.arrays[column]![this.row] = id;
  }

  /** storeFieldValue(), with a last-value cache for dictionary strings. */
  value(column: number, v: FieldValue): void {
    const dict = this.dictOf[column];
    if (dict < 0) {
      storeFieldValue(this.chunk, column, dict, v, this.rows.internInBound);
      return;
    }
    // Flag and enum strings repeat run after run: skip the dictionary lookup then.
    const str = typeof v === 'string' ? v : String(v);
    if (this.lastString[column] !== str) {
      this.lastString[column] = str;
      this.lastId[column] = this.rows.internIn(dict, str);
    }
    this.chunk.setInt(column, this.lastId[column]);
  }

  /** The text value() wrote last into a dictionary column (the current row's, if it wrote one), else null. */
  protected lastText(column: number): string | null {
    return this.lastString[column] ?? null;
  }

  absent(column: number): void {
    this.chunk.setNull(column);
  }

  /** All field columns of the current row from a fields object (short records, text). */
  allFields(fields: EventFields): void {
    this.rows.fields(this.target, fields);
  }

  end(): void {
    this.rows.tail(this.target, this.common, this.where);
  }
}

/** packCommon() for the trace.dat path, where both bytes are always known. */
export function commonOf(flags: number, preemptCount: number): number {
  return packCommon(flags, preemptCount)!;
}

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
  const make = new Function(
    'store',
    `return function writeFields_${layout.table}(c, f, internIn) {\n${lines.join('\n')}\n};`,
  );
  return make(storeFieldValue) as FieldWriter;
}

/**
 * How a field value is stored in a typed column, whichever path it comes
 * by (compileFieldWriter, TableRowWriter): strings of VARCHAR columns by
 * dictionary id, numbers as they are, integers printed as text parsed.
 */
function storeFieldValue(
  c: ColumnChunk,
  column: number,
  dict: number,
  v: FieldValue,
  internIn: (dict: number, s: string) => number,
): void {
  if (dict >= 0) c.setInt(column, internIn(dict, typeof v === 'string' ? v : String(v)));
  else if (typeof v === 'number') c.setNumber(column, v);
  else if (typeof v === 'string') c.set(column, parseIntegerText(v));
  else c.set(column, v);
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
