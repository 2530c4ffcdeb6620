/**
 * binnedSql reads its source in each of its two branches (rows kept whole,
 * rows summarised per bucket) instead of materialising the source once: on
 * a 10M-event trace the materialised thread_state rows of the threads of
 * interest (1.5M rows) took ~100 MB of the server's peak RSS after the
 * ingest. In real DuckDB: the plan has no CTE scan, and the answer is the
 * one computed here from the rows inserted.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { binnedSql } from './track_queries.ts';

describe('binnedSql', () => {
  it('scans the source in each branch, with no materialised CTE, and keeps long rows and buckets', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      // Two keys; every 10th row 500 ns long (kept whole at res 100), the others 5 ns (summarised).
      await c.run(
        `CREATE TABLE s AS SELECT i % 2 AS k, i AS id, i * 10 AS ts, CASE WHEN i % 10 = 0 THEN 500 ELSE 5 END AS dur
         FROM range(1000) t(i)`,
      );
      const sql = binnedSql('SELECT k, id, ts, dur FROM s', [], {
        a0: 0n,
        a1: 10_000n,
        res: 100n,
        base: 0n,
        last: 10_000n,
      });
      const plan = (await c.runAndReadAll(`EXPLAIN ${sql}`))
        .getRowObjects()
        .map((r) => String(r.explain_value))
        .join('\n');
      expect(plan).toContain('SEQ_SCAN');
      expect(plan).not.toContain('CTE_SCAN');

      const rows = (await c.runAndReadAll(sql)).getRowObjects();
      const expected = new Map<string, { n: number; lo: number; hi: number }>();
      let whole = 0;
      for (let i = 0; i < 1000; i++) {
        const ts = i * 10;
        const dur = i % 10 === 0 ? 500 : 5;
        if (dur >= 100) {
          whole++;
          continue;
        }
        const key = `${i % 2}/${Math.floor(ts / 100)}`;
        const b = expected.get(key) ?? { n: 0, lo: Infinity, hi: -Infinity };
        expected.set(key, { n: b.n + 1, lo: Math.min(b.lo, ts), hi: Math.max(b.hi, ts + dur) });
      }
      const kept = rows.filter((r) => Number(r.dur) >= 100 && Number(r.n) === 1);
      expect(kept).toHaveLength(whole);
      const buckets = rows.filter((r) => !kept.includes(r));
      expect(
        new Map(
          buckets.map((r) => [
            `${Number(r.k)}/${Math.floor(Number(r.ts) / 100)}`,
            { n: Number(r.n), lo: Number(r.ts), hi: Number(r.ts) + Number(r.dur) },
          ]),
        ),
      ).toEqual(expected);
    } finally {
      c.closeSync();
      db.closeSync();
    }
  });
});
