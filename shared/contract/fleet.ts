/**
 * Fleet datasets in the app (server/fleet/DATASET.md): the datasets the
 * server was started with (`stallscope serve --fleet DIR`), and one
 * dataset's view: fleet-report's document (the same numbers
 * `stallscope fleet-report DATASET --by L --json` prints) and the worst
 * traces, each saying whether the server's library holds it.
 */
import type { CompareResult } from './compare.ts';

/** A dataset the server was started with; `name` is how the API and the app's URL (`/?fleet=NAME`) name it. */
export interface FleetDatasetInfo {
  name: string;
  traces: number;
  failures: number;
  /** Label names (labels.csv's columns), sorted. */
  labels: string[];
}

/** GET /api/fleet */
export interface FleetListAnswer {
  datasets: FleetDatasetInfo[];
}

/** One worst trace (views.sql worst_trace), ranked as fleet-report ranks them: critical findings, then impact. */
export interface FleetWorstTrace {
  trace_id: string;
  /** The trace's path as the batch/fleet run was given it. */
  file: string;
  name: string;
  /** Its labels, a JSON object as text. */
  labels: string;
  findings: number;
  impact_ns: number;
  critical: number;
  /** The server's library holds this trace (same sha256): it opens at /?trace=ID. */
  in_library: boolean;
}

/** Per setting, each metric's median and p90 across its traces (views.sql label_metric). */
export interface FleetPercentile {
  setting: string;
  metric: string;
  key: string | null;
  p50: number;
  p90: number;
  traces: number;
}

/** GET /api/fleet/:name?by=LABEL[&baseline=VALUE] */
export interface FleetViewAnswer {
  name: string;
  labels: string[];
  /** The label the traces are grouped by (default: the first label). */
  by: string;
  /** fleet-report's JSON: settings (baseline first), the comparison, percentiles, top lists. */
  report: {
    format: 'stallscope-fleet-report';
    version: 1;
    by: string;
    settings: { value: string; traces: string[] }[];
    compare: CompareResult;
    percentiles: FleetPercentile[];
    top: Record<'shrinkers' | 'tasks' | 'detectors', Record<string, unknown>[]>;
  };
  worst_traces: FleetWorstTrace[];
}
