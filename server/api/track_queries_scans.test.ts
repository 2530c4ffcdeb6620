/**
 * The track queries whose CTE is read twice mark it NOT MATERIALIZED, so
 * its rows are not all held in memory: binnedSql's two branches (rows kept
 * whole, rows summarised per bucket; the materialised thread_state rows of
 * the threads of interest of a 10M-event trace took ~100 MB of the
 * server's peak RSS after the ingest) and flowTrack's two join ends (~240
 * MB for the whole window of that trace). In real DuckDB: binnedSql's plan
 * has no CTE scan, and both answers are the ones computed here from the
 * rows inserted. (flowTrack's plan is not checked: on a plain table DuckDB
 * inlines its CTE either way, on the model's ftrace_event view the plan has
 * CTE scans of the view's own either way.)
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { openDuckDb } from '../engine/engine.ts';
import type { OpenTrace } from './trace_engines.ts';
import { binnedSql, flowTrack } from './track_queries.ts';

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

  it('flowTrack (its events CTE not materialised) pairs each link with its two events', async () => {
    const engine = await openDuckDb(':memory:');
    try {
      await engine.exec(
        `CREATE TABLE ftrace_event AS SELECT i AS id, 1000 + i * 10 AS ts, i % 2 AS cpu, 100 + i % 3 AS utid FROM range(50) t(i);
         CREATE TABLE flow (id BIGINT, kind VARCHAR, slice_out BIGINT, slice_in BIGINT);
         INSERT INTO flow VALUES (1, 'wakeup', 4, 9), (2, 'wakeup', 20, 21), (3, 'migration', 5, 6)`,
      );
      const tr: OpenTrace = {
        meta: {
          base: 1000n,
          last: 1490n,
          maxDur: { sched_slice: 0n, thread_state: 0n, slice: 0n },
          tables: new Set(['ftrace_event', 'flow']),
        },
        query: (sql, params) => engine.query(sql, params),
      };
      const data = await flowTrack(tr, { t0: 0n, t1: 491n, px: 100 }, 'wakeup');
      const ev = (i: number) => ({ id: i, ts: i * 10, cpu: i % 2, utid: 100 + (i % 3) });
      const expected = [
        [1, 4, 9],
        [2, 20, 21],
      ].map(([id, o, n]) => [
        id,
        ev(o!).id,
        ev(o!).ts,
        ev(o!).cpu,
        ev(o!).utid,
        ev(n!).id,
        ev(n!).ts,
        ev(n!).cpu,
        ev(n!).utid,
      ]);
      const cols = data.cols as Record<string, unknown[]>;
      const keys = ['id', 'out_id', 'out_ts', 'out_cpu', 'out_utid', 'in_id', 'in_ts', 'in_cpu', 'in_utid'];
      const got = expected.map((_, r) => keys.map((k) => Number(cols[k]![r])));
      expect(got).toEqual(expected);
    } finally {
      engine.close();
    }
  });
});
