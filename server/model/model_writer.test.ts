// ModelWriter + derive_sched.sql on a hand-written event stream: every
// expected row below is worked out by hand from the events in `stream`.
import { afterEach, describe, expect, it } from 'vitest';
import type { DecodedEvent } from '../decode/decoded_event.ts';
import { openDuckDb, type Engine } from '../engine/engine.ts';
import { deriveModel } from './derive_model.ts';
import { ModelWriter } from './model_writer.ts';

// A base past 2^53 ns (~104 days of uptime) proves ts stays exact.
const BASE = 9_500_000_000_000_000n;

function ev(
  ts: number,
  cpu: number,
  pid: number,
  comm: string,
  name: string,
  fields: DecodedEvent['fields'],
  raw: string | null = null,
): DecodedEvent {
  return { ts, cpu, pid, comm, tgid: null, name, system: null, flags: 1, preemptCount: 2, fields, raw, where: 0 };
}

const stream: DecodedEvent[] = [
  // id 0: cpu0 switches from idle to task 100 ("worker")
  ev(1000, 0, 0, '<idle>', 'sched_switch', {
    prev_comm: 'swapper/0',
    prev_pid: 0,
    prev_prio: 120,
    prev_state: 'R',
    next_comm: 'worker',
    next_pid: 100,
    next_prio: 120,
  }),
  // id 1: worker blocks in D at 5000
  ev(5000, 0, 100, 'worker', 'sched_switch', {
    prev_comm: 'worker',
    prev_pid: 100,
    prev_prio: 120,
    prev_state: 'D',
    next_comm: 'swapper/0',
    next_pid: 0,
    next_prio: 120,
  }),
  // id 2: kworker on cpu1 wakes worker at 9000 (waking), id 3 wakeup at 9100 must not make a second row
  ev(9000, 1, 200, 'kworker/1:1H', 'sched_waking', { comm: 'worker', pid: 100, prio: 120, target_cpu: 0 }),
  ev(9100, 0, 0, '<idle>', 'sched_wakeup', { comm: 'worker', pid: 100, prio: 120, target_cpu: 0 }),
  // id 4: worker switched in at 12000
  ev(12000, 0, 0, '<idle>', 'sched_switch', {
    prev_comm: 'swapper/0',
    prev_pid: 0,
    prev_prio: 120,
    prev_state: 'R',
    next_comm: 'worker',
    next_pid: 100,
    next_prio: 120,
  }),
  // id 5: an untyped event with key=value fields goes to args
  ev(13000, 0, 100, 'worker', 'kmalloc', { call_site: 'foo', bytes_req: 64 }, 'call_site=foo bytes_req=64'),
  // id 6: a typed event whose text did not parse keeps its raw text
  ev(14000, 0, 100, 'worker', 'mm_vmscan_kswapd_wake', null, 'garbled'),
  // id 7: lru_shrink_inactive with a printed `flags=` alias and a renamed field
  ev(15000, 0, 100, 'worker', 'mm_vmscan_lru_shrink_inactive', {
    nid: 0,
    nr_scanned: 32,
    nr_reclaimed: 30,
    priority: 3,
    flags: 'RECLAIM_WB_FILE|RECLAIM_WB_ASYNC',
    nr_activate0: 1,
  }),
];

let engine: Engine | null = null;
afterEach(() => {
  engine?.close();
  engine = null;
});

async function build(): Promise<Engine> {
  engine = await openDuckDb(':memory:');
  const w = await ModelWriter.create(engine);
  w.header({ format: 'tracefs_text', formatVersion: null, cpus: 2, tsBaseNs: BASE, meta: {} });
  for (const e of stream) w.event(e);
  w.lostEvents(1, 7, 42);
  w.skipped({ where: 3, unit: 'line', reason: 'not an event line', excerpt: 'garbage' });
  const summary = await w.finish();
  expect(summary.eventsTotal).toBe(8);
  expect(summary.unparsedEvents).toBe(1);
  expect(summary.lostEvents).toBe(7);
  expect(summary.firstTsNs).toBe(BASE + 1000n);
  expect(summary.lastTsNs).toBe(BASE + 15000n);
  await deriveModel(engine);
  return engine;
}

describe('ModelWriter', () => {
  it('writes every event with exact absolute ts, ids in file order', async () => {
    const e = await build();
    const rows = await e.query<{
      id: bigint;
      ts: bigint;
      name: string;
      cpu: number;
      common_flags: number;
      preempt_count: number;
    }>('SELECT id, ts, name, cpu, common_flags, preempt_count FROM ftrace_event ORDER BY id');
    expect(rows.map((r) => [Number(r.id), r.ts - BASE, r.name])).toEqual([
      [0, 1000n, 'sched_switch'],
      [1, 5000n, 'sched_switch'],
      [2, 9000n, 'sched_waking'],
      [3, 9100n, 'sched_wakeup'],
      [4, 12000n, 'sched_switch'],
      [5, 13000n, 'kmalloc'],
      [6, 14000n, 'mm_vmscan_kswapd_wake'],
      [7, 15000n, 'mm_vmscan_lru_shrink_inactive'],
    ]);
    expect(rows[0].common_flags).toBe(1);
    expect(rows[0].preempt_count).toBe(2);
  });

  it('keeps raw text only for untyped or unparsed events, fields of untyped events in args', async () => {
    const e = await build();
    const raw = await e.query<{ id: bigint; raw: string | null; arg_set_id: bigint | null }>(
      'SELECT id, raw, arg_set_id FROM ftrace_event WHERE raw IS NOT NULL OR arg_set_id IS NOT NULL ORDER BY id',
    );
    expect(raw.map((r) => [Number(r.id), r.raw, r.arg_set_id === null ? null : Number(r.arg_set_id)])).toEqual([
      [5, 'call_site=foo bytes_req=64', 5],
      [6, 'garbled', null],
    ]);
    const args = await e.query<{ key: string; int_value: bigint | null; string_value: string | null }>(
      'SELECT key, int_value, string_value FROM args ORDER BY key',
    );
    expect(args).toEqual([
      { key: 'bytes_req', int_value: 64n, string_value: null },
      { key: 'call_site', int_value: null, string_value: 'foo' },
    ]);
  });

  it('fills typed tables, mapping printed names onto kernel field names', async () => {
    const e = await build();
    const [row] = await e.query(
      'SELECT id, nr_scanned, priority, reclaim_flags, nr_activate_anon, nr_dirty FROM mm_vmscan_lru_shrink_inactive',
    );
    expect(row).toEqual({
      id: 7n,
      nr_scanned: 32n,
      priority: 3,
      reclaim_flags: 'RECLAIM_WB_FILE|RECLAIM_WB_ASYNC',
      nr_activate_anon: 1n,
      nr_dirty: null,
    });
    const sw = await e.query<{ prev_comm: string; prev_state: string; next_pid: number }>(
      'SELECT prev_comm, prev_state, next_pid FROM sched_switch ORDER BY id',
    );
    expect(sw.map((r) => r.prev_state)).toEqual(['R', 'D', 'R']);
    expect(sw[1].prev_comm).toBe('worker');
  });

  it('names threads from scheduler events, idle is utid 0', async () => {
    const e = await build();
    const threads = await e.query<{ utid: number; tid: number; name: string }>(
      'SELECT utid, tid, name FROM thread ORDER BY utid',
    );
    expect(threads).toEqual([
      { utid: 0, tid: 0, name: 'swapper/0' },
      { utid: 1, tid: 100, name: 'worker' },
      { utid: 2, tid: 200, name: 'kworker/1:1H' },
    ]);
  });

  it('derives sched_slice per CPU and thread_state with one runnable row per wakeup', async () => {
    const e = await build();
    const slices = await e.query<{ ts: bigint; dur: bigint; utid: number; end_state: string | null }>(
      'SELECT ts, dur, utid, end_state FROM sched_slice WHERE cpu = 0 ORDER BY ts',
    );
    expect(slices.map((s) => [s.ts - BASE, s.dur, s.utid, s.end_state])).toEqual([
      [1000n, 4000n, 1, 'D'],
      [5000n, 7000n, 0, 'R'],
      [12000n, -1n, 1, null],
    ]);
    const states = await e.query<{ ts: bigint; dur: bigint; state: string; waker_utid: number | null }>(
      'SELECT ts, dur, state, waker_utid FROM thread_state WHERE utid = 1 ORDER BY ts',
    );
    expect(states.map((s) => [s.ts - BASE, s.dur, s.state, s.waker_utid])).toEqual([
      [1000n, 4000n, 'Running', null],
      [5000n, 4000n, 'D', null],
      [9000n, 3000n, 'R', 2],
      [12000n, -1n, 'Running', null],
    ]);
  });

  it('records lost events and skipped input', async () => {
    const e = await build();
    expect(await e.query('SELECT cpu, count, source_where FROM lost_events')).toEqual([
      { cpu: 1, count: 7n, source_where: 42n },
    ]);
    expect(await e.query('SELECT source_where, unit, reason FROM ingest_problem')).toEqual([
      { source_where: 3n, unit: 'line', reason: 'not an event line' },
    ]);
  });
});

describe('ftrace_event over typed tables (nothing derivable stored)', () => {
  it('gives each typed event its own name, flags and preempt count, null where the source had none', async () => {
    engine = await openDuckDb(':memory:');
    const w = await ModelWriter.create(engine);
    w.header({ format: 'tracefs_text', formatVersion: null, cpus: 1, tsBaseNs: BASE, meta: {} });
    const at = (ts: number, name: string, flags: number | null, preemptCount: number | null): DecodedEvent => ({
      ...ev(ts, 0, 100, 'worker', name, { nr_reclaimed: 1 }),
      flags,
      preemptCount,
    });
    // Two event names share the mm_vmscan_direct_reclaim_end table; kswapd_sleep has one.
    w.event(at(1000, 'mm_vmscan_memcg_reclaim_end', 0x8d, 0x12));
    w.event(at(2000, 'mm_vmscan_direct_reclaim_end', null, null));
    w.event(at(3000, 'mm_vmscan_direct_reclaim_end', 0, null));
    w.event(at(4000, 'mm_vmscan_kswapd_sleep', null, 3));
    await w.finish();
    const rows = await engine.query<{ name: string; common_flags: number | null; preempt_count: number | null }>(
      'SELECT name, common_flags, preempt_count FROM ftrace_event ORDER BY id',
    );
    expect(rows.map((r) => [r.name, r.common_flags, r.preempt_count])).toEqual([
      ['mm_vmscan_memcg_reclaim_end', 0x8d, 0x12],
      ['mm_vmscan_direct_reclaim_end', null, null],
      ['mm_vmscan_direct_reclaim_end', 0, null],
      ['mm_vmscan_kswapd_sleep', null, 3],
    ]);
  });
});

describe('timestamps across a 2^32 ns boundary of the low word', () => {
  it('stores base + ts exactly just before, at and after the carry, typed and untyped events alike', async () => {
    engine = await openDuckDb(':memory:');
    const w = await ModelWriter.create(engine);
    // The base's low 32 bits are 2^32 - 500: ts 500 and on carry into the high word.
    const base = (1n << 40n) + (1n << 32n) - 500n;
    w.header({ format: 'tracefs_text', formatVersion: null, cpus: 1, tsBaseNs: base, meta: {} });
    const rels = [0, 499, 500, 501, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 499, 2 ** 32 + 500, 3 * 2 ** 32 + 7];
    for (const t of rels) {
      w.event(ev(t, 0, 200, 'kworker/0:1', 'sched_waking', { comm: 'worker', pid: 100, prio: 120, target_cpu: 0 }));
      w.event(ev(t, 0, 100, 'worker', 'demo_untyped', { value: 1 }));
    }
    await w.finish();
    const rows = await engine.query<{ ts: bigint; name: string }>('SELECT ts, name FROM ftrace_event ORDER BY id');
    expect(rows).toEqual(
      rels.flatMap((t) => [
        { ts: base + BigInt(t), name: 'sched_waking' },
        { ts: base + BigInt(t), name: 'demo_untyped' },
      ]),
    );
  });
});
