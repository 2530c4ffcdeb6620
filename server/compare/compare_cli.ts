/**
 * `stallscope compare`: the command line's arguments to sides, each file
 * ingested (or reused), compared, printed.
 *
 *   stallscope compare A B [C ...]                 one trace per side, A the baseline
 *   stallscope compare --a a1 a2 a3 --b b1 b2 b3   sets of iterations (any --x starts side x)
 *   ... --json --fail-on-regression 10 --alpha 0.01 --labels vanilla,patched --no-histograms --top 10
 *   ... --series                                   also the time series (peak and mean per trace)
 *   ... --align mm_vmscan_direct_reclaim_begin     the series' times from each trace's first such event (implies --series)
 */
import path from 'node:path';
import { ingestFile } from '../ingest/ingest_file.ts';
import { TraceLibrary } from '../ingest/library.ts';
import { resolveDataDir } from '../ingest/data_dir.ts';
import { toJson } from '../engine/engine.ts';
import { type CompareResult, type SideInput, compareSides } from './compare.ts';
import { compareResultToJson } from './compare_json.ts';
import { formatCompare } from '../../shared/compare/format_compare.ts';
import { loadTraceInput } from './load_trace.ts';
import { ALIGN_EVENT_RE, compareSeries } from './series.ts';
import { formatSeriesSummary } from './format_series.ts';

export class CompareUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CompareUsageError';
  }
}

export interface CompareArgs {
  sides: { label: string; files: string[] }[];
  json: boolean;
  failOnRegression: number | null;
  alpha: number;
  histograms: boolean;
  metric: RegExp | null;
  /** per-key histograms: the keys with the most total time, the rest summed (--top, default 10) */
  top: number;
  /** print the time series (--series, or --align) */
  series: boolean;
  /** the series' 0 in each trace: its first such event (--align); null: each trace's start */
  align: string | null;
}

/** Options that take a value, and flags, of `compare` (the rest of argv is files and --<side> markers). */
const VALUE_OPTS = new Set([
  '--fail-on-regression',
  '--alpha',
  '--labels',
  '--data-dir',
  '--metric',
  '--top',
  '--align',
]);
const FLAG_OPTS = new Set(['--json', '--no-histograms', '--series']);

/** The words after `compare` (process.argv.slice(3)). */
export function parseCompareArgs(words: string[]): CompareArgs {
  const sides: { label: string | null; files: string[] }[] = [];
  const values = new Map<string, string>();
  const flags = new Set<string>();
  let current: { label: string | null; files: string[] } | null = null;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const [name, inline] =
      w.startsWith('--') && w.includes('=') ? [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)] : [w, null];
    if (VALUE_OPTS.has(name)) {
      const v = inline ?? words[++i];
      if (v === undefined) throw new CompareUsageError(`${name} needs a value`);
      values.set(name, v);
    } else if (FLAG_OPTS.has(name)) {
      flags.add(name);
    } else if (/^--[a-z][a-z0-9_]*$/i.test(w) && !VALUE_OPTS.has(w)) {
      // --a, --b, --vanilla ...: a side of iterations
      current = { label: w.slice(2), files: [] };
      sides.push(current);
    } else if (w.startsWith('-') && w !== '-') {
      throw new CompareUsageError(`unknown option ${w}`);
    } else if (current) {
      current.files.push(w);
    } else {
      sides.push({ label: null, files: [w] });
    }
  }
  for (const s of sides) if (s.files.length === 0) throw new CompareUsageError(`--${s.label} names no file`);
  if (sides.length < 2) throw new CompareUsageError('compare needs two traces (A B) or two sets (--a a1 a2 --b b1 b2)');
  const labels = values.get('--labels')?.split(',');
  if (labels && labels.length !== sides.length)
    throw new CompareUsageError(`--labels names ${labels.length} sides, there are ${sides.length}`);
  const pct = values.has('--fail-on-regression') ? Number(values.get('--fail-on-regression')) : null;
  if (pct !== null && !(Number.isFinite(pct) && pct >= 0))
    throw new CompareUsageError(`--fail-on-regression wants a percentage, got ${values.get('--fail-on-regression')}`);
  const alpha = values.has('--alpha') ? Number(values.get('--alpha')) : 0.05;
  if (!(alpha > 0 && alpha < 1))
    throw new CompareUsageError(`--alpha wants a number between 0 and 1, got ${values.get('--alpha')}`);
  const top = values.has('--top') ? Number(values.get('--top')) : 10;
  if (!(Number.isInteger(top) && top >= 0))
    throw new CompareUsageError(`--top wants a whole number of keys, got ${values.get('--top')}`);
  const align = values.get('--align') ?? null;
  if (align !== null && !ALIGN_EVENT_RE.test(align))
    throw new CompareUsageError(`--align wants an event name (name or system:name), got ${align}`);
  let metric: RegExp | null = null;
  if (values.has('--metric')) {
    try {
      metric = new RegExp(values.get('--metric')!);
    } catch (e) {
      throw new CompareUsageError(`--metric: ${(e as Error).message}`);
    }
  }
  return {
    // --a, --b: the files' common name; --vanilla: that word
    sides: sides.map((s, i) => ({
      label: labels?.[i] ?? (s.label && s.label.length > 1 ? s.label : defaultLabel(s.files)),
      files: s.files,
    })),
    json: flags.has('--json'),
    failOnRegression: pct,
    alpha,
    histograms: !flags.has('--no-histograms'),
    metric,
    top,
    series: flags.has('--series') || align !== null,
    align,
  };
}

/** A side's label from its files: their common name prefix (vfs100.1.dat, vfs100.2.dat -> vfs100), else the first name. */
export function defaultLabel(files: string[]): string {
  const names = files.map((f) => path.basename(f));
  if (names.length === 1) return names[0]!;
  let p = names[0]!;
  for (const n of names) while (!n.startsWith(p)) p = p.slice(0, -1);
  p = p.replace(/[._\-\s]+$/, '');
  return p || names[0]!;
}

/** Runs the command; returns the process exit code (0, or 2 for a regression under --fail-on-regression). */
export async function runCompare(
  words: string[],
  dataDirOpt: string | undefined,
  out: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  const args = parseCompareArgs(words);
  const dataDir = resolveDataDir(dataDirOpt);
  const lib = await TraceLibrary.open(dataDir);
  try {
    const sides: SideInput[] = [];
    const ingested: { id: string; name: string; durationNs: number }[][] = [];
    for (const s of args.sides) {
      const traces = [];
      const side = [];
      for (const f of s.files) {
        const { summary } = await ingestFile(f, { dataDir });
        traces.push(await loadTraceInput(lib, summary.id, path.basename(f)));
        side.push({ id: summary.id, name: path.basename(f), durationNs: await durationOf(lib, summary.id) });
      }
      sides.push({ label: s.label, traces });
      ingested.push(side);
    }
    let result: CompareResult = compareSides(sides, {
      alpha: args.alpha,
      regressionPct: args.failOnRegression,
      histogramTop: args.top,
    });
    if (args.metric) result = filterRows(result, args.metric);
    const series = args.series
      ? await compareSeries(
          ingested.map((side) => side.map((t) => ({ engine: () => lib.openEngine(t.id), durationNs: t.durationNs }))),
          args.align,
        )
      : null;
    // the app's fallback: a trace without the event stays on its start; said here, and null in the JSON
    series?.align?.offset_s.forEach((side, si) =>
      side.forEach((o, ti) => {
        if (o === null)
          process.stderr.write(
            `stallscope: no ${args.align} in ${ingested[si]![ti]!.name}: its series stay on its first event\n`,
          );
      }),
    );
    const names = ingested.map((side) => side.map((t) => t.name));
    if (args.json)
      out.write(
        `${toJson({ ...(compareResultToJson(result) as object), ...(series ? { time_series: { ...series, names } } : {}) }, 2)}\n`,
      );
    else
      out.write(
        formatCompare(result, { histograms: args.histograms }) + (series ? formatSeriesSummary(series, names) : ''),
      );
    if (args.failOnRegression !== null && result.regressions.length > 0) {
      process.stderr.write(
        `stallscope: ${result.regressions.length} metric(s) regressed by more than ${args.failOnRegression}%\n`,
      );
      return 2;
    }
    return 0;
  } finally {
    await lib.close();
  }
}

/** ns from a trace's first event to its last (the series' extent). */
async function durationOf(lib: TraceLibrary, id: string): Promise<number> {
  const r = await lib.get(id);
  if (!r || r.firstTs === null || r.lastTs === null) return 0;
  return Math.max(0, Number(BigInt(r.lastTs) - BigInt(r.firstTs)));
}

/** Keeps the rows whose metric matches (regressions re-indexed). */
export function filterRows(r: CompareResult, re: RegExp): CompareResult {
  const keep = r.rows.map((row) => re.test(row.metric));
  const newIndex: number[] = [];
  let n = 0;
  keep.forEach((k) => newIndex.push(k ? n++ : -1));
  return {
    ...r,
    rows: r.rows.filter((_, i) => keep[i]),
    regressions: r.regressions.filter((i) => keep[i]).map((i) => newIndex[i]!),
    histograms: r.histograms.filter((h) => r.rows.some((row, i) => keep[i] && row.samples === h.samples)),
  };
}
