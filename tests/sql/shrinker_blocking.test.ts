/**
 * shrinker_blocking on hand-written rows.
 *
 * Edge cases covered:
 *   - a call of exactly 10 ms (warn threshold edge) and exactly 100 ms (critical edge)
 *   - back-to-back calls on one task, the second starting at the same ts the
 *     first ended (file order decides) and lasting 1 ns less than 10 ms
 *   - two kswapd threads interleaved
 *   - a symbol printed with its '+0x0/0x210' suffix on the start only
 *   - a start whose end was lost (next event on the task is a start)
 *   - a start closed by an end of another shrinker (symbol mismatch)
 *   - a start still open at the end of the trace
 *   - a start with no later shrinker event whose task goes on reclaiming
 *     (an lru_shrink_inactive 7.7 ms later): its end was lost, the call had
 *     returned by then; info, bounded, no impact
 *   - an end whose start was before the trace began
 *   - context: kswapd, direct reclaim, memcg reclaim, none ('other')
 *   - 4.x-style rows with NULL priority
 * Every expected value below is worked out by hand from the rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import { findingsOf, insert, newTraceDb, rankedOf, setTraceBounds } from './sql_test_db.ts';

const T = 1_000_000_000_000n; // trace starts at 1000 s
const ms = (x: number) => BigInt(Math.round(x * 1_000_000));

let db: Engine;

beforeAll(async () => {
  db = await newTraceDb();
  await setTraceBounds(db, T, T + ms(1000));
  await insert(db, 'thread', [
    { utid: 1, tid: 95, name: 'kswapd0' },
    { utid: 2, tid: 96, name: 'kswapd1' },
    { utid: 3, tid: 4242, name: 'dd', upid: 1 },
    { utid: 4, tid: 500, name: 'bash' },
    { utid: 5, tid: 777, name: 'postgres' },
  ]);
  const start = (
    id: number,
    ts: bigint,
    cpu: number,
    utid: number,
    shrink: string,
    extra: Record<string, unknown> = {},
  ) => ({
    id,
    ts,
    cpu,
    utid,
    shrink,
    shr: '0xffff8881',
    nid: 0,
    ...extra,
  });
  await insert(db, 'mm_shrink_slab_start', [
    // A: kswapd0, exactly 10 ms
    start(10, T, 0, 1, 'super_cache_scan', {
      nr_objects_to_shrink: 8192,
      gfp_flags: 'GFP_KERNEL',
      cache_items: 120000,
      delta: 500,
      total_scan: 4096,
      priority: 6,
    }),
    // B: kswapd0 back-to-back, starts at A's end ts, 9.999999 ms: no finding
    start(12, T + ms(10), 0, 1, 'super_cache_scan', {
      nr_objects_to_shrink: 10,
      cache_items: 100,
      total_scan: 10,
      priority: 6,
    }),
    // C: kswapd1, exactly 100 ms, symbol with offset suffix, 4.x-style NULL priority
    start(20, T + ms(5), 1, 2, 'xfs_buftarg_shrink_scan+0x0/0x210', {
      nr_objects_to_shrink: 0,
      cache_items: 5000,
      delta: 12,
      total_scan: 12,
    }),
    // D: dd inside direct reclaim, 30 ms
    start(31, T + ms(200.1), 1, 3, 'super_cache_scan', {
      nr_objects_to_shrink: 200,
      cache_items: 3000,
      total_scan: 200,
      priority: 12,
    }),
    // E: bash outside any traced reclaim (drop_caches), 50 ms
    start(40, T + ms(300), 0, 4, 'super_cache_scan', {
      nr_objects_to_shrink: 1500,
      cache_items: 1500,
      total_scan: 1500,
      priority: 0,
    }),
    // F: kswapd0, end lost: the next event on the task is another start 2 ms later
    start(50, T + ms(400), 0, 1, 'super_cache_scan', {
      nr_objects_to_shrink: 64,
      cache_items: 640,
      total_scan: 64,
      priority: 10,
    }),
    start(51, T + ms(402), 0, 1, 'super_cache_scan', {
      nr_objects_to_shrink: 64,
      cache_items: 640,
      total_scan: 64,
      priority: 10,
    }),
    // G: kswapd1, still open at end of trace (T + 1000 ms): 100 ms
    start(60, T + ms(900), 1, 2, 'super_cache_scan', {
      nr_objects_to_shrink: 1,
      cache_items: 2,
      total_scan: 1,
      priority: 1,
    }),
    // I: postgres in memcg reclaim, closed by an end of another shrinker
    start(71, T + ms(500.5), 1, 5, 'ext4_es_scan', {
      nr_objects_to_shrink: 5,
      cache_items: 50,
      total_scan: 5,
      priority: 12,
    }),
    // J: bash's last shrinker event, 598 ms before the trace ends; bash reclaims again 7.7 ms later
    start(80, T + ms(402), 0, 4, 'super_cache_scan', {
      nr_objects_to_shrink: 9,
      cache_items: 90,
      total_scan: 9,
      priority: 2,
    }),
    // L: dd's start at T+700 is followed by its next start at T+710, but dd reclaims again at T+703: returned by then
    start(90, T + ms(700), 1, 3, 'super_cache_scan', {
      nr_objects_to_shrink: 4,
      cache_items: 40,
      total_scan: 4,
      priority: 5,
    }),
    start(92, T + ms(710), 1, 3, 'super_cache_scan', {
      nr_objects_to_shrink: 4,
      cache_items: 40,
      total_scan: 4,
      priority: 5,
    }),
  ]);
  await insert(db, 'mm_vmscan_lru_shrink_inactive', [
    { id: 81, ts: T + ms(409.7), cpu: 0, utid: 4, nid: 0, nr_scanned: 32, nr_reclaimed: 0, priority: 2 },
    { id: 91, ts: T + ms(703), cpu: 1, utid: 3, nid: 0, nr_scanned: 32, nr_reclaimed: 0, priority: 5 },
  ]);
  const end = (
    id: number,
    ts: bigint,
    cpu: number,
    utid: number,
    shrink: string,
    retval: number,
    extra: Record<string, unknown> = {},
  ) => ({
    id,
    ts,
    cpu,
    utid,
    shrink,
    shr: '0xffff8881',
    nid: 0,
    retval,
    ...extra,
  });
  await insert(db, 'mm_shrink_slab_end', [
    // H: dd's first shrinker event is an end: began before the trace, 20 ms in
    end(5, T + ms(20), 1, 3, 'super_cache_scan', 7, { unused_scan: 0, new_scan: 0, total_scan: 64 }),
    end(11, T + ms(10), 0, 1, 'super_cache_scan', 1024, { unused_scan: 8192, new_scan: 4096, total_scan: 4096 }),
    end(13, T + ms(10) + 9_999_999n, 0, 1, 'super_cache_scan', 10, { unused_scan: 10, new_scan: 0 }),
    end(25, T + ms(105), 1, 2, 'xfs_buftarg_shrink_scan', 12, { unused_scan: 0, new_scan: 0 }),
    end(32, T + ms(230.1), 1, 3, 'super_cache_scan', 100, { unused_scan: 200, new_scan: 100 }),
    end(41, T + ms(350), 0, 4, 'super_cache_scan', 1400, { unused_scan: 0, new_scan: 0 }),
    end(52, T + ms(403), 0, 1, 'super_cache_scan', 64, { unused_scan: 0, new_scan: 0 }),
    end(72, T + ms(530), 1, 5, 'super_cache_scan', 3, { unused_scan: 0, new_scan: 0 }),
    end(93, T + ms(711), 1, 3, 'super_cache_scan', 2, { unused_scan: 0, new_scan: 0 }),
  ]);
  await insert(db, 'mm_vmscan_direct_reclaim_begin', [
    {
      id: 30,
      ts: T + ms(200),
      cpu: 1,
      utid: 3,
      event: 'mm_vmscan_direct_reclaim_begin',
      order: 0,
      gfp_flags: 'GFP_HIGHUSER_MOVABLE',
    },
    {
      id: 70,
      ts: T + ms(500),
      cpu: 1,
      utid: 5,
      event: 'mm_vmscan_memcg_reclaim_begin',
      order: 0,
      gfp_flags: 'GFP_KERNEL',
    },
  ]);
  await insert(db, 'mm_vmscan_direct_reclaim_end', [
    { id: 33, ts: T + ms(231), cpu: 1, utid: 3, event: 'mm_vmscan_direct_reclaim_end', nr_reclaimed: 32 },
    { id: 73, ts: T + ms(531), cpu: 1, utid: 5, event: 'mm_vmscan_memcg_reclaim_end', nr_reclaimed: 8 },
  ]);
});

afterAll(() => db.close());

describe('shrinker_blocking', () => {
  it('finds each blocking, open and unmatched call, ordered by severity then ts', async () => {
    const closed = { open: false, end_lost: false, begin_missing: false };
    expect(await findingsOf(db, 'shrinker_blocking')).toEqual([
      // C: 100 ms exactly is critical; symbol suffix stripped; NULL priority omitted
      {
        kind: 'call',
        severity: 'critical',
        ts_ns: T + ms(5),
        dur_ns: ms(100),
        cpu: 1,
        tid: 96,
        comm: 'kswapd1',
        title: 'xfs_buftarg_shrink_scan blocked kswapd1 for 100.0 ms (freed 12 of 12 objects to scan)',
        values: {
          shrinker: 'xfs_buftarg_shrink_scan',
          context: 'kswapd',
          shr: '0xffff8881',
          nid: 0,
          nr_objects_to_shrink: 0n,
          cache_items: 5000n,
          delta: 12n,
          total_scan: 12n,
          freed: 12n,
          unused_scan: 0n,
          new_scan: 0n,
          ...closed,
        },
        event_ids: [20n, 25n],
      },
      // G: open at end of trace: T+900 ms .. T+1000 ms = 100 ms, a lower bound, critical
      {
        kind: 'call',
        severity: 'critical',
        ts_ns: T + ms(900),
        dur_ns: ms(100),
        cpu: 1,
        tid: 96,
        comm: 'kswapd1',
        title: 'super_cache_scan call by kswapd1 still running at end of trace after 100.0 ms',
        values: {
          shrinker: 'super_cache_scan',
          context: 'kswapd',
          shr: '0xffff8881',
          nid: 0,
          priority: 1,
          nr_objects_to_shrink: 1n,
          cache_items: 2n,
          total_scan: 1n,
          open: true,
          end_lost: false,
          begin_missing: false,
        },
        event_ids: [60n],
      },
      // H: began before the trace: from trace start T to the end at T+20 ms (ties with A on ts; lower event id first)
      {
        kind: 'call',
        severity: 'warn',
        ts_ns: T,
        dur_ns: ms(20),
        cpu: 1,
        tid: 4242,
        comm: 'dd',
        title: 'super_cache_scan call by dd[4242] began before the trace and ended 20.0 ms into it',
        values: {
          shrinker: 'super_cache_scan',
          context: 'other',
          shr: '0xffff8881',
          nid: 0,
          total_scan: 64n,
          freed: 7n,
          unused_scan: 0n,
          new_scan: 0n,
          open: false,
          end_lost: false,
          begin_missing: true,
        },
        event_ids: [5n],
      },
      // A: exactly 10 ms is warn
      {
        kind: 'call',
        severity: 'warn',
        ts_ns: T,
        dur_ns: ms(10),
        cpu: 0,
        tid: 95,
        comm: 'kswapd0',
        title: 'super_cache_scan blocked kswapd0 for 10.0 ms (freed 1.0k of 4.1k objects to scan)',
        values: {
          shrinker: 'super_cache_scan',
          context: 'kswapd',
          shr: '0xffff8881',
          nid: 0,
          priority: 6,
          gfp_flags: 'GFP_KERNEL',
          nr_objects_to_shrink: 8192n,
          cache_items: 120000n,
          delta: 500n,
          total_scan: 4096n,
          freed: 1024n,
          unused_scan: 8192n,
          new_scan: 4096n,
          ...closed,
        },
        event_ids: [10n, 11n],
      },
      // D: inside dd's direct reclaim (T+200 .. T+231 ms)
      {
        kind: 'call',
        severity: 'warn',
        ts_ns: T + ms(200.1),
        dur_ns: ms(30),
        cpu: 1,
        tid: 4242,
        comm: 'dd',
        title: 'super_cache_scan blocked dd[4242] in direct reclaim for 30.0 ms (freed 100 of 200 objects to scan)',
        values: {
          shrinker: 'super_cache_scan',
          context: 'direct reclaim',
          shr: '0xffff8881',
          nid: 0,
          priority: 12,
          nr_objects_to_shrink: 200n,
          cache_items: 3000n,
          total_scan: 200n,
          freed: 100n,
          unused_scan: 200n,
          new_scan: 100n,
          ...closed,
        },
        event_ids: [31n, 32n],
      },
      // E: no traced reclaim around it
      {
        kind: 'call',
        severity: 'warn',
        ts_ns: T + ms(300),
        dur_ns: ms(50),
        cpu: 0,
        tid: 500,
        comm: 'bash',
        title: 'super_cache_scan blocked bash[500] for 50.0 ms (freed 1.4k of 1.5k objects to scan)',
        values: {
          shrinker: 'super_cache_scan',
          context: 'other',
          shr: '0xffff8881',
          nid: 0,
          priority: 0,
          nr_objects_to_shrink: 1500n,
          cache_items: 1500n,
          total_scan: 1500n,
          freed: 1400n,
          unused_scan: 0n,
          new_scan: 0n,
          ...closed,
        },
        event_ids: [40n, 41n],
      },
      // F: end lost; dur is up to the task's next shrinker event (an upper bound): info
      {
        kind: 'call',
        severity: 'info',
        ts_ns: T + ms(400),
        dur_ns: ms(2),
        cpu: 0,
        tid: 95,
        comm: 'kswapd0',
        title: 'super_cache_scan call by kswapd0 has no end event (next shrinker event 2.0 ms later)',
        values: {
          shrinker: 'super_cache_scan',
          context: 'kswapd',
          shr: '0xffff8881',
          nid: 0,
          priority: 10,
          nr_objects_to_shrink: 64n,
          cache_items: 640n,
          total_scan: 64n,
          open: true,
          end_lost: true,
          begin_missing: false,
          bound_ns: ms(2),
        },
        event_ids: [50n],
      },
      // J: end lost, but bash reclaimed again 7.7 ms later: the call had returned by then. Not a
      // 598 ms "still running" critical: info, bounded by that event.
      {
        kind: 'call',
        severity: 'info',
        ts_ns: T + ms(402),
        dur_ns: ms(7.7),
        cpu: 0,
        tid: 500,
        comm: 'bash',
        title:
          "super_cache_scan call by bash[500] has no end event; it had returned within 7.7 ms (the task's next reclaim event)",
        values: {
          shrinker: 'super_cache_scan',
          context: 'other',
          shr: '0xffff8881',
          nid: 0,
          priority: 2,
          nr_objects_to_shrink: 9n,
          cache_items: 90n,
          total_scan: 9n,
          open: true,
          end_lost: true,
          begin_missing: false,
          bound_ns: ms(7.7),
        },
        event_ids: [80n],
      },
      // I: the next end on the task is of another shrinker: treated as a lost end; memcg context
      {
        kind: 'call',
        severity: 'info',
        ts_ns: T + ms(500.5),
        dur_ns: ms(29.5),
        cpu: 1,
        tid: 777,
        comm: 'postgres',
        title: 'ext4_es_scan call by postgres[777] has no end event (next shrinker event 29.5 ms later)',
        values: {
          shrinker: 'ext4_es_scan',
          context: 'memcg reclaim',
          shr: '0xffff8881',
          nid: 0,
          priority: 12,
          nr_objects_to_shrink: 5n,
          cache_items: 50n,
          total_scan: 5n,
          open: true,
          end_lost: true,
          begin_missing: false,
          bound_ns: ms(29.5),
        },
        event_ids: [71n],
      },
      // L: dd's next shrinker event is a start 10 ms later, but dd reclaimed 3 ms later: bounded there
      {
        kind: 'call',
        severity: 'info',
        ts_ns: T + ms(700),
        dur_ns: ms(3),
        cpu: 1,
        tid: 4242,
        comm: 'dd',
        title:
          "super_cache_scan call by dd[4242] has no end event; it had returned within 3.0 ms (the task's next reclaim event)",
        values: {
          shrinker: 'super_cache_scan',
          context: 'other',
          shr: '0xffff8881',
          nid: 0,
          priority: 5,
          nr_objects_to_shrink: 4n,
          cache_items: 40n,
          total_scan: 4n,
          open: true,
          end_lost: true,
          begin_missing: false,
          bound_ns: ms(3),
        },
        event_ids: [90n],
      },
    ]);
  });

  it('rates each call by the time it blocked (impact), lost ends at 0, and ranks critical first', async () => {
    const ranked = await rankedOf(db, 'shrinker_blocking');
    expect(ranked.map((f) => [f.rank, f.event_ids[0], f.severity, f.impact_ns])).toEqual([
      [1, 20n, 'critical', ms(100)], // C: 100 ms
      [2, 60n, 'critical', ms(100)], // G: open, 100 ms to the end of the trace (ties C; later)
      [3, 40n, 'warn', ms(50)],
      [4, 31n, 'warn', ms(30)],
      [5, 5n, 'warn', ms(20)],
      [6, 10n, 'warn', ms(10)],
      // info: lost ends cost nothing known; by time
      [7, 50n, 'info', 0n],
      [8, 80n, 'info', 0n],
      [9, 71n, 'info', 0n],
      [10, 90n, 'info', 0n],
    ]);
    expect(new Set(ranked.map((f) => f.id)).size).toBe(ranked.length);
    expect(ranked.every((f) => f.parent_id === null)).toBe(true);
  });

  it('moves calls across thresholds with --param overrides (units accepted for _ns params)', async () => {
    // warn at 9.999999 ms makes B (exactly 9_999_999 ns) a warn finding too; critical at 1 s leaves C at warn.
    const f = await findingsOf(db, 'shrinker_blocking', {
      'shrinker_blocking.warn_ns': '9999999',
      'shrinker_blocking.critical_ns': '1s',
    });
    const b = f.find((x) => x.event_ids[0] === 12n);
    expect(b?.severity).toBe('warn');
    expect(b?.dur_ns).toBe(9_999_999n);
    expect(f.filter((x) => x.severity === 'critical')).toEqual([]);
    expect(f.find((x) => x.event_ids[0] === 20n)?.severity).toBe('warn');
  });
});
