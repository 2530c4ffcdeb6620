/**
 * A summarised bucket's columns all come from one row: its longest, the
 * lowest id among equally long ones (BUCKET_PICK), in real DuckDB.
 * The rows are inserted highest id first, so a pick that keeps the first of
 * equal durations it meets (what `arg_max(name, dur)` did on one thread)
 * answers differently.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { BUCKET_PICK, binnedSql } from './track_queries.ts';

describe('bucket pick', () => {
  it('takes name and utid from the longest slice, the lowest id on a tie', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      await c.run('CREATE TABLE s (k INTEGER, id BIGINT, ts BIGINT, dur BIGINT, name VARCHAR, utid INTEGER)');
      // One bucket of 100 ns [0, 100): three 10 ns slices (all narrower than
      // the bucket, so summarised), ids 7 and 3 equally long, id 5 shorter.
      await c.run(
        `INSERT INTO s VALUES (0, 7, 10, 10, 'seven', 70), (0, 3, 40, 10, 'three', 30), (0, 5, 70, 4, 'five', 50)`,
      );
      const sql = binnedSql(
        'SELECT k, id, ts, dur, name, utid FROM s',
        [
          { col: 'name', agg: `arg_max(name, ${BUCKET_PICK})` },
          { col: 'utid', agg: `arg_max(utid, ${BUCKET_PICK})` },
        ],
        { a0: 0n, a1: 100n, res: 100n, base: 0n, last: 100n },
      );
      const rows = (await c.runAndReadAll(sql)).getRowObjects();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ n: 3n, name: 'three', utid: 30 });
    } finally {
      c.closeSync();
      db.closeSync();
    }
  });
});
