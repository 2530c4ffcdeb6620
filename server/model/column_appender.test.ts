// ColumnAppender's shared bound on unflushed chunks (UnflushedChunks): many
// tables each holding a few chunks must not add up past the budget, and
// flushing early must lose or reorder no row. Expected rows are generated
// here (table t, row r), independently of the appenders.
import { afterEach, describe, expect, it } from 'vitest';
import { openDuckDb, type Engine } from '../engine/engine.ts';
import {
  ColumnAppender,
  FLUSH_EVERY_ROWS,
  ONE_THREAD_FLUSH_EVERY_ROWS,
  StagingChunks,
  UnflushedChunks,
} from './column_appender.ts';
import { ColumnChunk, type ChunkData } from './column_chunk.ts';

let engine: Engine | null = null;
afterEach(() => {
  engine?.close();
  engine = null;
});

/** An UnflushedChunks that records its largest sum. */
class WatchedBudget extends UnflushedChunks {
  held = 0;
  peak = 0;
  override added(a: ColumnAppender, bytes: number): void {
    this.held += bytes;
    this.peak = Math.max(this.peak, this.held);
    super.added(a, bytes);
  }
  override flushed(a: ColumnAppender, bytes: number): void {
    this.held -= bytes;
    super.flushed(a, bytes);
  }
}

/** An UnflushedChunks whose budget never binds, counting the flushes of its appenders that held rows. */
class CountedFlushes extends UnflushedChunks {
  flushes = 0;
  constructor(flushEveryRows: number) {
    super(1 << 30, flushEveryRows);
  }
  override flushed(a: ColumnAppender, bytes: number): void {
    this.flushes++;
    super.flushed(a, bytes);
  }
}

describe('UnflushedChunks', () => {
  it('keeps what 40 tables hold unflushed within the budget, and every row reaches its table', async () => {
    engine = await openDuckDb(':memory:');
    const connection = engine.connection;
    const columns = [
      { name: 'r', kind: 'i64' as const },
      { name: 't', kind: 'i32' as const },
    ];
    const tables = 40;
    const rowsPerTable = 3 * 2048 + 17;
    const oneChunk = 2048 * (8 + 4) + 2 * (2048 / 8);
    // Room for 10 chunks in all: 40 tables of 3 chunks each (below the
    // per-table flush at 8) would hold 120 without the shared budget.
    const budget = new WatchedBudget(10 * oneChunk);
    const appenders: ColumnAppender[] = [];
    const chunks: ColumnChunk[] = [];
    for (let t = 0; t < tables; t++) {
      await connection.run(`CREATE TABLE t${t} (r BIGINT, t INTEGER)`);
      const a = await ColumnAppender.create(connection, `t${t}`, columns, undefined, budget);
      appenders.push(a);
      chunks.push(new ColumnChunk(columns, (d: ChunkData) => a.append(d)));
    }
    // Interleaved, as a decoder feeds them; table 0 also gets 20 chunks
    // more (it reaches the per-table flush, FLUSH_EVERY_ROWS, too).
    const rowsOf = (t: number) => (t === 0 ? rowsPerTable + 20 * 2048 : rowsPerTable);
    for (let r = 0; r < rowsOf(0); r++)
      for (let t = 0; t < tables; t++) {
        if (r >= rowsOf(t)) continue;
        chunks[t]!.startRow();
        chunks[t]!.set(0, r);
        chunks[t]!.set(1, t);
        chunks[t]!.endRow();
      }
    for (const c of chunks) c.flush();
    for (const a of appenders) a.close();
    expect(budget.peak).toBeLessThanOrEqual(10 * oneChunk + oneChunk);
    expect(budget.held).toBe(0);
    for (let t = 0; t < tables; t++) {
      const n = BigInt(rowsOf(t));
      const got = (
        await connection.runAndReadAll(`SELECT count(*), min(r), max(r), sum(r), min(t), max(t) FROM t${t}`)
      ).getRows()[0];
      expect(got).toEqual([n, 0n, n - 1n, (n * (n - 1n)) / 2n, t, t]);
    }
  });
});

describe('flush interval', () => {
  it('flushes a table every flushEveryRows rows (8 chunks by default, 32 for one-thread loads), losing no row', async () => {
    engine = await openDuckDb(':memory:');
    const connection = engine.connection;
    const columns = [{ name: 'r', kind: 'i64' as const }];
    const rows = 70 * 2048 + 5; // 70 full chunks and a last short one
    for (const every of [FLUSH_EVERY_ROWS, ONE_THREAD_FLUSH_EVERY_ROWS]) {
      const counted = new CountedFlushes(every);
      await connection.run(`CREATE OR REPLACE TABLE t (r BIGINT)`);
      const a = await ColumnAppender.create(connection, 't', columns, undefined, counted);
      const chunk = new ColumnChunk(columns, (d: ChunkData) => a.append(d));
      for (let r = 0; r < rows; r++) {
        chunk.startRow();
        chunk.set(0, r);
        chunk.endRow();
      }
      chunk.flush();
      a.close();
      // 70 chunks of 2048 rows: a flush after every 8th (8 of them) or 32nd (2), then the closing one.
      expect(counted.flushes).toBe(every === FLUSH_EVERY_ROWS ? 8 + 1 : 2 + 1);
      const got = (await connection.runAndReadAll('SELECT count(*), sum(r) FROM t')).getRows()[0];
      expect(got).toEqual([BigInt(rows), (BigInt(rows) * BigInt(rows - 1)) / 2n]);
    }
  });
});

describe('StagingChunks', () => {
  it('two tables of the same types staged in one chunk, appended in turn, keep their own values and NULLs', async () => {
    engine = await openDuckDb(':memory:');
    const connection = engine.connection;
    const columns = [
      { name: 'r', kind: 'i64' as const },
      { name: 's', kind: 'str' as const },
    ];
    const staging = new StagingChunks();
    const appenders: ColumnAppender[] = [];
    const chunks: ColumnChunk[] = [];
    for (const t of [0, 1]) {
      await connection.run(`CREATE TABLE t${t} (r BIGINT, s VARCHAR)`);
      const a = await ColumnAppender.create(connection, `t${t}`, columns, undefined, null, staging);
      appenders.push(a);
      chunks.push(new ColumnChunk(columns, (d: ChunkData) => a.append(d)));
    }
    // Table 0 has a NULL in every third row; table 1 none: a mask left from one in the shared chunk would show.
    const rows = 5 * 2048 + 11;
    for (let r = 0; r < rows; r++)
      for (const t of [0, 1]) {
        chunks[t]!.startRow();
        chunks[t]!.set(0, t === 0 && r % 3 === 0 ? null : r);
        chunks[t]!.set(1, t === 0 && r % 3 === 0 ? null : `t${t}-${r % 7}`);
        chunks[t]!.endRow();
      }
    for (const c of chunks) c.flush();
    for (const a of appenders) a.close();
    const stats = async (t: number) =>
      (
        await connection.runAndReadAll(
          `SELECT count(*), count(r), sum(r), count(s), count(DISTINCT s), min(s) FROM t${t}`,
        )
      ).getRows()[0];
    const n = BigInt(rows);
    const nulls = BigInt(Math.ceil(rows / 3));
    // sum of r over rows not divisible by 3: all rows' sum less the multiples of 3's
    const m = BigInt(Math.floor((rows - 1) / 3));
    const sumAll = (n * (n - 1n)) / 2n;
    expect(await stats(0)).toEqual([n, n - nulls, sumAll - (3n * m * (m + 1n)) / 2n, n - nulls, 7n, 't0-0']);
    expect(await stats(1)).toEqual([n, n, sumAll, n, 7n, 't1-0']);
  });
});
