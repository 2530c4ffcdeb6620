/**
 * Samples: the per-event values behind a trace's percentile metrics (every
 * stall's duration, every shrinker call's), read from the detectors'
 * `<id>.samples.sql` files (METRICS.md, "Samples"). Comparing traces tests
 * them (Mann-Whitney U) and draws their log2 histograms.
 *
 *   const s = await loadSamples(engine);     // Map 'reclaim_stall.memcg.stall' -> {unit, byKey: Map<key, Float64Array>}
 *   samplesOf(s, 'shrinker.call', 'super_cache_scan')   // one key's values
 *   samplesOf(s, 'shrinker.call', null)                 // every key's values together (scope trace)
 *
 * Any detector may have a samples file; nothing here knows the built-in ones.
 */
import type { DuckDBValue } from '@duckdb/node-api';
import type { Engine } from '../engine/engine.ts';
import { type DetectorDef, loadDetectors, referencedParams, resolveParams } from '../findings/detector_registry.ts';
import { detectorCoverage, tracedEventNames } from '../findings/coverage.ts';
import { loadDetectorMacros } from '../findings/run_detectors.ts';

export interface SampleSet {
  /** e.g. 'reclaim_stall.memcg.stall' */
  id: string;
  detector: string;
  unit: string;
  /** The scope of the keys ('process', 'shrinker', ...). */
  scope: string;
  /** Values per key, each sorted ascending. */
  byKey: Map<string, Float64Array>;
}

export type TraceSamples = Map<string, SampleSet>;

/**
 * Runs every selected detector's samples file on one trace. A detector whose
 * tracepoints the trace lacks gives no samples (as it gives no metrics).
 */
export async function loadSamples(engine: Engine, opts: { extraDirs?: string[]; params?: Record<string, string> } = {}): Promise<TraceSamples> {
  const detectors = (await loadDetectors(opts.extraDirs ?? [])).filter((d) => d.samplesSql !== null);
  await loadDetectorMacros(engine);
  const traced = await tracedEventNames(engine);
  const out: TraceSamples = new Map();
  for (const det of detectors) {
    if (detectorCoverage(det, traced).status !== 'traced') continue;
    await runSamples(engine, det, resolveParams(det, opts.params ?? {}), out);
  }
  for (const set of out.values()) for (const v of set.byKey.values()) v.sort();
  return out;
}

async function runSamples(engine: Engine, det: DetectorDef, values: Record<string, unknown>, out: TraceSamples): Promise<void> {
  const sql = det.samplesSql!;
  const params: Record<string, DuckDBValue> = {};
  for (const name of referencedParams(sql)) params[name] = values[name] as DuckDBValue;
  // Columnar read: a 10M-event trace has hundreds of thousands of calls, and row objects cost ~1 us each.
  const reader = await engine.connection.runAndReadAll(
    `SELECT samples, scope, key, unit, list(value ORDER BY value) AS vals FROM (${sql}) GROUP BY ALL ORDER BY samples, key`,
    Object.keys(params).length ? params : undefined,
  );
  const rows = reader.getRowObjectsJS() as { samples: string; scope: string; key: string | null; unit: string; vals: (number | null)[] }[];
  for (const r of rows) {
    if (typeof r.samples !== 'string' || !/^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/.test(r.samples)) {
      throw new Error(`${det.samplesFile}: samples must be an id like area.name, got ${JSON.stringify(r.samples)}`);
    }
    let set = out.get(r.samples);
    if (!set) {
      set = { id: r.samples, detector: det.id, unit: String(r.unit), scope: String(r.scope), byKey: new Map() };
      out.set(r.samples, set);
    }
    const vals = Float64Array.from(r.vals.filter((v): v is number => v !== null && Number.isFinite(v)));
    set.byKey.set(r.key ?? '?', vals);
  }
}

/** One key's values, or with key null every key's values together (the trace scope); empty when none. */
export function samplesOf(all: TraceSamples, id: string, key: string | null): Float64Array {
  const set = all.get(id);
  if (!set) return new Float64Array(0);
  if (key !== null) return set.byKey.get(key) ?? new Float64Array(0);
  let n = 0;
  for (const v of set.byKey.values()) n += v.length;
  const out = new Float64Array(n);
  let o = 0;
  for (const v of set.byKey.values()) {
    out.set(v, o);
    o += v.length;
  }
  return out.sort();
}

/**
 * The samples behind a metric, by the naming rule of METRICS.md: metric
 * `<samples>_<stat>_<unit>` with stat p50, p95, p99, max (e.g.
 * 'shrinker.call_p99_ns' -> samples 'shrinker.call'), same scope and key.
 */
export function samplesIdOfMetric(metric: string): string | null {
  const m = /^(.+)_(p\d{1,2}|max|min)_ns$/.exec(metric);
  return m ? m[1]! : null;
}
