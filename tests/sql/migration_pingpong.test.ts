/**
 * migration_pingpong on hand-written rows.
 *
 * Edge cases covered:
 *   - A->B->A ping-pong with 3 bounces (the default minimum)
 *   - a cycle around three CPUs (A->B->C->A ...) counted as bounces; a move to
 *     a fourth CPU is not a bounce
 *   - migrations exactly window_ns apart stay in one burst (and a return exactly
 *     window_ns later is a bounce); 1 ns more starts a new burst
 *   - migrations with orig_cpu = dest_cpu and pid 0 are ignored
 *   - waker: the latest sched_waking of the pid, only if within window_ns
 *   - pid reuse: the thread whose tid is the pid as of the burst start
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import { findingsOf, insert, newTraceDb, setTraceBounds, summaryOf } from './sql_test_db.ts';

const T = 1_000_000_000_000n;
const ms = (x: number) => BigInt(Math.round(x * 1_000_000));

let db: Engine;

beforeAll(async () => {
  db = await newTraceDb();
  await setTraceBounds(db, T, T + ms(2000));
  await insert(db, 'thread', [
    { utid: 10, tid: 812, name: 'fsync-loop' },
    { utid: 11, tid: 55, name: 'kworker/1:1H' },
    { utid: 12, tid: 60, name: 'kworker/u8:0' },
    { utid: 13, tid: 900, name: 'dbench' },
    { utid: 14, tid: 15, name: 'migration/0' },
    { utid: 20, tid: 812, name: 'fsync-loop', start_ts: T + ms(1000) }, // pid 812 reused later
  ]);
  const mig = (id: number, ts: bigint, cpu: number, mover: number, pid: number, comm: string, orig: number, dest: number) => ({
    id, ts, cpu, utid: mover, comm, pid, prio: 120, orig_cpu: orig, dest_cpu: dest,
  });
  await insert(db, 'sched_migrate_task', [
    mig(100, T, 1, 11, 812, 'fsync-loop', 0, 1),
    mig(102, T + ms(2), 0, 12, 812, 'fsync-loop', 1, 0),
    mig(104, T + ms(4), 1, 11, 812, 'fsync-loop', 0, 1),
    mig(106, T + ms(6), 1, 11, 812, 'fsync-loop', 1, 0),
    mig(200, T + ms(16) + 1n, 1, 11, 812, 'fsync-loop', 0, 1), // 10 ms + 1 ns later: new burst
    mig(202, T + ms(26) + 1n, 1, 11, 812, 'fsync-loop', 1, 0), // exactly 10 ms later: same burst, a bounce
    mig(300, T + ms(100), 0, 14, 900, 'dbench', 0, 1),
    mig(301, T + ms(101), 1, 12, 900, 'dbench', 1, 2),
    mig(302, T + ms(102), 2, 12, 900, 'dbench', 2, 0),
    mig(303, T + ms(103), 0, 12, 900, 'dbench', 0, 1),
    mig(304, T + ms(104), 1, 12, 900, 'dbench', 1, 2),
    mig(305, T + ms(105), 2, 12, 900, 'dbench', 2, 3),
    mig(306, T + ms(105.5), 3, 12, 900, 'dbench', 3, 3), // orig = dest: ignored
    mig(307, T + ms(105.6), 3, 12, 0, 'swapper/3', 3, 0), // pid 0: ignored
  ]);
  const waking = (id: number, ts: bigint, waker: number, pid: number) => ({ id, ts, cpu: 0, utid: waker, comm: 'x', pid, prio: 120, target_cpu: 0 });
  await insert(db, 'sched_waking', [
    waking(99, T - ms(1), 11, 812),
    waking(101, T + ms(1.5), 11, 812),
    waking(105, T + ms(5.9), 12, 812),
    waking(50, T + ms(50), 12, 900), // 50 ms before dbench's burst: too old to be its waker
  ]);
});

afterAll(() => db.close());

describe('migration_pingpong', () => {
  it('finds ping-pong and cycling bursts with movers and wakers', async () => {
    expect(await findingsOf(db, 'migration_pingpong')).toEqual([
      // 0->1->0->1->0: bounces at 102, 104, 106; 3 bounces / 6 ms = 500/s
      {
        kind: 'burst', severity: 'info', ts_ns: T, dur_ns: ms(6), cpu: 1, tid: 812, comm: 'fsync-loop',
        title: 'fsync-loop[812] bounced 3 times between CPUs 0,1 in 6.0 ms (500/s), moved by kworker/1:1H[55]',
        values: {
          pid: 812, comm: 'fsync-loop', cpus: [0, 1], bounces: 3n, migrations: 4n, rate_per_s: 500,
          movers: [{ tid: 55, comm: 'kworker/1:1H', count: 3n }, { tid: 60, comm: 'kworker/u8:0', count: 1n }],
          // 100 <- waking 99, 102 and 104 <- waking 101, 106 <- waking 105
          wakers: [{ tid: 55, comm: 'kworker/1:1H', count: 3n }, { tid: 60, comm: 'kworker/u8:0', count: 1n }],
        },
        event_ids: [99n, 100n, 101n, 102n, 104n, 105n, 106n],
      },
      // 0->1->2->0->1->2->3: 302, 303, 304 return to a CPU left 2 migrations before; 305 goes to a new CPU
      {
        kind: 'burst', severity: 'info', ts_ns: T + ms(100), dur_ns: ms(5), cpu: 0, tid: 900, comm: 'dbench',
        title: 'dbench[900] bounced 3 times between CPUs 0,1,2,3 in 5.0 ms (600/s), moved by kworker/u8:0[60]',
        values: {
          pid: 900, comm: 'dbench', cpus: [0, 1, 2, 3], bounces: 3n, migrations: 6n, rate_per_s: 600,
          movers: [{ tid: 60, comm: 'kworker/u8:0', count: 5n }, { tid: 15, comm: 'migration/0', count: 1n }],
        },
        event_ids: [300n, 301n, 302n, 303n, 304n, 305n],
      },
    ]);
  });

  it('ranks by bounce count and honours window_ns', async () => {
    const f = await findingsOf(db, 'migration_pingpong', {
      'migration_pingpong.warn_bounces': '3',
      'migration_pingpong.min_bounces': '1',
    });
    // the 200/202 burst (one bounce, exactly 10 ms apart) now qualifies as info
    expect(f.map((x) => [x.severity, x.ts_ns, x.values.bounces])).toEqual([
      ['warn', T, 3n],
      ['warn', T + ms(100), 3n],
      ['info', T + ms(16) + 1n, 1n],
    ]);
    // with a 1.9 ms window, 812's migrations 2 ms apart no longer chain, and dbench's
    // returns come 2 ms after leaving a CPU: no bounces anywhere
    const g = await findingsOf(db, 'migration_pingpong', { 'migration_pingpong.window_ns': '1.9ms' });
    expect(g).toEqual([]);
  });

  it('summarises migrations per task per second of trace', async () => {
    expect(await summaryOf(db, 'migration_pingpong')).toEqual([
      { pid: 812, task: 'fsync-loop', migrations: 6n, migrations_per_sec: 3, bounces: 4n, cpus: 2n, first_ts: T, last_ts: T + ms(26) + 1n },
      { pid: 900, task: 'dbench', migrations: 6n, migrations_per_sec: 3, bounces: 3n, cpus: 4n, first_ts: T + ms(100), last_ts: T + ms(105) },
    ]);
  });
});
