/**
 * reclaim_writeback on hand-written rows.
 *
 * Edge cases covered:
 *   - a write exactly gap_ns (100 ms) after the previous one joins the burst;
 *     one 1 ns later starts a new burst
 *   - lru_shrink_inactive counts exactly gap_ns before the burst included,
 *     1 ns earlier excluded; an LRU event in the window of two bursts counts
 *     for the later one
 *   - 4.x rows: mm_vmscan_writepage and lru_shrink_inactive with NULL nr_dirty
 *   - 1024 file pages (critical edge) written SYNC by kswapd
 *   - anon writes in direct reclaim (with a SYNC one: warn), and outside any
 *     traced reclaim (info)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import { findingsOf, insert, newTraceDb, summaryOf } from './sql_test_db.ts';

const T = 1_000_000_000_000n;
const ms = (x: number) => BigInt(Math.round(x * 1_000_000));
const FA = 'RECLAIM_WB_FILE|RECLAIM_WB_ASYNC';
const AA = 'RECLAIM_WB_ANON|RECLAIM_WB_ASYNC';

let db: Engine;

beforeAll(async () => {
  db = await newTraceDb();
  await insert(db, 'thread', [
    { utid: 1, tid: 95, name: 'kswapd0' },
    { utid: 2, tid: 96, name: 'kswapd1' },
    { utid: 3, tid: 4242, name: 'dd' },
    { utid: 4, tid: 600, name: 'stress' },
  ]);
  const wf = (id: number, ts: bigint, cpu: number, utid: number, flags: string, event = 'mm_vmscan_write_folio') => ({
    id,
    ts,
    cpu,
    utid,
    event,
    pfn: 0x347000 + id,
    reclaim_flags: flags,
  });
  await insert(db, 'mm_vmscan_write_folio', [
    wf(10, T, 0, 1, FA),
    wf(11, T + ms(5), 0, 1, FA),
    wf(12, T + ms(12.1), 0, 1, FA),
    wf(14, T + ms(112.1), 0, 1, FA), // exactly 100 ms after 12: same burst
    wf(20, T + ms(212.1) + 1n, 0, 1, AA), // 100 ms + 1 ns after 14: new burst
    wf(31, T + ms(301), 1, 3, AA),
    wf(32, T + ms(302), 1, 3, 'RECLAIM_WB_ANON|RECLAIM_WB_SYNC'),
    wf(40, T + ms(500), 0, 4, AA),
  ]);
  // kswapd1, 4.x: 1024 file pages written SYNC, 1 us apart, starting at T+1 s
  await db.exec(`INSERT INTO mm_vmscan_write_folio (id, ts, cpu, utid, event, pfn, reclaim_flags)
    SELECT 1000 + i, ${T + ms(1000)} + i * 1000, 1, 2, 'mm_vmscan_writepage', 5000 + i, 'RECLAIM_WB_FILE|RECLAIM_WB_SYNC' FROM range(1024) t(i)`);
  const lru = (id: number, ts: bigint, utid: number, v: Record<string, number | null>) => ({
    id,
    ts,
    cpu: 0,
    utid,
    nid: 0,
    priority: 4,
    reclaim_flags: FA,
    ...v,
  });
  await insert(db, 'mm_vmscan_lru_shrink_inactive', [
    lru(4, T - ms(100) - 1n, 1, {
      nr_scanned: 9999,
      nr_reclaimed: 0,
      nr_dirty: 1000,
      nr_writeback: 1000,
      nr_congested: 0,
      nr_immediate: 0,
    }),
    lru(5, T - ms(50), 1, {
      nr_scanned: 500,
      nr_reclaimed: 100,
      nr_dirty: 30,
      nr_writeback: 10,
      nr_congested: 0,
      nr_immediate: 1,
    }),
    lru(13, T + ms(212.1), 1, {
      nr_scanned: 200,
      nr_reclaimed: 50,
      nr_dirty: 7,
      nr_writeback: 3,
      nr_congested: 0,
      nr_immediate: 0,
    }),
    lru(999, T + ms(999), 2, {
      nr_scanned: 64,
      nr_reclaimed: 0,
      nr_dirty: null,
      nr_writeback: null,
      nr_congested: null,
      nr_immediate: null,
    }),
  ]);
  await insert(db, 'mm_vmscan_direct_reclaim_begin', [
    {
      id: 30,
      ts: T + ms(300),
      cpu: 1,
      utid: 3,
      event: 'mm_vmscan_direct_reclaim_begin',
      order: 0,
      gfp_flags: 'GFP_HIGHUSER_MOVABLE',
    },
  ]);
  await insert(db, 'mm_vmscan_direct_reclaim_end', [
    { id: 33, ts: T + ms(303), cpu: 1, utid: 3, event: 'mm_vmscan_direct_reclaim_end', nr_reclaimed: 32 },
  ]);
});

afterAll(() => db.close());

describe('reclaim_writeback', () => {
  it('groups writes into bursts per task and ranks them', async () => {
    expect(await findingsOf(db, 'reclaim_writeback')).toEqual([
      {
        kind: 'burst',
        severity: 'critical',
        ts_ns: T + ms(1000),
        dur_ns: 1_023_000n,
        cpu: 1,
        tid: 96,
        comm: 'kswapd1',
        title: 'kswapd1 starts dirty page writeback from reclaim: 1024 file pages in 1.0 ms (1024 sync)',
        values: {
          pages: 1024n,
          file_pages: 1024n,
          anon_pages: 0n,
          async_pages: 0n,
          sync_pages: 1024n,
          context: 'kswapd',
          event: 'mm_vmscan_writepage',
          nr_scanned: 64n,
          nr_reclaimed: 0n,
          lru_passes: 1n,
        },
        event_ids: Array.from({ length: 1024 }, (_, i) => BigInt(1000 + i)),
      },
      {
        kind: 'burst',
        severity: 'warn',
        ts_ns: T,
        dur_ns: ms(112.1),
        cpu: 0,
        tid: 95,
        comm: 'kswapd0',
        title: 'kswapd0 starts dirty page writeback from reclaim: 4 file pages in 112.1 ms',
        values: {
          pages: 4n,
          file_pages: 4n,
          anon_pages: 0n,
          async_pages: 4n,
          sync_pages: 0n,
          context: 'kswapd',
          event: 'mm_vmscan_write_folio',
          nr_dirty: 30n,
          nr_writeback: 10n,
          nr_congested: 0n,
          nr_immediate: 1n,
          nr_scanned: 500n,
          nr_reclaimed: 100n,
          lru_passes: 1n,
        },
        event_ids: [10n, 11n, 12n, 14n],
      },
      {
        kind: 'burst',
        severity: 'warn',
        ts_ns: T + ms(301),
        dur_ns: ms(1),
        cpu: 1,
        tid: 4242,
        comm: 'dd',
        title: 'dd[4242] (direct reclaim) writes 2 anon pages to swap from reclaim in 1.0 ms (1 sync)',
        values: {
          pages: 2n,
          file_pages: 0n,
          anon_pages: 2n,
          async_pages: 1n,
          sync_pages: 1n,
          context: 'direct reclaim',
          event: 'mm_vmscan_write_folio',
          lru_passes: 0n,
        },
        event_ids: [31n, 32n],
      },
      // the LRU pass at T+212.1 ms is in both bursts' windows: it counts for this, the later one
      {
        kind: 'burst',
        severity: 'info',
        ts_ns: T + ms(212.1) + 1n,
        dur_ns: 0n,
        cpu: 0,
        tid: 95,
        comm: 'kswapd0',
        title: 'kswapd0 writes 1 anon page to swap from reclaim in 0 ns',
        values: {
          pages: 1n,
          file_pages: 0n,
          anon_pages: 1n,
          async_pages: 1n,
          sync_pages: 0n,
          context: 'kswapd',
          event: 'mm_vmscan_write_folio',
          nr_dirty: 7n,
          nr_writeback: 3n,
          nr_congested: 0n,
          nr_immediate: 0n,
          nr_scanned: 200n,
          nr_reclaimed: 50n,
          lru_passes: 1n,
        },
        event_ids: [20n],
      },
      {
        kind: 'burst',
        severity: 'info',
        ts_ns: T + ms(500),
        dur_ns: 0n,
        cpu: 0,
        tid: 600,
        comm: 'stress',
        title: 'stress[600] writes 1 anon page to swap from reclaim in 0 ns',
        values: {
          pages: 1n,
          file_pages: 0n,
          anon_pages: 1n,
          async_pages: 1n,
          sync_pages: 0n,
          context: 'other',
          event: 'mm_vmscan_write_folio',
          lru_passes: 0n,
        },
        event_ids: [40n],
      },
    ]);
  });

  it('honours gap_ns and critical_file_pages', async () => {
    const f = await findingsOf(db, 'reclaim_writeback', {
      'reclaim_writeback.gap_ns': '99999999',
      'reclaim_writeback.critical_file_pages': '3',
    });
    // with a gap 1 ns under 100 ms, write 14 leaves kswapd0's first burst: 10,11,12 (3 file pages: critical now) and 14 alone (warn)
    expect(f.filter((x) => x.comm === 'kswapd0').map((x) => [x.severity, x.event_ids])).toEqual([
      ['critical', [10n, 11n, 12n]],
      ['warn', [14n]],
      ['info', [20n]],
    ]);
  });

  it('summarises per issuing thread', async () => {
    expect(await summaryOf(db, 'reclaim_writeback')).toEqual([
      {
        tid: 96,
        thread: 'kswapd1',
        is_kswapd: true,
        bursts: 1n,
        pages: 1024n,
        file_pages: 1024n,
        anon_pages: 0n,
        sync_pages: 1024n,
        first_ts: T + ms(1000),
        last_ts: T + ms(1000) + 1_023_000n,
      },
      {
        tid: 95,
        thread: 'kswapd0',
        is_kswapd: true,
        bursts: 2n,
        pages: 5n,
        file_pages: 4n,
        anon_pages: 1n,
        sync_pages: 0n,
        first_ts: T,
        last_ts: T + ms(212.1) + 1n,
      },
      {
        tid: 4242,
        thread: 'dd',
        is_kswapd: false,
        bursts: 1n,
        pages: 2n,
        file_pages: 0n,
        anon_pages: 2n,
        sync_pages: 1n,
        first_ts: T + ms(301),
        last_ts: T + ms(302),
      },
      {
        tid: 600,
        thread: 'stress',
        is_kswapd: false,
        bursts: 1n,
        pages: 1n,
        file_pages: 0n,
        anon_pages: 1n,
        sync_pages: 0n,
        first_ts: T + ms(500),
        last_ts: T + ms(500),
      },
    ]);
  });
});
