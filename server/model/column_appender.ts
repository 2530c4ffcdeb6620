/**
 * The native half of columnar appends: copies a finished ChunkData into a
 * DuckDB data chunk (one native call per column) and appends it to a table.
 * Runs on the thread that owns the DuckDB connection.
 */
import duckdb from '@duckdb/node-bindings';
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  DuckDBAppender,
  DuckDBDataChunk,
  INTEGER,
  STRUCT,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBType,
} from '@duckdb/node-api';
import { collectGarbage } from '../ingest/ingest_memory.ts';
import { CHUNK_ROWS, ColumnChunk, type ChunkData, type ColumnKind, type ColumnSpec } from './column_chunk.ts';

export type { ColumnKind, ColumnSpec } from './column_chunk.ts';

/**
 * Rows between appender flushes: 8 full chunks (counted in rows, so that a
 * table whose first chunks are small, column_chunk.ts SMALL_FIRST_CHUNK_ROWS,
 * flushes no more often). DuckDB's appender does most of its work
 * (writing row groups) at flush; flushing as we go spreads that work over
 * the ingest, where it overlaps with decoding (store worker), instead of one
 * long pause at the end: on a 2.5M-event trace.dat, closing the appenders
 * took 130-160 ms flushing every 8 chunks, 370 ms every 64.
 *
 * Each flush also has a fixed cost: DuckDB runs it as an INSERT (planned
 * each time) and pins every column's last block of the table's unfinished
 * row group, which past the store's memory cap (STORE_MEMORY_LIMIT) was
 * evicted to a temp file since the table's last flush and is read back
 * (zstd both ways). So fewer, larger flushes cost less CPU, but each table
 * then holds more rows in its appender, outside DuckDB's cap: on the 6.7M-
 * event build_search.v7 (issue 29 note, eighth session) every 32 chunks
 * took the store thread 3.6-3.8 CPU-s instead of 5.4-5.9, for 474-507 MB
 * peak RSS instead of 416-437; every 16, 5.0 CPU-s and 444 MB. Compression
 * itself is a small part: forcing it off gained ~10% of the flush.
 */
export const FLUSH_EVERY_ROWS = 8 * CHUNK_ROWS;

/**
 * Rows between flushes in a one-thread load (ingest_file.ts: Perfetto files
 * below 3M events, small trace.dat and text), where the flushes run on the
 * decoding thread itself and the peak is far below the store worker's.
 * With UnflushedChunks bounding what all appenders hold together, 32 chunks
 * instead of 8 (`STALLSCOPE_TIMING=1`, alternating runs at load 11-15, issue
 * 29 fifth session): the x40 Perfetto file 71 -> 14 flushes while decoding,
 * 746-840 -> 453-654 CPU ms of flushes in all, peak within the noise
 * (256-262 against 260-265 MB). On the store worker (sched_wq.v7) 32 chunks
 * saved 30-50 of ~320 flush CPU ms but raised the peak 259-261 -> 266-268 MB,
 * so its loads keep 8.
 */
export const ONE_THREAD_FLUSH_EVERY_ROWS = 32 * CHUNK_ROWS;

/**
 * Bytes of appended chunks (their ChunkData buffers; DuckDB's copies take
 * at least as much) that one load's appenders may hold unflushed in all.
 * FLUSH_EVERY_ROWS bounds each table, not their sum, and a trace has as
 * many tables as event kinds and field shapes: `trace-cmd record -e all`
 * (3.9M events of 382 names, 390 tables) held up to 88 MB in its
 * appenders, where the corpus's recordings (30-60 tables) hold 7-26 MB, so
 * the budget changes nothing for them. Past it, the appender holding the
 * most is flushed. 16 MB made many_systems.v7 flush more (store thread
 * +0.1-0.2 CPU-s) for ~12 MB less on the -e all recording.
 */
export const UNFLUSHED_BUDGET_BYTES = 32 << 20;

/**
 * The unflushed chunks of every appender of one load (one per ModelStore):
 * keeps their sum under UNFLUSHED_BUDGET_BYTES.
 */
export class UnflushedChunks {
  private bytes = 0;
  private readonly holding = new Set<ColumnAppender>();

  constructor(
    private readonly budget = UNFLUSHED_BUDGET_BYTES,
    /** Each appender of the load flushes once it holds this many rows (FLUSH_EVERY_ROWS, ONE_THREAD_FLUSH_EVERY_ROWS). */
    public flushEveryRows = FLUSH_EVERY_ROWS,
  ) {}

  /** `a` appended a chunk of `bytes` and holds it unflushed. */
  added(a: ColumnAppender, bytes: number): void {
    this.bytes += bytes;
    this.holding.add(a);
    while (this.bytes > this.budget) {
      let largest: ColumnAppender | null = null;
      for (const h of this.holding) if (largest === null || h.unflushedBytes > largest.unflushedBytes) largest = h;
      if (largest === null) break;
      largest.flush();
    }
  }

  /** `a` flushed what it held. */
  flushed(a: ColumnAppender, bytes: number): void {
    this.bytes -= bytes;
    this.holding.delete(a);
  }
}

/**
 * The data chunks a load's appenders stage their rows in before DuckDB
 * copies them (append): one per list of column types, shared by every
 * open appender of the load with that list. Appends run one at a time on
 * the load's thread and DuckDB copies a chunk before appendDataChunk
 * returns, so one chunk can serve them all. Why: a chunk holds CHUNK_ROWS
 * rows of every column (16 KiB per BIGINT column, more for VARCHAR);
 * `trace-cmd record -e all` opens ~390 tables, and one chunk each was
 * ~10-20 MB of its peak (lead, fifth session). A shape table's list is its
 * own (its STRUCT's field names are part of the type), so a chunk is
 * dropped when the last open appender of its list closes (OpenAppenders
 * bounds the open ones); DuckDB frees it when V8 collects the wrapper.
 */
export class StagingChunks {
  private readonly byTypes = new Map<string, { chunk: DuckDBDataChunk; users: number }>();

  /** A chunk of `types`, shared with the load's other open appenders of the same types, until release(). */
  acquire(types: readonly DuckDBType[]): DuckDBDataChunk {
    const key = stagingKey(types);
    let held = this.byTypes.get(key);
    if (!held) this.byTypes.set(key, (held = { chunk: DuckDBDataChunk.create([...types], CHUNK_ROWS), users: 0 }));
    held.users++;
    return held.chunk;
  }

  /** An appender that acquired a chunk of `types` no longer uses it. */
  release(types: readonly DuckDBType[]): void {
    const key = stagingKey(types);
    const held = this.byTypes.get(key);
    if (held && --held.users === 0) this.byTypes.delete(key);
  }
}

function stagingKey(types: readonly DuckDBType[]): string {
  return types.map((t) => t.toString()).join(',');
}

/**
 * Bytes DuckDB allocates for an appender's own data chunk when it opens, per
 * column (a STRUCT's fields counted each): a vector of STANDARD_VECTOR_SIZE
 * (2048) rows at the column's physical width. Rows appended as whole chunks
 * (appendDataChunk) never pass through it, but it lives, outside DuckDB's
 * memory cap, until the appender is destroyed. Measured: 2,000 BIGINT
 * columns' appenders took 31.2 MB of DuckDB's jemalloc (16.0 KiB each).
 */
const APPENDER_CHUNK_BYTES_PER_COLUMN: Record<ColumnKind, number> = {
  i32: 2048 * 4,
  i64: 2048 * 8,
  f64: 2048 * 8,
  str: 2048 * 16, // string_t
  bool: 2048,
};

/** What DuckDB's appender of a table of `columns` holds in its own data chunk (APPENDER_CHUNK_BYTES_PER_COLUMN); its staging chunk (StagingChunks) holds as much. */
export function appenderChunkBytes(columns: readonly ColumnSpec[]): number {
  let bytes = 0;
  for (const c of columns) bytes += APPENDER_CHUNK_BYTES_PER_COLUMN[c.kind];
  return bytes;
}

/**
 * Bytes of data chunks (appenderChunkBytes: DuckDB's own and the staging
 * one) that one load's open appenders may hold in all. Why: a table's
 * appender held both from the schema (typed tables) or the table's creation
 * (shape tables) to the store's finish, so what they held followed the
 * number of tables and columns, not of events: `trace-cmd record -e all`
 * (all.dat: ~2,000 shape columns in 195 tables, plus the typed tables) held
 * ~50 MB of DuckDB's jemalloc in 8, 16 and 32 KiB vectors at its decoding
 * peak. Past the budget, the appenders least recently appended to that
 * hold no unflushed rows are closed (reopened at their table's next chunk),
 * and a collection lets their native halves go (OpenAppenders); those
 * holding rows stay open until a flush empties them, so the budget binds
 * only with UnflushedChunks: all.dat's open chunks peaked at 43.2 MB (228
 * closed, 7 collections) against 49.8 MB with every appender open.
 * Why 32 MB: all2.dat's appenders hold 38.7 MB; the corpus's recordings
 * stay under it (no close). Closing with a flush was measured first: at 24
 * MB all2.dat closed 348 appenders and its store thread appended for 2.7
 * CPU-s instead of 1.9, and at a 16MB load cap (commit_floor.test.ts) the
 * closing flushes ran out of memory.
 * $STALLSCOPE_OPEN_APPENDERS_MB overrides.
 */
export const OPEN_APPENDERS_BUDGET_BYTES = Number(process.env.STALLSCOPE_OPEN_APPENDERS_MB ?? 32) * 1048576;

/**
 * The open appenders of one load (one per ModelStore), least recently
 * appended to first: keeps their data chunks' sum (appenderChunkBytes) under
 * a budget, but for the appenders holding unflushed rows (closing those
 * would flush at the load's cap). Closing an appender does not free its
 * chunk: DuckDB frees it when the appender is destroyed, which the bindings
 * do when V8 collects its wrapper (a finalizer, run on a later turn of the
 * event loop). So past the budget the least recent without unflushed rows
 * are closed down to half of it, and a full collection runs per quarter of
 * a budget closed.
 */
export class OpenAppenders {
  private bytes = 0;
  /** Chunks of appenders closed since the last collection: still allocated until it runs. */
  private uncollected = 0;
  private readonly open = new Set<ColumnAppender>();
  /** The most `bytes` ever reached, appenders closed by the budget, collections run (STALLSCOPE_TIMING). */
  readonly stats = { peakBytes: 0, closed: 0, collections: 0 };

  constructor(
    private readonly budget = OPEN_APPENDERS_BUDGET_BYTES,
    private readonly collect: () => void = collectGarbage,
  ) {}

  /** `a` opened its DuckDB appender. */
  opened(a: ColumnAppender): void {
    this.bytes += a.chunkBytes;
    this.open.add(a);
    if (this.bytes > this.budget) this.closeLeastRecent(a);
    this.stats.peakBytes = Math.max(this.stats.peakBytes, this.bytes);
  }

  /** `a` appended a chunk: it becomes the most recent. */
  used(a: ColumnAppender): void {
    this.open.delete(a);
    this.open.add(a);
  }

  /** `a` closed its DuckDB appender. */
  closed(a: ColumnAppender): void {
    if (this.open.delete(a)) this.bytes -= a.chunkBytes;
  }

  private closeLeastRecent(keep: ColumnAppender): void {
    for (const a of this.open) {
      if (this.bytes <= this.budget / 2) break;
      // One holding rows would flush them at the load's cap, which is sized
      // for the tables' open segments, not for flushes of many tables: at a
      // 16MB cap with 300 shape tables (commit_floor.test.ts) such a flush
      // failed ("could not allocate block of size 32.0 KiB"). It is closed
      // once a flush has emptied it (UnflushedChunks, FLUSH_EVERY_ROWS).
      if (a === keep || a.unflushedBytes > 0) continue;
      a.close(); // calls closed(a)
      this.stats.closed++;
      this.uncollected += a.chunkBytes;
    }
    // A collection per quarter of a budget closed: the closed chunks stay
    // until one runs, and each costs a full collection of this thread's heap.
    if (this.uncollected < this.budget / 4) return;
    this.uncollected = 0;
    this.collect();
    this.stats.collections++;
  }
}

/**
 * CPU spent in appender flushes on this thread, counted when `clock` is set
 * (the store worker sets it under $STALLSCOPE_TIMING to its thread's CPU
 * clock): the flushes are DuckDB's part of the load, and a CPU profile's
 * self time for flushSync counts the thread's waits for a core as well.
 */
export const flushTiming = { clock: null as (() => number) | null, cpuNs: 0, flushes: 0 };

const DUCK_TYPE: Record<ColumnKind, DuckDBType> = {
  i32: INTEGER,
  i64: BIGINT,
  f64: DOUBLE,
  str: VARCHAR,
  bool: BOOLEAN,
};

export class ColumnAppender {
  /** The column types of the staging chunk: the table's (a STRUCT for the columns from structFrom on). */
  private readonly types: readonly DuckDBType[];
  /** The staging chunk (StagingChunks), held while the appender is open. */
  private chunk: DuckDBDataChunk | null = null;
  /** DuckDB's appender, opened at the first chunk and again after OpenAppenders closed it; null while closed. */
  private appender: DuckDBAppender | null = null;
  /**
   * What the appender holds while open, at most: DuckDB's data chunk and the
   * staging chunk (appenderChunkBytes each; a staging chunk shared with
   * another open appender counts for each).
   */
  readonly chunkBytes: number;
  /** Rows appended so far. */
  count = 0;
  private rowsSinceFlush = 0;
  /** Bytes of the chunks appended since the last flush (UnflushedChunks). */
  unflushedBytes = 0;

  /**
   * `structFrom`: columns from this index on are the fields of the table's
   * last column, a STRUCT (model_store.ts stores typed tables so); the
   * chunks stay flat.
   */
  private constructor(
    private readonly connection: DuckDBConnection,
    private readonly table: string,
    readonly columns: readonly ColumnSpec[],
    private readonly structFrom: number,
    private readonly unflushed: UnflushedChunks | null,
    private readonly staging: StagingChunks,
    private readonly openAppenders: OpenAppenders | null,
  ) {
    const plain = columns.slice(0, structFrom).map((c) => DUCK_TYPE[c.kind]);
    const fields = columns.slice(structFrom);
    this.types =
      fields.length === 0
        ? plain
        : [...plain, STRUCT(Object.fromEntries(fields.map((c) => [c.name, DUCK_TYPE[c.kind]])))];
    this.chunkBytes = 2 * appenderChunkBytes(columns);
  }

  /**
   * `staging`: the load's shared chunks (StagingChunks); without one, the
   * appender stages in a chunk of its own. `openAppenders`: the load's bound
   * on open appenders; without one, the appender stays open from its first
   * chunk to close(). DuckDB's appender opens at the first chunk: a table
   * that gets none (most typed tables of a trace) never holds one.
   */
  static async create(
    connection: DuckDBConnection,
    table: string,
    columns: readonly ColumnSpec[],
    structFrom = columns.length,
    unflushed: UnflushedChunks | null = null,
    staging: StagingChunks = new StagingChunks(),
    openAppenders: OpenAppenders | null = null,
  ): Promise<ColumnAppender> {
    return new ColumnAppender(connection, table, columns, structFrom, unflushed, staging, openAppenders);
  }

  /**
   * Opens DuckDB's appender, synchronously: append() runs without awaiting
   * (the store appends chunks in order, between its async statements).
   * DuckDBConnection.createAppender is async only in form; its binding,
   * appender_create_ext, is synchronous, and the connection's handle is a
   * private field of node-api's class.
   */
  private openAppender(): DuckDBAppender {
    const handle = (this.connection as unknown as { connection: duckdb.Connection }).connection;
    const appender = new DuckDBAppender(this.connection, duckdb.appender_create_ext(handle, null, null, this.table));
    this.appender = appender;
    this.chunk = this.staging.acquire(this.types);
    this.openAppenders?.opened(this);
    return appender;
  }

  append(data: ChunkData): void {
    const appender = this.appender ?? this.openAppender();
    this.openAppenders?.used(this);
    const n = data.rows;
    const chunk = this.chunk!;
    chunk.reset();
    duckdb.data_chunk_set_size(chunk.chunk, n);
    const structFrom = this.structFrom;
    const struct = structFrom < data.columns.length ? duckdb.data_chunk_get_vector(chunk.chunk, structFrom) : null;
    for (let c = 0; c < data.columns.length; c++) {
      const col = data.columns[c];
      const vector =
        c < structFrom
          ? duckdb.data_chunk_get_vector(chunk.chunk, c)
          : duckdb.struct_vector_get_child(struct!, c - structFrom);
      const hasNull = col.validityOffset >= 0;
      if (col.kind === 'str') {
        const strings = col.strings;
        const valid = hasNull ? new Uint32Array(data.buffer, col.validityOffset, Math.ceil(n / 32)) : null;
        // strings null: no value in this chunk is a string (all NULL, in the validity mask).
        if (strings !== null) {
          for (let r = 0; r < n; r++) {
            const s = strings[r];
            if (s !== null && (!valid || (valid[r >>> 5] & (1 << (r & 31))) !== 0)) {
              duckdb.vector_assign_string_element(vector, r, s);
            }
          }
        }
      } else {
        const bytesPerRow = col.kind === 'i32' ? 4 : col.kind === 'bool' ? 1 : 8;
        duckdb.copy_data_to_vector(vector, 0, data.buffer, col.dataOffset, n * bytesPerRow);
      }
      if (hasNull) {
        duckdb.vector_ensure_validity_writable(vector);
        duckdb.copy_data_to_vector_validity(vector, 0, data.buffer, col.validityOffset, Math.ceil(n / 64) * 8);
      }
    }
    appender.appendDataChunk(chunk);
    this.count += n;
    this.rowsSinceFlush += n;
    this.unflushedBytes += data.buffer.byteLength;
    // The budget may flush this appender (then rowsSinceFlush is 0 again).
    this.unflushed?.added(this, data.buffer.byteLength);
    if (this.rowsSinceFlush >= (this.unflushed?.flushEveryRows ?? FLUSH_EVERY_ROWS)) this.flush();
  }

  /** Flushes and closes DuckDB's appender, if open (append() opens another). */
  close(): void {
    const appender = this.appender;
    if (appender === null) return;
    this.flush();
    appender.closeSync();
    this.appender = null;
    this.chunk = null;
    this.staging.release(this.types);
    this.openAppenders?.closed(this);
  }

  /** Writes the chunks appended since the last flush into the table (DuckDB's row groups). */
  flush(): void {
    const appender = this.appender;
    if (appender === null) return; // closed: nothing unflushed
    this.rowsSinceFlush = 0;
    if (this.unflushedBytes > 0) {
      this.unflushed?.flushed(this, this.unflushedBytes);
      this.unflushedBytes = 0;
    }
    const clock = flushTiming.clock;
    if (clock === null) {
      appender.flushSync();
      return;
    }
    const t0 = clock();
    appender.flushSync();
    flushTiming.cpuNs += clock() - t0;
    flushTiming.flushes++;
  }
}

/** Writes a few rows to a table in one go (small tables written at the end). */
export async function appendRows(
  connection: DuckDBConnection,
  table: string,
  columns: ColumnSpec[],
  rows: unknown[][],
): Promise<void> {
  const appender = await ColumnAppender.create(connection, table, columns);
  const chunk = new ColumnChunk(columns, (d) => appender.append(d));
  for (const r of rows) {
    chunk.startRow();
    r.forEach((v, i) => chunk.set(i, v as number | string | bigint | null));
    chunk.endRow();
  }
  chunk.flush();
  appender.close();
}
