/**
 * Engine.queryColumns: every column's values in row order, as JS values
 * (DOUBLE as number, BIGINT as bigint, NULL as null), over results of many
 * chunks (DuckDB hands them over 2048 rows at a time); numeric columns are
 * read straight from their vectors (engine.ts columnsOf).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openDuckDb } from './engine.ts';

let db: Engine;

beforeAll(async () => {
  db = await openDuckDb(':memory:', { threads: 1 });
});

afterAll(() => db.close());

describe('queryColumns', () => {
  it('gives each column in row order, NULLs as null, across chunks', async () => {
    const n = 5000;
    const cols = await db.queryColumns(
      `SELECT i, i * 0.5 AS half, CASE WHEN i % 3 = 0 THEN NULL ELSE i / 4 END AS sparse,
              CASE WHEN i % 7 = 0 THEN NULL ELSE 'r' || i END AS label, (i * 1000000000000)::BIGINT AS big,
              CASE WHEN i = 1 THEN 'nan'::DOUBLE WHEN i = 2 THEN 'inf'::DOUBLE END AS odd
       FROM range(${n}) t(i) ORDER BY i`,
    );
    const rows = Array.from({ length: n }, (_, i) => i);
    expect(Object.keys(cols)).toEqual(['i', 'half', 'sparse', 'label', 'big', 'odd']);
    expect(cols.i).toEqual(rows.map((i) => BigInt(i)));
    expect(cols.half).toEqual(rows.map((i) => i * 0.5));
    expect(cols.sparse).toEqual(rows.map((i) => (i % 3 === 0 ? null : i / 4)));
    expect(cols.label).toEqual(rows.map((i) => (i % 7 === 0 ? null : `r${i}`)));
    expect(cols.big).toEqual(rows.map((i) => BigInt(i) * 1_000_000_000_000n));
    expect(cols.odd!.slice(0, 4)).toEqual([null, NaN, Infinity, null]);
  });

  it('gives every integer width and FLOAT as the converter does: numbers, bigints for BIGINT and UBIGINT, NULLs as null', async () => {
    const n = 3000;
    const cols = await db.queryColumns(
      `SELECT CASE WHEN i % 5 = 0 THEN NULL ELSE (i % 100 - 50)::TINYINT END AS t, (i - 1500)::SMALLINT AS s,
              CASE WHEN i % 4 = 0 THEN NULL ELSE (i * 1000 - 2000000)::INTEGER END AS n,
              (i % 250)::UTINYINT AS ut, i::USMALLINT AS us, (i * 1000000)::UINTEGER AS ui,
              CASE WHEN i % 6 = 0 THEN NULL ELSE (i - 1000)::BIGINT * 4000000000 END AS b,
              (18446744073709551615 - i)::UBIGINT AS ub, (i + 0.5)::FLOAT AS f
       FROM range(${n}) t(i) ORDER BY i`,
    );
    const rows = Array.from({ length: n }, (_, i) => i);
    expect(cols.t).toEqual(rows.map((i) => (i % 5 === 0 ? null : (i % 100) - 50)));
    expect(cols.s).toEqual(rows.map((i) => i - 1500));
    expect(cols.n).toEqual(rows.map((i) => (i % 4 === 0 ? null : i * 1000 - 2000000)));
    expect(cols.ut).toEqual(rows.map((i) => i % 250));
    expect(cols.us).toEqual(rows);
    expect(cols.ui).toEqual(rows.map((i) => i * 1000000));
    expect(cols.b).toEqual(rows.map((i) => (i % 6 === 0 ? null : BigInt(i - 1000) * 4000000000n)));
    expect(cols.ub).toEqual(rows.map((i) => 18446744073709551615n - BigInt(i)));
    expect(cols.f).toEqual(rows.map((i) => i + 0.5));
  });

  it('gives the columns, empty, of a result without rows; a repeated name once per column', async () => {
    expect(await db.queryColumns('SELECT 1.5::DOUBLE AS a, 2 AS b WHERE false')).toEqual({ a: [], b: [] });
    expect(Object.keys(await db.queryColumns('SELECT 1.5::DOUBLE AS a, 2.5::DOUBLE AS a'))).toHaveLength(2);
  });
});
