/**
 * The writeback and I/O detectors (reclaim_throttled, dirty_throttled,
 * io_latency) over the three recordings of issue 34, against facts computed
 * by awk over `trace-cmd report -t` (nanosecond timestamps) of each
 * trace.dat, independently of the decoders and the detector SQL:
 *
 *  - memcg_writer.v7.dat: mm_vmscan_throttled sleeps per task (count, total
 *    and longest usect_delayed);
 *  - dirty_throttle.v7.dat: balance_dirty_pages pauses per task (pause > 0
 *    ms summed, counted, longest);
 *  - writeback_flood.v7.dat: block requests paired issue -> complete by
 *    (dev, sector) in awk; completed reads and writes per device, latency
 *    percentiles (nearest rank), biolatency's log2 buckets, and the reads of
 *    10 ms or more while writes were in flight.
 *
 * And the same report text ingested as text reads the block events into the
 * same fields: its io_latency summary equals the trace.dat's row for row.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openDuckDb } from '../../server/engine/engine.ts';
import { metricValue } from '../../server/findings/metrics.ts';
import { type RunResult, runDetectors } from '../../server/findings/run_detectors.ts';
import { ingestFile } from '../../server/ingest/ingest_file.ts';
import { PARSE, awk, pct } from './report_awk.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'stallscope-golden-wbio-'));
const engines: Engine[] = [];
afterAll(() => {
  for (const e of engines) e.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `trace-cmd report -t` (nanosecond timestamps) of a fixture, written once. */
function reportNs(name: string): string {
  const out = join(dir, `${name}.report-t.txt`);
  writeFileSync(out, execFileSync('trace-cmd', ['report', '-t', '-i', join(FIXTURES, name)], { maxBuffer: 1 << 30 }));
  return out;
}

async function analyze(file: string): Promise<RunResult> {
  const { dbPath } = await ingestFile(file, { dataDir: join(dir, 'data') });
  const engine = await openDuckDb(dbPath, { readOnly: true });
  engines.push(engine);
  return runDetectors(engine, { detectors: ['reclaim_throttled', 'dirty_throttled', 'io_latency'] });
}

const num = (v: unknown) => Number(v);

describe('memcg_writer: reclaim throttled on writeback (mm_vmscan_throttled)', () => {
  let run: RunResult;
  let report: string;
  beforeAll(async () => {
    run = await analyze(join(FIXTURES, 'memcg_writer.v7.dat'));
    report = reportNs('memcg_writer.v7.dat');
  });

  it('sleeps, time asleep and the longest sleep per task equal awk over the report', () => {
    const facts = awk(
      `${PARSE} { parse() } ev == "mm_vmscan_throttled" { d = field("usect_delayed") * 1000; n[pid]++; s[pid] += d; if (d > mx[pid]) mx[pid] = d; r[pid] = field("reason") }
       END { for (p in n) print p, n[p], s[p], mx[p], r[p] }`,
      report,
    ).map((l) => l.split(' '));
    expect(facts.length).toBeGreaterThan(0);
    const rows = run.summaries.reclaim_throttled!;
    expect(rows).toHaveLength(facts.length);
    for (const [pid, n, sum, mx, reason] of facts) {
      const row = rows.find((r) => num(r.tid) === Number(pid))!;
      expect(row, `task ${pid}`).toBeDefined();
      expect(num(row.sleeps)).toBe(Number(n));
      expect(num(row.slept_ns)).toBe(Number(sum));
      expect(num(row.max_sleep_ns)).toBe(Number(mx));
      expect(row.reason).toBe(reason!.replace('VMSCAN_THROTTLE_', ''));
    }
    const total = facts.reduce((a, f) => a + Number(f[2]), 0);
    expect(metricValue(run.metrics, 'throttle.slept_ns')).toBe(total);
  });

  it('the dd burst is one warn finding: its time asleep, in memcg reclaim, named by task', () => {
    const [pid, n, sum] = awk(
      `${PARSE} { parse() } ev == "mm_vmscan_throttled" && task == "dd" { p = pid; n++; s += field("usect_delayed") * 1000 } END { print p, n, s }`,
      report,
    )[0]!.split(' ');
    const f = run.findings.filter((x) => x.detector === 'reclaim_throttled');
    expect(f).toHaveLength(1); // one burst: the sleeps come well under 1 s apart
    expect(f[0]!.tid).toBe(Number(pid));
    expect(Number(f[0]!.impact_ns)).toBe(Number(sum));
    expect(Number(f[0]!.values.sleeps)).toBe(Number(n));
    // 448 ms asleep over 654 ms: over warn (50 ms), under critical (1 s)
    expect(f[0]!.severity).toBe(Number(sum) >= 1e9 ? 'critical' : Number(sum) >= 5e7 ? 'warn' : 'info');
    expect(f[0]!.values.context).toBe('memcg reclaim');
    expect(f[0]!.kind).toBe('writeback');
  });
});

describe('dirty_throttle: writers paused in balance_dirty_pages', () => {
  let run: RunResult;
  let report: string;
  beforeAll(async () => {
    run = await analyze(join(FIXTURES, 'dirty_throttle.v7.dat'));
    report = reportNs('dirty_throttle.v7.dat');
  });

  it('paused time, pauses and calls that did not sleep per task equal awk over the report', () => {
    const facts = awk(
      `${PARSE} { parse() } ev == "balance_dirty_pages" { p = field("pause") + 0; c[pid]++; if (p > 0) { n[pid]++; s[pid] += p * 1000000; if (p * 1000000 > mx[pid]) mx[pid] = p * 1000000 } else z[pid]++ }
       END { for (q in c) print q, n[q] + 0, s[q] + 0, mx[q] + 0, z[q] + 0 }`,
      report,
    ).map((l) => l.split(' ').map(Number));
    expect(facts.length).toBeGreaterThan(0);
    const rows = run.summaries.dirty_throttled!;
    for (const [pid, n, sum, mx, zero] of facts) {
      const row = rows.find((r) => num(r.tid) === pid)!;
      expect(num(row.pauses)).toBe(n);
      expect(num(row.paused_ns)).toBe(sum);
      expect(num(row.max_pause_ns)).toBe(mx);
      expect(num(row.not_paused)).toBe(zero);
    }
    const dd = facts.find((f) => rows.find((r) => num(r.tid) === f[0])?.thread === 'dd')!;
    const f = run.findings.filter((x) => x.detector === 'dirty_throttled' && x.tid === dd[0]);
    expect(f).toHaveLength(1);
    expect(Number(f[0]!.impact_ns)).toBe(dd[2]);
    // 568 ms of 4 ms pauses over 1.35 s: warn (100 ms), not critical (1 s)
    expect(f[0]!.severity).toBe('warn');
  });
});

describe('writeback_flood: block request latency per device', () => {
  let run: RunResult;
  let report: string;
  type Req = { dev: string; op: string; lat: number; issue: number; complete: number; bytes: number };
  let reqs: Req[];
  beforeAll(async () => {
    run = await analyze(join(FIXTURES, 'writeback_flood.v7.dat'));
    report = reportNs('writeback_flood.v7.dat');
    // pair in awk: a completion closes the latest open issue of its (dev, sector);
    // a flush (zero length, rwbs with F) has no sector to key on (issued at 0,
    // completed at (sector_t)-1) and closes its device's open flush
    reqs = awk(
      `${PARSE} { parse() }
       function at(k,   i) { for (i = 1; i <= NF; i++) if ($i == ev ":") return $(i + k); return "" }
       ev == "block_rq_issue" { d = at(1); r = at(2); sec = at(5); if (at(7) == 0 && r ~ /F/) sec = "flush"; k = d " " sec; it[k] = t; op[k] = (sec == "flush") ? "F" : (r ~ /R/) ? "R" : (r ~ /W/) ? "W" : (r ~ /D/) ? "D" : (r ~ /F/) ? "F" : "N"; nr[k] = at(7) }
       ev == "block_rq_complete" { d = at(1); sec = at(4); if (at(6) == 0 && at(2) ~ /F/) sec = "flush"; k = d " " sec; if (k in it) { print d, op[k], t - it[k], it[k], t, nr[k] * 512; delete it[k] } }`,
      report,
    ).map((l) => {
      const [dev, op, lat, issue, complete, bytes] = l.split(' ');
      return {
        dev: dev!,
        op: op!,
        lat: Number(lat),
        issue: Number(issue),
        complete: Number(complete),
        bytes: Number(bytes),
      };
    });
  });

  it('completed reads and writes per device, p50 / p99 / max latency', () => {
    const devices = [...new Set(reqs.map((r) => r.dev))];
    expect(devices.sort()).toEqual(['254,0', '7,2']);
    for (const dev of devices) {
      for (const [op, name] of [
        ['R', 'read'],
        ['W', 'write'],
      ] as const) {
        const lat = reqs
          .filter((r) => r.dev === dev && r.op === op)
          .map((r) => BigInt(r.lat))
          .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        expect(metricValue(run.metrics, `io.${name}s`, dev), `${dev} ${op}`).toBe(lat.length);
        expect(metricValue(run.metrics, `io.${name}_p50_ns`, dev)).toBe(Number(pct(lat, 50)));
        expect(metricValue(run.metrics, `io.${name}_p99_ns`, dev)).toBe(Number(pct(lat, 99)));
        expect(metricValue(run.metrics, `io.${name}_max_ns`, dev)).toBe(Number(lat.at(-1)));
      }
      expect(metricValue(run.metrics, 'io.requests', dev)).toBe(reqs.filter((r) => r.dev === dev).length);
    }
  });

  it('log2 histogram buckets per device and op, as biolatency counts them', () => {
    const bucket = (ns: number) => {
      const us = Math.floor(ns / 1000);
      return us < 2 ? 0 : 2 ** Math.floor(Math.log2(us));
    };
    const rows = run.summaries.io_latency!;
    for (const dev of ['7,2', '254,0']) {
      // reads only: writes split into sync and async rows, which awk does not need to know
      const want = new Map<number, number>();
      for (const r of reqs.filter((x) => x.dev === dev && x.op === 'R'))
        want.set(bucket(r.lat), (want.get(bucket(r.lat)) ?? 0) + 1);
      const got = new Map(
        rows.filter((r) => r.device === dev && r.op === 'R').map((r) => [num(r.usecs_from), num(r.count)]),
      );
      expect(got, dev).toEqual(want);
      for (const r of rows.filter((x) => x.device === dev && x.op === 'R'))
        expect(num(r.usecs_to)).toBe(num(r.usecs_from) === 0 ? 1 : 2 * num(r.usecs_from) - 1);
    }
  });

  it('reads of 10 ms or more with at least their own bytes of writes in flight on their device are warn findings, one episode per device', () => {
    for (const dev of ['7,2', '254,0']) {
      const writes = reqs.filter((r) => r.dev === dev && r.op === 'W');
      const slow = reqs.filter(
        (r) =>
          r.dev === dev &&
          r.op === 'R' &&
          r.lat >= 10_000_000 &&
          writes
            .filter((w) => w.issue <= r.complete && w.complete >= r.issue)
            .reduce((sum, w) => sum + w.bytes, -r.bytes) >= 0,
      );
      const f = run.findings.filter((x) => x.detector === 'io_latency' && x.values.device === dev);
      if (slow.length === 0) {
        expect(f).toHaveLength(0);
        continue;
      }
      const worst = Math.max(...slow.map((r) => r.lat));
      expect(
        f.reduce((a, x) => a + Number(x.values.slow_reads), 0),
        dev,
      ).toBe(slow.length);
      expect(Math.max(...f.map((x) => Number(x.impact_ns)))).toBe(worst);
      // 16-17 ms behind writeback: warn (10 ms), far from critical (500 ms)
      for (const x of f) expect(x.severity).toBe(Number(x.impact_ns) >= 5e8 ? 'critical' : 'warn');
    }
    const loop = run.findings.find((x) => x.detector === 'io_latency' && x.values.device === '7,2')!;
    expect(loop.comm).toBe('dd'); // the reader
    expect(loop.values.flusher_reason).toBe('background');
    expect(String(loop.values.dirtied_by)).toMatch(/^dd\[\d+\]/); // the writer, from writeback_dirty_inode_enqueue
  });

  it('the report text, ingested as text, gives the same block requests (the text parser reads dev as the dev_t)', async () => {
    const text = await analyze(report);
    expect(text.summaries.io_latency).toEqual(run.summaries.io_latency);
    const pick = (r: RunResult) =>
      r.metrics.filter((m) => m.detector === 'io_latency').map((m) => [m.metric, m.key, m.value]);
    expect(pick(text)).toEqual(pick(run));
  });
});

describe('4.x tracefs excerpt (fixtures/handmade/kernel4x_writeback_io.txt)', () => {
  // Counted by hand from the 23 lines: dd pauses 12 + 40 + 200 + 200 ms (one pause=-3: not slept);
  // cat's reads take 180 ms and 620 ms while two 512 KiB writes of the flusher are in flight
  // (issued 8100.001, completed 8100.700 / 8100.750), then one 30 ms read with nothing in flight;
  // the empty preflush write (FWS 0 + 0) is a flush, not a write.
  let run: RunResult;
  beforeAll(async () => {
    run = await analyze(join(FIXTURES, 'handmade/kernel4x_writeback_io.txt'));
  });

  it('dirty throttling: 452 ms paused in 4 pauses, one call not slept, a warn finding', () => {
    const row = run.summaries.dirty_throttled![0]!;
    expect([
      num(row.tid),
      row.bdi,
      num(row.pauses),
      num(row.not_paused),
      num(row.paused_ns),
      num(row.max_pause_ns),
    ]).toEqual([4242, '8:0', 4, 1, 452e6, 200e6]);
    const f = run.findings.filter((x) => x.detector === 'dirty_throttled');
    expect(f.map((x) => [x.severity, Number(x.impact_ns), x.tid])).toEqual([['warn', 452e6, 4242]]);
    expect(f[0]!.values.bdi).toBe('8:0');
    expect(Number(f[0]!.values.max_dirty)).toBe(406000);
    expect(Number(f[0]!.values.wb_dirty)).toBe(404800); // bdi_dirty= of the first 200 ms pause
  });

  it('block requests: 3 reads, 2 writes, 1 flush; the 620 ms read behind background writeback is critical', () => {
    const m = (k: string) => metricValue(run.metrics, k, '8,0');
    expect([m('io.requests'), m('io.reads'), m('io.writes')]).toEqual([6, 3, 2]);
    expect([m('io.read_p50_ns'), m('io.read_max_ns'), m('io.write_max_ns')]).toEqual([180e6, 620e6, 748.9e6]);
    const f = run.findings.filter((x) => x.detector === 'io_latency');
    expect(f).toHaveLength(1);
    expect(f[0]!.severity).toBe('critical');
    expect(Number(f[0]!.impact_ns)).toBe(620e6);
    expect(f[0]!.ts_ns).toBe(8100_010_000_000n);
    expect(f[0]!.tid).toBe(4300);
    expect(
      Object.fromEntries(Object.entries(f[0]!.values).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])),
    ).toMatchObject({
      device: '8,0',
      slow_reads: 2,
      writes_in_flight: 2,
      flusher_reason: 'background',
      dirtied_by: 'dd[4242]',
      reader: 'cat',
    });
    expect(String(f[0]!.title)).toContain('written by kworker/u8:2 for background writeback');
    const hist = run.summaries
      .io_latency!.filter((r) => r.op === 'R' || r.op === 'R sync')
      .map((r) => [r.op, num(r.usecs_from), num(r.count)]);
    // 180000 us -> [131072, 262143]; 620000 us -> [524288, 1048575]; 30000 us -> [16384, 32767]
    expect(hist).toEqual(
      [
        ['R', 131072, 1],
        ['R', 524288, 1],
        ['R', 16384, 1],
      ].sort((a, b) => (a[1] as number) - (b[1] as number)),
    );
  });
});

describe('dirtiers_io: "dirtied by" counts a loop of short-lived writers as one command', () => {
  // fixtures/dirtiers_io.v7.dat (recording/record_dirtiers_io.sh): ~190 dd processes of 2 MiB each
  // dirty pages beside long-lived tasks (trace-cmd's own buffers, other programs): per task, each dd
  // had a handful of events; per command they are the writer.
  it('the top three commands by dirtying events on the device up to the episode end, with their task counts', async () => {
    const run = await analyze(join(FIXTURES, 'dirtiers_io.v7.dat'));
    const report = reportNs('dirtiers_io.v7.dat');
    const f = run.findings.filter((x) => x.detector === 'io_latency');
    expect(f.length).toBeGreaterThan(0);
    for (const finding of f) {
      const device = String(finding.values.device); // '254,0'
      const end = BigInt(finding.ts_ns) + BigInt(finding.dur_ns);
      // events naming the device: writeback_dirty_folio / balance_dirty_pages 'bdi 254:0:',
      // writeback_dirty_inode_enqueue 'dev 254,0'; kernel threads (kworker) are not dirtiers
      const rows = awk(
        `${PARSE} { parse() }
         (ev == "writeback_dirty_folio" || ev == "balance_dirty_pages") && $0 ~ /bdi ${device.replace(',', ':')}:/ { hit = 1 }
         ev == "writeback_dirty_inode_enqueue" && $0 ~ /dev ${device} / { hit = 1 }
         hit && t <= ${end} && task !~ /^kworker/ { n[task]++; if (!((task, pid) in seen)) { seen[task, pid] = 1; tasks[task]++; one[task] = pid } }
         { hit = 0 }
         END { for (c in n) print n[c] "\t" tasks[c] "\t" one[c] "\t" c }`,
        report,
      ).map((l) => l.split('\t'));
      const who = rows
        .map(([n, tasks, pid, comm]) => ({
          n: Number(n),
          label: Number(tasks) > 1 ? `${comm} (${tasks} tasks)` : `${comm}[${pid}]`,
        }))
        .sort((a, b) => b.n - a.n || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0))
        .slice(0, 3)
        .map((w) => w.label);
      expect(who.some((w) => /^dd \(\d+ tasks\)$/.test(w))).toBe(true);
      expect(finding.values.dirtied_by).toBe(who.join(', '));
      expect(String(finding.title)).toContain(`dirtied by ${who.join(', ')}`);
    }
  });
});

describe('large_folio_dirtiers: "dirtied by" weighs the pages written of the inodes each command dirtied', () => {
  // fixtures/large_folio_dirtiers.v7.dat (recording/record_large_folio_dirtiers.sh): in a 48 MiB memcg a
  // buffered dd of 200 MiB dirties ~200 large folios, a Python loop ~5,000 3 KB files (a folio each); the
  // flusher's writeback_single_inode says how many pages it wrote of each inode.
  it('ranks the commands by pages written of their inodes, split by their share of each inode (its dirtying events)', async () => {
    const run = await analyze(join(FIXTURES, 'large_folio_dirtiers.v7.dat'));
    const report = reportNs('large_folio_dirtiers.v7.dat');
    const f = run.findings.filter((x) => x.detector === 'io_latency');
    expect(f.length).toBeGreaterThan(0);
    const fmtCount = (n: number) => (n < 1000 ? String(n) : `${(n / 1e3).toFixed(1)}k`);
    for (const finding of f) {
      const device = String(finding.values.device); // '254,0'
      const bdi = device.replace(',', ':');
      const end = BigInt(finding.ts_ns) + BigInt(finding.dur_ns);
      // per (command, inode): dirtying events (folio or inode enqueue; balance_dirty_pages has no inode);
      // per inode: folios dirtied and pages written (writeback_single_inode wrote=), up to the episode end
      const rows = awk(
        `${PARSE} { parse() }
         t > ${end} { next }
         ev == "writeback_dirty_folio" && $0 ~ /bdi ${bdi}:/ { ino = field("ino"); folio = 1; hit = 1 }
         ev == "writeback_dirty_inode_enqueue" && $0 ~ /dev ${device} / { for (i = 1; i <= NF; i++) if ($i == "ino") ino = $(i + 1); folio = 0; hit = 1 }
         ev == "balance_dirty_pages" && $0 ~ /bdi ${bdi}:/ { ino = "none"; folio = 0; hit = 1 }
         ev == "writeback_single_inode" && $0 ~ /bdi ${bdi}:/ { wrote[field("ino")] += field("wrote") }
         hit && task !~ /^kworker/ { n[task, ino]++; N[ino]++; if (folio) folios[ino]++; if (!((task, pid) in seen)) { seen[task, pid] = 1; tasks[task]++; one[task] = pid } }
         { hit = 0 }
         END {
           for (k in n) { split(k, a, SUBSEP); c = a[1]; i = a[2];
             if (i == "none") w[c] += n[k]; else { p = wrote[i] > folios[i] ? wrote[i] : folios[i] + 0; w[c] += p * n[k] / N[i] } }
           for (c in w) print w[c] "\t" tasks[c] "\t" one[c] "\t" c
         }`,
        report,
      ).map((l) => l.split('\t'));
      const who = rows
        .map(([w, tasks, pid, comm]) => ({
          w: Number(w),
          label:
            Number(tasks) > 1
              ? `${comm} (${tasks} tasks, ${fmtCount(Math.round(Number(w)))} pages)`
              : `${comm}[${pid}] (${fmtCount(Math.round(Number(w)))} pages)`,
        }))
        .sort((a, b) => b.w - a.w || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0))
        .slice(0, 3)
        .map((x) => x.label);
      // the 200 MiB writer first, though its dirtying events are a fraction of the small-file writer's
      expect(who[0]).toMatch(/^dd\[\d+\] \(\d+\.\dk pages\)$/);
      expect(finding.values.dirtied_by).toBe(who.join(', '));
      expect(String(finding.title)).toContain(`dirtied by ${who.join(', ')}`);
    }
    // by events alone, the small-file writer outnumbers dd in the report: the case the weighing is for
    const [dd, py] = awk(
      `${PARSE} { parse() } ev == "writeback_dirty_folio" { n[task]++ } END { print n["dd"] + 0; print n["python3"] + 0 }`,
      report,
    ).map(Number);
    expect(py!).toBeGreaterThan(5 * dd!);
  });
});

describe('writeback_flood: the counter tracks the app draws', () => {
  it('dirty / writeback pages per global_dirty_state event, and one latency value per completed request per device and op', async () => {
    const { dbPath } = await ingestFile(join(FIXTURES, 'writeback_flood.v7.dat'), { dataDir: join(dir, 'data') });
    const e = await openDuckDb(dbPath, { readOnly: true });
    engines.push(e);
    const report = reportNs('writeback_flood.v7.dat');
    const [n, maxDirty, maxWb] = awk(
      `${PARSE} { parse() } ev == "global_dirty_state" { n++; d = field("dirty") + 0; w = field("writeback") + 0; if (d > md) md = d; if (w > mw) mw = w } END { print n, md + 0, mw + 0 }`,
      report,
    )[0]!
      .split(' ')
      .map(Number);
    const rows = await e.query<{ name: string; n: bigint; mx: number }>(
      'SELECT t.name, count(c.ts) AS n, max(c.value) AS mx FROM counter_track t JOIN counter c ON c.track_id = t.id GROUP BY t.name ORDER BY t.name',
    );
    const by = new Map(rows.map((r) => [r.name, r]));
    expect(Number(by.get('dirty pages')!.n)).toBe(n);
    expect(by.get('dirty pages')!.mx).toBe(maxDirty);
    expect(by.get('writeback pages')!.mx).toBe(maxWb);
    // latency tracks: the requests awk paired in the other describe, counted again here from the report
    const pairs = awk(
      `${PARSE} { parse() }
       function at(k,   i) { for (i = 1; i <= NF; i++) if ($i == ev ":") return $(i + k); return "" }
       ev == "block_rq_issue" { k = at(1) " " at(5); it[k] = t; op[k] = (at(2) ~ /R/) ? "R" : (at(2) ~ /W/) ? "W" : "other" }
       ev == "block_rq_complete" { k = at(1) " " at(4); if (k in it) { c[at(1) " " op[k]]++; if (t - it[k] > m[at(1) " " op[k]]) m[at(1) " " op[k]] = t - it[k]; delete it[k] } }
       END { for (x in c) if (x !~ /other/) print x, c[x], m[x] }`,
      report,
    ).map((l) => l.split(' '));
    expect(pairs.length).toBe(4);
    for (const [dev, op, count, mx] of pairs) {
      const r = by.get(`block ${op} latency ${dev}`)!;
      expect(Number(r.n), `${dev} ${op}`).toBe(Number(count));
      expect(r.mx).toBeCloseTo(Number(mx) / 1e6, 9);
    }
  });
});
