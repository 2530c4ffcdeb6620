/**
 * direct_reclaim_stall on hand-written rows.
 *
 * Edge cases covered:
 *   - a stall of exactly 1 ms (warn edge) and exactly 100 ms (critical edge)
 *   - back-to-back stalls on one task, the second beginning at the ts the first
 *     ended and lasting 1 ns under 1 ms (no finding, but in the summary)
 *   - two threads of one process (summary groups them)
 *   - memcg reclaim, and memcg soft-limit reclaim nested inside direct reclaim
 *     (paired per family, both reported)
 *   - an end whose begin was before the trace (begin_missing)
 *   - a begin followed by another begin (end lost: info, upper bound)
 *   - a begin still open at the end of the trace (lower bound)
 *   - a thread whose process is unknown (summary falls back to its name)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import { findingsOf, insert, newTraceDb, setTraceBounds, summaryOf } from './sql_test_db.ts';

const T = 1_000_000_000_000n;
const ms = (x: number) => BigInt(Math.round(x * 1_000_000));
const D = 'mm_vmscan_direct_reclaim_begin';
const DE = 'mm_vmscan_direct_reclaim_end';

let db: Engine;

beforeAll(async () => {
  db = await newTraceDb();
  await setTraceBounds(db, T, T + ms(2000)); // 2 s trace
  await insert(db, 'process', [
    { upid: 1, pid: 4242, name: 'dd' },
    { upid: 2, pid: 777, name: 'postgres' },
  ]);
  await insert(db, 'thread', [
    { utid: 3, tid: 4242, name: 'dd', upid: 1 },
    { utid: 6, tid: 4243, name: 'dd', upid: 1 },
    { utid: 5, tid: 777, name: 'postgres', upid: 2 },
    { utid: 7, tid: 900, name: 'java' },
  ]);
  await insert(db, 'mm_vmscan_direct_reclaim_begin', [
    { id: 10, ts: T + ms(100), cpu: 0, utid: 3, event: D, order: 0, gfp_flags: 'GFP_HIGHUSER_MOVABLE|__GFP_COMP' },
    { id: 12, ts: T + ms(101), cpu: 0, utid: 3, event: D, order: 0, gfp_flags: 'GFP_HIGHUSER_MOVABLE|__GFP_COMP' },
    { id: 20, ts: T + ms(150), cpu: 1, utid: 6, event: D, order: 3, gfp_flags: 'GFP_KERNEL' },
    {
      id: 30,
      ts: T + ms(300),
      cpu: 1,
      utid: 5,
      event: 'mm_vmscan_memcg_reclaim_begin',
      order: 0,
      gfp_flags: 'GFP_KERNEL',
    },
    { id: 40, ts: T + ms(400), cpu: 1, utid: 5, event: D, order: 0, gfp_flags: 'GFP_KERNEL' },
    {
      id: 41,
      ts: T + ms(400.5),
      cpu: 1,
      utid: 5,
      event: 'mm_vmscan_memcg_softlimit_reclaim_begin',
      order: 0,
      gfp_flags: 'GFP_KERNEL',
    },
    { id: 51, ts: T + ms(500), cpu: 0, utid: 7, event: D, order: 0, gfp_flags: 'GFP_NOFS' },
    { id: 52, ts: T + ms(600), cpu: 0, utid: 7, event: D, order: 0, gfp_flags: 'GFP_NOFS' },
    { id: 60, ts: T + ms(1990), cpu: 0, utid: 3, event: D, order: 0, gfp_flags: 'GFP_KERNEL' },
  ]);
  await insert(db, 'mm_vmscan_direct_reclaim_end', [
    { id: 50, ts: T + ms(3), cpu: 0, utid: 7, event: DE, nr_reclaimed: 16 },
    { id: 11, ts: T + ms(101), cpu: 0, utid: 3, event: DE, nr_reclaimed: 32 },
    { id: 13, ts: T + ms(101) + 999_999n, cpu: 0, utid: 3, event: DE, nr_reclaimed: 32 },
    { id: 21, ts: T + ms(250), cpu: 1, utid: 6, event: DE, nr_reclaimed: 1024 },
    { id: 31, ts: T + ms(305.5), cpu: 1, utid: 5, event: 'mm_vmscan_memcg_reclaim_end', nr_reclaimed: 8 },
    { id: 42, ts: T + ms(402.5), cpu: 1, utid: 5, event: 'mm_vmscan_memcg_softlimit_reclaim_end', nr_reclaimed: 4 },
    { id: 43, ts: T + ms(410), cpu: 1, utid: 5, event: DE, nr_reclaimed: 20 },
    { id: 53, ts: T + ms(600.2), cpu: 0, utid: 7, event: DE, nr_reclaimed: 4 },
  ]);
});

afterAll(() => db.close());

const closed = { open: false, end_lost: false, begin_missing: false };

describe('direct_reclaim_stall', () => {
  it('reports stalls at or over 1 ms and every unmatched begin/end', async () => {
    expect(await findingsOf(db, 'direct_reclaim_stall')).toEqual([
      // exactly 100 ms: critical
      {
        kind: 'direct',
        severity: 'critical',
        ts_ns: T + ms(150),
        dur_ns: ms(100),
        cpu: 1,
        tid: 4243,
        comm: 'dd',
        title: 'dd[4243] stalled 100.0 ms in direct reclaim (order 3, GFP_KERNEL, reclaimed 1024 pages)',
        values: { event: D, order: 3, gfp_flags: 'GFP_KERNEL', nr_reclaimed: 1024n, ...closed },
        event_ids: [20n, 21n],
      },
      // end at T+3 ms is java's first event: began before the trace (T)
      {
        kind: 'direct',
        severity: 'warn',
        ts_ns: T,
        dur_ns: ms(3),
        cpu: 0,
        tid: 900,
        comm: 'java',
        title: 'java[900] was in direct reclaim before the trace began; ended 3.0 ms into it (reclaimed 16 pages)',
        values: { event: D, nr_reclaimed: 16n, open: false, end_lost: false, begin_missing: true },
        event_ids: [50n],
      },
      // exactly 1 ms: warn
      {
        kind: 'direct',
        severity: 'warn',
        ts_ns: T + ms(100),
        dur_ns: ms(1),
        cpu: 0,
        tid: 4242,
        comm: 'dd',
        title:
          'dd[4242] stalled 1.0 ms in direct reclaim (order 0, GFP_HIGHUSER_MOVABLE|__GFP_COMP, reclaimed 32 pages)',
        values: { event: D, order: 0, gfp_flags: 'GFP_HIGHUSER_MOVABLE|__GFP_COMP', nr_reclaimed: 32n, ...closed },
        event_ids: [10n, 11n],
      },
      {
        kind: 'memcg',
        severity: 'warn',
        ts_ns: T + ms(300),
        dur_ns: ms(5.5),
        cpu: 1,
        tid: 777,
        comm: 'postgres',
        title: 'postgres[777] stalled 5.5 ms in memcg reclaim (order 0, GFP_KERNEL, reclaimed 8 pages)',
        values: {
          event: 'mm_vmscan_memcg_reclaim_begin',
          order: 0,
          gfp_flags: 'GFP_KERNEL',
          nr_reclaimed: 8n,
          ...closed,
        },
        event_ids: [30n, 31n],
      },
      // the direct reclaim around the nested soft-limit reclaim pairs with its own end (43), not 42
      {
        kind: 'direct',
        severity: 'warn',
        ts_ns: T + ms(400),
        dur_ns: ms(10),
        cpu: 1,
        tid: 777,
        comm: 'postgres',
        title: 'postgres[777] stalled 10.0 ms in direct reclaim (order 0, GFP_KERNEL, reclaimed 20 pages)',
        values: { event: D, order: 0, gfp_flags: 'GFP_KERNEL', nr_reclaimed: 20n, ...closed },
        event_ids: [40n, 43n],
      },
      {
        kind: 'memcg',
        severity: 'warn',
        ts_ns: T + ms(400.5),
        dur_ns: ms(2),
        cpu: 1,
        tid: 777,
        comm: 'postgres',
        title: 'postgres[777] stalled 2.0 ms in memcg soft-limit reclaim (order 0, GFP_KERNEL, reclaimed 4 pages)',
        values: {
          event: 'mm_vmscan_memcg_softlimit_reclaim_begin',
          order: 0,
          gfp_flags: 'GFP_KERNEL',
          nr_reclaimed: 4n,
          ...closed,
        },
        event_ids: [41n, 42n],
      },
      // open at end of trace (T+2000 ms): 10 ms, a lower bound
      {
        kind: 'direct',
        severity: 'warn',
        ts_ns: T + ms(1990),
        dur_ns: ms(10),
        cpu: 0,
        tid: 4242,
        comm: 'dd',
        title: 'dd[4242] still in direct reclaim at end of trace after 10.0 ms (order 0, GFP_KERNEL)',
        values: { event: D, order: 0, gfp_flags: 'GFP_KERNEL', open: true, end_lost: false, begin_missing: false },
        event_ids: [60n],
      },
      // begin 51 is followed by begin 52: its end was lost; 100 ms is only an upper bound
      {
        kind: 'direct',
        severity: 'info',
        ts_ns: T + ms(500),
        dur_ns: ms(100),
        cpu: 0,
        tid: 900,
        comm: 'java',
        title: 'java[900] direct reclaim has no end event (next begin 100.0 ms later)',
        values: { event: D, order: 0, gfp_flags: 'GFP_NOFS', open: true, end_lost: true, begin_missing: false },
        event_ids: [51n],
      },
    ]);
  });

  it('summarises completed stalls per process and kind (nearest-rank percentiles)', async () => {
    expect(await summaryOf(db, 'direct_reclaim_stall')).toEqual([
      // dd: 999_999, 1_000_000, 100_000_000 ns over 2 s; two threads
      {
        kind: 'direct',
        upid: 1,
        pid: 4242,
        process: 'dd',
        threads: 2n,
        stalls: 3n,
        stalls_per_sec: 1.5,
        total_ns: 101_999_999n,
        p50_ns: 1_000_000n,
        p95_ns: 100_000_000n,
        p99_ns: 100_000_000n,
        max_ns: 100_000_000n,
        nr_reclaimed: 1088n,
      },
      // postgres memcg: 5.5 ms and the nested 2 ms soft-limit reclaim
      {
        kind: 'memcg',
        upid: 2,
        pid: 777,
        process: 'postgres',
        threads: 1n,
        stalls: 2n,
        stalls_per_sec: 1,
        total_ns: 7_500_000n,
        p50_ns: 2_000_000n,
        p95_ns: 5_500_000n,
        p99_ns: 5_500_000n,
        max_ns: 5_500_000n,
        nr_reclaimed: 12n,
      },
      {
        kind: 'direct',
        upid: 2,
        pid: 777,
        process: 'postgres',
        threads: 1n,
        stalls: 1n,
        stalls_per_sec: 0.5,
        total_ns: 10_000_000n,
        p50_ns: 10_000_000n,
        p95_ns: 10_000_000n,
        p99_ns: 10_000_000n,
        max_ns: 10_000_000n,
        nr_reclaimed: 20n,
      },
      // java: process unknown, named after the thread; only 52->53 (0.2 ms) is complete
      {
        kind: 'direct',
        upid: null,
        pid: null,
        process: 'java',
        threads: 1n,
        stalls: 1n,
        stalls_per_sec: 0.5,
        total_ns: 200_000n,
        p50_ns: 200_000n,
        p95_ns: 200_000n,
        p99_ns: 200_000n,
        max_ns: 200_000n,
        nr_reclaimed: 4n,
      },
    ]);
  });
});
