/**
 * kswapd_escalation on hand-written rows.
 *
 * Edge cases covered:
 *   - two kswapd threads
 *   - an episode closed by a sleep, one closed by the next wake (6.x premature
 *     nap), one still awake at end of trace
 *   - a 4.x-style episode with no wake event: it starts at the first reclaim
 *     event after a sleep (and at the start of the trace)
 *   - a sleep before any episode and a repeated sleep (both ignored)
 *   - priority from lru_shrink_inactive, lru_shrink_active and shrink_slab_start;
 *     a later pass at a higher priority does not undo the lowest
 *   - repeated ramp-ups: 3 qualifying episodes within 1 s; a 4th 1.35 s after
 *     the first is outside every 1 s window that holds 3
 *   - direct reclaim escalation of an ordinary task, with an LRU pass of that
 *     task outside its reclaim window (ignored), and a pass staying at 12
 *   - threshold edges: min priority exactly 6 and exactly 3; severity by the
 *     time spent at those priorities, not by how low they went
 *   - the episodes a ramp-up covers become its children (info)
 *   - a memcg reclaim pass: its own kind and title, never "kswapd"
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import { findingsOf, insert, newTraceDb, rankedOf, setTraceBounds, summaryOf } from './sql_test_db.ts';

const T = 1_000_000_000_000n;
const ms = (x: number) => BigInt(Math.round(x * 1_000_000));

let db: Engine;

const inactive = (id: number, t: number, utid: number, priority: number, nr_scanned: number, nr_reclaimed: number) => ({
  id,
  ts: T + ms(t),
  cpu: utid === 2 ? 1 : 0,
  utid,
  nid: 0,
  nr_scanned,
  nr_reclaimed,
  priority,
  reclaim_flags: 'RECLAIM_WB_FILE|RECLAIM_WB_ASYNC',
});

beforeAll(async () => {
  db = await newTraceDb();
  await setTraceBounds(db, T, T + ms(2000));
  await insert(db, 'thread', [
    { utid: 1, tid: 95, name: 'kswapd0' },
    { utid: 2, tid: 96, name: 'kswapd1' },
    { utid: 3, tid: 4242, name: 'dd', upid: 1 },
  ]);
  await insert(db, 'mm_vmscan_kswapd_wake', [
    { id: 100, ts: T, cpu: 0, utid: 1, nid: 0, zid: 2, order: 0 },
    { id: 110, ts: T + ms(300), cpu: 0, utid: 1, nid: 0, zid: 2, order: 0 },
    { id: 120, ts: T + ms(400), cpu: 0, utid: 1, nid: 0, zid: 2, order: 3 },
    { id: 140, ts: T + ms(500), cpu: 1, utid: 2, nid: 1, zid: 2, order: 0 },
  ]);
  await insert(db, 'mm_vmscan_kswapd_sleep', [
    { id: 4, ts: T + ms(0.5), cpu: 1, utid: 2, nid: 1 }, // before any episode of kswapd1: ignored
    { id: 6, ts: T + ms(2), cpu: 1, utid: 2, nid: 1 },
    { id: 108, ts: T + ms(20), cpu: 0, utid: 1, nid: 0 },
    { id: 122, ts: T + ms(420), cpu: 0, utid: 1, nid: 0 },
    { id: 123, ts: T + ms(430), cpu: 0, utid: 1, nid: 0 }, // repeated sleep: ignored
    { id: 142, ts: T + ms(502), cpu: 1, utid: 2, nid: 1 },
  ]);
  await insert(db, 'mm_vmscan_lru_shrink_inactive', [
    inactive(5, 1, 2, 2, 64, 0), // kswapd1, no wake seen: episode from here
    // E1 kswapd0
    inactive(101, 1, 1, 12, 32, 32),
    inactive(102, 2, 1, 11, 64, 12),
    inactive(106, 10, 1, 6, 1000, 20),
    inactive(107, 12, 1, 7, 904, 8),
    // E2
    inactive(111, 301, 1, 12, 100, 0),
    inactive(112, 350, 1, 3, 5000, 50),
    // E3
    inactive(121, 410, 1, 5, 10, 1),
    // E4: 4.x style, no wake after the sleep; NULL nr_dirty etc.
    inactive(130, 1350, 1, 4, 320, 32),
    // kswapd1 second episode stays at 12
    inactive(141, 501, 2, 12, 32, 32),
    // dd direct reclaim
    inactive(201, 601, 3, 12, 32, 2),
    inactive(202, 605, 3, 8, 256, 10),
    inactive(205, 620, 3, 6, 1024, 20),
    inactive(210, 700, 3, 1, 32, 0), // outside any reclaim window of dd: ignored
    inactive(221, 801, 3, 12, 32, 32),
  ]);
  await insert(db, 'mm_vmscan_lru_shrink_active', [
    {
      id: 103,
      ts: T + ms(3),
      cpu: 0,
      utid: 1,
      nid: 0,
      nr_taken: 64,
      nr_active: 60,
      nr_deactivated: 4,
      nr_referenced: 2,
      priority: 9,
      reclaim_flags: 'RECLAIM_WB_ANON',
    },
  ]);
  await insert(db, 'mm_shrink_slab_start', [
    {
      id: 104,
      ts: T + ms(4),
      cpu: 0,
      utid: 1,
      shrink: 'super_cache_scan',
      priority: 9,
      nr_objects_to_shrink: 0,
      cache_items: 500,
    },
    {
      id: 203,
      ts: T + ms(606),
      cpu: 0,
      utid: 3,
      shrink: 'super_cache_scan',
      priority: 8,
      nr_objects_to_shrink: 0,
      cache_items: 500,
    },
  ]);
  await insert(db, 'mm_shrink_slab_end', [
    { id: 105, ts: T + ms(5), cpu: 0, utid: 1, shrink: 'super_cache_scan', retval: 100 },
    { id: 204, ts: T + ms(607), cpu: 0, utid: 3, shrink: 'super_cache_scan', retval: 50 },
  ]);
  await insert(db, 'mm_vmscan_direct_reclaim_begin', [
    {
      id: 200,
      ts: T + ms(600),
      cpu: 0,
      utid: 3,
      event: 'mm_vmscan_direct_reclaim_begin',
      order: 2,
      gfp_flags: 'GFP_KERNEL',
    },
    {
      id: 220,
      ts: T + ms(800),
      cpu: 0,
      utid: 3,
      event: 'mm_vmscan_direct_reclaim_begin',
      order: 0,
      gfp_flags: 'GFP_KERNEL',
    },
  ]);
  await insert(db, 'mm_vmscan_direct_reclaim_end', [
    { id: 206, ts: T + ms(630), cpu: 0, utid: 3, event: 'mm_vmscan_direct_reclaim_end', nr_reclaimed: 32 },
    { id: 222, ts: T + ms(802), cpu: 0, utid: 3, event: 'mm_vmscan_direct_reclaim_end', nr_reclaimed: 32 },
  ]);
});

afterAll(() => db.close());

describe('kswapd_escalation', () => {
  it('reports escalations, repeated ramp-ups and direct reclaim escalations, rated by the time at low priority', async () => {
    // Time at priority <= 6 (<= 3): from the start of the first pass at it (the last event at a
    // higher priority: LRU events fire at the end of a pass) to the episode's last reclaim event.
    expect(await findingsOf(db, 'kswapd_escalation')).toEqual([
      // E2 .. the ramp-up: E1 (8 ms at <= 6), E2 (49 ms at <= 3), E3 (10 ms at <= 6) start within 1 s and
      // each reach <= 6; 49 ms at <= 3 in all is under 100 ms: warn. E4 (T+1350) shares no 1 s window with two others.
      {
        kind: 'repeated_rampup',
        severity: 'warn',
        ts_ns: T,
        dur_ns: ms(420),
        cpu: 0,
        tid: 95,
        comm: 'kswapd0',
        title:
          'kswapd0 wound up 3 times in 420.0 ms, each time to priority 6 or lower (lowest 3), 67.0 ms at priority 6 or lower in all',
        values: {
          episodes: 3n,
          min_priority: 3,
          critical_episodes: 0n,
          min_priorities: [6, 3, 5],
          window_ns: 1_000_000_000n,
          low_priority_ns: ms(67),
          critical_priority_ns: ms(49),
        },
        event_ids: [100n, 110n, 120n],
      },
      // dd's direct reclaim T+600 .. T+630: 12 -> 8 -> 6 (slab at 8 no new low); pass at T+700 outside is ignored.
      // The pass that reached 6 began after the slab call at T+606 (its end at T+607 has no priority: the
      // call's start at T+606 bounds it): 20 - 6 = 14 ms at <= 6: warn
      {
        kind: 'direct_escalation',
        severity: 'warn',
        ts_ns: T + ms(600),
        dur_ns: ms(30),
        cpu: 0,
        tid: 4242,
        comm: 'dd',
        title:
          'dd[4242] in direct reclaim wound up to priority 6 in 20.0 ms, 14.0 ms at priority 6 or lower (scanned 1.3k, reclaimed 2%)',
        values: {
          min_priority: 6,
          start_priority: 12,
          time_to_min_ns: ms(20),
          low_priority_ns: ms(14),
          nr_scanned: 1312n,
          nr_reclaimed: 32n,
          efficiency: 0.0244,
          slab_freed: 50n,
          lru_passes: 3n,
          priority_steps: [
            { priority: 12, at_ns: ms(1), from_ns: 0n },
            { priority: 8, at_ns: ms(5), from_ns: ms(1) },
            { priority: 6, at_ns: ms(20), from_ns: ms(6) },
          ],
          end_reason: 'end',
          context: 'direct reclaim',
          order: 2,
          gfp_flags: 'GFP_KERNEL',
          open: false,
          end_nr_reclaimed: 32n,
        },
        event_ids: [200n, 201n, 202n, 205n, 206n],
      },
      // E1: priority exactly 6; 12 -> 11 -> 9 (lru_shrink_active) -> 6; slab_start at 9 and the pass at 7 are no new lows.
      // The pass at 6 began after the last event at 9 (T+4): 12 - 4 = 8 ms at <= 6. Covered by the ramp-up: info.
      {
        kind: 'escalation',
        severity: 'info',
        ts_ns: T,
        dur_ns: ms(20),
        cpu: 0,
        tid: 95,
        comm: 'kswapd0',
        title: 'kswapd0 wound up to priority 6 in 10.0 ms, 8.0 ms at priority 6 or lower (scanned 2.0k, reclaimed 4%)',
        values: {
          min_priority: 6,
          start_priority: 12,
          time_to_min_ns: ms(10),
          low_priority_ns: ms(8),
          nr_scanned: 2000n,
          nr_reclaimed: 72n,
          efficiency: 0.036,
          slab_freed: 100n,
          lru_passes: 4n,
          priority_steps: [
            { priority: 12, at_ns: ms(1), from_ns: 0n },
            { priority: 11, at_ns: ms(2), from_ns: ms(1) },
            { priority: 9, at_ns: ms(3), from_ns: ms(2) },
            { priority: 6, at_ns: ms(10), from_ns: ms(4) },
          ],
          ended_asleep: true,
          end_reason: 'sleep',
          woken: true,
          wake_order: 0,
          nid: 0,
          context: 'kswapd',
        },
        event_ids: [100n, 101n, 102n, 103n, 106n, 108n],
      },
      // kswapd1 was already reclaiming when the trace began: episode = first LRU pass (T+1) .. sleep (T+2).
      // Priority 2, but for no measurable time (one pass, its end the episode's last event): info, not critical.
      {
        kind: 'escalation',
        severity: 'info',
        ts_ns: T + ms(1),
        dur_ns: ms(1),
        cpu: 1,
        tid: 96,
        comm: 'kswapd1',
        title: 'kswapd1 wound up to priority 2 in 0 ns, 0 ns at priority 6 or lower (scanned 64, reclaimed 0%)',
        values: {
          min_priority: 2,
          start_priority: 2,
          time_to_min_ns: 0n,
          low_priority_ns: 0n,
          critical_priority_ns: 0n,
          nr_scanned: 64n,
          nr_reclaimed: 0n,
          efficiency: 0,
          lru_passes: 1n,
          priority_steps: [{ priority: 2, at_ns: 0n, from_ns: 0n }],
          ended_asleep: true,
          end_reason: 'sleep',
          woken: false,
          context: 'kswapd',
        },
        event_ids: [5n, 6n],
      },
      // E2: priority exactly 3, no sleep, closed by the next wake at T+400; the pass at 3 began after the pass at
      // 12 (T+301): 49 ms at <= 3, under 100 ms, so warn by itself; covered by the ramp-up: info
      {
        kind: 'escalation',
        severity: 'info',
        ts_ns: T + ms(300),
        dur_ns: ms(100),
        cpu: 0,
        tid: 95,
        comm: 'kswapd0',
        title: 'kswapd0 wound up to priority 3 in 50.0 ms, 49.0 ms at priority 6 or lower (scanned 5.1k, reclaimed 1%)',
        values: {
          min_priority: 3,
          start_priority: 12,
          time_to_min_ns: ms(50),
          low_priority_ns: ms(49),
          critical_priority_ns: ms(49),
          nr_scanned: 5100n,
          nr_reclaimed: 50n,
          efficiency: 0.0098,
          lru_passes: 2n,
          priority_steps: [
            { priority: 12, at_ns: ms(1), from_ns: 0n },
            { priority: 3, at_ns: ms(50), from_ns: ms(1) },
          ],
          ended_asleep: false,
          end_reason: 'next_wake',
          woken: true,
          wake_order: 0,
          nid: 0,
          context: 'kswapd',
        },
        event_ids: [110n, 111n, 112n],
      },
      // E3: wake at T+400 .. sleep at T+420 (the second sleep at T+430 is ignored); 10 ms at 5: covered, info
      {
        kind: 'escalation',
        severity: 'info',
        ts_ns: T + ms(400),
        dur_ns: ms(20),
        cpu: 0,
        tid: 95,
        comm: 'kswapd0',
        title: 'kswapd0 wound up to priority 5 in 10.0 ms, 10.0 ms at priority 6 or lower (scanned 10, reclaimed 10%)',
        values: {
          min_priority: 5,
          start_priority: 5,
          time_to_min_ns: ms(10),
          low_priority_ns: ms(10),
          nr_scanned: 10n,
          nr_reclaimed: 1n,
          efficiency: 0.1,
          lru_passes: 1n,
          priority_steps: [{ priority: 5, at_ns: ms(10), from_ns: 0n }],
          ended_asleep: true,
          end_reason: 'sleep',
          woken: true,
          wake_order: 3,
          nid: 0,
          context: 'kswapd',
        },
        event_ids: [120n, 121n, 122n],
      },
      // E4: no wake after the sleep at T+420/430: starts at its first LRU pass, awake until the end of trace (T+2000)
      {
        kind: 'escalation',
        severity: 'info',
        ts_ns: T + ms(1350),
        dur_ns: ms(650),
        cpu: 0,
        tid: 95,
        comm: 'kswapd0',
        title:
          'kswapd0 wound up to priority 4 in 0 ns, 0 ns at priority 6 or lower (scanned 320, reclaimed 10%), awake at end of trace',
        values: {
          min_priority: 4,
          start_priority: 4,
          time_to_min_ns: 0n,
          low_priority_ns: 0n,
          nr_scanned: 320n,
          nr_reclaimed: 32n,
          efficiency: 0.1,
          lru_passes: 1n,
          priority_steps: [{ priority: 4, at_ns: 0n, from_ns: 0n }],
          ended_asleep: false,
          end_reason: 'end_of_trace',
          woken: false,
          context: 'kswapd',
        },
        event_ids: [130n],
      },
    ]);
  });

  it('makes the episodes a ramp-up covers its children, and rates the ramp-up by their time at low priority', async () => {
    const ranked = await rankedOf(db, 'kswapd_escalation');
    const rampup = ranked.find((f) => f.kind === 'repeated_rampup')!;
    expect(rampup.impact_ns).toBe(ms(67));
    // its children rank by their own time at low priority: E2 49 ms, E3 10 ms, E1 8 ms
    expect(ranked.filter((f) => f.parent_id === rampup.id).map((f) => [f.rank, f.event_ids[0]])).toEqual([
      [3, 110n],
      [4, 120n],
      [5, 100n],
    ]);
    expect(ranked.filter((f) => f.parent_id === null).map((f) => [f.rank, f.kind, f.impact_ns])).toEqual([
      [1, 'repeated_rampup', ms(67)],
      [2, 'direct_escalation', ms(14)],
      [6, 'escalation', 0n], // kswapd1 (info by itself; E4 ties at 0 and comes later)
      [7, 'escalation', 0n],
    ]);
    // with a 40 ms critical_low_ns, E2's 49 ms at priority 3 is critical, and so is the ramp-up over it
    const strict = await findingsOf(db, 'kswapd_escalation', { 'kswapd_escalation.critical_low_ns': '40ms' });
    expect(strict.find((f) => f.kind === 'repeated_rampup')?.severity).toBe('critical');
    expect(strict.find((f) => f.kind === 'repeated_rampup')?.values.critical_episodes).toBe(1n);
  });

  it('names task reclaim by its kind, never kswapd: direct, memcg and node reclaim passes', async () => {
    const e = await newTraceDb();
    try {
      await setTraceBounds(e, T, T + ms(100));
      await insert(e, 'thread', [{ utid: 1, tid: 700, name: 'memhog' }]);
      await insert(e, 'mm_vmscan_direct_reclaim_begin', [
        { id: 1, ts: T, cpu: 0, utid: 1, event: 'mm_vmscan_memcg_reclaim_begin', order: 0, gfp_flags: 'GFP_KERNEL' },
      ]);
      await insert(e, 'mm_vmscan_lru_shrink_inactive', [
        inactive(2, 0.01, 1, 12, 16, 0),
        inactive(3, 0.02, 1, 2, 512, 32),
      ]);
      await insert(e, 'mm_vmscan_direct_reclaim_end', [
        { id: 4, ts: T + ms(0.03), cpu: 0, utid: 1, event: 'mm_vmscan_memcg_reclaim_end', nr_reclaimed: 32 },
      ]);
      const [f] = await findingsOf(e, 'kswapd_escalation');
      // a small cgroup's reclaim reaches priority 2 at once and is done 10 us later: info
      expect(f).toMatchObject({
        kind: 'memcg_escalation',
        severity: 'info',
        title:
          'memhog[700] in memcg reclaim wound up to priority 2 in 20.0 us, 10.0 us at priority 6 or lower (scanned 528, reclaimed 6%)',
      });
      expect(f!.title).not.toMatch(/kswapd/);
    } finally {
      e.close();
    }
  });

  it('a window of 300 ms (E1 at 0, E2 at 300, E3 at 400 ms) breaks the ramp-up', async () => {
    const f = await findingsOf(db, 'kswapd_escalation', { 'kswapd_escalation.rampup_window_ns': '300ms' });
    // windows: E1 [0,300] holds E1,E2; E2 [300,600] holds E2,E3; none holds 3
    expect(f.filter((x) => x.kind === 'repeated_rampup')).toEqual([]);
    const g = await findingsOf(db, 'kswapd_escalation', {
      'kswapd_escalation.rampup_window_ns': '300ms',
      'kswapd_escalation.rampup_count': '2',
    });
    // E1-E2 and E2-E3 windows overlap: one run of E1..E3
    expect(g.filter((x) => x.kind === 'repeated_rampup').map((x) => [x.ts_ns, x.dur_ns, x.event_ids])).toEqual([
      [T, ms(420), [100n, 110n, 120n]],
    ]);
  });

  it('summarises episodes per kswapd thread', async () => {
    expect(await summaryOf(db, 'kswapd_escalation')).toEqual([
      // kswapd0: E1 (20 ms), E2 (100 ms), E3 (20 ms), E4 (650 ms); scanned 2000+5100+10+320, reclaimed 72+50+1+32
      {
        tid: 95,
        thread: 'kswapd0',
        episodes: 4n,
        episodes_warn: 4n,
        episodes_critical: 1n,
        min_priority: 3,
        awake_ns: ms(790),
        low_priority_ns: ms(67),
        ended_asleep: 2n,
        nr_scanned: 7430n,
        nr_reclaimed: 155n,
        efficiency: 0.0209,
        slab_freed: 100n,
      },
      // kswapd1: T+1..T+2 (1 ms), T+500..T+502 (2 ms)
      {
        tid: 96,
        thread: 'kswapd1',
        episodes: 2n,
        episodes_warn: 1n,
        episodes_critical: 1n,
        min_priority: 2,
        awake_ns: ms(3),
        low_priority_ns: 0n,
        ended_asleep: 2n,
        nr_scanned: 96n,
        nr_reclaimed: 32n,
        efficiency: 0.3333,
        slab_freed: null,
      },
    ]);
  });
});
