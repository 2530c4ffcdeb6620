/**
 * Time series a reviewer charts for each kernel, derived from the trace: one
 * value per time bin from the trace's first event, the same bin width for
 * every trace of a comparison so their lines share an axis.
 *
 *   reclaim_stall.starts_per_s      reclaim stalls starting per second (direct, memcg, node)
 *   vmscan.pages_scanned_per_s      mm_vmscan_lru_shrink_inactive nr_scanned per second
 *   vmscan.pages_reclaimed_per_s    ... nr_reclaimed per second
 *   shrinker.cache_items [shrinker] mm_shrink_slab_start's "cache items": the most any call saw in the bin
 *   dirty.dirty_pages               global_dirty_state dirty: the last value in the bin (a gauge)
 *   dirty.writeback_pages           global_dirty_state writeback: the last value in the bin
 *
 * Rates are 0 in bins with no event; gauges (cache_items, pages) have no
 * point there (nothing was measured). Untraced events give no series; the
 * API lists them per trace as `not_traced` (GAUGE_SERIES below).
 *
 * Free pages and LRU size: no tracepoint of the kernels we decode reports
 * them (mm_page_alloc_zone_locked / mm_lru_* / mm_vmscan_lru_isolate give
 * per-event counts, not the zone or LRU totals), so there is no series;
 * a vmstat-like source would go here.
 */
import { holdWhile, type Engine } from '../engine/engine.ts';
import { loadDetectorMacros } from '../findings/run_detectors.ts';

export interface Series {
  series: string;
  key: string | null;
  unit: 'per_s' | 'objects' | 'pages';
  /** [seconds from the trace's first event (bin start), value] */
  points: [number, number][];
}

export function traceSeries(engine: Engine, binNs: number, durationNs: number): Promise<Series[]> {
  // Held open: the macros it loads are the connection's (engine.ts holdWhile).
  return holdWhile(engine, () => traceSeriesNow(engine, binNs, durationNs));
}

async function traceSeriesNow(engine: Engine, binNs: number, durationNs: number): Promise<Series[]> {
  await loadDetectorMacros(engine);
  const bin = BigInt(Math.max(1, Math.round(binNs)));
  const rows = await engine.query<{ series: string; key: string | null; b: bigint | number; value: number }>(
    `WITH z AS (SELECT ss_trace_start(NULL) AS t0)
     SELECT 'reclaim_stall.starts_per_s' AS series, NULL::VARCHAR AS key, (ts - t0) // $bin AS b, count(*) * 1e9 / $bin AS value
       FROM mm_vmscan_direct_reclaim_begin, z GROUP BY ALL
     UNION ALL
     SELECT 'vmscan.pages_scanned_per_s', NULL, (ts - t0) // $bin, sum(nr_scanned) * 1e9 / $bin FROM mm_vmscan_lru_shrink_inactive, z GROUP BY ALL
     UNION ALL
     SELECT 'vmscan.pages_reclaimed_per_s', NULL, (ts - t0) // $bin, sum(nr_reclaimed) * 1e9 / $bin FROM mm_vmscan_lru_shrink_inactive, z GROUP BY ALL
     UNION ALL
     SELECT 'shrinker.cache_items', ss_sym(shrink), (ts - t0) // $bin, max(cache_items)::DOUBLE FROM mm_shrink_slab_start, z
       WHERE cache_items IS NOT NULL GROUP BY ALL
     UNION ALL
     SELECT 'dirty.dirty_pages', NULL, (ts - t0) // $bin, arg_max(dirty, ts)::DOUBLE FROM global_dirty_state, z
       WHERE dirty IS NOT NULL GROUP BY ALL
     UNION ALL
     SELECT 'dirty.writeback_pages', NULL, (ts - t0) // $bin, arg_max(writeback, ts)::DOUBLE FROM global_dirty_state, z
       WHERE writeback IS NOT NULL GROUP BY ALL
     ORDER BY 1, 2, 3`,
    { bin },
  );
  const nBins = Math.max(1, Math.ceil(durationNs / Number(bin)));
  const byKey = new Map<string, Series & { sparse: Map<number, number> }>();
  for (const r of rows) {
    const k = `${r.series}\0${r.key ?? ''}`;
    let s = byKey.get(k);
    if (!s) byKey.set(k, (s = { series: r.series, key: r.key, unit: unitOf(r.series), points: [], sparse: new Map() }));
    s.sparse.set(Number(r.b), Number(r.value));
  }
  const binS = Number(bin) / 1e9;
  return [...byKey.values()].map(({ sparse, ...s }) => {
    if (s.unit === 'per_s') {
      for (let b = 0; b < nBins; b++) s.points.push([b * binS, sparse.get(b) ?? 0]);
    } else {
      for (const [b, v] of [...sparse].sort((x, y) => x[0] - y[0])) s.points.push([b * binS, v]);
    }
    return s;
  });
}

/**
 * Seconds from the trace's first event to the first `event` (an ftrace event
 * name, e.g. mm_vmscan_direct_reclaim_begin, or system:name), null when the
 * trace has none. Aligning shifts every point by it, so 0 is that event in
 * every trace; bins stay anchored at each trace's start.
 */
export function alignOffsetS(engine: Engine, event: string): Promise<number | null> {
  return holdWhile(engine, () => alignOffsetSNow(engine, event));
}

async function alignOffsetSNow(engine: Engine, event: string): Promise<number | null> {
  await loadDetectorMacros(engine);
  const [sys, name] = event.includes(':') ? event.split(':', 2) : [null, event];
  const rows = await engine.query<{ t: bigint | number | null }>(
    `SELECT min(ts) - ss_trace_start(NULL) AS t FROM ftrace_event WHERE name = $name AND ($sys IS NULL OR system = $sys)`,
    { name: name!, sys },
  );
  const t = rows[0]?.t;
  return t === null || t === undefined ? null : Number(t) / 1e9;
}

/** The series with every point's time moved `offsetS` earlier (0 = the align event). */
export function shiftSeries(series: Series[], offsetS: number | null): Series[] {
  if (!offsetS) return series;
  return series.map((s) => ({ ...s, points: s.points.map(([t, v]) => [t - offsetS, v] as [number, number]) }));
}

/** Every series a trace can have (keyed ones once), for "not traced" beside the ones it has. */
export const SERIES_IDS = [
  'reclaim_stall.starts_per_s',
  'vmscan.pages_scanned_per_s',
  'vmscan.pages_reclaimed_per_s',
  'shrinker.cache_items',
  'dirty.dirty_pages',
  'dirty.writeback_pages',
] as const;

/** The series ids this trace's events give none of. */
export function notTraced(series: Series[]): string[] {
  const have = new Set(series.map((s) => s.series));
  return SERIES_IDS.filter((id) => !have.has(id));
}

function unitOf(series: string): Series['unit'] {
  return series.endsWith('_per_s') ? 'per_s' : series.endsWith('_pages') ? 'pages' : 'objects';
}

/** A bin width for traces of these durations: ~300 bins over the longest, at least 1 ms, a 1/2/5 step. */
export function binFor(durationsNs: number[]): number {
  const raw = Math.max(1e6, Math.max(...durationsNs, 0) / 300);
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

/** What `align` accepts: an ftrace event name, or system:name (the app's `&align=`, the API's, the CLI's `--align`). */
export const ALIGN_EVENT_RE = /^[A-Za-z0-9_]{1,64}(:[A-Za-z0-9_]{1,64})?$/;

/** The series of every trace of a comparison on one bin width, optionally aligned (GET /api/compare, `compare --align`). */
export interface CompareSeries {
  bin_ns: number;
  /** per side, per trace */
  series: Series[][][];
  /** per side, per trace: the series ids its events give none of ("not traced") */
  not_traced: string[][][];
  /**
   * Series times are from each trace's first `event`: offset_s[side][trace] seconds after its start, or null where
   * the trace has no such event (that trace stays on its start). null: every trace from its own start.
   */
  align: { event: string; offset_s: (number | null)[][] } | null;
}

/** `sides`: per side, per trace, its engine and duration (ns, first to last event). */
export async function compareSeries(
  sides: { engine: () => Promise<Engine>; durationNs: number }[][],
  align: string | null,
): Promise<CompareSeries> {
  if (align !== null && !ALIGN_EVENT_RE.test(align))
    throw new Error(`align: not an event name (name or system:name): ${align}`);
  const bin = binFor(sides.flat().map((t) => t.durationNs));
  const offsets = await Promise.all(
    sides.map((ts) =>
      Promise.all(ts.map(async (t) => (align === null ? null : alignOffsetS(await t.engine(), align)))),
    ),
  );
  const series = await Promise.all(
    sides.map((ts, si) =>
      Promise.all(
        ts.map(async (t, ti) => shiftSeries(await traceSeries(await t.engine(), bin, t.durationNs), offsets[si]![ti]!)),
      ),
    ),
  );
  return {
    bin_ns: bin,
    series,
    not_traced: series.map((side) => side.map(notTraced)),
    align: align === null ? null : { event: align, offset_s: offsets },
  };
}
