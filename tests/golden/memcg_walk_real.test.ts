/**
 * memcg_walk.v7.dat: a recording nobody tuned stallscope for (fixture 26),
 * read end to end against facts taken from `trace-cmd report -t` with awk:
 *
 *  - trace-cmd's defaults a user gets: v7, zstd, the machine's whole
 *    kallsyms (5.4 MB), and the `boot` trace clock, with which trace-cmd
 *    prints raw nanoseconds glued to the CPU column;
 *  - a 96 MiB memory cgroup writing 400 MiB with fsync while a tree walk
 *    reads small files outside it: 308 memcg reclaim passes, one of them
 *    171 ms long, and 152 reclaim sleeps throttled on writeback.
 *
 * What a kernel developer would check first: every event is there, the one
 * critical finding is that 171 ms stall and it ranks first, nothing else is
 * critical, and the stall and throttling summaries add up to the report.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openDuckDb } from '../../server/engine/engine.ts';
import { type RunResult, runDetectors } from '../../server/findings/run_detectors.ts';
import { ingestFile } from '../../server/ingest/ingest_file.ts';
import { PARSE, awk, pct } from './report_awk.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const DAT = join(FIXTURES, 'memcg_walk.v7.dat');
const dir = mkdtempSync(join(tmpdir(), 'stallscope-golden-memcg-walk-'));
let engine: Engine;
let run: RunResult;
let report: string;

beforeAll(async () => {
  const { dbPath } = await ingestFile(DAT, { dataDir: join(dir, 'data') });
  engine = await openDuckDb(dbPath, { readOnly: true });
  run = await runDetectors(engine, {});
  report = join(dir, 'memcg_walk.report-t.txt');
  writeFileSync(report, execFileSync('trace-cmd', ['report', '-t', '-i', DAT], { maxBuffer: 1 << 30 }));
}, 180_000);

afterAll(() => {
  engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One memcg reclaim pass from the report: the task, begin and end (ns), pages reclaimed. */
interface Pass {
  pid: number;
  begin: bigint;
  end: bigint;
  dur: bigint;
  reclaimed: number;
  gfp: string;
}

/** Each task's memcg_reclaim_begin paired with its next memcg_reclaim_end, by awk over the report (once). */
let passesOnce: Pass[] | undefined;
function memcgPasses(): Pass[] {
  return (passesOnce ??= awk(
    `${PARSE} { parse() }
     ev == "mm_vmscan_memcg_reclaim_begin" { b[pid] = t; g[pid] = field("gfp_flags") }
     ev == "mm_vmscan_memcg_reclaim_end" && (pid in b) {
       printf "%s %.0f %.0f %s %s\\n", pid, b[pid], t, field("nr_reclaimed"), g[pid]; delete b[pid] }`,
    report,
  ).map((line) => {
    const [pid, begin, end, reclaimed, gfp] = line.split(' ');
    return {
      pid: Number(pid),
      begin: BigInt(begin!),
      end: BigInt(end!),
      dur: BigInt(end!) - BigInt(begin!),
      reclaimed: Number(reclaimed),
      gfp: gfp!,
    };
  }));
}

describe('memcg_walk.v7.dat: an untuned memcg writeback recording (boot clock, whole kallsyms)', () => {
  it("holds every event trace-cmd prints, by name, on the boot clock's raw nanoseconds", async () => {
    const counts = JSON.parse(readFileSync(join(FIXTURES, 'memcg_walk.counts.json'), 'utf8')) as {
      events_by_name: Record<string, number>;
      events_total: number;
    };
    const rows = await engine.query<{ name: string; n: bigint }>(
      'SELECT name, count(*) AS n FROM ftrace_event GROUP BY name',
    );
    expect(Object.fromEntries(rows.map((r) => [r.name, Number(r.n)]))).toEqual(counts.events_by_name);
    expect(rows.reduce((a, r) => a + Number(r.n), 0)).toBe(counts.events_total);
    // the report's first and last timestamps, as the raw counts it prints
    const [first, last] = awk(
      `${PARSE} { parse() } ev != "" { if (!n++) f = t; l = t } END { printf "%.0f\\n%.0f\\n", f, l }`,
      report,
    );
    const [bounds] = await engine.query<{ t0: bigint; t1: bigint }>(
      'SELECT min(ts) AS t0, max(ts) AS t1 FROM ftrace_event',
    );
    expect([bounds!.t0, bounds!.t1]).toEqual([BigInt(first!), BigInt(last!)]);
  });

  it('the same events, at the same raw timestamps, from the report text as from the trace.dat', async () => {
    // the plain report (no -t) of a boot-clock trace prints the same glued nanoseconds
    const text = join(dir, 'memcg_walk.report.txt');
    writeFileSync(text, execFileSync('trace-cmd', ['report', '-i', DAT], { maxBuffer: 1 << 30 }));
    const { dbPath } = await ingestFile(text, { dataDir: join(dir, 'data-text') });
    const fromText = await openDuckDb(dbPath, { readOnly: true });
    try {
      const sql = `SELECT name, count(*) AS n, min(ts) AS t0, max(ts) AS t1, sum(ts)::VARCHAR AS ts_sum
                   FROM ftrace_event GROUP BY name ORDER BY name`;
      expect(await fromText.query(sql)).toEqual(await engine.query(sql));
    } finally {
      fromText.close();
    }
  }, 180_000);

  it('reclaim wrote no page itself but woke the flusher: the overview counts writeback_start reason=vmscan', () => {
    const [pageouts, vmscanStarts] = awk(
      `${PARSE} { parse() }
       ev == "mm_vmscan_write_folio" { w++ }
       ev == "writeback_start" && $0 ~ /reason=vmscan / { s++ }
       END { print w + 0; print s + 0 }`,
      report,
    ).map(Number);
    expect(pageouts).toBe(0);
    expect(vmscanStarts).toBeGreaterThan(0);
    const metric = run.metrics.find((m) => m.metric === 'writeback.flusher_vmscan_starts' && m.scope === 'trace');
    expect(metric?.value).toBe(vmscanStarts);
    const line = run.overview.lines.find((l) => l.detector === 'reclaim_writeback')!;
    expect(line.text).toBe(
      `reclaim wrote no pages itself; it started the flusher ${vmscanStarts} times (writeback_start reason=vmscan)`,
    );
  });

  it('its one critical finding is the 171 ms memcg reclaim stall, ranked first', () => {
    const passes = memcgPasses();
    const longest = passes.reduce((a, p) => (p.dur > a.dur ? p : a));
    // read off the report by hand: dd-18070, 52211881393998 -> 52212052483916
    expect(longest).toMatchObject({ pid: 18070, dur: 171_089_918n, reclaimed: 256, gfp: 'GFP_HIGHUSER_MOVABLE' });
    // the only pass over the detector's 100 ms critical threshold
    expect(passes.filter((p) => p.dur >= 100_000_000n)).toHaveLength(1);

    const critical = run.findings.filter((f) => f.severity === 'critical');
    expect(critical).toHaveLength(1);
    const f = critical[0]!;
    expect(f).toMatchObject({ rank: 1, detector: 'direct_reclaim_stall', kind: 'memcg', tid: 18070, comm: 'dd' });
    expect([f.ts_ns, f.dur_ns]).toEqual([longest.begin, longest.dur]);
    expect(f.values).toMatchObject({
      event: 'mm_vmscan_memcg_reclaim_begin',
      gfp_flags: longest.gfp,
      open: false,
      end_lost: false,
      begin_missing: false,
    });
    expect(Number(f.values.nr_reclaimed)).toBe(longest.reclaimed);
    expect(f.title).toBe(
      'dd[18070] stalled 171.1 ms in memcg reclaim (order 0, GFP_HIGHUSER_MOVABLE, reclaimed 256 pages)',
    );
  });

  it('the other stalls of 1 ms or more are warn findings; the summary adds up every pass', () => {
    const passes = memcgPasses();
    const found = run.findings.filter((f) => f.detector === 'direct_reclaim_stall');
    const warn = passes.filter((p) => p.dur >= 1_000_000n && p.dur < 100_000_000n);
    expect(
      found
        .filter((f) => f.severity === 'warn')
        .map((f) => f.dur_ns)
        .sort(),
    ).toEqual(warn.map((p) => p.dur).sort());
    expect(found).toHaveLength(warn.length + 1);

    const durs = passes.map((p) => p.dur).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(durs).toHaveLength(308);
    expect(run.summaries.direct_reclaim_stall).toEqual([
      expect.objectContaining({
        kind: 'memcg',
        process: 'dd',
        threads: 1n,
        stalls: 308n,
        total_ns: durs.reduce((a, d) => a + d, 0n),
        p50_ns: pct(durs, 50),
        p95_ns: pct(durs, 95),
        p99_ns: pct(durs, 99),
        max_ns: durs.at(-1),
        nr_reclaimed: BigInt(passes.reduce((a, p) => a + p.reclaimed, 0)),
      }),
    ]);
  });

  it("mm_vmscan_throttled: dd's sleeps and the time it slept, as the kernel printed them", () => {
    // the kernel's field is spelled usect_delayed (sic) in 6.18
    const [sleeps, slept, longest, tid] = awk(
      `${PARSE} { parse() } ev == "mm_vmscan_throttled" {
         n++; d = field("usect_delayed") * 1000; s += d; if (d > m) m = d; p[pid] = 1
         if (field("reason") != "VMSCAN_THROTTLE_WRITEBACK") other++ }
       END { for (k in p) tids = tids k; printf "%d %.0f %.0f %s\\n", n, s, m, (other ? "mixed" : tids) }`,
      report,
    )[0]!.split(' ');
    expect(Number(sleeps)).toBe(152);
    expect(run.summaries.reclaim_throttled).toEqual([
      expect.objectContaining({
        tid: Number(tid),
        thread: 'dd',
        reason: 'WRITEBACK',
        sleeps: BigInt(sleeps!),
        slept_ns: BigInt(slept!),
        max_sleep_ns: BigInt(longest!),
      }),
    ]);
  });
});
