/**
 * One trace's rows of the fleet dataset: the analysis `stallscope analyze
 * --json` does (ingest, the built-in detectors, findings, metrics, detector
 * coverage), as rows of the tables in schema.json. `stallscope fleet-task
 * FILE` prints them as NDJSON, one `{"table": ..., "row": {...}}` a line;
 * both `stallscope batch` (child processes) and the Spark job
 * (fleet/spark/, one process per trace on an executor) run that command, so
 * the two datasets come from the same code.
 *
 * A trace that cannot be analysed gives one `failures` row (stage and
 * message) and no other row; the command still exits 0. Columns the dataset
 * writer owns (traces.file, traces.labels, failures.file, failures.trace_id)
 * are not here: they depend on how the trace was named and labelled, not on
 * its content.
 */
import { toJson } from '../engine/engine.ts';
import type { Finding } from '../findings/finding.ts';
import type { Metric } from '../findings/metrics.ts';

export type FleetLine = { table: string; row: Record<string, unknown> };

export interface TraceRowsOptions {
  dataDir?: string;
  /** Extra detector directories (--queries); saved detectors of the data dir never run in a fleet. */
  queries?: string[];
}

export async function traceRows(file: string, opts: TraceRowsOptions = {}): Promise<FleetLine[]> {
  const { ingestFile } = await import('../ingest/ingest_file.ts');
  const { openDuckDb } = await import('../engine/engine.ts');
  const { runDetectors } = await import('../findings/run_detectors.ts');
  let ingested;
  try {
    ingested = await ingestFile(file, { dataDir: opts.dataDir });
  } catch (e) {
    return [failure('ingest', e)];
  }
  const { summary, dbPath } = ingested;
  let result;
  const engine = await openDuckDb(dbPath, { readOnly: true, noExternalAccess: true });
  try {
    result = await runDetectors(engine, { extraDirs: opts.queries ?? [] });
  } catch (e) {
    return [failure('detectors', e)];
  } finally {
    engine.close();
  }
  const id = summary.id;
  const first = summary.firstTsNs === null ? null : BigInt(summary.firstTsNs);
  const last = summary.lastTsNs === null ? null : BigInt(summary.lastTsNs);
  const lines: FleetLine[] = [
    {
      table: 'traces',
      row: {
        trace_id: id,
        name: summary.name,
        size_bytes: summary.sizeBytes,
        format: summary.format,
        format_version: summary.formatVersion,
        kernel: summary.meta.kernel ?? summary.meta.uname ?? null,
        cpus: summary.cpus,
        events: summary.eventsTotal,
        lost_events: summary.lostEvents,
        first_ts_ns: first,
        last_ts_ns: last,
        span_ns: first === null || last === null ? null : last - first,
        model_version: summary.modelVersion ?? null,
      },
    },
  ];
  for (const d of result.detectors) {
    lines.push({ table: 'detectors', row: { trace_id: id, detector: d.id, status: d.status, ...d.counts } });
  }
  for (const f of result.findings) lines.push({ table: 'findings', row: findingRow(id, f) });
  for (const m of result.metrics) lines.push({ table: 'metrics', row: metricRow(id, m) });
  return lines;
}

/** A finding of the JSON contract as a row: `values` and `event_ids` as JSON text (exact integers). */
export function findingRow(traceId: string, f: Finding): Record<string, unknown> {
  return {
    trace_id: traceId,
    finding_id: f.id,
    rank: f.rank,
    parent_id: f.parent_id,
    detector: f.detector,
    kind: f.kind,
    severity: f.severity,
    ts_ns: f.ts_ns,
    dur_ns: f.dur_ns,
    impact_ns: f.impact_ns,
    cpu: f.cpu,
    tid: f.tid,
    comm: f.comm,
    title: f.title,
    values: toJson(f.values),
    event_ids: toJson(f.event_ids),
  };
}

export function metricRow(traceId: string, m: Metric): Record<string, unknown> {
  return {
    trace_id: traceId,
    metric: m.metric,
    detector: m.detector,
    scope: m.scope,
    key: m.key,
    value: m.value,
    unit: m.unit,
    better: m.better,
  };
}

function failure(stage: string, e: unknown): FleetLine {
  const message = e instanceof Error ? e.message : String(e);
  return { table: 'failures', row: { stage, message } };
}

export function linesToNdjson(lines: FleetLine[]): string {
  return lines.map((l) => toJson(l)).join('\n') + (lines.length ? '\n' : '');
}
