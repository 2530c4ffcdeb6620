/**
 * GET /api/compare on a real server: two traces of fixture 17 uploaded, the
 * comparison, the time series, bad requests.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FIXTURES,
  type RealServer,
  startRealServer,
  uploadFile,
  waitJob,
} from '../../tests/support/api/test_server.ts';

let s: RealServer;
const ids: string[] = [];
const FILES = ['compare/vfs100.1.v7.dat', 'compare/vfs1000.1.v7.dat', 'dirty_throttle.v7.dat'];
// mm_vmscan_memcg_reclaim_begin events per file (fixtures/README.md, fixture 17: awk over trace-cmd report)
const MEMCG_BEGINS = [857, 1079];
// awk: ns = the line's timestamp in ns; trace-cmd report -t prints "[001] 13921.946261034:" or, for
// counter-like clocks, "[001]13879853205740:" (ns, no dot)
const AWK_NS = `match($0, /\\] ?[0-9]+(\\.[0-9]+)?: /) { t = substr($0, RSTART + 1, RLENGTH - 3); sub(/^ /, "", t);
      if (index(t, ".")) { split(t, p, "."); ns = p[1] * 1000000000 + p[2] } else ns = t + 0 }`;

beforeAll(async () => {
  s = await startRealServer();
  for (const f of FILES) {
    const up = await uploadFile(s.base, path.join(FIXTURES, f));
    const job = await waitJob(s.base, up.body.jobId!);
    ids.push((job as unknown as { traceId: string }).traceId);
  }
}, 120_000);

afterAll(async () => {
  await s?.close();
  if (s) fs.rmSync(s.dataDir, { recursive: true, force: true });
});

describe('GET /api/compare', () => {
  it('the comparison, the traces and their series on one bin width', async () => {
    const res = await fetch(`${s.base}/api/compare?sides=${ids[0]},${ids[1]}`);
    expect(res.status).toBe(200);
    const a = (await res.json()) as {
      compare: {
        format: string;
        sides: { label: string }[];
        rows: { metric: string; key: string | null }[];
        histograms: unknown[];
      };
      traces: { id: string; name: string; duration_ns: number }[][];
      bin_ns: number;
      series: { series: string; key: string | null; points: [number, number][] }[][][];
    };
    expect(a.compare.format).toBe('stallscope-compare');
    expect(a.compare.sides.map((x) => x.label)).toEqual(['vfs100.1.v7.dat', 'vfs1000.1.v7.dat']);
    expect(a.compare.rows.some((r) => r.metric === 'shrinker.freed' && r.key === 'super_cache_scan')).toBe(true);
    expect(a.traces.map((t) => t[0]!.id)).toEqual(ids.slice(0, 2));
    a.series.forEach((side, i) => {
      const starts = side[0]!.find((x) => x.series === 'reclaim_stall.starts_per_s')!;
      // rate x bin width summed over the bins = the begins counted by awk
      expect(Math.round(starts.points.reduce((n, p) => n + (p[1] * a.bin_ns) / 1e9, 0))).toBe(MEMCG_BEGINS[i]);
      expect(starts.points.length).toBe(Math.ceil(a.traces[i]![0]!.duration_ns / a.bin_ns));
      expect(side[0]!.some((x) => x.series === 'shrinker.cache_items' && x.key === 'super_cache_scan')).toBe(true);
    });
  }, 60_000);

  it('dirty and writeback pages: the last global_dirty_state value per bin, as awk reads it; "not traced" where absent', async () => {
    const res = await fetch(`${s.base}/api/compare?sides=${ids[2]},${ids[0]}`);
    expect(res.status).toBe(200);
    const a = (await res.json()) as {
      bin_ns: number;
      series: { series: string; unit: string; points: [number, number][] }[][][];
      not_traced: string[][][];
    };
    // awk over trace-cmd report -t: t0 = the first event, the last dirty/writeback value in each bin
    const report = execFileSync('trace-cmd', ['report', '-t', '-i', path.join(FIXTURES, FILES[2]!)], {
      maxBuffer: 1 << 28,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const awk = `${AWK_NS}
      t0 == "" { t0 = ns }
      / global_dirty_state: / { b = int((ns - t0) / ${a.bin_ns}); for (i = 1; i <= NF; i++) { if ($i ~ /^dirty=/) { d[b] = substr($i, 7) } if ($i ~ /^writeback=/) { w[b] = substr($i, 11) } } }
      END { for (b in d) print b, d[b], w[b] }`;
    const expected = execFileSync('awk', [awk], { input: report, encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((l) => l.split(' ').map(Number))
      .sort((x, y) => x[0]! - y[0]!);
    expect(expected.length).toBeGreaterThan(5);
    const binS = a.bin_ns / 1e9;
    const dirty = a.series[0]![0]!.find((x) => x.series === 'dirty.dirty_pages')!;
    const wb = a.series[0]![0]!.find((x) => x.series === 'dirty.writeback_pages')!;
    expect(dirty.unit).toBe('pages');
    expect(dirty.points.map(([t, v]) => [Math.round(t / binS), v])).toEqual(expected.map((e) => [e[0], e[1]]));
    expect(wb.points.map(([t, v]) => [Math.round(t / binS), v])).toEqual(expected.map((e) => [e[0], e[2]]));
    expect(Math.max(...dirty.points.map((p) => p[1]))).toBeGreaterThan(0);
    // the vfs trace has no global_dirty_state: no series, listed as not traced; the dirty trace has them
    expect(a.series[1]![0]!.some((x) => x.series.startsWith('dirty.'))).toBe(false);
    expect(a.not_traced[1]![0]).toEqual(expect.arrayContaining(['dirty.dirty_pages', 'dirty.writeback_pages']));
    expect(a.not_traced[0]![0]).not.toContain('dirty.dirty_pages');
  }, 60_000);

  it("align=EVENT: each trace's times from its first such event (awk: its ts minus the first event's)", async () => {
    const res = await fetch(`${s.base}/api/compare?sides=${ids[0]},${ids[1]}&align=mm_vmscan_memcg_reclaim_begin`);
    expect(res.status).toBe(200);
    const a = (await res.json()) as {
      series: { series: string; points: [number, number][] }[][][];
      align: { event: string; offset_s: (number | null)[][] };
    };
    expect(a.align.event).toBe('mm_vmscan_memcg_reclaim_begin');
    for (const i of [0, 1]) {
      const report = execFileSync('trace-cmd', ['report', '-t', '-i', path.join(FIXTURES, FILES[i]!)], {
        maxBuffer: 1 << 28,
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const awk = `${AWK_NS}
        t0 == "" { t0 = ns }
        / mm_vmscan_memcg_reclaim_begin: / && first == "" { first = ns - t0 }
        END { print first }`;
      const offsetNs = Number(execFileSync('awk', [awk], { input: report, encoding: 'utf8' }).trim());
      expect(offsetNs).toBeGreaterThan(0);
      expect(a.align.offset_s[i]![0]).toBeCloseTo(offsetNs / 1e9, 9);
      // the first bin (the trace's start) now sits at minus the offset
      const starts = a.series[i]![0]!.find((x) => x.series === 'reclaim_stall.starts_per_s')!;
      expect(starts.points[0]![0]).toBeCloseTo(-offsetNs / 1e9, 9);
    }
    // an event neither trace has: offsets null, times from each start; a bad name is 400
    const none = (await (
      await fetch(`${s.base}/api/compare?sides=${ids[0]},${ids[1]}&align=sched_process_exec`)
    ).json()) as {
      align: { offset_s: (number | null)[][] };
      series: { points: [number, number][] }[][][];
    };
    expect(none.align.offset_s).toEqual([[null], [null]]);
    expect(none.series[0]![0]![0]!.points[0]![0]).toBe(0);
    expect((await fetch(`${s.base}/api/compare?sides=${ids[0]},${ids[1]}&align=a%20b`)).status).toBe(400);
  }, 60_000);

  it('iterations of a side with ~; bad requests are 400, unknown traces 404', async () => {
    const it2 = await fetch(`${s.base}/api/compare?sides=${ids[0]}~${ids[0]},${ids[1]}~${ids[1]}`);
    expect(it2.status).toBe(200);
    expect(
      ((await it2.json()) as { compare: { sides: { traces: unknown[] }[] } }).compare.sides[0]!.traces,
    ).toHaveLength(2);
    expect((await fetch(`${s.base}/api/compare`)).status).toBe(400);
    expect((await fetch(`${s.base}/api/compare?sides=${ids[0]}`)).status).toBe(400);
    expect((await fetch(`${s.base}/api/compare?sides=${ids[0]},../etc`)).status).toBe(400);
    expect((await fetch(`${s.base}/api/compare?sides=${ids[0]},${'ab'.repeat(32)}`)).status).toBe(404);
  });
});
