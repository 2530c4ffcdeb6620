// ColumnChunk's 64-bit columns: a value given as a bigint is stored as its two
// 32-bit words, wrapped modulo 2^64 as DuckDB's BIGINT takes it (u64 fields of
// 2^63 or more, e.g. block_dirty_buffer's sector of an unmapped buffer, land
// in _args.int_value this way). Expected words are computed here with
// BigInt arithmetic, independently of the chunk's own split; then the chunk
// goes through DuckDB and the values read back are compared with
// BigInt.asIntN(64, v).
import { afterEach, describe, expect, it } from 'vitest';
import { openDuckDb, type Engine } from '../engine/engine.ts';
import { ColumnAppender } from './column_appender.ts';
import { ColumnChunk, SMALL_FIRST_CHUNK_ROWS, type ChunkData } from './column_chunk.ts';

const VALUES = [
  0n,
  1n,
  -1n,
  2n ** 31n,
  -(2n ** 31n),
  2n ** 32n - 1n,
  2n ** 32n,
  2n ** 53n + 1n,
  2n ** 63n - 1n,
  -(2n ** 63n),
  2n ** 63n,
  2n ** 64n - 1n,
  18446744073709486080n, // block_dirty_buffer's sector in build_search.v7 (-65536 as u64)
  2n ** 64n + 5n,
  -(2n ** 64n) - 7n,
];

/** The low and high 32-bit words (signed) of v modulo 2^64. */
function words(v: bigint): [number, number] {
  const u = ((v % 2n ** 64n) + 2n ** 64n) % 2n ** 64n;
  const lo = Number(u & 0xffffffffn);
  const hi = Number(u >> 32n);
  return [lo | 0, hi | 0];
}

let engine: Engine | null = null;
afterEach(() => {
  engine?.close();
  engine = null;
});

describe('ColumnChunk i64 columns', () => {
  it('stores a bigint as its two words modulo 2^64', () => {
    const chunks: ChunkData[] = [];
    const chunk = new ColumnChunk([{ name: 'v', kind: 'i64' }], (d) => chunks.push(d));
    for (const v of VALUES) {
      chunk.startRow();
      chunk.set(0, v);
      chunk.endRow();
    }
    chunk.flush();
    expect(chunks).toHaveLength(1);
    const stored = new Int32Array(chunks[0]!.buffer, chunks[0]!.columns[0]!.dataOffset, VALUES.length * 2);
    const got = VALUES.map((_, i) => [stored[2 * i], stored[2 * i + 1]]);
    expect(got).toEqual(VALUES.map(words));
  });

  it('reads back from DuckDB as the value modulo 2^64, signed', async () => {
    engine = await openDuckDb(':memory:');
    const connection = engine.connection;
    await connection.run('CREATE TABLE t (i INTEGER, v BIGINT)');
    const columns = [
      { name: 'i', kind: 'i32' as const },
      { name: 'v', kind: 'i64' as const },
    ];
    const appender = await ColumnAppender.create(connection, 't', columns);
    const chunk = new ColumnChunk(columns, (d) => appender.append(d));
    VALUES.forEach((v, i) => {
      chunk.startRow();
      chunk.set(0, i);
      chunk.set(1, v);
      chunk.endRow();
    });
    chunk.flush();
    appender.close();
    const rows = (await connection.runAndReadAll('SELECT v FROM t ORDER BY i')).getRows().map((r) => r[0]);
    expect(rows).toEqual(VALUES.map((v) => BigInt.asIntN(64, v)));
  });

  it('keeps a string column that crossed as null for the next chunk, never one that was handed over', () => {
    const chunks: ChunkData[] = [];
    const chunk = new ColumnChunk(
      [
        { name: 's', kind: 'str' },
        { name: 'n', kind: 'i32' },
      ],
      (d) => chunks.push(d),
    );
    // Chunk 0: no string; chunk 1: a string in every row; chunk 2: in even rows only.
    for (let r = 0; r < 2048 * 3; r++) {
      const c = r >> 11;
      chunk.startRow();
      chunk.set(0, c === 1 || (c === 2 && r % 2 === 0) ? `s${r}` : null);
      chunk.set(1, r);
      chunk.endRow();
    }
    chunk.flush();
    expect(chunks.map((c) => c.rows)).toEqual([2048, 2048, 2048]);
    expect(chunks[0]!.columns[0]!.strings).toBeNull();
    const second = chunks[1]!.columns[0]!.strings!;
    const third = chunks[2]!.columns[0]!.strings!;
    expect(second).not.toBe(third);
    // The second chunk's strings are still its own after the third was filled.
    expect(second.every((s, i) => s === `s${2048 + i}`)).toBe(true);
    // The third holds its even rows' strings and nulls elsewhere (nothing left from the second).
    expect(third.every((s, i) => s === (i % 2 === 0 ? `s${4096 + i}` : null))).toBe(true);
  });
});

describe('ColumnChunk starting small (firstRows)', () => {
  it('doubles its chunks from firstRows up to CHUNK_ROWS, and DuckDB reads every row back with its NULLs', async () => {
    engine = await openDuckDb(':memory:');
    const connection = engine.connection;
    await connection.run('CREATE TABLE t (i INTEGER, v BIGINT, s VARCHAR, b BOOLEAN)');
    const columns = [
      { name: 'i', kind: 'i32' as const },
      { name: 'v', kind: 'i64' as const },
      { name: 's', kind: 'str' as const },
      { name: 'b', kind: 'bool' as const },
    ];
    const appender = await ColumnAppender.create(connection, 't', columns);
    const sizes: number[] = [];
    const chunk = new ColumnChunk(
      columns,
      (d) => {
        sizes.push(d.rows);
        appender.append(d);
      },
      undefined,
      SMALL_FIRST_CHUNK_ROWS,
    );
    // 128 + 256 + 512 + 1024 + 2048 + 2048 rows, then 100 more: a NULL
    // in every 7th row's v, every 5th row's s, at chunk edges too.
    const total = 128 + 256 + 512 + 1024 + 2048 + 2048 + 100;
    for (let r = 0; r < total; r++) {
      chunk.startRow();
      chunk.set(0, r);
      chunk.set(1, r % 7 === 3 ? null : BigInt(r) * 4294967311n);
      chunk.set(2, r % 5 === 0 ? null : `s${r}`);
      chunk.set(3, r % 2 === 0);
      chunk.endRow();
    }
    chunk.flush();
    appender.close();
    expect(sizes).toEqual([128, 256, 512, 1024, 2048, 2048, 100]);
    const rows = (await connection.runAndReadAll('SELECT i, v, s, b FROM t ORDER BY i')).getRows();
    expect(rows).toHaveLength(total);
    const expected = Array.from({ length: total }, (_, r) => [
      r,
      r % 7 === 3 ? null : BigInt.asIntN(64, BigInt(r) * 4294967311n),
      r % 5 === 0 ? null : `s${r}`,
      r % 2 === 0,
    ]);
    expect(rows).toEqual(expected);
  });
});
