/** Wire types shared by server and app (see shared/contract/README.md). Pure types: no Node or DOM imports. */

export const METRIC_SCOPES = ['trace', 'process', 'shrinker', 'kswapd', 'task', 'cpu', 'device', 'reason'] as const;
export type MetricScope = (typeof METRIC_SCOPES)[number];

export const METRIC_UNITS = [
  'ns',
  'count',
  'per_s',
  'ratio',
  'pages',
  'objects',
  'priority',
  'bytes',
  'bytes_per_s',
] as const;
export type MetricUnit = (typeof METRIC_UNITS)[number];

export interface Metric {
  /** Stable id, `<area>.<name>` (e.g. 'reclaim_stall.direct.stall_p99_ns'); listed per detector in METRICS.md. */
  metric: string;
  /** The detector whose metrics file produced it ('trace' for the trace-level rows). */
  detector: string;
  /** What `key` identifies. */
  scope: MetricScope;
  /** null for scope 'trace'; else the process / task name, the shrinker symbol, the kswapd thread, the CPU number. */
  key: string | null;
  value: number;
  unit: MetricUnit;
  /** Which direction is an improvement when two traces are compared; null: neither. */
  better: 'lower' | 'higher' | null;
}

export interface TestResult {
  method: 'welch_t' | 'mann_whitney_u';
  /** t for Welch, U of the first sample for Mann-Whitney. */
  statistic: number;
  /** Two-sided p-value. */
  p: number;
  /** Welch: the Welch-Satterthwaite degrees of freedom; Mann-Whitney: null. */
  df: number | null;
}

export interface SideValues {
  /** One per trace of the side; null where the trace has no value. */
  values: (number | null)[];
  /** Traces with a value. */
  n: number;
  mean: number | null;
  /** Sample standard deviation over the iterations (0 for one). */
  stddev: number | null;
  /** For sample-backed metrics: events in the side (all iterations); else null. */
  events: number | null;
}

export interface Change {
  /** (mean - first side's mean) / |first side's mean| * 100; null when the first side's mean is 0 or missing. */
  change_pct: number | null;
  test: TestResult | null;
  /** With iterations on both sides, for sample-backed metrics: Mann-Whitney U on the pooled events (information only). */
  event_test: TestResult | null;
  /** test.p < alpha. */
  significant: boolean;
  /** 'worse' / 'better' by the metric's `better`, 'same' when equal, null when it has no direction or no value. */
  direction: 'worse' | 'better' | 'same' | null;
  /** significant, worse, and by more than regressionPct (or from zero). */
  regression: boolean;
}

export interface CompareRow {
  metric: string;
  detector: string;
  scope: Metric['scope'];
  key: string | null;
  unit: Metric['unit'];
  better: Metric['better'];
  /** The samples id its test used, if any. */
  samples: string | null;
  sides: SideValues[];
  /** One per side; null for the first (the baseline). */
  changes: (Change | null)[];
}

export interface CompareHistogram {
  /** Samples id, e.g. 'shrinker.call'. */
  samples: string;
  /** null: every key together (the trace scope). */
  key: string | null;
  scope: string;
  unit: 'usecs';
  /** The rest summed: how many keys this histogram stands for (absent on single-key and trace histograms). */
  other_keys?: number;
  /** counts[side][slot]: slot 0 = 0..1 us, slot k = 2^k .. 2^(k+1)-1 us (log2_hist.ts), all iterations of a side summed. */
  counts: number[][];
}

export interface CompareResult {
  format: 'stallscope-compare';
  version: number;
  alpha: number;
  regression_pct: number | null;
  sides: { label: string; traces: { name: string; id: string | null }[] }[];
  rows: CompareRow[];
  histograms: CompareHistogram[];
  /** Indices into rows of the regressions (empty unless regression_pct was given). */
  regressions: number[];
}
