/**
 * Comparing traces: sides (one trace each, or sets of iterations) in, one
 * row per metric out, with the change against the first side and a test of
 * whether it is more than noise. The shape is the JSON contract of
 * `stallscope compare --json` and of the app's compare view (COMPARE.md).
 *
 *   const result = compareSides([
 *     { label: 'vanilla', traces: [a1, a2, a3] },   // TraceInput: metrics, samples, detectors that ran
 *     { label: 'patched', traces: [b1, b2, b3] },
 *   ], { alpha: 0.05, regressionPct: 10 });
 *
 * Metrics are the triage metrics (server/findings/METRICS.md), joined on
 * (metric, scope, key); nothing here knows any one detector. Tests
 * (COMPARE.md, "Which test and why"):
 * - two or more iterations on both sides: Welch's t on the per-iteration
 *   values, for every metric. The iteration is the unit that repeats: the
 *   events of one run share its machine state, so runs of one setting differ
 *   among themselves far beyond what their event counts suggest (measured on
 *   fixtures/compare: Mann-Whitney U on the events of two runs of the same
 *   setting gives p < 0.001 for most percentiles).
 * - one trace on a side: metrics backed by per-event samples
 *   (`<samples>_<stat>_ns`, e.g. shrinker.call_p99_ns) get Mann-Whitney U on
 *   the events: "do these two runs' stalls differ", the most one run can say;
 *   other metrics have no spread to test against and get no test.
 * With iterations, the events' Mann-Whitney U is kept as `event_test`.
 */
import type { Metric } from '../findings/metrics.ts';
import { log2Counts } from '../../shared/compare/log2_hist.ts';
import { type TestResult, mannWhitneyU, mean, stddev, welchT } from './stats.ts';
import { type TraceSamples, samplesIdOfMetric, samplesOf } from './samples.ts';
import type { SideValues, Change, CompareRow, CompareHistogram, CompareResult } from '../../shared/contract/compare.ts';

export const COMPARE_FORMAT_VERSION = 1;

export interface TraceInput {
  /** What the user called it (the file name). */
  name: string;
  /** Its content id (sha256), when ingested. */
  id: string | null;
  metrics: readonly Metric[];
  samples: TraceSamples;
  /** Detectors that ran on it (status ok), plus 'trace': an absent count of one of these is a zero. */
  ran: ReadonlySet<string>;
}

export interface SideInput {
  label: string;
  traces: TraceInput[];
}

export interface CompareOptions {
  /** Significance level (default 0.05). */
  alpha?: number;
  /** A significant change for the worse by more than this many percent is a regression (default: none is). */
  regressionPct?: number | null;
  /** Per-key histograms: the keys with the most total time (all traces) each, the rest summed in one (default 10). */
  histogramTop?: number;
}

export type { SideValues, Change, CompareRow, CompareHistogram, CompareResult } from '../../shared/contract/compare.ts';
/** Units whose absence, on a trace where the detector ran, means zero (nothing counted). */
const ZERO_WHEN_ABSENT = new Set(['count', 'per_s', 'pages', 'objects']);

const rowKey = (m: Pick<Metric, 'metric' | 'scope' | 'key'>) => `${m.metric}\0${m.scope}\0${m.key ?? ''}`;

export function compareSides(sides: SideInput[], opts: CompareOptions = {}): CompareResult {
  if (sides.length < 2) throw new Error('compare needs at least two sides');
  for (const s of sides) if (s.traces.length === 0) throw new Error(`side ${s.label} has no trace`);
  const alpha = opts.alpha ?? 0.05;
  const regressionPct = opts.regressionPct ?? null;

  // Every (metric, scope, key) any trace has, with its definition.
  const defs = new Map<string, Metric>();
  for (const s of sides)
    for (const t of s.traces) for (const m of t.metrics) if (!defs.has(rowKey(m))) defs.set(rowKey(m), m);
  const index = sides.map((s) => s.traces.map((t) => new Map(t.metrics.map((m) => [rowKey(m), m.value]))));

  const sorted = [...defs.values()].sort((a, b) => {
    const ka = `${a.detector}\0${a.metric}\0${a.scope === 'trace' ? '' : a.scope}\0${a.key ?? ''}`;
    const kb = `${b.detector}\0${b.metric}\0${b.scope === 'trace' ? '' : b.scope}\0${b.key ?? ''}`;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });

  // p50, p99, max... of one key share their events: pool them and test them once.
  const pooledCache = new Map<string, Float64Array[]>();
  const eventTests = new Map<string, (TestResult | null)[]>();
  const rows: CompareRow[] = sorted.map((def) => {
    const k = rowKey(def);
    const samplesId = samplesIdOfMetric(def.metric);
    const hasSamples = samplesId !== null && sides.some((s) => s.traces.some((t) => t.samples.has(samplesId)));
    const sampleKey = `${samplesId}\0${def.key ?? ''}`;
    let pooled: (Float64Array | null)[] = sides.map(() => null);
    if (hasSamples) {
      let p = pooledCache.get(sampleKey);
      if (!p)
        pooledCache.set(
          sampleKey,
          (p = sides.map((s) => pool(s.traces.map((t) => samplesOf(t.samples, samplesId!, def.key))))),
        );
      pooled = p;
    }
    let tests = hasSamples ? eventTests.get(sampleKey) : undefined;
    if (hasSamples && !tests)
      eventTests.set(
        sampleKey,
        (tests = sides.map((_, si) => (si === 0 ? null : mannWhitneyU(pooled[0]!, pooled[si]!)))),
      );
    const sideValues: SideValues[] = sides.map((s, si) => {
      const values = s.traces.map((t, ti) => {
        const v = index[si]![ti]!.get(k);
        if (v !== undefined) return v;
        return ZERO_WHEN_ABSENT.has(def.unit) && t.ran.has(def.detector) ? 0 : null;
      });
      const present = values.filter((v): v is number => v !== null);
      return {
        values,
        n: present.length,
        mean: present.length ? mean(present) : null,
        stddev: present.length ? stddev(present) : null,
        events: pooled[si]?.length ?? null,
      };
    });
    const base = sideValues[0]!;
    const changes = sideValues.map((sv, si): Change | null => {
      if (si === 0) return null;
      const a = base.values.filter((v): v is number => v !== null);
      const b = sv.values.filter((v): v is number => v !== null);
      const iterations = sides[0]!.traces.length >= 2 && sides[si]!.traces.length >= 2;
      const eventTest = tests?.[si] ?? null;
      const test: TestResult | null = iterations ? welchT(a, b) : eventTest;
      const significant = test !== null && test.p < alpha;
      let change_pct: number | null = null;
      if (base.mean !== null && sv.mean !== null) {
        if (base.mean !== 0) change_pct = ((sv.mean - base.mean) / Math.abs(base.mean)) * 100;
        else if (sv.mean === 0) change_pct = 0;
      }
      let direction: Change['direction'] = null;
      if (def.better && base.mean !== null && sv.mean !== null) {
        direction =
          sv.mean === base.mean ? 'same' : sv.mean < base.mean === (def.better === 'lower') ? 'better' : 'worse';
      }
      const regression =
        regressionPct !== null &&
        significant &&
        direction === 'worse' &&
        (change_pct === null || Math.abs(change_pct) > regressionPct);
      return { change_pct, test, event_test: iterations ? eventTest : null, significant, direction, regression };
    });
    return {
      metric: def.metric,
      detector: def.detector,
      scope: def.scope,
      key: def.key,
      unit: def.unit,
      better: def.better,
      samples: hasSamples ? samplesId : null,
      sides: sideValues,
      changes,
    };
  });

  const regressions: number[] = [];
  rows.forEach((r, i) => {
    if (r.changes.some((c) => c?.regression)) regressions.push(i);
  });

  return {
    format: 'stallscope-compare',
    version: COMPARE_FORMAT_VERSION,
    alpha,
    regression_pct: regressionPct,
    sides: sides.map((s) => ({ label: s.label, traces: s.traces.map((t) => ({ name: t.name, id: t.id })) })),
    rows,
    histograms: histograms(sides, opts.histogramTop ?? 10),
    regressions,
  };
}

function pool(arrays: Float64Array[]): Float64Array {
  const out = new Float64Array(arrays.reduce((n, a) => n + a.length, 0));
  let o = 0;
  for (const a of arrays) {
    out.set(a, o);
    o += a.length;
  }
  return out;
}

/** Key of the histogram that sums the keys past the top N. */
export const OTHER_KEYS = '(others)';

/**
 * One histogram per samples id over every key, and one per key (shrinker,
 * process) for the `top` keys with the most total time over all traces (the
 * impact: a stall's duration summed); the other keys summed in one, key
 * OTHER_KEYS, so hundreds of stalling processes stay readable.
 */
function histograms(sides: SideInput[], top: number): CompareHistogram[] {
  const ids = new Map<string, { scope: string; keys: Set<string> }>();
  for (const s of sides)
    for (const t of s.traces)
      for (const set of t.samples.values()) {
        const e = ids.get(set.id) ?? { scope: set.scope, keys: new Set<string>() };
        for (const k of set.byKey.keys()) e.keys.add(k);
        ids.set(set.id, e);
      }
  const out: CompareHistogram[] = [];
  for (const [id, { scope, keys }] of [...ids].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const impact = new Map<string, number>();
    for (const k of keys) {
      let total = 0;
      for (const s of sides) for (const t of s.traces) for (const v of samplesOf(t.samples, id, k)) total += v;
      impact.set(k, total);
    }
    const ranked = [...keys].sort((a, b) => impact.get(b)! - impact.get(a)! || (a < b ? -1 : 1));
    const shown = ranked.length > top + 1 ? ranked.slice(0, top) : ranked;
    const rest = ranked.slice(shown.length);
    for (const key of [null, ...shown.sort()]) {
      const counts = sides.map((s) => sumCounts(s.traces.map((t) => log2Counts(samplesOf(t.samples, id, key)))));
      out.push({ samples: id, key, scope: key === null ? 'trace' : scope, unit: 'usecs', counts });
    }
    if (rest.length > 0) {
      const counts = sides.map((s) =>
        sumCounts(s.traces.flatMap((t) => rest.map((k) => log2Counts(samplesOf(t.samples, id, k))))),
      );
      out.push({ samples: id, key: OTHER_KEYS, scope, unit: 'usecs', counts, other_keys: rest.length });
    }
  }
  return out;
}

function sumCounts(list: number[][]): number[] {
  const out: number[] = [];
  for (const c of list) c.forEach((n, i) => (out[i] = (out[i] ?? 0) + n));
  return Array.from(out, (n) => n ?? 0);
}
