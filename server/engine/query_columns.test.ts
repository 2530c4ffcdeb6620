/**
 * Engine.queryColumns: every column's values in row order, as JS values
 * (DOUBLE as number, BIGINT as bigint, NULL as null), over results of many
 * chunks (DuckDB hands them over 2048 rows at a time); DOUBLE columns are
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

  it('gives the columns, empty, of a result without rows; a repeated name once per column', async () => {
    expect(await db.queryColumns('SELECT 1.5::DOUBLE AS a, 2 AS b WHERE false')).toEqual({ a: [], b: [] });
    expect(Object.keys(await db.queryColumns('SELECT 1.5::DOUBLE AS a, 2.5::DOUBLE AS a'))).toHaveLength(2);
  });
});
