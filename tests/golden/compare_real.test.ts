/**
 * Compare on real pairs (fixtures/compare, fixture 17): the same bounded memcg
 * workload recorded four times with vm.vfs_cache_pressure=100 and four times
 * with 1000 (fixtures/recording/record_compare_vfs.sh). Expected values come
 * from awk over `trace-cmd report -t` (ns timestamps) of each trace.dat, never
 * from stallscope:
 *
 * - what must move: vfs_cache_pressure scales what the superblock shrinker
 *   reports, so at 1000 memcg reclaim's super_cache_scan frees dentries
 *   (retval sum > 0) and its calls take longer; the task that makes the
 *   negative dentries stalls longer in memcg reclaim (it now frees them);
 * - what must not: a trace against itself, and two iterations of one
 *   setting against two others of the same setting, show no significant change;
 * - log2 histogram buckets of memcg stalls and of each shrinker's calls.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CompareResult, type TraceInput, compareSides } from '../../server/compare/compare.ts';
import { loadTraceInput } from '../../server/compare/load_trace.ts';
import { ingestFile } from '../../server/ingest/ingest_file.ts';
import { TraceLibrary } from '../../server/ingest/library.ts';
import { mean, stddev } from '../../server/compare/stats.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/compare/', import.meta.url));
const CLI = fileURLToPath(new URL('../../bin/stallscope.mjs', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'stallscope-golden-compare-'));
const A = [1, 2, 3, 4].map((i) => `vfs100.${i}.v7.dat`);
const B = [1, 2, 3, 4].map((i) => `vfs1000.${i}.v7.dat`);

/** Per trace, from awk: closed shrinker calls (by symbol), end retvals (by symbol), closed memcg stalls (by task). */
interface Facts {
  calls: Map<string, number[]>;
  freed: Map<string, number>;
  stalls: Map<string, number[]>;
}

// Pairs as the metrics contract defines them (METRICS.md): a shrinker start closes with its task's next shrinker
// event when that is an end of the same symbol; a memcg reclaim begin with the task's next memcg begin/end when
// that is an end.
const AWK = `
{
  if (!match($0, /\\[[0-9]+\\] *[0-9]+: +[a-z_0-9]+:/)) next
  h = substr($0, RSTART, RLENGTH); rest = substr($0, RSTART + RLENGTH)
  sub(/^\\[[0-9]+\\] */, "", h); split(h, a, /: +/); t = a[1]; ev = a[2]; sub(/:$/, "", ev)
  match($0, /-[0-9]+ +\\[[0-9]+\\]/); who = substr($0, 1, RSTART - 1); sub(/^ +/, "", who)
  pid = substr($0, RSTART + 1, RLENGTH); sub(/ .*/, "", pid)
  if (ev == "mm_shrink_slab_start" || ev == "mm_shrink_slab_end") {
    split(rest, w, " "); sym = w[1]; sub(/\\+.*/, "", sym)
    if (ev == "mm_shrink_slab_start") { open[pid] = t; osym[pid] = sym }
    else {
      if ((pid in open) && osym[pid] == sym) print "call", sym, t - open[pid]
      delete open[pid]
      r = rest; sub(/.*return val /, "", r); print "freed", sym, r + 0
    }
  }
  if (ev == "mm_vmscan_memcg_reclaim_begin") mopen[pid] = t
  if (ev == "mm_vmscan_memcg_reclaim_end") { if (pid in mopen) print "stall", who, t - mopen[pid]; delete mopen[pid] }
}`;

function facts(file: string): Facts {
  const report = execFileSync('trace-cmd', ['report', '-t', '-i', join(FIXTURES, file)], {
    maxBuffer: 1 << 28,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const out = execFileSync('awk', [AWK], { input: report, encoding: 'utf8', maxBuffer: 1 << 28 });
  const f: Facts = { calls: new Map(), freed: new Map(), stalls: new Map() };
  for (const line of out.split('\n')) {
    const [kind, key, v] = line.split(' ');
    if (!kind) continue;
    const n = Number(v);
    if (kind === 'call') f.calls.set(key!, [...(f.calls.get(key!) ?? []), n]);
    if (kind === 'freed') f.freed.set(key!, (f.freed.get(key!) ?? 0) + n);
    if (kind === 'stall') f.stalls.set(key!, [...(f.stalls.get(key!) ?? []), n]);
  }
  return f;
}

const sum = (xs: number[] = []) => xs.reduce((a, b) => a + b, 0);
/** Nearest rank, as quantile_disc. */
const pctl = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.ceil(p * xs.length) - 1]!;

let lib: TraceLibrary;
const inputs = new Map<string, TraceInput>();
const awkFacts = new Map<string, Facts>();

beforeAll(async () => {
  lib = await TraceLibrary.open(dataDir);
  for (const f of [...A, ...B]) {
    const { summary } = await ingestFile(join(FIXTURES, f), { dataDir });
    inputs.set(f, await loadTraceInput(lib, summary.id, f));
    awkFacts.set(f, facts(f));
  }
}, 240_000);

afterAll(async () => {
  await lib?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const sides = (a: string[], b: string[]) => [
  { label: 'a', traces: a.map((f) => inputs.get(f)!) },
  { label: 'b', traces: b.map((f) => inputs.get(f)!) },
];
const row = (r: CompareResult, metric: string, key: string | null = null) => {
  const x = r.rows.find((y) => y.metric === metric && y.key === key);
  if (!x) throw new Error(`no row ${metric} [${key}]`);
  return x;
};

describe('compare: vm.vfs_cache_pressure 100 against 1000, four runs each', () => {
  it('super_cache_scan frees dentries at 1000 and not at 100: per-run values as awk counts them, a significant rise', () => {
    const r = compareSides(sides(A, B));
    const freed = row(r, 'shrinker.freed', 'super_cache_scan');
    const awkA = A.map((f) => awkFacts.get(f)!.freed.get('super_cache_scan') ?? 0);
    const awkB = B.map((f) => awkFacts.get(f)!.freed.get('super_cache_scan') ?? 0);
    expect(freed.sides[0]!.values).toEqual(awkA);
    expect(freed.sides[1]!.values).toEqual(awkB);
    expect(Math.min(...awkB)).toBeGreaterThan(Math.max(...awkA));
    expect(freed.sides[1]!.mean).toBe(mean(awkB));
    expect(freed.sides[1]!.stddev).toBeCloseTo(stddev(awkB), 6);
    expect(freed.changes[1]!.test!.method).toBe('welch_t');
    expect(freed.changes[1]!.significant).toBe(true);
    expect(freed.changes[1]!.direction).toBe('better');
  });

  it("super_cache_scan's calls take longer: time blocked and the longest call, as awk pairs them", () => {
    const r = compareSides(sides(A, B));
    const blocked = row(r, 'shrinker.blocked_ns', 'super_cache_scan');
    const maxCall = row(r, 'shrinker.call_max_ns', 'super_cache_scan');
    for (const [side, files] of [
      [0, A],
      [1, B],
    ] as const) {
      const calls = files.map((f) => awkFacts.get(f)!.calls.get('super_cache_scan') ?? []);
      expect(blocked.sides[side]!.values).toEqual(calls.map((c) => sum(c)));
      expect(maxCall.sides[side]!.values).toEqual(calls.map((c) => Math.max(...c)));
      expect(maxCall.sides[side]!.events).toBe(sum(calls.map((c) => c.length)));
    }
    expect(blocked.changes[1]!.change_pct!).toBeGreaterThan(100);
    expect(blocked.changes[1]!.significant).toBe(true);
    expect(blocked.changes[1]!.direction).toBe('worse');
    expect(maxCall.changes[1]!.significant).toBe(true);
  });

  it('the task making negative dentries stalls longer in memcg reclaim (p95 as awk ranks it)', () => {
    const r = compareSides(sides(A, B));
    const p95 = row(r, 'reclaim_stall.memcg.stall_p95_ns', 'neg_dentries');
    const awkA = A.map((f) => pctl(awkFacts.get(f)!.stalls.get('neg_dentries')!, 0.95));
    const awkB = B.map((f) => pctl(awkFacts.get(f)!.stalls.get('neg_dentries')!, 0.95));
    expect(p95.sides[0]!.values).toEqual(awkA);
    expect(p95.sides[1]!.values).toEqual(awkB);
    expect(mean(awkB)).toBeGreaterThan(2 * mean(awkA));
    expect(p95.changes[1]!.significant).toBe(true);
    expect(p95.changes[1]!.direction).toBe('worse');
  });

  it('--fail-on-regression: exit 2 naming the regressions; JSON on stdout', () => {
    const args = [
      CLI,
      'compare',
      '--data-dir',
      dataDir,
      '--a',
      ...A.map((f) => join(FIXTURES, f)),
      '--b',
      ...B.map((f) => join(FIXTURES, f)),
    ];
    let status = 0;
    let stdout = '';
    try {
      stdout = execFileSync('node', [...args, '--json', '--fail-on-regression', '50', '--no-histograms'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      status = (e as { status: number }).status;
      stdout = (e as { stdout: string }).stdout;
    }
    expect(status).toBe(2);
    const j = JSON.parse(stdout) as CompareResult;
    expect(j.sides.map((s) => [s.label, s.traces.length])).toEqual([
      ['vfs100', 4],
      ['vfs1000', 4],
    ]);
    const regressed = j.regressions.map((i) => `${j.rows[i]!.metric} [${j.rows[i]!.key}]`);
    expect(regressed).toContain('shrinker.blocked_ns [super_cache_scan]');
    expect(regressed).not.toContain('shrinker.freed [super_cache_scan]'); // more freed is better
    // the same sets against themselves: no regression, exit 0
    const same = execFileSync(
      'node',
      [
        CLI,
        'compare',
        '--data-dir',
        dataDir,
        '--a',
        ...A.map((f) => join(FIXTURES, f)),
        '--b',
        ...A.map((f) => join(FIXTURES, f)),
        '--fail-on-regression',
        '0',
      ],
      { encoding: 'utf8' },
    );
    expect(same).toContain('no regression of more than 0%');
  }, 120_000);
});

describe('compare: what must not move', () => {
  it('a trace against itself: every change 0, nothing significant', () => {
    for (const f of [A[0]!, B[0]!]) {
      const r = compareSides(sides([f], [f]));
      for (const x of r.rows) {
        expect(x.changes[1]!.significant, x.metric).toBe(false);
        if (x.sides[0]!.mean !== null) expect(x.changes[1]!.change_pct, x.metric).toBe(0);
      }
    }
  });

  it('two iterations of one setting against two others of the same setting: no significant change', () => {
    for (const runs of [A, B]) {
      const r = compareSides(sides(runs.slice(0, 2), runs.slice(2)));
      const flagged = r.rows.filter((x) => x.changes[1]!.significant).map((x) => `${x.metric} [${x.key}]`);
      expect(flagged).toEqual([]);
    }
  });
});

describe('compare: log2 histograms against awk', () => {
  /** The funclatency bucket of a duration, by doubling (independent of log2_hist.ts). */
  const bucket = (durNs: number) => {
    const us = Math.floor(durNs / 1000);
    let s = 0;
    while (2 ** (s + 1) <= us) s++;
    return s;
  };
  const counts = (durs: number[]) => {
    const c: number[] = [];
    for (const d of durs) c[bucket(d)] = (c[bucket(d)] ?? 0) + 1;
    return Array.from(c, (x) => x ?? 0);
  };

  it('memcg stalls (every task) and each shrinker, one run a side', () => {
    const [a, b] = [A[1]!, B[1]!];
    const r = compareSides(sides([a], [b]));
    const fa = awkFacts.get(a)!;
    const fb = awkFacts.get(b)!;
    const stalls = r.histograms.find((h) => h.samples === 'reclaim_stall.memcg.stall' && h.key === null)!;
    expect(stalls.counts).toEqual([counts([...fa.stalls.values()].flat()), counts([...fb.stalls.values()].flat())]);
    for (const sym of ['super_cache_scan', 'scan_shadow_nodes']) {
      const h = r.histograms.find((x) => x.samples === 'shrinker.call' && x.key === sym)!;
      expect(h.counts, sym).toEqual([counts(fa.calls.get(sym) ?? []), counts(fb.calls.get(sym) ?? [])]);
    }
  });

  it('iterations: each side is the sum of its runs', () => {
    const r = compareSides(sides(A, B));
    const h = r.histograms.find((x) => x.samples === 'shrinker.call' && x.key === 'super_cache_scan')!;
    const side = (files: string[]) =>
      counts(files.flatMap((f) => awkFacts.get(f)!.calls.get('super_cache_scan') ?? []));
    expect(h.counts).toEqual([side(A), side(B)]);
  });

  it("--align EVENT: the time series from each trace's first EVENT (awk: its ts minus the first event's), in the JSON and the terminal", () => {
    const files = [A[0]!, B[0]!];
    // awk over trace-cmd report -t: ns of a line ("[001] 13921.946261034:" or, on these traces' clock, "[001]13879853205740:")
    const awk = `match($0, /\\] ?[0-9]+(\\.[0-9]+)?: /) { t = substr($0, RSTART + 1, RLENGTH - 3); sub(/^ /, "", t)
        if (index(t, ".")) { split(t, p, "."); ns = p[1] * 1000000000 + p[2] } else ns = t + 0 }
      t0 == "" { t0 = ns }
      / mm_vmscan_lru_shrink_inactive: / && first == "" { first = ns - t0 }
      END { print first }`;
    const offsetsNs = files.map((f) => {
      const report = execFileSync('trace-cmd', ['report', '-t', '-i', join(FIXTURES, f)], {
        maxBuffer: 1 << 28,
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      return Number(execFileSync('awk', [awk], { input: report, encoding: 'utf8' }).trim());
    });
    for (const o of offsetsNs) expect(o).toBeGreaterThan(0);
    const base = [
      CLI,
      'compare',
      '--data-dir',
      dataDir,
      ...files.map((f) => join(FIXTURES, f)),
      '--no-histograms',
      '--align',
      'vmscan:mm_vmscan_lru_shrink_inactive',
    ];
    const j = JSON.parse(execFileSync('node', [...base, '--json'], { encoding: 'utf8', maxBuffer: 1 << 26 })) as {
      time_series: {
        align: { event: string; offset_s: (number | null)[][] };
        names: string[][];
        series: { series: string; points: [number, number][] }[][][];
      };
    };
    expect(j.time_series.align.event).toBe('vmscan:mm_vmscan_lru_shrink_inactive');
    expect(j.time_series.names).toEqual([[files[0]], [files[1]]]);
    files.forEach((_, i) => {
      expect(j.time_series.align.offset_s[i]![0]).toBeCloseTo(offsetsNs[i]! / 1e9, 9);
      // every rate moved: its first bin (the trace's start) at minus the offset (gauges have points only where measured)
      for (const s of j.time_series.series[i]![0]!.filter((x) => x.series.endsWith('_per_s')))
        expect(s.points[0]![0]).toBeCloseTo(-offsetsNs[i]! / 1e9, 9);
      const scanned = j.time_series.series[i]![0]!.find((s) => s.series === 'vmscan.pages_scanned_per_s')!;
      expect(scanned.points[0]![0]).toBeCloseTo(-offsetsNs[i]! / 1e9, 9);
    });
    // the terminal names each trace's 0
    const text = execFileSync('node', base, { encoding: 'utf8', maxBuffer: 1 << 26 });
    expect(text).toContain('times in s from the first vmscan:mm_vmscan_lru_shrink_inactive in each trace');
    files.forEach((f, i) =>
      expect(text).toContain(`${f}: vmscan:mm_vmscan_lru_shrink_inactive at ${(offsetsNs[i]! / 1e9).toFixed(6)} s`),
    );
    // an event no trace has: the app's fallback (each on its start), said on stderr naming the trace; a bad name: exit 1
    const r = spawnSync('node', [...base.slice(0, -1), 'sched_process_exec', '--json'], {
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    expect(r.status).toBe(0);
    for (const f of files) expect(r.stderr).toContain(`no sched_process_exec in ${f}`);
    const none = JSON.parse(r.stdout) as typeof j;
    expect(none.time_series.align.offset_s).toEqual([[null], [null]]);
    expect(none.time_series.series[0]![0]![0]!.points[0]![0]).toBe(0);
    const bad = spawnSync('node', [...base.slice(0, -1), 'not an event'], { encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('--align wants an event name');
  }, 180_000);
});
