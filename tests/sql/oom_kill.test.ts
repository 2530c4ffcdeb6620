/**
 * oom_kill on hand-written rows: which reclaim passes make the episode
 * before a kill, the oom_reaper's events, a pid-only (pre-6.8, Perfetto)
 * mark_victim with nothing before it. The real recordings
 * (tests/golden/oom_kill_real.test.ts) have no reaper event and a victim
 * that ran the OOM killer itself; these rows cover the rest.
 *
 * Kill A at 2500 ms (6.8+ fields): stress[300] ran the OOM killer in direct
 * reclaim; the victim java[200] has a second thread java[201] (same upid).
 * Passes: stress 0-50 ms (2050 ms before the next: outside the episode, in
 * the 10 s window), stress 2100-2150 (reclaimed 32), stress 2200-2300 (0),
 * java[201] 2250-2400 (0). Episode: the last three, first at 2100: 400 ms
 * to the kill, 300 ms in reclaim. The reaper: woken at 2501, reaped 4500 ->
 * 4520 ms; java[200] exits at 4530 ms.
 * Kill B at 6000 ms: pid only (bash[400] by its thread), no reclaim, the
 * reaper skipped it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import { findingsOf, insert, newTraceDb, rankedOf } from './sql_test_db.ts';

const T = 1_000_000_000_000n;
const ms = (x: number) => T + BigInt(Math.round(x * 1_000_000));
const D = 'mm_vmscan_direct_reclaim';

let db: Engine;

beforeAll(async () => {
  db = await newTraceDb();
  // The ingest makes these views per trace (model_store.ts createEventFieldViews), not schema.sql.
  await db.exec(
    `CREATE TABLE _event_mark_victim (id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER, pid BIGINT, comm VARCHAR,
       total_vm BIGINT, anon_rss BIGINT, file_rss BIGINT, shmem_rss BIGINT, uid BIGINT, pgtables BIGINT, oom_score_adj BIGINT)`,
  );
  for (const e of ['wake_reaper', 'start_task_reaping', 'finish_task_reaping', 'skip_task_reaping'])
    await db.exec(`CREATE TABLE _event_${e} (id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER, pid BIGINT)`);
  // the detector's @requires: events present in the trace
  await insert(db, '_event_name', [
    { name_id: 1, name: 'mark_victim', system: 'oom' },
    { name_id: 2, name: `${D}_begin`, system: 'vmscan' },
    { name_id: 3, name: `${D}_end`, system: 'vmscan' },
  ]);
  await insert(db, 'thread', [
    { utid: 1, tid: 200, name: 'java', upid: 1 },
    { utid: 2, tid: 201, name: 'java', upid: 1 },
    { utid: 3, tid: 300, name: 'stress', upid: 3 },
    { utid: 4, tid: 400, name: 'bash', upid: 4 },
    { utid: 5, tid: 27, name: 'oom_reaper', upid: 5 },
  ]);
  await insert(db, 'process', [
    { upid: 1, pid: 200, name: 'java' },
    { upid: 3, pid: 300, name: 'stress' },
    { upid: 4, pid: 400, name: 'bash' },
    { upid: 5, pid: 27, name: 'oom_reaper' },
  ]);
  const pass = (id: number, utid: number, b: number, e: number, nr: number) => ({
    begin: { id, ts: ms(b), cpu: 0, utid, event: `${D}_begin`, order: 0, gfp_flags: 'GFP_HIGHUSER_MOVABLE' },
    end: { id: id + 1, ts: ms(e), cpu: 0, utid, event: `${D}_end`, nr_reclaimed: nr },
  });
  const passes = [
    pass(10, 3, 0, 50, 100),
    pass(20, 3, 2100, 2150, 32),
    pass(30, 3, 2200, 2300, 0),
    pass(40, 2, 2250, 2400, 0),
  ];
  await insert(
    db,
    `${D}_begin`,
    passes.map((p) => p.begin),
  );
  await insert(
    db,
    `${D}_end`,
    passes.map((p) => p.end),
  );
  await insert(db, '_event_mark_victim', [
    {
      id: 50,
      ts: ms(2500),
      cpu: 1,
      utid: 3,
      pid: 200,
      comm: 'java',
      total_vm: 4_000_000,
      anon_rss: 3_000_000,
      file_rss: 2_000,
      shmem_rss: 0,
      uid: 1000,
      pgtables: 6_000,
      oom_score_adj: 0,
    },
    { id: 90, ts: ms(6000), cpu: 0, utid: 4, pid: 400 },
  ]);
  await insert(db, '_event_wake_reaper', [{ id: 51, ts: ms(2501), cpu: 1, utid: 3, pid: 200 }]);
  await insert(db, '_event_start_task_reaping', [{ id: 60, ts: ms(4500), cpu: 0, utid: 5, pid: 200 }]);
  await insert(db, '_event_finish_task_reaping', [{ id: 61, ts: ms(4520), cpu: 0, utid: 5, pid: 200 }]);
  await insert(db, '_event_skip_task_reaping', [{ id: 91, ts: ms(8000), cpu: 0, utid: 5, pid: 400 }]);
  await insert(db, 'sched_process_exit', [
    { id: 70, ts: ms(4530), cpu: 0, utid: 1, comm: 'java', pid: 200, prio: 120 },
  ]);
}, 60_000);

afterAll(() => db?.close());

describe('oom_kill', () => {
  it('the episode: passes of the killer and the victim threads back from the kill, none after a pause over gap_ns', async () => {
    const [a, b] = await findingsOf(db, 'oom_kill');
    expect(a).toMatchObject({
      severity: 'critical',
      kind: 'global',
      ts_ns: ms(2100),
      dur_ns: 400_000_000n,
      tid: 200,
      title:
        'OOM killed java[200] (anon-rss 3000000 kB, file-rss 2000 kB, shmem-rss 0 kB, oom_score_adj 0) after 400.0 ms ' +
        'of direct reclaim by stress[300] (3 passes, 300.0 ms in reclaim, 2 reclaimed nothing); oom_reaper took 20.0 ms',
      // mark_victim, the episode's begin/end latest first, the reaper's events, the exit
      event_ids: [50n, 40n, 41n, 30n, 31n, 20n, 21n, 51n, 60n, 61n, 70n],
    });
    expect(a!.values).toMatchObject({
      killer: 'stress[300]',
      reclaim_passes: 3n,
      reclaim_ns: 300_000_000n,
      reclaim_zero_passes: 2n,
      nr_reclaimed: 32n,
      first_reclaim_to_kill_ns: 400_000_000n,
      window_passes: 4n,
      window_reclaim_ns: 350_000_000n,
      reaper: 'reaped',
      reaping_ns: 20_000_000n,
      kill_to_exit_ns: 2_030_000_000n,
    });
    expect(b).toMatchObject({
      severity: 'critical',
      kind: 'unknown',
      ts_ns: ms(6000),
      dur_ns: 0n,
      tid: 400,
      title: 'OOM killed bash[400], no reclaim of these tasks traced before it; oom_reaper skipped it',
      event_ids: [90n, 91n],
    });
    expect(b!.values).toMatchObject({ pid: 400n, victim: 'bash', reclaim_passes: 0n, reaper: 'skipped' });
    expect(b!.values.anon_rss_kb).toBeUndefined();
  });

  it('a shorter gap_ns ends the episode sooner; a shorter window_ns counts fewer passes', async () => {
    const [a] = await findingsOf(db, 'oom_kill', { 'oom_kill.gap_ns': '60000000', 'oom_kill.window_ns': '1000000000' });
    // the last pass ends at 2400 ms, 100 ms before the kill: over a 60 ms gap_ns, so no episode; a 1 s window
    // keeps the three passes ending after 1500 ms
    expect(a!.values).toMatchObject({ reclaim_passes: 0n, window_passes: 3n });
    expect(a!.kind).toBe('unknown');
  });

  it('ranks by impact among kills', async () => {
    const ranked = await rankedOf(db, 'oom_kill');
    expect(ranked.map((f) => [f.rank, Number(f.values.pid), f.impact_ns])).toEqual([
      [1, 200, 400_000_000n],
      [2, 400, 0n],
    ]);
  });
});
