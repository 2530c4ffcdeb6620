/**
 * `stallscope fleet-report DATASET --by kernel --baseline 6.1`: the fleet
 * questions over a dataset.
 *
 * - Regression per setting: the traces of each value of label `--by` are one
 *   side, the baseline's traces the first; every metric is compared with the
 *   compare work's rule (server/compare/compare.ts, COMPARE.md): with two or
 *   more traces a side, Welch's t on the per-trace values; a count a trace
 *   lacks is 0 where its detector ran. The dataset holds no per-event samples,
 *   so a setting with one trace gets no test (compare's Mann-Whitney needs
 *   the events): record iterations.
 * - Per setting, each metric's median and p90 across traces (views.sql label_metric).
 * - Top shrinkers, tasks and detectors by total impact; the worst traces.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type CompareResult, type SideInput, type TraceInput, compareSides } from '../compare/compare.ts';
import { compareResultToJson } from '../compare/compare_json.ts';
import { formatValue, significanceMark } from '../../shared/compare/format_compare.ts';
import type { Engine } from '../engine/engine.ts';
import type { Metric } from '../findings/metrics.ts';
import { FleetError, openDataset, sqlString } from './dataset.ts';

export const VIEWS_SQL = fileURLToPath(new URL('./views.sql', import.meta.url));

export interface FleetReportOptions {
  by: string;
  baseline?: string;
  alpha: number;
  metric?: string;
  top: number;
  json: boolean;
  failOnRegressionPct: number | null;
}

/** The statements of views.sql (split on ';' at a line's end). */
export async function viewStatements(): Promise<string[]> {
  const text = await readFile(VIEWS_SQL, 'utf8');
  return text
    .split(/;\s*$/m)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter(Boolean);
}

/** A dataset opened in DuckDB with the fleet views. */
export async function openFleet(dir: string): Promise<Engine> {
  const engine = await openDataset(dir);
  await engine.exec('CREATE MACRO percentile(x, p) AS quantile_cont(x, p)');
  for (const s of await viewStatements()) await engine.exec(s);
  return engine;
}

export interface Regression {
  compare: CompareResult;
  /** The setting of each side, baseline first, and its trace files. */
  settings: { value: string; traces: string[] }[];
}

/** Sides per value of label `by` (baseline first), compared as compare does. */
export async function regressionByLabel(
  engine: Engine,
  opts: Pick<FleetReportOptions, 'by' | 'baseline' | 'alpha' | 'failOnRegressionPct' | 'metric'>,
): Promise<Regression> {
  const traces = await engine.query<{ trace_id: string; file: string; value: string }>(
    `SELECT trace_id, file, value FROM trace_label WHERE label = ${sqlString(opts.by)} ORDER BY value, file`,
  );
  if (traces.length === 0) throw new FleetError(`no trace has the label ${opts.by}`);
  const values = [...new Set(traces.map((t) => t.value))];
  const baseline = opts.baseline ?? values[0]!;
  if (!values.includes(baseline))
    throw new FleetError(`no trace has ${opts.by}=${baseline} (settings: ${values.join(', ')})`);
  if (values.length < 2)
    throw new FleetError(
      `every trace has ${opts.by}=${baseline}: one setting, nothing to compare it against (label the traces of another setting)`,
    );
  const order = [baseline, ...values.filter((v) => v !== baseline)];
  const metrics = await engine.query<Metric & { trace_id: string }>(
    `SELECT m.trace_id, m.metric, m.detector, m.scope, m.key, m.value, m.unit, m.better FROM metrics m JOIN trace_label tl ON tl.trace_id = m.trace_id AND tl.label = ${sqlString(opts.by)}`,
  );
  const ran = await engine.query<{ trace_id: string; detector: string }>(
    `SELECT trace_id, detector FROM detectors WHERE status = 'ok'`,
  );
  const byTrace = new Map<string, Metric[]>();
  for (const m of metrics) {
    const { trace_id, ...rest } = m;
    (byTrace.get(trace_id) ?? byTrace.set(trace_id, []).get(trace_id)!).push(rest);
  }
  const ranBy = new Map<string, Set<string>>();
  for (const r of ran)
    (ranBy.get(r.trace_id) ?? ranBy.set(r.trace_id, new Set(['trace'])).get(r.trace_id)!).add(r.detector);
  const re = opts.metric ? new RegExp(opts.metric) : null;
  const sides: SideInput[] = order.map((value) => ({
    label: value,
    traces: traces
      .filter((t) => t.value === value)
      .map((t): TraceInput => ({
        name: t.file,
        id: t.trace_id,
        metrics: (byTrace.get(t.trace_id) ?? []).filter((m) => !re || re.test(m.metric)),
        samples: new Map(),
        ran: ranBy.get(t.trace_id) ?? new Set(['trace']),
      })),
  }));
  const compare = compareSides(sides, { alpha: opts.alpha, regressionPct: opts.failOnRegressionPct });
  return { compare, settings: sides.map((s) => ({ value: s.label, traces: s.traces.map((t) => t.name) })) };
}

/** What fleet-report prints and the app's fleet view shows: the regression per setting, percentiles across traces, top lists. */
export interface FleetQuestions {
  reg: Regression;
  percentiles: { setting: string; metric: string; key: string | null; p50: number; p90: number; traces: bigint }[];
  tops: Record<'shrinkers' | 'tasks' | 'detectors' | 'worst_traces', Record<string, unknown>[]>;
}

export async function fleetQuestions(
  engine: Engine,
  opts: Pick<FleetReportOptions, 'by' | 'baseline' | 'alpha' | 'failOnRegressionPct' | 'metric' | 'top'>,
): Promise<FleetQuestions> {
  const reg = await regressionByLabel(engine, opts);
  const top = async (view: string, orderBy: string) =>
    engine.query(`SELECT * FROM ${view} ORDER BY ${orderBy} LIMIT ${Math.max(1, opts.top)}`);
  const tops = {
    shrinkers: await top('top_shrinker', 'blocked_ns DESC NULLS LAST, shrinker'),
    tasks: await top('top_task', 'impact_ns DESC, task'),
    detectors: await top('top_detector', 'impact_ns DESC, detector'),
    worst_traces: await top('worst_trace', 'critical DESC, impact_ns DESC, file'),
  };
  const percentiles = await engine.query<FleetQuestions['percentiles'][number]>(
    `SELECT setting, metric, key, p50, p90, traces FROM label_metric WHERE label = ${sqlString(opts.by)}`,
  );
  return { reg, percentiles, tops };
}

/** The label names of a dataset (the keys of trace_label), sorted. */
export async function fleetLabels(engine: Engine): Promise<string[]> {
  return (await engine.query<{ label: string }>('SELECT DISTINCT label FROM trace_label ORDER BY label')).map(
    (r) => r.label,
  );
}

/** fleet-report --json's document (also the app's fleet view: /api/fleet/:name). */
export function fleetReportJson(by: string, q: FleetQuestions): Record<string, unknown> {
  return {
    format: 'stallscope-fleet-report',
    version: 1,
    by,
    settings: q.reg.settings,
    compare: compareResultToJson(q.reg.compare),
    percentiles: q.percentiles,
    top: q.tops,
  };
}

export async function runFleetReport(
  dir: string,
  opts: FleetReportOptions,
  out: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  const engine = await openFleet(dir);
  try {
    const { reg, percentiles, tops } = await fleetQuestions(engine, opts);
    if (opts.json) {
      const { toJson } = await import('../engine/engine.ts');
      out.write(`${toJson(fleetReportJson(opts.by, { reg, percentiles, tops }), 2)}\n`);
    } else {
      out.write(formatReport(reg, opts, percentiles, tops));
    }
    if (opts.failOnRegressionPct !== null) {
      if (reg.compare.regressions.length > 0) {
        process.stderr.write(
          `stallscope: ${reg.compare.regressions.length} metric(s) regressed by more than ${opts.failOnRegressionPct}%\n`,
        );
        return 2;
      }
    }
    return 0;
  } finally {
    engine.close();
  }
}

function formatReport(
  reg: Regression,
  opts: FleetReportOptions,
  percentiles: { setting: string; metric: string; key: string | null; p50: number; p90: number }[],
  tops: Record<string, Record<string, unknown>[]>,
): string {
  const c = reg.compare;
  const lines: string[] = [];
  lines.push(
    `Settings by ${opts.by}: ${reg.settings.map((s, i) => `${s.value} (${s.traces.length} traces${i === 0 ? ', baseline' : ''})`).join(', ')}`,
  );
  lines.push(
    `Welch's t on per-trace values; * p < ${c.alpha}, ** p < ${c.alpha / 5}, *** p < ${c.alpha / 50}; ! a regression`,
  );
  const pct = new Map(percentiles.map((p) => [`${p.setting}\0${p.metric}\0${p.key ?? ''}`, p]));
  for (let side = 1; side < c.sides.length; side++) {
    const setting = c.sides[side]!.label;
    const rows = c.rows.filter((r) => r.changes[side]?.significant);
    const single = [reg.settings[0]!, reg.settings[side]!].filter((s) => s.traces.length < 2);
    if (single.length) {
      // "0 significant changes" would read as "no change": with one trace a side nothing can be tested.
      lines.push(
        '',
        `${setting} against ${c.sides[0]!.label}: no test (${single.map((s) => `${s.value} has ${s.traces.length} trace`).join(', ')}; ` +
          `Welch's t needs at least 2 traces a setting: record iterations). fleet-report --json lists every metric's change.`,
      );
      continue;
    }
    lines.push('', `${setting} against ${c.sides[0]!.label}: ${rows.length} significant change(s)`);
    for (const r of rows) {
      const ch = r.changes[side]!;
      const p = pct.get(`${setting}\0${r.metric}\0${r.key ?? ''}`);
      const name = r.key === null ? r.metric : `${r.metric} [${r.key}]`;
      const change = ch.change_pct === null ? 'new' : `${ch.change_pct > 0 ? '+' : ''}${ch.change_pct.toFixed(1)}%`;
      lines.push(
        `  ${name.padEnd(56)} ${formatValue(r.sides[0]!.mean, r.unit).padStart(10)} -> ${formatValue(r.sides[side]!.mean, r.unit).padStart(10)}  ${change.padStart(8)} ${significanceMark(ch.test?.p, c.alpha).padEnd(3)}` +
          `${ch.direction ? ` ${ch.direction}` : ''}${ch.regression ? ' !' : ''}${p ? `  (p50 ${formatValue(p.p50, r.unit)}, p90 ${formatValue(p.p90, r.unit)} across traces)` : ''}`,
      );
    }
  }
  const ms = (v: unknown) => (v === null || v === undefined ? '-' : formatValue(Number(v), 'ns'));
  lines.push('', 'Top shrinkers by time blocked in them');
  for (const s of tops.shrinkers!)
    lines.push(
      `  ${String(s.shrinker).padEnd(40)} ${ms(s.blocked_ns).padStart(10)}  worst call ${ms(s.worst_call_ns)}, ${s.calls} calls in ${s.traces} traces`,
    );
  lines.push('', 'Top tasks by impact of their findings');
  for (const s of tops.tasks!)
    lines.push(
      `  ${String(s.task).padEnd(40)} ${ms(s.impact_ns).padStart(10)}  ${s.findings} findings (${s.critical} critical) in ${s.traces} traces`,
    );
  lines.push('', 'Top detectors by impact of their findings');
  for (const s of tops.detectors!)
    lines.push(
      `  ${String(s.detector).padEnd(40)} ${ms(s.impact_ns).padStart(10)}  ${s.findings} findings (${s.critical} critical) in ${s.traces} traces`,
    );
  lines.push('', 'Worst traces');
  for (const s of tops.worst_traces!)
    lines.push(
      `  ${String(s.file).padEnd(56)} ${ms(s.impact_ns).padStart(10)}  ${s.critical} critical, ${s.findings} findings  ${s.labels}`,
    );
  if (opts.failOnRegressionPct !== null) {
    lines.push(
      '',
      c.regressions.length
        ? `${c.regressions.length} regression(s) of more than ${opts.failOnRegressionPct}%`
        : `no regression of more than ${opts.failOnRegressionPct}%`,
    );
  }
  return `${lines.join('\n')}\n`;
}
