/**
 * Metrics: the numbers behind a trace's overview, as one flat typed list.
 *
 *   { metric: 'shrinker.call_max_ns', detector: 'shrinker_blocking',
 *     scope: 'shrinker', key: 'super_cache_scan', value: 452600123,
 *     unit: 'ns', better: 'lower' }
 *
 * Each detector's `<id>.metrics.sql` (one SELECT, the detector's parameters)
 * returns rows of metric, scope, key, value, unit, better; the runner adds
 * `detector` and the trace-level rows (`trace.*`, queries/detectors/lib/
 * trace_metrics.sql). The contract is server/findings/METRICS.md: the
 * overview reads these rows and nothing else, and comparing traces (a table
 * per metric across traces) and fleet analysis (a Parquet `metrics` table)
 * reuse them unchanged. Nothing here knows how anything is displayed.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Row } from '../engine/engine.ts';
import { BUILTIN_DETECTOR_DIR } from './detector_registry.ts';
import type { Metric } from '../../shared/contract/compare.ts';

export { METRIC_SCOPES, METRIC_UNITS, type MetricScope, type MetricUnit } from '../../shared/contract/compare.ts';
import { METRIC_SCOPES, METRIC_UNITS, type MetricScope, type MetricUnit } from '../../shared/contract/compare.ts';

export type { Metric } from '../../shared/contract/compare.ts';
/** The trace-level metrics' SQL (trace.duration_ns, trace.events, ...). */
export const TRACE_METRICS_FILE = join(BUILTIN_DETECTOR_DIR, 'lib', 'trace_metrics.sql');

export async function traceMetricsSql(): Promise<string> {
  return readFile(TRACE_METRICS_FILE, 'utf8');
}

/** Rows of a metrics SELECT as Metrics; throws naming the row on a malformed one. */
export function rowsToMetrics(detector: string, rows: Row[]): Metric[] {
  const out: Metric[] = [];
  rows.forEach((r, i) => {
    const where = `metrics row ${i + 1}`;
    const metric = r.metric;
    if (typeof metric !== 'string' || !/^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/.test(metric)) {
      throw new Error(`${where}: metric must be an id like area.name, got ${JSON.stringify(metric)}`);
    }
    const scope = r.scope as MetricScope;
    if (!(METRIC_SCOPES as readonly string[]).includes(scope as string)) {
      throw new Error(
        `${where} (${metric}): scope must be one of ${METRIC_SCOPES.join(', ')}, got ${JSON.stringify(r.scope)}`,
      );
    }
    const unit = r.unit as MetricUnit;
    if (!(METRIC_UNITS as readonly string[]).includes(unit as string)) {
      throw new Error(
        `${where} (${metric}): unit must be one of ${METRIC_UNITS.join(', ')}, got ${JSON.stringify(r.unit)}`,
      );
    }
    const better = r.better ?? null;
    if (better !== null && better !== 'lower' && better !== 'higher') {
      throw new Error(`${where} (${metric}): better must be 'lower', 'higher' or NULL`);
    }
    const v = r.value;
    if (v === null || v === undefined) return; // not measured: no row
    const value = typeof v === 'bigint' ? Number(v) : Number(v);
    if (!Number.isFinite(value)) throw new Error(`${where} (${metric}): value must be a number`);
    const key = scope === 'trace' ? null : r.key === null || r.key === undefined ? null : String(r.key);
    if (scope !== 'trace' && key === null) throw new Error(`${where} (${metric}): scope ${scope} needs a key`);
    out.push({ metric, detector, scope, key, value, unit, better });
  });
  return out;
}

/** Stable order: detector, metric, scope, key. */
export function sortMetrics(m: Metric[]): Metric[] {
  const k = (x: Metric) => `${x.detector}\0${x.metric}\0${x.scope}\0${x.key ?? ''}`;
  return m.sort((a, b) => (k(a) < k(b) ? -1 : k(a) > k(b) ? 1 : 0));
}

/** One metric's value (scope trace unless a key is given), or null. */
export function metricValue(all: readonly Metric[], metric: string, key: string | null = null): number | null {
  const m = all.find((x) => x.metric === metric && x.key === key);
  return m ? m.value : null;
}

/** All rows of one metric with a key (e.g. per shrinker), largest value first. */
export function metricByKey(all: readonly Metric[], metric: string): Metric[] {
  return all
    .filter((x) => x.metric === metric && x.key !== null)
    .sort((a, b) => b.value - a.value || (a.key! < b.key! ? -1 : 1));
}
