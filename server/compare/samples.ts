/**
 * Samples (server/findings/samples.ts) for comparing: run on a model when
 * the library has none kept, and read per key or for the whole trace.
 * Comparing traces tests them (Mann-Whitney U) and draws their log2 histograms.
 *
 *   const s = await loadSamples(engine);     // Map 'reclaim_stall.memcg.stall' -> {unit, byKey: Map<key, Float64Array>}
 *   samplesOf(s, 'shrinker.call', 'super_cache_scan')   // one key's values
 *   samplesOf(s, 'shrinker.call', null)                 // every key's values together (scope trace)
 *
 * Any detector may have a samples file; nothing here knows the built-in ones.
 */
import { holdWhile, type Engine } from '../engine/engine.ts';
import { loadDetectors, resolveParams } from '../findings/detector_registry.ts';
import { detectorCoverage, tracedEventNames } from '../findings/coverage.ts';
import { loadDetectorMacros } from '../findings/run_detectors.ts';
import { type TraceSamples, querySamples } from '../findings/samples.ts';

export type { SampleSet, TraceSamples } from '../findings/samples.ts';

/**
 * Runs every selected detector's samples file on one trace. A detector whose
 * tracepoints the trace lacks gives no samples (as it gives no metrics).
 * The library keeps what the detector run produced (samples.bin); this is
 * for traces analysed before that, or by hand.
 */
export function loadSamples(
  engine: Engine,
  opts: { extraDirs?: string[]; params?: Record<string, string> } = {},
): Promise<TraceSamples> {
  // Held open: the macros it loads are the connection's (engine.ts holdWhile).
  return holdWhile(engine, () => loadSamplesNow(engine, opts));
}

async function loadSamplesNow(
  engine: Engine,
  opts: { extraDirs?: string[]; params?: Record<string, string> },
): Promise<TraceSamples> {
  const detectors = (await loadDetectors(opts.extraDirs ?? [])).filter((d) => d.samplesSql !== null);
  await loadDetectorMacros(engine);
  const traced = await tracedEventNames(engine);
  const out: TraceSamples = new Map();
  for (const det of detectors) {
    if (detectorCoverage(det, traced).status !== 'traced') continue;
    await querySamples(engine, det, resolveParams(det, opts.params ?? {}), out);
  }
  return out;
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
