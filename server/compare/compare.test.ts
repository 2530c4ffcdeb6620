/**
 * compareSides on hand-made inputs: joining metrics across traces, absent
 * counts as zero, the change in percent, which test runs when, regressions,
 * log2 histograms, the argument parser. Real traces: tests/golden/compare_real.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Metric } from '../findings/metrics.ts';
import { type TraceInput, compareSides } from './compare.ts';
import { defaultLabel, parseCompareArgs } from './compare_cli.ts';
import { compareResultToJson } from './compare_json.ts';
import { formatCompare, formatCompareTable } from '../../shared/compare/format_compare.ts';
import { log2Counts, log2Slot, slotBounds } from '../../shared/compare/log2_hist.ts';
import type { TraceSamples } from './samples.ts';

const m = (metric: string, value: number, extra: Partial<Metric> = {}): Metric => ({
  metric,
  detector: extra.detector ?? 'shrinker_blocking',
  scope: extra.scope ?? 'trace',
  key: extra.key ?? null,
  value,
  unit: extra.unit ?? 'count',
  better: extra.better === undefined ? 'lower' : extra.better,
});

function trace(
  name: string,
  metrics: Metric[],
  calls: number[] = [],
  ran = ['trace', 'shrinker_blocking'],
): TraceInput {
  const samples: TraceSamples = new Map();
  if (calls.length) {
    samples.set('shrinker.call', {
      id: 'shrinker.call',
      detector: 'shrinker_blocking',
      unit: 'ns',
      scope: 'shrinker',
      byKey: new Map([['super_cache_scan', Float64Array.from(calls).sort()]]),
    });
  }
  return { name, id: null, metrics, samples, ran: new Set(ran) };
}

describe('compareSides', () => {
  it('joins on metric, scope and key; the change is against the first side; an absent count is zero where the detector ran', () => {
    const a = trace('a', [
      m('shrinker.calls_over_warn', 4),
      m('shrinker.calls_over_warn', 4, { scope: 'shrinker', key: 'super_cache_scan' }),
    ]);
    const b = trace('b', [m('shrinker.calls_over_warn', 6)]);
    const c = trace('c', [], [], ['trace']); // the detector did not run: no value, not zero
    const r = compareSides([
      { label: 'a', traces: [a] },
      { label: 'b', traces: [b] },
      { label: 'c', traces: [c] },
    ]);
    const whole = r.rows.find((x) => x.metric === 'shrinker.calls_over_warn' && x.key === null)!;
    expect(whole.sides.map((s) => s.mean)).toEqual([4, 6, null]);
    expect(whole.changes[1]!.change_pct).toBe(50);
    expect(whole.changes[1]!.direction).toBe('worse');
    expect(whole.changes[1]!.test).toBeNull(); // one value a side: nothing to test
    expect(whole.changes[2]!.change_pct).toBeNull();
    const keyed = r.rows.find((x) => x.key === 'super_cache_scan')!;
    expect(keyed.sides.map((s) => s.mean)).toEqual([4, 0, null]);
    expect(keyed.changes[1]!.change_pct).toBe(-100);
    expect(keyed.changes[1]!.direction).toBe('better');
  });

  it("iterations: mean ± stddev, Welch's t on the iteration values, regressions past the threshold only", () => {
    const A = [10, 11, 12].map((v, i) =>
      trace(`a${i}`, [
        m('shrinker.blocked_ns', v * 1e6, { unit: 'ns' }),
        m('shrinker.freed', 100 + i, { unit: 'objects', better: 'higher' }),
      ]),
    );
    const B = [20, 21, 22].map((v, i) =>
      trace(`b${i}`, [
        m('shrinker.blocked_ns', v * 1e6, { unit: 'ns' }),
        m('shrinker.freed', 101 + i, { unit: 'objects', better: 'higher' }),
      ]),
    );
    const r = compareSides(
      [
        { label: 'A', traces: A },
        { label: 'B', traces: B },
      ],
      { regressionPct: 50 },
    );
    const blocked = r.rows.find((x) => x.metric === 'shrinker.blocked_ns')!;
    expect(blocked.sides[0]!.mean).toBe(11e6);
    expect(blocked.sides[0]!.stddev).toBeCloseTo(1e6, 6);
    expect(blocked.changes[1]!.change_pct).toBeCloseTo((10 / 11) * 100, 9);
    expect(blocked.changes[1]!.test!.method).toBe('welch_t');
    expect(blocked.changes[1]!.significant).toBe(true);
    expect(blocked.changes[1]!.regression).toBe(true);
    const freed = r.rows.find((x) => x.metric === 'shrinker.freed')!;
    expect(freed.changes[1]!.significant).toBe(false);
    expect(r.regressions).toEqual([r.rows.indexOf(blocked)]);
    // 90.9% is not more than 95%
    expect(
      compareSides(
        [
          { label: 'A', traces: A },
          { label: 'B', traces: B },
        ],
        { regressionPct: 95 },
      ).regressions,
    ).toEqual([]);
  });

  it('percentile metrics: Mann-Whitney U on the events with one trace a side; Welch with iterations, the events kept as event_test', () => {
    const calls = (k: number) => Array.from({ length: 200 }, (_, i) => 1000 * (1 + (i % 50)) * k);
    const one = compareSides([
      { label: 'a', traces: [trace('a', [m('shrinker.call_p99_ns', 49e3, { unit: 'ns' })], calls(1))] },
      { label: 'b', traces: [trace('b', [m('shrinker.call_p99_ns', 98e3, { unit: 'ns' })], calls(2))] },
    ]);
    const row = one.rows[0]!;
    expect(row.samples).toBe('shrinker.call');
    expect(row.changes[1]!.test!.method).toBe('mann_whitney_u');
    expect(row.changes[1]!.significant).toBe(true);
    expect(row.sides.map((s) => s.events)).toEqual([200, 200]);
    const itr = compareSides([
      {
        label: 'a',
        traces: [1, 1.01].map((k) => trace('a', [m('shrinker.call_p99_ns', 49e3 * k, { unit: 'ns' })], calls(k))),
      },
      {
        label: 'b',
        traces: [2, 2.02].map((k) => trace('b', [m('shrinker.call_p99_ns', 49e3 * k, { unit: 'ns' })], calls(k))),
      },
    ]);
    expect(itr.rows[0]!.changes[1]!.test!.method).toBe('welch_t');
    expect(itr.rows[0]!.changes[1]!.event_test!.method).toBe('mann_whitney_u');
    expect(itr.rows[0]!.sides[0]!.events).toBe(400);
  });

  it('a trace against itself: no change, nothing significant', () => {
    const t = trace(
      't',
      [m('shrinker.call_p99_ns', 5e3, { unit: 'ns' }), m('shrinker.calls', 3, { better: null })],
      [1e3, 2e3, 5e3],
    );
    const r = compareSides([
      { label: 'a', traces: [t] },
      { label: 'b', traces: [t] },
    ]);
    for (const row of r.rows) {
      expect(row.changes[1]!.change_pct).toBe(0);
      expect(row.changes[1]!.significant).toBe(false);
    }
  });

  it('log2 histograms per samples id and per key, iterations summed', () => {
    const r = compareSides([
      { label: 'a', traces: [trace('a', [], [500, 1999, 2000, 3999, 4000]), trace('a2', [], [9000])] },
      { label: 'b', traces: [trace('b', [], [70_000])] },
    ]);
    expect(r.histograms.map((h) => [h.samples, h.key])).toEqual([
      ['shrinker.call', null],
      ['shrinker.call', 'super_cache_scan'],
    ]);
    // 0.5 and 1.999 us -> 0..1; 2 and 3.999 -> 2..3; 4 -> 4..7; 9 -> 8..15; 70 -> 64..127
    expect(r.histograms[0]!.counts).toEqual([
      [2, 2, 1, 1],
      [0, 0, 0, 0, 0, 0, 1],
    ]);
    const text = formatCompare(r);
    expect(text).toContain('        64 -> 127');
    expect(text).toMatch(/ 2 -> 3 +: 2 +\|\*+ *\| 0 +\| +\|/);
  });

  it('per-key histograms: the top N keys by total time, the rest summed in one "(others)"', () => {
    // 5 processes; total time (us): p1 1000+1000 = 2000, p2 1500, p3 100 (b side), p4 3+3 = 6, p5 2
    const stalls = (byKey: [string, number[]][]): TraceInput => ({
      name: 't',
      id: null,
      metrics: [],
      ran: new Set(['trace', 'direct_reclaim_stall']),
      samples: new Map([
        [
          'stall.direct',
          {
            id: 'stall.direct',
            detector: 'direct_reclaim_stall',
            unit: 'ns',
            scope: 'process',
            byKey: new Map(byKey.map(([k, v]) => [k, Float64Array.from(v.map((us) => us * 1000))])),
          },
        ],
      ]),
    });
    const r = compareSides(
      [
        {
          label: 'a',
          traces: [
            stalls([
              ['p1', [1000, 1000]],
              ['p4', [3, 3]],
              ['p5', [2]],
            ]),
          ],
        },
        {
          label: 'b',
          traces: [
            stalls([
              ['p2', [1500]],
              ['p3', [100]],
            ]),
          ],
        },
      ],
      { histogramTop: 2 },
    );
    expect(r.histograms.map((h) => [h.key, h.other_keys])).toEqual([
      [null, undefined],
      ['p1', undefined],
      ['p2', undefined],
      ['(others)', 3],
    ]);
    // others = p3 (100 us -> 64..127, side b), p4 (3, 3 -> 2..3, side a), p5 (2 -> 2..3, side a)
    expect(r.histograms[3]!.counts).toEqual([
      [0, 3],
      [0, 0, 0, 0, 0, 0, 1],
    ]);
    // one key past the top is shown itself, not as "(others)"
    const r2 = compareSides(
      [
        {
          label: 'a',
          traces: [
            stalls([
              ['p1', [1000]],
              ['p4', [3]],
            ]),
          ],
        },
        { label: 'b', traces: [stalls([['p2', [1500]]])] },
      ],
      { histogramTop: 2 },
    );
    expect(r2.histograms.map((h) => h.key)).toEqual([null, 'p1', 'p2', 'p4']);
  });

  it('JSON: the documented top-level shape, finite numbers only', () => {
    const r = compareSides([
      { label: 'a', traces: [trace('a', [m('shrinker.calls', 1)])] },
      { label: 'b', traces: [trace('b', [m('shrinker.calls', 2)])] },
    ]);
    const j = compareResultToJson(r) as Record<string, unknown>;
    expect(Object.keys(j)).toEqual([
      'format',
      'version',
      'alpha',
      'regression_pct',
      'sides',
      'rows',
      'histograms',
      'regressions',
    ]);
    expect(j.format).toBe('stallscope-compare');
    expect(Object.keys((j.rows as object[])[0]!)).toEqual([
      'metric',
      'detector',
      'scope',
      'key',
      'unit',
      'better',
      'samples',
      'sides',
      'changes',
    ]);
  });

  it('the table as text: aligned columns, the change and its mark', () => {
    const A = [10, 11, 12].map((v, i) => trace(`a${i}`, [m('shrinker.blocked_ns', v * 1e6, { unit: 'ns' })]));
    const B = [20, 21, 22].map((v, i) => trace(`b${i}`, [m('shrinker.blocked_ns', v * 1e6, { unit: 'ns' })]));
    const text = formatCompareTable(
      compareSides([
        { label: 'vanilla', traces: A },
        { label: 'patched', traces: B },
      ]),
    );
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toMatch(/vanilla \(3\) +patched \(3\)$/);
    expect(lines[2]).toMatch(/^shrinker\.blocked_ns +11\.00 ms ± 1\.00 ms +21\.00 ms ± 1\.00 ms \(\+90\.9% \*+\)$/);
    expect(new Set(lines.filter((l) => l.startsWith('shrinker.')).map((l) => l.length)).size).toBe(1);
  });
});

describe('log2 buckets', () => {
  it('funclatency ranges in usecs', () => {
    expect([0, 1999, 2000, 3999, 4000, 1_048_576_000].map(log2Slot)).toEqual([0, 0, 1, 1, 2, 20]);
    expect(slotBounds(0)).toEqual({ low: 0, high: 1 });
    expect(slotBounds(3)).toEqual({ low: 8, high: 15 });
    expect(log2Counts([])).toEqual([]);
  });
});

describe('compare arguments', () => {
  it('files, iteration sets, options', () => {
    expect(parseCompareArgs(['x/a.dat', 'y/b.dat', '--json']).sides).toEqual([
      { label: 'a.dat', files: ['x/a.dat'] },
      { label: 'b.dat', files: ['y/b.dat'] },
    ]);
    const p = parseCompareArgs([
      '--a',
      'v100.1.dat',
      'v100.2.dat',
      '--b',
      'v1k.1.dat',
      'v1k.2.dat',
      '--fail-on-regression',
      '10',
      '--alpha=0.01',
    ]);
    expect(p.sides.map((s) => [s.label, s.files.length])).toEqual([
      ['v100', 2],
      ['v1k', 2],
    ]);
    expect(p.failOnRegression).toBe(10);
    expect(p.alpha).toBe(0.01);
    expect(parseCompareArgs(['a', 'b', '--labels', 'vanilla,patched']).sides.map((s) => s.label)).toEqual([
      'vanilla',
      'patched',
    ]);
    expect(() => parseCompareArgs(['a'])).toThrow(/two traces/);
    expect(() => parseCompareArgs(['--a', '--b', 'x'])).toThrow(/--a names no file/);
    expect(() => parseCompareArgs(['a', 'b', '--fail-on-regression', 'lots'])).toThrow(/percentage/);
    expect(() => parseCompareArgs(['a', 'b', '-x'])).toThrow(/unknown option -x/);
    expect(defaultLabel(['k/patched-1.dat', 'k/patched-2.dat'])).toBe('patched');
  });

  it('--series and --align: the align event (name or system:name) implies the series; files stay files', () => {
    const p = parseCompareArgs([
      '--a',
      'v.1.dat',
      '--align',
      'vmscan:mm_vmscan_direct_reclaim_begin',
      '--b',
      'p.1.dat',
    ]);
    expect([p.align, p.series]).toEqual(['vmscan:mm_vmscan_direct_reclaim_begin', true]);
    expect(p.sides.map((s) => s.files)).toEqual([['v.1.dat'], ['p.1.dat']]);
    expect(parseCompareArgs(['a', 'b', '--series'])).toMatchObject({ series: true, align: null });
    expect(parseCompareArgs(['a', 'b'])).toMatchObject({ series: false, align: null });
    expect(() => parseCompareArgs(['a', 'b', '--align', 'sched/switch'])).toThrow(/--align wants an event name/);
    expect(() => parseCompareArgs(['a', 'b', '--align'])).toThrow(/--align needs a value/);
  });
});
