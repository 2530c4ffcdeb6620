/**
 * queries/model/derive_slices.sql: slice depth (nesting on one thread, all
 * categories together) on hand-written rows, for the row_number() form of
 * the running edge count.
 *
 * Cases: three levels (workqueue > direct reclaim > shrinker); an open
 * shrinker call that counts as ended at the next shrinker begin on its thread
 * (so that begin is not nested in it); two threads interleaved in time (each
 * thread counts only its own edges); an open slice with no later begin (never
 * ends, for depth).
 * Slices whose end was lost are drawn to the bound the thread's later events
 * give: the next begin of their kind, or for a shrinker call with no later
 * shrinker event, the thread's next reclaim event; with neither, open (-1).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import { deriveSched, deriveSlices, insert, newTraceDb } from './sql_test_db.ts';

const T = 1_000_000_000_000n;
const ms = (x: number) => T + BigInt(Math.round(x * 1_000_000));

let db: Engine;

beforeAll(async () => {
  db = await newTraceDb();
  const ev = (id: number, t: number, utid: number, extra: Record<string, unknown> = {}) => ({
    id,
    ts: ms(t),
    cpu: 0,
    utid,
    ...extra,
  });
  await insert(db, 'mm_vmscan_direct_reclaim_begin', [
    ev(1, 0, 1, { event: 'mm_vmscan_direct_reclaim_begin', order: 0 }),
    ev(21, 21, 1, { event: 'mm_vmscan_direct_reclaim_begin', order: 0 }),
  ]);
  await insert(db, 'mm_vmscan_direct_reclaim_end', [
    ev(9, 10, 1, { event: 'mm_vmscan_direct_reclaim_end', nr_reclaimed: 1 }),
    ev(24, 24, 1, { event: 'mm_vmscan_direct_reclaim_end', nr_reclaimed: 1 }),
  ]);
  await insert(db, 'mm_shrink_slab_start', [
    ev(2, 1, 1, { shrink: 'super_cache_scan' }),
    ev(5, 4, 1, { shrink: 'ext4_es_scan' }), // open: the next shrinker event on the thread is a begin
    ev(6, 5, 1, { shrink: 'ext4_es_scan' }),
    ev(22, 22, 1, { shrink: 'super_cache_scan' }),
    ev(30, 21.5, 2, { shrink: 'super_cache_scan' }), // open, other thread
    ev(31, 30, 2, { shrink: 'super_cache_scan' }),
    ev(40, 40, 2, { shrink: 'super_cache_scan' }), // open, nothing after it
  ]);
  await insert(db, 'mm_shrink_slab_end', [
    ev(4, 3, 1, { shrink: 'super_cache_scan' }),
    ev(7, 6, 1, { shrink: 'ext4_es_scan' }),
    ev(23, 23, 1, { shrink: 'super_cache_scan' }),
    ev(32, 31, 2, { shrink: 'super_cache_scan' }),
  ]);
  // thread 3: a shrinker call whose end was lost; the thread reclaims again 7.7 ms later
  await insert(db, 'mm_shrink_slab_start', [ev(50, 50, 3, { shrink: 'super_cache_scan' })]);
  await insert(db, 'mm_vmscan_lru_shrink_inactive', [
    ev(51, 57.7, 3, { nr_scanned: 32, nr_reclaimed: 0, priority: 4 }),
  ]);
  await insert(db, 'workqueue_execute_start', [ev(20, 20, 1, { work: '0xa', function: 'wb_workfn' })]);
  await insert(db, 'workqueue_execute_end', [ev(25, 25, 1, { work: '0xa', function: 'wb_workfn' })]);
  await deriveSched(db);
  await deriveSlices(db);
});

afterAll(() => db.close());

describe('derive_slices depth', () => {
  it('nests all categories on a thread by time; slices whose end was lost end at the next begin of their kind', async () => {
    const rows = await db.query('SELECT id, utid, category, dur, depth, end_id FROM slice ORDER BY id');
    const state = (r: Record<string, unknown>) =>
      r.end_id !== null ? 'closed' : r.dur === -1n ? 'open' : `end lost, ${Number(r.dur) / 1e6} ms`;
    expect(rows.map((r) => [Number(r.id), r.utid, r.category, state(r), r.depth])).toEqual([
      [1, 1, 'direct_reclaim', 'closed', 0],
      [2, 1, 'shrinker', 'closed', 1],
      [5, 1, 'shrinker', 'end lost, 1 ms', 1], // to the next shrinker begin (id 6 at 5 ms)
      [6, 1, 'shrinker', 'closed', 1],
      [20, 1, 'workqueue', 'closed', 0],
      [21, 1, 'direct_reclaim', 'closed', 1],
      [22, 1, 'shrinker', 'closed', 2],
      [30, 2, 'shrinker', 'end lost, 8.5 ms', 0], // to id 31 at 30 ms
      [31, 2, 'shrinker', 'closed', 0],
      [40, 2, 'shrinker', 'open', 0], // nothing after it on its thread
      [50, 3, 'shrinker', 'end lost, 7.7 ms', 0], // to the thread's next reclaim event (id 51 at 57.7 ms)
    ]);
  });
});
