/**
 * Rows of one table, built column by column in plain typed arrays.
 *
 * Pure JS (no DuckDB), so it can be filled on any thread and handed to the
 * thread that owns DuckDB as a transferable buffer; see
 * column_appender.ts for the native half.
 *
 * Why columns of typed arrays: DuckDB's row appender or DuckDBVector.setItem
 * cost a native call or a bigint per value, which caps ingest near 1M rows/s.
 * Here a full chunk is copied to DuckDB with one native call per column, and
 * 64-bit integers are written as two 32-bit halves, so no bigint is created
 * per value. Strings still cost one native call each when appended, so
 * high-volume strings are interned by the caller (model_builder.ts).
 */

import { NEW_BUFFERS, type BufferSource } from './buffer_source.ts';
import type { ShapeDecl } from './untyped_rows.ts';

export type ColumnKind = 'i32' | 'i64' | 'f64' | 'str' | 'bool';

export interface ColumnSpec {
  name: string;
  kind: ColumnKind;
}

/** DuckDB's vector size: one chunk is one native append, of at most this many rows. */
export const CHUNK_ROWS = 2048;
/**
 * The first chunk's rows for a table that starts small (ColumnChunk's
 * `firstRows`); each next chunk doubles, up to CHUNK_ROWS. A multiple of 64
 * (validity masks are copied in 64-bit words).
 */
export const SMALL_FIRST_CHUNK_ROWS = 128;
const TWO_32 = 4294967296;

/**
 * A finished chunk: what crosses threads. The numeric columns' values and
 * validity masks share one transferable ArrayBuffer (one allocation per
 * chunk, not two per column: allocating ~40 small buffers per chunk cost
 * ~0.7 s of a 10M-event ingest); strings are cloned.
 */
export interface ChunkData {
  rows: number;
  /** Set on the first chunk of a shape table (untyped_rows.ts): the store creates the table before appending it. */
  shape?: ShapeDecl;
  buffer: ArrayBuffer;
  columns: {
    kind: ColumnKind;
    /**
     * Where the column's values start in `buffer` (i32: 4 bytes per row;
     * i64: 8, as lo, hi int32; f64: 8; bool: 1), -1 for str.
     */
    dataOffset: number;
    /** str: the values, null where NULL; or null when every value is NULL. Else null. */
    strings: (string | null)[] | null;
    /** Where its DuckDB validity mask (bit set = valid) is in `buffer`, or -1 when no value is NULL. */
    validityOffset: number;
  }[];
}

/**
 * Every buffer has the same shape (all fields present) so the hot setters
 * stay monomorphic: V8 slows down on a field that is sometimes an Int32Array
 * and sometimes a Float64Array.
 */
interface ColumnBuffer {
  kind: ColumnKind;
  is64: boolean;
  /** i32: one int per row; i64: lo/hi int pair per row; else empty. */
  ints: Int32Array;
  /** f64 only, else empty. */
  floats: Float64Array;
  /** bool only (one byte per row), else empty. */
  bytes: Uint8Array;
  /** str only, else empty. */
  strings: (string | null)[];
  /** str only: a string was set in this chunk (else the column crosses threads as null). */
  anyString: boolean;
  /** DuckDB validity mask: bit set = valid, 64-bit words, little endian. */
  validity: Uint32Array;
  hasNull: boolean;
  /** Byte offsets of the values and the validity mask in the chunk's buffer. */
  dataOffset: number;
  validityOffset: number;
}

/** Bytes per row of a column's values in the chunk buffer. */
function bytesPerRow(kind: ColumnKind): number {
  return kind === 'i32' ? 4 : kind === 'i64' || kind === 'f64' ? 8 : kind === 'bool' ? 1 : 0;
}

/** A bigint's two 32-bit halves: BIG_WORD[0] = v, then BIG_HALVES[LO_HALF] and BIG_HALVES[1 - LO_HALF]. */
const BIG_WORD = new BigInt64Array(1);
const BIG_HALVES = new Int32Array(BIG_WORD.buffer);
/** Which half holds the low 32 bits (the platform's byte order). */
const LO_HALF = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;

const EMPTY_INTS = new Int32Array(0);
const EMPTY_FLOATS = new Float64Array(0);
const EMPTY_BYTES = new Uint8Array(0);

/** What a chunk holds between a flush and its next row: no buffer, so a write without startRow() throws. */
const NO_BUFFER = new ArrayBuffer(0);

/**
 * Where a chunk reports the buffer it holds (open_chunk_budget.ts): a
 * BufferSource that also bounds the bytes of all its chunks' buffers.
 */
export interface ChunkBudget extends BufferSource {
  /** `chunk` is about to take a buffer of `bytes`: other chunks may be flushed first, to make room. */
  opening(chunk: ColumnChunk, bytes: number): void;
  /** `chunk` handed over (or dropped) its buffer of `bytes`. */
  closed(chunk: ColumnChunk, bytes: number): void;
}

function isChunkBudget(memory: BufferSource): memory is ChunkBudget {
  return 'opening' in memory;
}

export class ColumnChunk {
  private buffers: ColumnBuffer[] = [];
  /**
   * The current chunk's value arrays by column, for code that writes rows
   * straight into them (typed_rows.ts): i32 and i64 columns an Int32Array
   * (i64: low 32 bits at 2 * row, high 32 bits at 2 * row + 1), f64 a
   * Float64Array, others empty. Replaced at each row that takes a new
   * buffer (startRow()), empty between a flush and that row.
   */
  arrays: (Int32Array | Float64Array)[] = [];
  private buffer = NO_BUFFER;
  /** A str column's array handed over as null at the last flush (it holds only nulls), by column: the next buffer's. */
  private spareStrings: ((string | null)[] | null)[] = [];
  /** Rows filled so far in the current chunk. */
  rows = 0;
  /** Between startRow() and endRow(): the row is not complete, so a budget must not flush it. */
  inRow = false;
  /** Rows the current chunk holds: firstRows, doubled at each flush up to CHUNK_ROWS. */
  private capacity: number;
  /** Rows ever written (all chunks). */
  count = 0;
  private readonly budget: ChunkBudget | null;

  /**
   * Called with each full chunk (and the last partial one on flush()).
   * `firstRows`: the first chunk's rows (a power of two, >= 64), for a
   * table that may stay small: a trace can have hundreds of tables (event
   * kinds, field shapes), each holding a chunk while it fills, and most of
   * them see few events (`trace-cmd record -e all`: 382 names, the field
   * worker's chunks 78 MB at 2048 rows each).
   * The buffer is taken at the first row of each chunk (startRow()), not at
   * construction or flush: a table that gets no row (most typed tables of
   * a thread, any table after the last flush) holds none; on a `-e all`
   * trace.dat, 229 of the field worker's 412 tables held an empty 2048-row
   * buffer (4.6 MB) mid-decode, and all 412 (25 MB) after its last flush.
   */
  constructor(
    readonly columns: readonly ColumnSpec[],
    private readonly onChunk: (data: ChunkData) => void,
    private readonly memory: BufferSource = NEW_BUFFERS,
    firstRows = CHUNK_ROWS,
  ) {
    this.capacity = firstRows;
    this.budget = isChunkBudget(memory) ? memory : null;
  }

  /** Starts a row: call before writing any of its columns (through the setters or `arrays`). */
  startRow(): void {
    if (this.buffer === NO_BUFFER) this.allocate();
    this.inRow = true;
  }

  /** The bytes of the buffer held (0 between a flush and the next row). */
  get heldBytes(): number {
    return this.buffer.byteLength;
  }

  /** The bytes of the held buffer that no row fills yet. */
  get unfilledBytes(): number {
    return (this.buffer.byteLength * (this.capacity - this.rows)) / this.capacity;
  }

  private allocate(): void {
    // A string column's array that was not handed over (no string set: it
    // crossed as null) still holds only nulls: the next chunk keeps it. A new
    // one per chunk and column (2048 entries) was ~85 MB of the field
    // worker's 511 MB allocated on build_search.v7 (_ftrace_event.raw, shape
    // tables' text columns), collected by its small young generation.
    const rows = this.capacity;
    const spare = this.spareStrings;
    // One buffer: each column's values (8-byte aligned), then every validity mask.
    const offsets: number[] = [];
    let size = 0;
    for (const c of this.columns) {
      offsets.push(size);
      size += Math.ceil((bytesPerRow(c.kind) * rows) / 8) * 8;
    }
    const validityStart = size;
    size += this.columns.length * (rows / 8);
    this.budget?.opening(this, size);
    const buffer = this.memory.take(size);
    new Uint32Array(buffer, validityStart).fill(0xffffffff);
    this.buffer = buffer;
    this.buffers = this.columns.map((c, i) => {
      const at = offsets[i]!;
      const validityOffset = validityStart + i * (rows / 8);
      const unsent = spare[i];
      return {
        kind: c.kind,
        is64: c.kind === 'i64',
        ints:
          c.kind === 'i32'
            ? new Int32Array(buffer, at, rows)
            : c.kind === 'i64'
              ? new Int32Array(buffer, at, rows * 2)
              : EMPTY_INTS,
        floats: c.kind === 'f64' ? new Float64Array(buffer, at, rows) : EMPTY_FLOATS,
        bytes: c.kind === 'bool' ? new Uint8Array(buffer, at, rows) : EMPTY_BYTES,
        strings: c.kind === 'str' ? (unsent && unsent.length === rows ? unsent : packedNulls(rows)) : [],
        anyString: false,
        validity: new Uint32Array(buffer, validityOffset, rows / 32),
        hasNull: false,
        dataOffset: c.kind === 'str' ? -1 : at,
        validityOffset,
      };
    });
    this.arrays = this.buffers.map((b) => (b.kind === 'f64' ? b.floats : b.ints));
  }

  /**
   * Sets column `col` of the current row from any value: integers must be
   * exact (|v| < 2^53, or bigint); null/undefined writes SQL NULL.
   */
  set(col: number, value: number | string | bigint | boolean | null | undefined): void {
    const buf = this.buffers[col];
    if (value === null || value === undefined) {
      this.setNull(col);
      return;
    }
    switch (buf.kind) {
      case 'i32':
        buf.ints[this.rows] = Number(value);
        break;
      case 'i64':
        if (typeof value === 'bigint') {
          // Its 64 bits (modulo 2^64, as asIntN(32) of each half) through a
          // BigInt64Array: no bigint made per value (asIntN and >> made three,
          // ~40 MB of the field worker's allocations on build_search.v7).
          BIG_WORD[0] = value;
          buf.ints[this.rows * 2] = BIG_HALVES[LO_HALF]!;
          buf.ints[this.rows * 2 + 1] = BIG_HALVES[1 - LO_HALF]!;
        } else writeI64Number(buf.ints, this.rows, Number(value));
        break;
      case 'f64':
        buf.floats[this.rows] = Number(value);
        break;
      case 'str':
        buf.strings[this.rows] = String(value);
        buf.anyString = true;
        break;
      case 'bool':
        buf.bytes[this.rows] = value ? 1 : 0;
        break;
    }
  }

  /** Fast path for integer columns (i32 or i64). */
  setInt(col: number, value: number): void {
    const buf = this.buffers[col];
    if (buf.is64) writeI64Number(buf.ints, this.rows, value);
    else buf.ints[this.rows] = value;
  }

  /** A number into a numeric column of any kind. */
  setNumber(col: number, value: number): void {
    const buf = this.buffers[col];
    if (buf.is64) writeI64Number(buf.ints, this.rows, value);
    else if (buf.kind === 'i32') buf.ints[this.rows] = value;
    else buf.floats[this.rows] = value;
  }

  setNull(col: number): void {
    const buf = this.buffers[col];
    const row = this.rows;
    buf.validity[row >>> 5] &= ~(1 << (row & 31));
    buf.hasNull = true;
  }

  endRow(): void {
    this.inRow = false;
    this.rows++;
    this.count++;
    if (this.rows === this.capacity) this.flush();
  }

  /** Hands over the rows filled so far (if any); the next row takes a new buffer. */
  flush(): void {
    this.inRow = false;
    if (this.rows === 0) {
      // A row started and never ended: nothing to hand over, and no reason to keep its buffer.
      if (this.buffer !== NO_BUFFER) this.dropBuffer();
      return;
    }
    const data: ChunkData = {
      rows: this.rows,
      buffer: this.buffer,
      columns: this.buffers.map((b) => ({
        kind: b.kind,
        dataOffset: b.dataOffset,
        // No array for a column without a string (ftrace_event.raw of typed events):
        // every one of its 2048 entries would be cloned to the store thread.
        strings: b.anyString ? b.strings : null,
        validityOffset: b.hasNull ? b.validityOffset : -1,
      })),
    };
    this.spareStrings = this.buffers.map((b) => (b.kind === 'str' && !b.anyString ? b.strings : null));
    this.rows = 0;
    if (this.capacity < CHUNK_ROWS) this.capacity *= 2;
    this.dropBuffer();
    this.onChunk(data);
  }

  private dropBuffer(): void {
    const bytes = this.buffer.byteLength;
    this.buffer = NO_BUFFER;
    this.buffers = [];
    this.arrays = [];
    this.budget?.closed(this, bytes);
  }

  /**
   * flush() of a part-filled chunk for a budget (open_chunk_budget.ts):
   * the next chunk holds as many rows as this one had (a power of two, at
   * least SMALL_FIRST_CHUNK_ROWS), not more: a table that fills this
   * slowly would otherwise hold a buffer of up to CHUNK_ROWS rows again.
   */
  flushForRoom(): void {
    const rows = this.rows;
    this.flush();
    let next = SMALL_FIRST_CHUNK_ROWS;
    while (next < rows) next *= 2;
    if (next < this.capacity) this.capacity = next;
  }
}

/** The ArrayBuffers of a chunk, for postMessage's transfer list. */
export function chunkTransferList(data: ChunkData): ArrayBuffer[] {
  return [data.buffer];
}

/**
 * An array of n nulls that V8 keeps packed. `new Array(n).fill(null)` is a
 * holey array, and postMessage clones a holey array as a sparse one (an
 * index and a property definition per element): cloning the chunks' string
 * columns to the store thread took ~4% of a scheduler-heavy text ingest's
 * CPU there (perf, nineteenth session).
 */
function packedNulls(n: number): (string | null)[] {
  const a: (string | null)[] = [];
  for (let i = 0; i < n; i++) a.push(null);
  return a;
}

/** Two's-complement split of an exact integer |v| < 2^53 into lo/hi 32-bit words. */
function writeI64Number(ints: Int32Array, row: number, value: number): void {
  const hi = Math.floor(value / TWO_32);
  ints[row * 2] = value - hi * TWO_32; // stored as int32: wraps to the right bit pattern
  ints[row * 2 + 1] = hi;
}
