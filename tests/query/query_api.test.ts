/**
 * The query API on a real library (fixture reclaim_kswapd, a trace.dat v7),
 * with expected values from `trace-cmd report -t` of the same file
 * (report_text.ts), never from stallscope:
 *   query rows and errors, cancel and timeout, a running query not
 *   delaying a track request, the event list and its filters, search and its
 *   matches, range aggregates, save as detector.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceLibrary } from '../../server/ingest/library.ts';
import { buildApi } from '../../server/api/create_server.ts';
import type { LibraryLike } from '../../server/api/library_contract.ts';
import { reportEvents, shrinkerCalls, threadStateTimes, type ReportEvent } from './report_text.ts';

const FIXTURE = path.resolve(__dirname, '../../fixtures/reclaim_kswapd.v7.dat');

let dataDir: string;
let library: TraceLibrary;
let app: Awaited<ReturnType<typeof buildApi>>['app'];
let id: string;
let events: ReportEvent[];
let base: bigint;
let last: bigint;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-query-api-'));
  library = await TraceLibrary.open(dataDir);
  id = (await library.ingest(FIXTURE)).id;
  ({ app } = await buildApi({ library: library as unknown as LibraryLike, appDir: path.join(dataDir, 'no-app') }));
  await app.ready();
  events = reportEvents(FIXTURE);
  base = events.reduce((m, e) => (e.ts < m ? e.ts : m), events[0]!.ts);
  last = events.reduce((m, e) => (e.ts > m ? e.ts : m), events[0]!.ts);
}, 120_000);

afterAll(async () => {
  await app?.close();
  await library?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const url = (p: string) => `/api/traces/${id}${p}`;
async function query(sql: string, extra: Record<string, unknown> = {}) {
  const r = await app.inject({ method: 'POST', url: url('/query'), payload: { sql, ...extra } });
  return {
    status: r.statusCode,
    body: r.json() as Record<string, unknown> & { cols: unknown[][]; columns: Array<{ name: string }> },
  };
}
const rel = (ns: bigint) => Number(ns - base);

/** Is a query with this id in the query process (running, or waiting for a slot)? */
async function isRunning(queryId: string): Promise<boolean> {
  const r = await app.inject({ url: `/api/queries/${queryId}` });
  return r.statusCode === 200 && (r.json() as { running: boolean }).running;
}

async function cancelWhenRunning(queryId: string): Promise<void> {
  await until(() => isRunning(queryId));
  const c = await app.inject({ method: 'POST', url: `/api/queries/${queryId}/cancel` });
  expect(c.json()).toEqual({ cancelled: true });
}

async function until(f: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('query', () => {
  it('runs SQL on the model', async () => {
    const { status, body } = await query('SELECT name, count(*) AS n FROM ftrace_event GROUP BY 1 ORDER BY 1');
    expect(status).toBe(200);
    const got = Object.fromEntries(body.cols[0]!.map((n, i) => [n, body.cols[1]![i]]));
    const want: Record<string, number> = {};
    for (const e of events) want[e.name] = (want[e.name] ?? 0) + 1;
    expect(got).toEqual(want);
    expect(body.base).toBe(String(base));
  });

  it('answers a refused statement with 403, the rule and its place', async () => {
    const sql = "SELECT 1;\n  COPY thread TO '/tmp/stallscope-should-not-exist.csv'";
    const { status, body } = await query(sql);
    expect(status).toBe(403);
    expect(body.error).toMatch(/COPY reads or writes files/);
    expect([body.position, body.line, body.column]).toEqual([sql.indexOf('COPY'), 2, 3]);
    expect(fs.existsSync('/tmp/stallscope-should-not-exist.csv')).toBe(false);
  });

  it('answers a SQL error with 400 and its place', async () => {
    const { status, body } = await query('SELECT nmae FROM thread');
    expect(status).toBe(400);
    expect(body.error).toMatch(/nmae/);
    expect(body.position).toBe(7);
  });

  it('caps rows and says so', async () => {
    const { body } = await query('SELECT * FROM range(1000) t(i)', { maxRows: 10 });
    expect(body.rowCount).toBe(10);
    expect(body.truncated).toBe(true);
  });

  it('times out, and cancels by id', async () => {
    const t = await query('SELECT count(*) FROM range(100000000000)', { timeoutMs: 300 });
    expect(t.status).toBe(408);
    expect(t.body.error).toMatch(/time limit/);
    const running = query('SELECT count(*) FROM range(100000000000)', { queryId: 'cancel-me', timeoutMs: 60_000 });
    // Cancel as soon as the query process has it (a loaded machine may take a while to pass it on).
    await cancelWhenRunning('cancel-me');
    const r = await running;
    expect(r.status).toBe(409);
    expect(r.body.kind).toBe('cancelled');
  });

  /**
   * The bound: with three CPU-bound queries running (the user-query cap) and a
   * fourth waiting, a track request that must scan the tables answers within
   * 1.5 s (on this 2-core machine shared with other work; alone it takes
   * tens of ms). The queries run in the query process, so they hold none of
   * this process's threads.
   */
  it('does not delay a concurrent track request beyond 1.5 s, nor block an ingest', async () => {
    const heavy = 'SELECT count(*) FROM range(100000000000) a';
    const long = [1, 2, 3, 4].map((k) => query(heavy, { queryId: `heavy-${k}`, timeoutMs: 180_000 }));
    // All four are in the query process (three running, one waiting for a slot) before anything is measured.
    await until(async () => (await Promise.all([1, 2, 3, 4].map((k) => isRunning(`heavy-${k}`)))).every(Boolean));
    // An ingest of another trace, while the queries run: it finishes (before they are cancelled below).
    const ingest = library.ingest(path.resolve(__dirname, '../../fixtures/tracefs_plain.txt'));
    const times: number[] = [];
    for (let k = 0; k < 5; k++) {
      // A window never asked before (no cached answer), zoomed in (table scans, not the overview).
      const t0 = 1_000_000 * (k + 1) + k;
      const started = performance.now();
      const r = await app.inject({ url: url(`/tracks/cpu?cpu=0&t0=${t0}&t1=${t0 + 2_000_000}&px=800`) });
      times.push(performance.now() - started);
      expect(r.statusCode).toBe(200);
    }
    const ingested = await ingest;
    expect(ingested.eventsTotal).toBe(
      JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../fixtures/tracefs_plain.counts.json'), 'utf8'))
        .events_total,
    );
    // Still running: the measurements were made under load.
    const stillRunning = await app.inject({ method: 'POST', url: '/api/queries/heavy-1/cancel' });
    for (const k of [2, 3, 4]) await app.inject({ method: 'POST', url: `/api/queries/heavy-${k}/cancel` });
    const ends = await Promise.all(long);
    expect(stillRunning.json(), JSON.stringify(ends.map((e) => [e.status, e.body.error]))).toEqual({ cancelled: true });
    expect(Math.max(...times)).toBeLessThan(1500);
    // The bound is on the track requests above; the set-up around them (four queries reaching the query
    // process, an ingest sharing two cores with them) can take minutes on a machine running other suites.
  }, 180_000);
});

describe('event list', () => {
  const w0 = () => 0;
  const w1 = () => rel(last) + 1;

  async function list(params: string) {
    const r = await app.inject({ url: url(`/event_list?t0=${w0()}&t1=${w1()}&${params}`) });
    expect(r.statusCode, r.body).toBe(200);
    return r.json() as {
      total: number;
      rows: Array<{ index: number; id: number; ts: number; cpu: number; name: string; tid: number; args: string }>;
    };
  }

  it('lists a window in time order, any stretch of it', async () => {
    const a0 = base + 100_000_000n;
    const a1 = base + 200_000_000n;
    const want = events
      .filter((e) => e.ts >= a0 && e.ts <= a1)
      .sort((x, y) => (x.ts < y.ts ? -1 : x.ts > y.ts ? 1 : x.order - y.order));
    const r = await app.inject({ url: url(`/event_list?t0=${rel(a0)}&t1=${rel(a1)}&from=1000&count=50`) });
    const body = r.json() as { total: number; rows: Array<{ ts: number; name: string; cpu: number; tid: number }> };
    expect(body.total).toBe(want.length);
    expect(body.rows.map((x) => [x.ts, x.name, x.cpu, x.tid])).toEqual(
      want.slice(1000, 1050).map((e) => [rel(e.ts), e.name, e.cpu, e.tid]),
    );
  });

  it('filters by event name and CPU', async () => {
    const body = await list('names=mm_shrink_slab_start,mm_shrink_slab_end&cpus=1&count=5');
    expect(body.total).toBe(
      events.filter((e) => (e.name === 'mm_shrink_slab_start' || e.name === 'mm_shrink_slab_end') && e.cpu === 1)
        .length,
    );
    expect(body.rows.every((x) => x.cpu === 1 && x.name.startsWith('mm_shrink_slab_'))).toBe(true);
  });

  it('filters by task (name or tid)', async () => {
    const body = await list('task=kswapd&count=1');
    expect(body.total).toBe(events.filter((e) => e.comm.includes('kswapd')).length);
  });

  it('filters by a field expression: nr_reclaimed < 10', async () => {
    const body = await list(`expr=${encodeURIComponent('nr_reclaimed < 10')}&count=2000`);
    const want = events.filter((e) => e.fields.nr_reclaimed !== undefined && Number(e.fields.nr_reclaimed) < 10);
    expect(body.total).toBe(want.length);
    expect(body.rows.map((x) => rel(BigInt(x.ts) + base)).slice(0, 20)).toEqual(
      want.slice(0, 20).map((e) => rel(e.ts)),
    );
  });

  it('filters by a field expression: comm ~ kworker, and combinations', async () => {
    const body = await list(`expr=${encodeURIComponent('comm ~ kworker')}&count=1`);
    expect(body.total).toBe(events.filter((e) => (e.fields.comm ?? '').includes('kworker')).length);
    const both = await list(
      `expr=${encodeURIComponent('prev_state == D || (nr_scanned >= 32 && priority < 12)')}&count=1`,
    );
    expect(both.total).toBe(
      events.filter(
        (e) =>
          e.fields.prev_state === 'D' ||
          (Number(e.fields.nr_scanned ?? -1) >= 32 &&
            e.fields.priority !== undefined &&
            Number(e.fields.priority) < 12),
      ).length,
    );
  });

  it('answers a bad expression with its place', async () => {
    const r = await app.inject({ url: url(`/event_list?t0=0&t1=1000&expr=${encodeURIComponent('nr_reclaimed <')}`) });
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ kind: 'filter', position: 14 });
    const unknown = await app.inject({
      url: url(`/event_list?t0=0&t1=1000&expr=${encodeURIComponent('nr_reclaim < 3')}`),
    });
    expect(unknown.json().error).toMatch(/no event in this trace has a field named nr_reclaim.*nr_reclaimed/);
  });

  it('never pastes filter text into SQL', async () => {
    const evil = `comm ~ "x') OR 1=1 --" || name == "'; COPY thread TO '/tmp/x'"`;
    const r = await app.inject({
      url: url(
        `/event_list?t0=0&t1=${w1()}&expr=${encodeURIComponent(evil)}&task=${encodeURIComponent("' OR 1=1 --")}`,
      ),
    });
    expect(r.statusCode).toBe(200);
    expect(r.json().total).toBe(0);
  });

  it('finds the row of a time (a timeline selection scrolls the list to it)', async () => {
    const target = events.filter((e) => e.name === 'mm_shrink_slab_start')[100]!;
    const r = await app.inject({
      url: url(`/event_list/position?t0=0&t1=${w1()}&names=mm_shrink_slab_start&ts=${rel(target.ts)}`),
    });
    expect(r.json().index).toBe(events.filter((e) => e.name === 'mm_shrink_slab_start' && e.ts < target.ts).length);
  });
});

describe('search', () => {
  it('finds threads, event names and field values', async () => {
    const r = (await app.inject({ url: url('/search?q=kworker/u8:0') })).json() as {
      threads: Array<{ tid: number; name: string }>;
      values: Array<{ table: string; field: string; value: string; count: number }>;
    };
    const tid = events.find((e) => e.comm === 'kworker/u8:0')!.tid;
    expect(r.threads.map((t) => t.tid)).toContain(tid);
    const waking = r.values.find((v) => v.table === 'sched_waking' && v.field === 'comm' && v.value === 'kworker/u8:0');
    expect(waking?.count).toBe(
      events.filter((e) => e.name === 'sched_waking' && e.fields.comm === 'kworker/u8:0').length,
    );
    const names = (await app.inject({ url: url('/search?q=shrink_slab') })).json() as {
      events: Array<{ name: string; count: number }>;
    };
    expect(names.events.find((n) => n.name === 'mm_shrink_slab_end')?.count).toBe(
      events.filter((e) => e.name === 'mm_shrink_slab_end').length,
    );
  });

  it("steps through an event name's matches in time order", async () => {
    const r = (await app.inject({ url: url('/search/matches?kind=event&name=mm_vmscan_kswapd_wake') })).json() as {
      total: number;
      matches: Array<{ ts: number }>;
    };
    const want = events.filter((e) => e.name === 'mm_vmscan_kswapd_wake');
    expect(r.total).toBe(want.length);
    expect(r.matches.map((m) => m.ts)).toEqual(want.map((e) => rel(e.ts)));
  });

  it("steps through a thread's runs on a CPU", async () => {
    const tid = events.find((e) => e.comm === 'kworker/u8:0')!.tid;
    const th = (await app.inject({ url: url(`/search?q=${tid}`) })).json() as {
      threads: Array<{ utid: number; tid: number }>;
    };
    const utid = th.threads.find((t) => t.tid === tid)!.utid;
    const r = (await app.inject({ url: url(`/search/matches?kind=thread&utid=${utid}`) })).json() as {
      matches: Array<{ kind: string; ts: number; cpu: number }>;
    };
    const switchIns = events.filter((e) => e.name === 'sched_switch' && Number(e.fields.next_pid) === tid);
    expect(r.matches.map((m) => [m.kind, m.ts, m.cpu])).toEqual(switchIns.map((e) => ['sched', rel(e.ts), e.cpu]));
  });
});

describe('range aggregates', () => {
  it("gives kswapd's time per state over its longest shrinker call", async () => {
    const kswapd = events.find((e) => e.comm.startsWith('kswapd'))!.tid;
    const call = shrinkerCalls(events)
      .filter((c) => c.tid === kswapd)
      .sort((a, b) => Number(b.end - b.start - (a.end - a.start)))[0]!;
    // A range a little wider than the call, as a hand drag would be.
    const a0 = call.start - 200_000n;
    const a1 = call.end + 200_000n;
    const th = (await app.inject({ url: url(`/search?q=${kswapd}`) })).json() as {
      threads: Array<{ utid: number; tid: number }>;
    };
    const utid = th.threads.find((t) => t.tid === kswapd)!.utid;
    const r = (
      await app.inject({
        url: url(`/range?t0=${rel(a0)}&t1=${rel(a1)}&tracks=${encodeURIComponent(`thread#${utid},slice#shrinker`)}`),
      })
    ).json() as {
      threadStates: Array<{ utid: number; state: string; durNs: number }>;
      slices: Array<{ category: string; name: string; count: number; maxNs: number }>;
    };
    const want = threadStateTimes(events, kswapd, a0, a1, last);
    const got = new Map(r.threadStates.filter((s) => s.utid === utid).map((s) => [s.state, BigInt(s.durNs)]));
    expect(got).toEqual(want);
    const total = [...got.values()].reduce((a, b) => a + b, 0n);
    expect(total).toBe(a1 - a0);
    const slice = r.slices.find((s) => s.category === 'shrinker' && s.name === call.sym);
    expect(slice?.maxNs).toBe(Number(call.end - call.start));
  });
  it('answers when a range is the first thing a server is asked about the trace (a link with a range)', async () => {
    // A fresh API over the same library: its query process has seen no request for this trace yet.
    const { app: fresh } = await buildApi({
      library: library as unknown as LibraryLike,
      appDir: path.join(dataDir, 'no-app'),
    });
    try {
      await fresh.ready();
      // The thread's utid from the other server (same model), so the fresh one is asked nothing before the range.
      const kswapd = events.find((e) => e.comm.startsWith('kswapd'))!.tid;
      const th = (await app.inject({ url: url(`/search?q=${kswapd}`) })).json() as {
        threads: Array<{ utid: number; tid: number }>;
      };
      const utid = th.threads.find((t) => t.tid === kswapd)!.utid;
      const r = await fresh.inject({
        url: url(`/range?t0=0&t1=${rel(last)}&tracks=${encodeURIComponent(`thread#${utid}`)}`),
      });
      expect(r.statusCode, r.body).toBe(200);
      const body = r.json() as { threadStates: Array<{ utid: number; state: string; durNs: number }> };
      const got = new Map(body.threadStates.filter((x) => x.utid === utid).map((x) => [x.state, BigInt(x.durNs)]));
      expect(got).toEqual(threadStateTimes(events, kswapd, base, last, last));
    } finally {
      await fresh.close();
    }
  });
});

describe('save as detector', () => {
  it("writes the query as a detector whose findings join the trace's", async () => {
    const sql = `SELECT ts, dur, utid, cpu, name, id FROM slice WHERE category = 'shrinker' AND dur > 10000000`;
    const r = await app.inject({
      method: 'POST',
      url: '/api/saved-detectors',
      payload: { traceId: id, id: 'slow_shrinks', title: 'Shrinker calls over 10 ms', severity: 'warn', sql },
    });
    expect(r.statusCode, r.body).toBe(200);
    const want = shrinkerCalls(events).filter((c) => c.end - c.start > 10_000_000n);
    expect(r.json()).toMatchObject({ id: 'slow_shrinks', findings: want.length });
    const file = path.join(dataDir, 'detectors', 'slow_shrinks.sql');
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^-- slow_shrinks: Shrinker calls over 10 ms\n-- @title/);
    const f = (await app.inject({ url: url('/findings') })).json() as {
      findings: Array<{ detector: string; ts: number; dur: number }>;
    };
    const mine = f.findings.filter((x) => x.detector === 'slow_shrinks');
    expect(mine.map((x) => [x.ts, x.dur]).sort((a, b) => a[0]! - b[0]!)).toEqual(
      want.map((c) => [rel(c.start), Number(c.end - c.start)]).sort((a, b) => a[0]! - b[0]!),
    );
    // The built-in detectors still ran.
    expect(f.findings.some((x) => x.detector === 'shrinker_blocking')).toBe(true);
    // Same id again: refused unless replacing; a built-in id: refused.
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/api/saved-detectors',
          payload: { traceId: id, id: 'slow_shrinks', title: 'x', severity: 'info', sql },
        })
      ).statusCode,
    ).toBe(409);
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/api/saved-detectors',
          payload: { traceId: id, id: 'shrinker_blocking', title: 'x', severity: 'info', sql },
        })
      ).statusCode,
    ).toBe(409);
  });

  it('refuses what the sandbox refuses, and writes nothing', async () => {
    const r = await app.inject({
      method: 'POST',
      url: '/api/saved-detectors',
      payload: {
        traceId: id,
        id: 'evil',
        title: 'x',
        severity: 'info',
        sql: `SELECT * FROM read_text('/etc/hostname')`,
      },
    });
    expect(r.statusCode).toBe(403);
    expect(fs.existsSync(path.join(dataDir, 'detectors', 'evil.sql'))).toBe(false);
  });
});
