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
 *   - at wakeup vs by balancing: a migration is at wakeup when the pid's latest
 *     sched_waking came from the mover, on its CPU, at most 1 ms before; the
 *     burst's kind follows its bounces, and so does its severity
 *   - impact: the wait from each migration to the task's next switch-in, and its
 *     mean per move; critical needs bounces, the mean and the total
 *   - an unbound kworker (kworker/uN:M) bounced at wakeup: info whatever its
 *     counts, and its title says why
 *   - pid reuse: the thread whose tid is the pid as of the burst start
 *   - the warn wait floor: a wakeup burst of warn_bounces is warn only when
 *     its task waited warn_mean_wait_ns per move or warn_total_wait_ns in
 *     all; many cheap moves under both are info, a long burst of cheap moves
 *     is kept by the total alone (a database of its own)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import { findingsOf, insert, newTraceDb, rankedOf, setTraceBounds, summaryOf } from './sql_test_db.ts';

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
  const mig = (
    id: number,
    ts: bigint,
    cpu: number,
    mover: number,
    pid: number,
    comm: string,
    orig: number,
    dest: number,
  ) => ({
    id,
    ts,
    cpu,
    utid: mover,
    comm,
    pid,
    prio: 120,
    orig_cpu: orig,
    dest_cpu: dest,
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
    // the unbound kworker pulled back and forth by its wakers: kworker/1:1H on CPU 1, dbench on CPU 0
    mig(500, T + ms(300), 1, 11, 60, 'kworker/u8:0', 0, 1),
    mig(502, T + ms(302), 0, 13, 60, 'kworker/u8:0', 1, 0),
    mig(504, T + ms(304), 1, 11, 60, 'kworker/u8:0', 0, 1),
    mig(506, T + ms(306), 0, 13, 60, 'kworker/u8:0', 1, 0),
  ]);
  const waking = (id: number, ts: bigint, waker: number, pid: number, cpu: number) => ({
    id,
    ts,
    cpu,
    utid: waker,
    comm: 'x',
    pid,
    prio: 120,
    target_cpu: cpu,
  });
  await insert(db, 'sched_waking', [
    waking(99, T - ms(0.01), 11, 812, 1), // 100 at wakeup: kworker/1:1H on CPU 1 wakes and pulls it
    waking(101, T + ms(1.99), 12, 812, 0), // 102 at wakeup: kworker/u8:0 on CPU 0
    waking(103, T + ms(3.99), 11, 812, 1), // 104 at wakeup
    waking(105, T + ms(5.9), 12, 812, 0), // 106 is moved by kworker/1:1H, not the waker: balancing
    waking(50, T + ms(50), 12, 900, 0), // 50 ms before dbench's burst: too old to be its waker
    waking(499, T + ms(299.99), 11, 60, 1), // each of the kworker's moves at wakeup, by its mover
    waking(501, T + ms(301.99), 13, 60, 0),
    waking(503, T + ms(303.99), 11, 60, 1),
    waking(505, T + ms(305.99), 13, 60, 0),
  ]);
  // 812 runs 0.5, 0.1, 0.2 and 0.3 ms after each move of its first burst (mean 0.275 ms);
  // the kworker 0.1 ms after each of its moves
  const sw = (id: number, ts: bigint, cpu: number, pid: number) => ({
    id,
    ts,
    cpu,
    utid: 99,
    prev_comm: 'x',
    prev_pid: 1,
    prev_prio: 120,
    prev_state: 'S',
    next_comm: 'fsync-loop',
    next_pid: pid,
    next_prio: 120,
  });
  await insert(db, 'sched_switch', [
    sw(400, T + ms(0.5), 1, 812),
    sw(401, T + ms(2.1), 0, 812),
    sw(402, T + ms(4.2), 1, 812),
    sw(403, T + ms(6.3), 0, 812),
    sw(507, T + ms(300.1), 1, 60),
    sw(508, T + ms(302.1), 0, 60),
    sw(509, T + ms(304.1), 1, 60),
    sw(510, T + ms(306.1), 0, 60),
  ]);
});

afterAll(() => db.close());

describe('migration_pingpong', () => {
  it('finds ping-pong and cycling bursts, at wakeup or by balancing, with movers and wakers', async () => {
    expect(await findingsOf(db, 'migration_pingpong')).toEqual([
      // 0->1->0->1->0: bounces at 102, 104, 106 (2 at wakeup: 102, 104); 3 bounces / 6 ms = 500/s
      {
        kind: 'wakeup',
        severity: 'info',
        ts_ns: T,
        dur_ns: ms(6),
        cpu: 1,
        tid: 812,
        comm: 'fsync-loop',
        title:
          'fsync-loop[812] bounced 3 times between CPUs 0,1 in 6.0 ms (500/s), 2 of them at wakeup (woken most by kworker/1:1H[55] on CPU 1); waited 1.1 ms to run after the moves (275.0 us per move)',
        values: {
          pid: 812,
          comm: 'fsync-loop',
          cpus: [0, 1],
          bounces: 3n,
          migrations: 4n,
          rate_per_s: 500,
          wakeup_bounces: 2n,
          balance_bounces: 1n,
          wakeup_migrations: 3n,
          balance_migrations: 1n,
          wait_ns: ms(1.1),
          mean_wait_ns: ms(0.275),
          unbound_kworker: false,
          movers: [
            { tid: 55, comm: 'kworker/1:1H', cpu: 1, utid: 11, count: 3n },
            { tid: 60, comm: 'kworker/u8:0', cpu: 0, utid: 12, count: 1n },
          ],
          // 100 <- waking 99, 102 <- 101, 104 <- 103, 106 <- 105
          wakers: [
            { tid: 55, comm: 'kworker/1:1H', cpu: 1, utid: 11, count: 2n },
            { tid: 60, comm: 'kworker/u8:0', cpu: 0, utid: 12, count: 2n },
          ],
        },
        event_ids: [99n, 100n, 101n, 102n, 103n, 104n, 105n, 106n],
      },
      // 0->1->2->0->1->2->3: 302, 303, 304 return to a CPU left 2 migrations before; 305 goes to a new CPU.
      // No waking near: load balancing
      {
        kind: 'balance',
        severity: 'info',
        ts_ns: T + ms(100),
        dur_ns: ms(5),
        cpu: 0,
        tid: 900,
        comm: 'dbench',
        title:
          'dbench[900] bounced 3 times between CPUs 0,1,2,3 in 5.0 ms (600/s), by load balancing (moved most by kworker/u8:0[60] on CPU 1)',
        values: {
          pid: 900,
          comm: 'dbench',
          cpus: [0, 1, 2, 3],
          bounces: 3n,
          migrations: 6n,
          rate_per_s: 600,
          wakeup_bounces: 0n,
          balance_bounces: 3n,
          wakeup_migrations: 0n,
          balance_migrations: 6n,
          wait_ns: 0n,
          // no mean_wait_ns: no switch-in of dbench in the trace (a NULL value is left out)
          unbound_kworker: false,
          movers: [
            { tid: 60, comm: 'kworker/u8:0', cpu: 1, utid: 12, count: 2n },
            { tid: 60, comm: 'kworker/u8:0', cpu: 2, utid: 12, count: 2n },
            { tid: 15, comm: 'migration/0', cpu: 0, utid: 14, count: 1n },
          ],
        },
        event_ids: [300n, 301n, 302n, 303n, 304n, 305n],
      },
      // 0->1->0->1->0, every move at wakeup by its waker (499, 501, 503, 505); 3 bounces / 6 ms = 500/s
      {
        kind: 'wakeup',
        severity: 'info',
        ts_ns: T + ms(300),
        dur_ns: ms(6),
        cpu: 1,
        tid: 60,
        comm: 'kworker/u8:0',
        title:
          'kworker/u8:0[60] bounced 3 times between CPUs 0,1 in 6.0 ms (500/s), 3 of them at wakeup (woken most by kworker/1:1H[55] on CPU 1); waited 400.0 us to run after the moves (100.0 us per move); an unbound kworker, free to run on any CPU',
        values: {
          pid: 60,
          comm: 'kworker/u8:0',
          cpus: [0, 1],
          bounces: 3n,
          migrations: 4n,
          rate_per_s: 500,
          wakeup_bounces: 3n,
          balance_bounces: 0n,
          wakeup_migrations: 4n,
          balance_migrations: 0n,
          wait_ns: ms(0.4),
          mean_wait_ns: ms(0.1),
          unbound_kworker: true,
          movers: [
            { tid: 55, comm: 'kworker/1:1H', cpu: 1, utid: 11, count: 2n },
            { tid: 900, comm: 'dbench', cpu: 0, utid: 13, count: 2n },
          ],
          wakers: [
            { tid: 55, comm: 'kworker/1:1H', cpu: 1, utid: 11, count: 2n },
            { tid: 900, comm: 'dbench', cpu: 0, utid: 13, count: 2n },
          ],
        },
        event_ids: [499n, 500n, 501n, 502n, 503n, 504n, 505n, 506n],
      },
    ]);
    const ranked = await rankedOf(db, 'migration_pingpong');
    expect(ranked.map((f) => [f.kind, f.impact_ns])).toEqual([
      ['wakeup', ms(1.1)],
      ['wakeup', ms(0.4)],
      ['balance', 0n],
    ]);
  });

  it('rates ping-pong at wakeup above balancing, and honours window_ns', async () => {
    const f = await findingsOf(db, 'migration_pingpong', {
      'migration_pingpong.warn_bounces': '3',
      'migration_pingpong.min_bounces': '1',
    });
    // 3 bounces mostly at wakeup reach warn_bounces; 3 by balancing stay info; the 200/202 burst
    // (one bounce, exactly 10 ms apart, no waking within 1 ms) now qualifies, as balancing: info;
    // the unbound kworker's 3 bounces at wakeup stay info
    expect(f.map((x) => [x.severity, x.kind, x.ts_ns, x.values.bounces])).toEqual([
      ['warn', 'wakeup', T, 3n],
      ['info', 'balance', T + ms(16) + 1n, 1n],
      ['info', 'balance', T + ms(100), 3n],
      ['info', 'wakeup', T + ms(300), 3n],
    ]);
    const b = await findingsOf(db, 'migration_pingpong', { 'migration_pingpong.balance_warn_bounces': '3' });
    expect(b.map((x) => [x.severity, x.kind, x.comm])).toEqual([
      ['warn', 'balance', 'dbench'],
      ['info', 'wakeup', 'fsync-loop'],
      ['info', 'wakeup', 'kworker/u8:0'],
    ]);
    // critical needs the bounces and the waiting, per move and in all: the wakeup burst (3 bounces,
    // its task waited 0.5 + 0.1 + 0.2 + 0.3 = 1.1 ms after its 4 moves, 0.275 ms each) is critical
    // with bars of 0.275 ms and 1.1 ms, warn when either is 1 us higher; the kworker's burst
    // (0.1 ms per move, 0.4 ms in all) stays info under bars it meets
    const crit = (mean: string, wait: string) =>
      findingsOf(db, 'migration_pingpong', {
        'migration_pingpong.warn_bounces': '3',
        'migration_pingpong.critical_bounces': '3',
        'migration_pingpong.critical_mean_wait_ns': mean,
        'migration_pingpong.critical_wait_ns': wait,
      }).then((fs) => fs.filter((x) => x.kind === 'wakeup').map((x) => [x.severity, x.comm]));
    expect(await crit('0.275ms', '1.1ms')).toEqual([
      ['critical', 'fsync-loop'],
      ['info', 'kworker/u8:0'],
    ]);
    expect(await crit('0.276ms', '1.1ms')).toEqual([
      ['warn', 'fsync-loop'],
      ['info', 'kworker/u8:0'],
    ]);
    expect(await crit('0.275ms', '1.101ms')).toEqual([
      ['warn', 'fsync-loop'],
      ['info', 'kworker/u8:0'],
    ]);
    expect(await crit('0.1ms', '0.4ms')).toEqual([
      ['critical', 'fsync-loop'],
      ['info', 'kworker/u8:0'],
    ]);
    // with a 1.9 ms window, 812's and the kworker's migrations 2 ms apart no longer chain, and
    // dbench's returns come 2 ms after leaving a CPU: no bounces anywhere
    const g = await findingsOf(db, 'migration_pingpong', { 'migration_pingpong.window_ns': '1.9ms' });
    expect(g).toEqual([]);
  });

  it('summarises migrations per task per second of trace', async () => {
    expect(await summaryOf(db, 'migration_pingpong')).toEqual([
      {
        pid: 812,
        task: 'fsync-loop',
        migrations: 6n,
        migrations_per_sec: 3,
        bounces: 4n,
        wakeup_migrations: 3n,
        balance_migrations: 3n,
        cpus: 2n,
        first_ts: T,
        last_ts: T + ms(26) + 1n,
      },
      {
        pid: 900,
        task: 'dbench',
        migrations: 6n,
        migrations_per_sec: 3,
        bounces: 3n,
        wakeup_migrations: 0n,
        balance_migrations: 6n,
        cpus: 4n,
        first_ts: T + ms(100),
        last_ts: T + ms(105),
      },
      {
        pid: 60,
        task: 'kworker/u8:0',
        migrations: 4n,
        migrations_per_sec: 2,
        bounces: 3n,
        wakeup_migrations: 4n,
        balance_migrations: 0n,
        cpus: 2n,
        first_ts: T + ms(300),
        last_ts: T + ms(306),
      },
    ]);
  });
});

describe('migration_pingpong: the warn wait floor', () => {
  // Two wakeup bursts on CPUs 0 and 1, each move pulled by ksoftirqd on the destination CPU (it woke the
  // task 10 us before, on that CPU: at wakeup), 1 ms apart:
  //   dbench[1000]: 12 moves (11 bounces, over warn_bounces), running 20 us after each: 0.24 ms in all
  //   jbd2[1100]: 125 moves (124 bounces), running 80 us after each: 10 ms in all, 80 us per move
  const S = T + ms(5000);
  let fdb: Engine;
  const us = (x: number) => BigInt(x) * 1000n;

  beforeAll(async () => {
    fdb = await newTraceDb();
    await setTraceBounds(fdb, S, S + ms(1000));
    await insert(fdb, 'thread', [
      { utid: 30, tid: 1000, name: 'dbench' },
      { utid: 31, tid: 1100, name: 'jbd2/loop0-8' },
      { utid: 40, tid: 14, name: 'ksoftirqd/0' },
      { utid: 41, tid: 22, name: 'ksoftirqd/1' },
    ]);
    const migrations: Record<string, unknown>[] = [];
    const wakings: Record<string, unknown>[] = [];
    const switches: Record<string, unknown>[] = [];
    let id = 1;
    const burst = (pid: number, comm: string, from: bigint, moves: number, waitUs: number) => {
      for (let i = 0; i < moves; i++) {
        const ts = from + ms(i);
        const dest = i % 2 === 0 ? 1 : 0;
        const waker = dest === 0 ? 40 : 41;
        wakings.push({
          id: id++,
          ts: ts - us(10),
          cpu: dest,
          utid: waker,
          comm: 'x',
          pid,
          prio: 120,
          target_cpu: dest,
        });
        migrations.push({
          id: id++,
          ts,
          cpu: dest,
          utid: waker,
          comm,
          pid,
          prio: 120,
          orig_cpu: 1 - dest,
          dest_cpu: dest,
        });
        switches.push({
          id: id++,
          ts: ts + us(waitUs),
          cpu: dest,
          utid: waker,
          prev_comm: 'x',
          prev_pid: 1,
          prev_prio: 120,
          prev_state: 'S',
          next_comm: comm,
          next_pid: pid,
          next_prio: 120,
        });
      }
    };
    burst(1000, 'dbench', S, 12, 20);
    burst(1100, 'jbd2/loop0-8', S + ms(100), 125, 80);
    await insert(fdb, 'sched_waking', wakings);
    await insert(fdb, 'sched_migrate_task', migrations);
    await insert(fdb, 'sched_switch', switches);
  });

  afterAll(() => fdb.close());

  const rated = (params: Record<string, string> = {}) =>
    findingsOf(fdb, 'migration_pingpong', params).then((fs) =>
      fs.map((f) => [f.severity, f.comm, f.values.bounces, f.values.wait_ns, f.values.mean_wait_ns]),
    );

  it('many cheap moves under both clauses are info; a long burst of cheap moves is warn by its total', async () => {
    expect(await rated()).toEqual([
      // 80 us per move, under warn_mean_wait_ns; 125 x 80 us = 10 ms in all, warn_total_wait_ns;
      // 124 bounces but far from critical's 1 ms per move
      ['warn', 'jbd2/loop0-8', 124n, ms(10), us(80)],
      // 11 bounces (warn_bounces 10) at 20 us per move, 0.24 ms in all: under both clauses
      ['info', 'dbench', 11n, us(240), us(20)],
    ]);
    // without the floor (both clauses at 0) both are warn, as before issue 29pf
    expect(
      await rated({ 'migration_pingpong.warn_mean_wait_ns': '0', 'migration_pingpong.warn_total_wait_ns': '0' }),
    ).toEqual([
      ['warn', 'dbench', 11n, us(240), us(20)],
      ['warn', 'jbd2/loop0-8', 124n, ms(10), us(80)],
    ]);
  });

  it('each clause on its own: the total bar 1 ns higher demotes jbd2, the mean bar at 80 us keeps it', async () => {
    const total = { 'migration_pingpong.warn_total_wait_ns': String(ms(10) + 1n) };
    expect(await rated(total)).toEqual([
      ['info', 'dbench', 11n, us(240), us(20)],
      ['info', 'jbd2/loop0-8', 124n, ms(10), us(80)],
    ]);
    expect(await rated({ ...total, 'migration_pingpong.warn_mean_wait_ns': '80us' })).toEqual([
      ['warn', 'jbd2/loop0-8', 124n, ms(10), us(80)],
      ['info', 'dbench', 11n, us(240), us(20)],
    ]);
    // dbench's 20 us per move meets a 20 us bar, not a 21 us one
    expect((await rated({ 'migration_pingpong.warn_mean_wait_ns': '20us' }))[0]).toEqual([
      'warn',
      'dbench',
      11n,
      us(240),
      us(20),
    ]);
    expect((await rated({ 'migration_pingpong.warn_mean_wait_ns': '21us' })).at(-1)).toEqual([
      'info',
      'dbench',
      11n,
      us(240),
      us(20),
    ]);
  });
});
