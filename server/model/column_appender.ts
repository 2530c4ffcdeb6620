/**
 * Appends rows to one DuckDB table in columnar chunks of 2048 rows.
 *
 * Why not DuckDB's row appender or DuckDBVector.setItem: both cost a native
 * call or a bigint per value, which caps ingest near 1M rows/s. Here each
 * column is a plain typed array filled in JS; a full chunk is copied to
 * DuckDB with one native call per column (copy_data_to_vector), and 64-bit
 * integers are written as two 32-bit halves so no bigint is created per value.
 * Strings still cost one native call each, so high-volume string columns are
 * interned by the caller (see model_writer.ts).
 */
import duckdb from '@duckdb/node-bindings';
import {
  BIGINT,
  DOUBLE,
  DuckDBDataChunk,
  INTEGER,
  VARCHAR,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBType,
} from '@duckdb/node-api';

export type ColumnKind = 'i32' | 'i64' | 'f64' | 'str';

export interface ColumnSpec {
  name: string;
  kind: ColumnKind;
}

const CHUNK_ROWS = 2048;
const TWO_32 = 4294967296;

const DUCK_TYPE: Record<ColumnKind, DuckDBType> = {
  i32: INTEGER,
  i64: BIGINT,
  f64: DOUBLE,
  str: VARCHAR,
};

/**
 * Every buffer has the same shape (all fields present) so the hot setters
 * stay monomorphic: V8 would slow down on a field that is sometimes an
 * Int32Array and sometimes a Float64Array.
 */
interface ColumnBuffer {
  kind: ColumnKind;
  is64: boolean;
  /** i32: one int per row; i64: lo/hi int pair per row; else empty. */
  ints: Int32Array;
  /** f64 only, else empty. */
  floats: Float64Array;
  /** str only, else empty. */
  strings: (string | null)[];
  /** DuckDB validity mask: bit set = valid, 64-bit words, little endian. */
  validity: Uint32Array;
  hasNull: boolean;
}

const EMPTY_INTS = new Int32Array(0);
const EMPTY_FLOATS = new Float64Array(0);

export class ColumnAppender {
  private readonly buffers: ColumnBuffer[];
  private readonly chunk: DuckDBDataChunk;
  private rows = 0;
  /** Total rows appended (including the pending chunk). */
  count = 0;

  private constructor(
    private readonly appender: DuckDBAppender,
    readonly columns: readonly ColumnSpec[],
  ) {
    this.buffers = columns.map((c) => ({
      kind: c.kind,
      is64: c.kind === 'i64',
      ints: c.kind === 'i32' ? new Int32Array(CHUNK_ROWS) : c.kind === 'i64' ? new Int32Array(CHUNK_ROWS * 2) : EMPTY_INTS,
      floats: c.kind === 'f64' ? new Float64Array(CHUNK_ROWS) : EMPTY_FLOATS,
      strings: c.kind === 'str' ? new Array<string | null>(CHUNK_ROWS).fill(null) : [],
      validity: new Uint32Array(CHUNK_ROWS / 32).fill(0xffffffff),
      hasNull: false,
    }));
    this.chunk = DuckDBDataChunk.create(
      columns.map((c) => DUCK_TYPE[c.kind]),
      CHUNK_ROWS,
    );
  }

  static async create(
    connection: DuckDBConnection,
    table: string,
    columns: readonly ColumnSpec[],
  ): Promise<ColumnAppender> {
    return new ColumnAppender(await connection.createAppender(table), columns);
  }

  /**
   * Sets column `col` of the current row. Integers must be exact (|v| < 2^53);
   * null or undefined writes SQL NULL. Call endRow() after the row's columns.
   */
  set(col: number, value: number | string | bigint | null | undefined): void {
    const buf = this.buffers[col];
    const row = this.rows;
    if (value === null || value === undefined) {
      buf.validity[row >>> 5] &= ~(1 << (row & 31));
      buf.hasNull = true;
      return;
    }
    switch (buf.kind) {
      case 'i32':
        buf.ints[row] = Number(value);
        break;
      case 'i64':
        writeI64(buf.ints, row, value);
        break;
      case 'f64':
        buf.floats[row] = Number(value);
        break;
      case 'str':
        buf.strings[row] = String(value);
        break;
    }
  }

  /** Fast path for integer columns (no type dispatch on the value). */
  setInt(col: number, value: number): void {
    const buf = this.buffers[col];
    if (buf.is64) writeI64Number(buf.ints, this.rows, value);
    else buf.ints[this.rows] = value;
  }

  /** Sets a BIGINT column from exact 32-bit halves (lo unsigned, hi signed). */
  setI64Parts(col: number, lo: number, hi: number): void {
    const data = this.buffers[col].ints;
    data[this.rows * 2] = lo;
    data[this.rows * 2 + 1] = hi;
  }

  setNull(col: number): void {
    const buf = this.buffers[col];
    const row = this.rows;
    buf.validity[row >>> 5] &= ~(1 << (row & 31));
    buf.hasNull = true;
  }

  /** A number into a numeric column of any kind (exact integers for i32/i64). */
  setNumber(col: number, value: number): void {
    const buf = this.buffers[col];
    if (buf.is64) writeI64Number(buf.ints, this.rows, value);
    else if (buf.kind === 'i32') buf.ints[this.rows] = value;
    else buf.floats[this.rows] = value;
  }

  endRow(): void {
    this.rows++;
    this.count++;
    if (this.rows === CHUNK_ROWS) this.flushChunk();
  }

  /** Writes any pending rows and closes the appender. */
  close(): void {
    if (this.rows > 0) this.flushChunk();
    this.appender.flushSync();
    this.appender.closeSync();
  }

  private flushChunk(): void {
    const n = this.rows;
    const chunk = this.chunk;
    chunk.reset();
    duckdb.data_chunk_set_size(chunk.chunk, n);
    for (let c = 0; c < this.buffers.length; c++) {
      const buf = this.buffers[c];
      const vector = duckdb.data_chunk_get_vector(chunk.chunk, c);
      if (buf.kind === 'f64') {
        duckdb.copy_data_to_vector(vector, 0, buf.floats.buffer as ArrayBuffer, 0, n * 8);
      } else if (buf.kind !== 'str') {
        duckdb.copy_data_to_vector(vector, 0, buf.ints.buffer as ArrayBuffer, 0, n * (buf.is64 ? 8 : 4));
      } else {
        const strings = buf.strings;
        for (let r = 0; r < n; r++) {
          const s = strings[r];
          if (s !== null && (buf.validity[r >>> 5] & (1 << (r & 31))) !== 0) {
            duckdb.vector_assign_string_element(vector, r, s);
          }
          strings[r] = null;
        }
      }
      if (buf.hasNull) {
        duckdb.vector_ensure_validity_writable(vector);
        const words = Math.ceil(n / 64) * 2;
        duckdb.copy_data_to_vector_validity(vector, 0, buf.validity.buffer as ArrayBuffer, 0, words * 4);
        buf.validity.fill(0xffffffff);
        buf.hasNull = false;
      }
    }
    this.appender.appendDataChunk(chunk);
    this.rows = 0;
  }
}

function writeI64(data: Int32Array, row: number, value: number | string | bigint): void {
  if (typeof value === 'bigint') {
    data[row * 2] = Number(BigInt.asIntN(32, value));
    data[row * 2 + 1] = Number(BigInt.asIntN(32, value >> 32n));
  } else {
    writeI64Number(data, row, Number(value));
  }
}

/** Two's-complement split of an exact integer |v| < 2^53 into lo/hi 32-bit words. */
function writeI64Number(data: Int32Array, row: number, value: number): void {
  const hi = Math.floor(value / TWO_32);
  data[row * 2] = value - hi * TWO_32; // stored as int32: wraps to the right bit pattern
  data[row * 2 + 1] = hi;
}
