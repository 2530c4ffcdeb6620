/**
 * queries/model/derive_slices.sql on hand-written rows: slices (with depth
 * and open ends), counter tracks and values, and begin_end / wakeup /
 * migration flows.
 *
 * Edge cases covered:
 *   - a shrinker start without an end (dur -1), symbol printed with offset
 *   - shrinker and soft-limit reclaim nested in direct reclaim (depth 1)
 *   - a memcg reclaim begin without an end
 *   - a workqueue item whose end was lost, followed by the next item on the
 *     same worker (depth stays 0; drawn to that next item, end_id NULL)
 *   - a wakeup followed by a no-op second waking, a migration at wakeup,
 *     a preempted task migrated by load balancing (migration flow, no
 *     wakeup flow), two migrations before one switch-in (last one wins),
 *     a wakee whose first event in the trace is its waking (no arrow: its
 *     earlier state is unknown)
 *   - derive twice: same rows (re-running replaces)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import { deriveSched, deriveSlices, insert, newTraceDb } from './sql_test_db.ts';

const T = 1_000_000_000_000n;
const ms = (x: number) => BigInt(Math.round(x * 1_000_000));

let db: Engine;

beforeAll(async () => {
  db = await newTraceDb();
  await insert(db, 'thread', [
    { utid: 1, tid: 95, name: 'kswapd0' },
    { utid: 2, tid: 4242, name: 'dd' },
    { utid: 3, tid: 30, name: 'kworker/0:1' },
    { utid: 4, tid: 812, name: 'fsync' },
  ]);
  await insert(db, 'mm_shrink_slab_start', [
    { id: 10, ts: T, cpu: 0, utid: 1, shrink: 'super_cache_scan+0x0/0x210', cache_items: 1000 },
    { id: 12, ts: T + ms(20), cpu: 0, utid: 1, shrink: 'super_cache_scan', cache_items: 900 },
    { id: 21, ts: T + ms(101), cpu: 1, utid: 2, shrink: 'ext4_es_scan', cache_items: 50 },
  ]);
  await insert(db, 'mm_shrink_slab_end', [
    { id: 11, ts: T + ms(10), cpu: 0, utid: 1, shrink: 'super_cache_scan', retval: 10 },
    { id: 22, ts: T + ms(102), cpu: 1, utid: 2, shrink: 'ext4_es_scan', retval: 1 },
  ]);
  await insert(db, 'mm_vmscan_direct_reclaim_begin', [
    { id: 20, ts: T + ms(100), cpu: 1, utid: 2, event: 'mm_vmscan_direct_reclaim_begin', order: 0 },
    { id: 23, ts: T + ms(103), cpu: 1, utid: 2, event: 'mm_vmscan_memcg_softlimit_reclaim_begin', order: 0 },
    { id: 26, ts: T + ms(200), cpu: 1, utid: 2, event: 'mm_vmscan_memcg_reclaim_begin', order: 0 },
  ]);
  await insert(db, 'mm_vmscan_direct_reclaim_end', [
    { id: 24, ts: T + ms(104), cpu: 1, utid: 2, event: 'mm_vmscan_memcg_softlimit_reclaim_end', nr_reclaimed: 1 },
    { id: 25, ts: T + ms(105), cpu: 1, utid: 2, event: 'mm_vmscan_direct_reclaim_end', nr_reclaimed: 32 },
  ]);
  await insert(db, 'workqueue_execute_start', [
    { id: 30, ts: T + ms(50), cpu: 0, utid: 3, work: '0xa', function: 'blk_mq_run_work_fn' },
    { id: 32, ts: T + ms(52), cpu: 0, utid: 3, work: '0xb', function: 'vmstat_update' },
    { id: 33, ts: T + ms(53), cpu: 0, utid: 3, work: '0xc', function: 'wb_workfn' },
  ]);
  await insert(db, 'workqueue_execute_end', [
    { id: 31, ts: T + ms(51), cpu: 0, utid: 3, work: '0xa' },
    { id: 34, ts: T + ms(60), cpu: 0, utid: 3, work: '0xc', function: 'wb_workfn' },
  ]);
  await insert(db, 'mm_vmscan_lru_shrink_inactive', [
    { id: 40, ts: T + ms(1), cpu: 0, utid: 1, nr_scanned: 32, nr_reclaimed: 30, priority: 12 },
    { id: 41, ts: T + ms(2), cpu: 0, utid: 1, nr_scanned: 64, nr_reclaimed: 5, priority: 10 },
    { id: 42, ts: T + ms(101.5), cpu: 1, utid: 2, nr_scanned: 32, nr_reclaimed: 32, priority: 12 },
  ]);
  const sw = (
    id: number,
    t: number,
    cpu: number,
    utid: number,
    prev: [string, number, string],
    next: [string, number],
  ) => ({
    id,
    ts: T + ms(t),
    cpu,
    utid,
    prev_comm: prev[0],
    prev_pid: prev[1],
    prev_prio: 120,
    prev_state: prev[2],
    next_comm: next[0],
    next_pid: next[1],
    next_prio: 120,
  });
  await insert(db, 'sched_switch', [
    sw(50, 300, 0, 4, ['fsync', 812, 'S'], ['swapper/0', 0]),
    sw(54, 302, 1, 3, ['kworker/0:1', 30, 'R+'], ['fsync', 812]),
    sw(55, 303, 1, 4, ['fsync', 812, 'R'], ['kworker/0:1', 30]),
    sw(57, 304, 0, 0, ['swapper/0', 0, 'R'], ['fsync', 812]),
    sw(59, 306, 0, 4, ['fsync', 812, 'S'], ['swapper/0', 0]),
    sw(63, 308, 0, 0, ['swapper/0', 0, 'R'], ['fsync', 812]),
    sw(71, 401, 1, 0, ['swapper/1', 0, 'R'], ['dd', 4242]),
  ]);
  const wk = (id: number, t: number, pid: number) => ({
    id,
    ts: T + ms(t),
    cpu: 1,
    utid: 3,
    comm: 'x',
    pid,
    prio: 120,
    target_cpu: 1,
  });
  await insert(db, 'sched_waking', [wk(51, 301, 812), wk(53, 301.5, 812), wk(60, 307, 812), wk(70, 400, 4242)]);
  const mg = (id: number, t: number, pid: number, orig: number, dest: number) => ({
    id,
    ts: T + ms(t),
    cpu: 1,
    utid: 3,
    comm: 'fsync',
    pid,
    prio: 120,
    orig_cpu: orig,
    dest_cpu: dest,
  });
  await insert(db, 'sched_migrate_task', [
    mg(52, 301, 812, 0, 1),
    mg(56, 303.5, 812, 1, 0),
    mg(61, 307, 812, 0, 1),
    mg(62, 307.5, 812, 1, 0),
  ]);
  await deriveSched(db);
  await deriveSlices(db);
});

afterAll(() => db.close());

const slices = () =>
  db.query('SELECT id, ts, dur, utid, cpu, category, name, depth, begin_id, end_id FROM slice ORDER BY id');
const tracks = () => db.query('SELECT id, name, unit, utid, cpu, description FROM counter_track ORDER BY id');
const counters = () => db.query('SELECT id, ts, track_id, value FROM counter ORDER BY track_id, ts');
const flows = () => db.query('SELECT id, slice_out, slice_in, kind FROM flow ORDER BY id');

describe('derive_slices', () => {
  it('fills slices with depth and open ends', async () => {
    expect(await slices()).toEqual([
      {
        id: 10n,
        ts: T,
        dur: ms(10),
        utid: 1,
        cpu: 0,
        category: 'shrinker',
        name: 'super_cache_scan',
        depth: 0,
        begin_id: 10n,
        end_id: 11n,
      },
      {
        id: 12n,
        ts: T + ms(20),
        dur: -1n,
        utid: 1,
        cpu: 0,
        category: 'shrinker',
        name: 'super_cache_scan',
        depth: 0,
        begin_id: 12n,
        end_id: null,
      },
      {
        id: 20n,
        ts: T + ms(100),
        dur: ms(5),
        utid: 2,
        cpu: 1,
        category: 'direct_reclaim',
        name: 'direct reclaim',
        depth: 0,
        begin_id: 20n,
        end_id: 25n,
      },
      {
        id: 21n,
        ts: T + ms(101),
        dur: ms(1),
        utid: 2,
        cpu: 1,
        category: 'shrinker',
        name: 'ext4_es_scan',
        depth: 1,
        begin_id: 21n,
        end_id: 22n,
      },
      {
        id: 23n,
        ts: T + ms(103),
        dur: ms(1),
        utid: 2,
        cpu: 1,
        category: 'memcg_reclaim',
        name: 'memcg soft-limit reclaim',
        depth: 1,
        begin_id: 23n,
        end_id: 24n,
      },
      {
        id: 26n,
        ts: T + ms(200),
        dur: -1n,
        utid: 2,
        cpu: 1,
        category: 'memcg_reclaim',
        name: 'memcg reclaim',
        depth: 0,
        begin_id: 26n,
        end_id: null,
      },
      {
        id: 30n,
        ts: T + ms(50),
        dur: ms(1),
        utid: 3,
        cpu: 0,
        category: 'workqueue',
        name: 'blk_mq_run_work_fn',
        depth: 0,
        begin_id: 30n,
        end_id: 31n,
      },
      {
        id: 32n,
        ts: T + ms(52),
        dur: ms(1),
        utid: 3,
        cpu: 0,
        category: 'workqueue',
        name: 'vmstat_update',
        depth: 0,
        begin_id: 32n,
        end_id: null,
      },
      {
        id: 33n,
        ts: T + ms(53),
        dur: ms(7),
        utid: 3,
        cpu: 0,
        category: 'workqueue',
        name: 'wb_workfn',
        depth: 0,
        begin_id: 33n,
        end_id: 34n,
      },
    ]);
  });

  it('fills counter tracks and values', async () => {
    const d = {
      kp: 'scan priority of each shrink_inactive_list() pass by this kswapd (12 = DEF_PRIORITY; each step lower scans twice as much)',
      rec: 'pages reclaimed by each shrink_inactive_list() pass of this thread (mm_vmscan_lru_shrink_inactive)',
      scan: 'pages scanned by each shrink_inactive_list() pass of this thread (mm_vmscan_lru_shrink_inactive)',
      slab: (s: string) =>
        `${s}: objects in the cache at each call of this shrinker, all callers (mm_shrink_slab_start cache_items)`,
    };
    expect(await tracks()).toEqual([
      { id: 1, name: 'kswapd priority', unit: 'priority', utid: 1, cpu: null, description: d.kp },
      { id: 2, name: 'lru nr_reclaimed', unit: 'pages', utid: 1, cpu: null, description: d.rec },
      { id: 3, name: 'lru nr_reclaimed', unit: 'pages', utid: 2, cpu: null, description: d.rec },
      { id: 4, name: 'lru nr_scanned', unit: 'pages', utid: 1, cpu: null, description: d.scan },
      { id: 5, name: 'lru nr_scanned', unit: 'pages', utid: 2, cpu: null, description: d.scan },
      { id: 6, name: 'slab cache_items', unit: 'objects', utid: null, cpu: null, description: d.slab('ext4_es_scan') },
      {
        id: 7,
        name: 'slab cache_items',
        unit: 'objects',
        utid: null,
        cpu: null,
        description: d.slab('super_cache_scan'),
      },
    ]);
    expect(await counters()).toEqual([
      { id: 40n, ts: T + ms(1), track_id: 1, value: 12 },
      { id: 41n, ts: T + ms(2), track_id: 1, value: 10 },
      { id: 40n, ts: T + ms(1), track_id: 2, value: 30 },
      { id: 41n, ts: T + ms(2), track_id: 2, value: 5 },
      { id: 42n, ts: T + ms(101.5), track_id: 3, value: 32 },
      { id: 40n, ts: T + ms(1), track_id: 4, value: 32 },
      { id: 41n, ts: T + ms(2), track_id: 4, value: 64 },
      { id: 42n, ts: T + ms(101.5), track_id: 5, value: 32 },
      { id: 21n, ts: T + ms(101), track_id: 6, value: 50 },
      { id: 10n, ts: T, track_id: 7, value: 1000 },
      { id: 12n, ts: T + ms(20), track_id: 7, value: 900 },
    ]);
  });

  it('fills begin_end, wakeup and migration flows', async () => {
    // ids: 2 * the slice id for begin_end (the flow view), odd for stored flows
    expect(await flows()).toEqual([
      // fsync: switched out (50), woken (51; 53 is a no-op repeat), migrated 0->1 (52), switched in on CPU 1 (54)
      { id: 3n, slice_out: 52n, slice_in: 54n, kind: 'migration' },
      { id: 5n, slice_out: 51n, slice_in: 54n, kind: 'wakeup' },
      // preempted (55), moved 1->0 by load balancing (56), switched in on CPU 0 (57): no waking
      { id: 7n, slice_out: 56n, slice_in: 57n, kind: 'migration' },
      // asleep (59), woken (60), moved 0->1 (61) then 1->0 (62), switched in on CPU 0 (63)
      { id: 9n, slice_out: 62n, slice_in: 63n, kind: 'migration' },
      { id: 11n, slice_out: 60n, slice_in: 63n, kind: 'wakeup' },
      // dd's first scheduling event is the waking (70): thread_state does not know
      // dd was blocked, so there is no runnable period and no wakeup arrow to 71
      { id: 20n, slice_out: 10n, slice_in: 11n, kind: 'begin_end' },
      { id: 40n, slice_out: 20n, slice_in: 25n, kind: 'begin_end' },
      { id: 42n, slice_out: 21n, slice_in: 22n, kind: 'begin_end' },
      { id: 46n, slice_out: 23n, slice_in: 24n, kind: 'begin_end' },
    ]);
  });

  it('re-running replaces its own rows', async () => {
    const before = [await slices(), await tracks(), await counters(), await flows()];
    await deriveSlices(db);
    expect([await slices(), await tracks(), await counters(), await flows()]).toEqual(before);
  });
});
