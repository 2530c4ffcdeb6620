/**
 * The plain-text report `stallscope analyze` prints: first the overview (the
 * story of the trace, server/findings/overview.ts) and what was not traced,
 * then the findings ranked (worst first; `--sort time` for time order), each
 * with its id, severity, time, duration and impact in human units, thread,
 * title, and the exact ns and event ids underneath (the findings a repeated
 * finding covers are counted under it, not listed); then each detector's
 * summary as a table.
 */
import type { Row } from '../engine/engine.ts';
import { type Finding, SEVERITIES, type Severity, compareByRank, compareByTime, countBySeverity } from './finding.ts';
import { type Overview, overviewText } from './overview.ts';

export interface ReportInput {
  findings: Finding[];
  summaries?: Record<string, Row[]>;
  timings?: Record<string, number>;
  overview?: Overview;
}

/** Whatever the caller knows about the trace (all optional). */
export interface ReportTrace {
  name?: string | null;
  format?: string | null;
  cpus?: number | null;
  eventsTotal?: number | null;
}

export interface ReportOptions {
  /** Print each finding's values (default true). */
  values?: boolean;
  /** 'impact' (default): ranked, worst first; 'time': in time order. */
  sort?: 'impact' | 'time';
  /** At most this many findings (after sorting; default: all). */
  top?: number;
  /** Print summaries (default true). */
  summaries?: boolean;
  /** Print per-detector timings (default false). */
  timings?: boolean;
  /** At most this many rows per summary table (default 20). */
  maxSummaryRows?: number;
}

/** '850 ns', '12.3 us', '412.5 ms', '2.35 s' (same rules as the SQL macro ss_fmt_dur). */
export function formatDuration(ns: bigint | number): string {
  const n = typeof ns === 'bigint' ? Number(ns) : ns;
  const a = Math.abs(n);
  if (a < 1e3) return `${n} ns`;
  if (a < 1e6) return `${(n / 1e3).toFixed(1)} us`;
  if (a < 1e9) return `${(n / 1e6).toFixed(1)} ms`;
  return `${(n / 1e9).toFixed(2)} s`;
}

/** Exact seconds from ns, as trace-cmd prints timestamps: '1234.567890123'. */
export function formatTs(ns: bigint): string {
  const neg = ns < 0n;
  const a = neg ? -ns : ns;
  return `${neg ? '-' : ''}${a / 1_000_000_000n}.${(a % 1_000_000_000n).toString().padStart(9, '0')}`;
}

/** Values worth printing in text: false flags (open=false ...) say nothing to a reader. */
export function readableValues(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== false && v !== null && v !== undefined));
}

function fmtValue(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
  if (typeof v === 'string') return /[\s,=]/.test(v) || v === '' ? JSON.stringify(v) : v;
  if (Array.isArray(v)) return `[${v.map(fmtValue).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.entries(v)
      .filter(([, x]) => x !== null && x !== undefined)
      .map(([k, x]) => `${k}=${fmtValue(x)}`)
      .join(' ')}}`;
  }
  return String(v);
}

const SEV_LABEL: Record<Severity, string> = { critical: 'CRITICAL', warn: 'WARN    ', info: 'INFO    ' };

function countsText(findings: readonly Finding[]): string {
  const c = countBySeverity(findings);
  const parts = SEVERITIES.filter((s) => c[s] > 0).map((s) => `${c[s]} ${s}`);
  return parts.length ? parts.join(', ') : 'none';
}

function wrapIds(ids: bigint[], max = 12): string {
  const shown = ids.slice(0, max).map(String).join(',');
  return ids.length > max ? `${shown},... (${ids.length} events)` : shown;
}

function table(all: Row[], max: number): string[] {
  if (all.length === 0) return ['    (no rows)'];
  const rows = all.slice(0, max);
  const cols = Object.keys(rows[0]!);
  const cell = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'string' ? v : fmtValue(v));
  const cells = rows.map((r) => cols.map((c) => cell(r[c])));
  const width = cols.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const line = (vals: string[]) =>
    `    ${vals.map((v, i) => (typeof rows[0]![cols[i]!] === 'string' ? v.padEnd(width[i]!) : v.padStart(width[i]!))).join('  ')}`.trimEnd();
  const out = [line(cols), line(width.map((w) => '-'.repeat(w))), ...cells.map(line)];
  if (all.length > rows.length) out.push(`    ... ${all.length - rows.length} more rows (use --json for all)`);
  return out;
}

/** The report as text (ends with a newline). */
export function formatReport(result: ReportInput, trace: ReportTrace = {}, opts: ReportOptions = {}): string {
  const showValues = opts.values ?? true;
  const out: string[] = [];
  const about = [
    trace.format,
    trace.cpus != null ? `${trace.cpus} CPUs` : null,
    trace.eventsTotal != null ? `${trace.eventsTotal} events` : null,
  ].filter(Boolean);
  out.push(`stallscope report${trace.name ? `: ${trace.name}` : ''}${about.length ? ` (${about.join(', ')})` : ''}`);
  out.push(
    `${result.findings.length} finding${result.findings.length === 1 ? '' : 's'}: ${countsText(result.findings)}`,
  );

  if (result.overview && result.overview.lines.length) {
    out.push('');
    out.push('-- overview');
    out.push(...overviewText(result.overview).map((l) => `  ${l}`));
  }

  const covered = new Map<number, number>();
  for (const f of result.findings)
    if (f.parent_id !== null) covered.set(f.parent_id, (covered.get(f.parent_id) ?? 0) + 1);
  const listed = result.findings
    .filter((f) => f.parent_id === null)
    .sort(opts.sort === 'time' ? compareByTime : compareByRank);
  const shown = opts.top != null ? listed.slice(0, opts.top) : listed;
  out.push('');
  out.push(
    `-- findings${opts.sort === 'time' ? ', in time order' : ', worst first'}${shown.length < listed.length ? ` (top ${shown.length} of ${listed.length})` : ''}`,
  );
  for (const f of shown) {
    const who = f.comm != null ? `${f.comm}${f.tid != null ? `[${f.tid}]` : ''}` : f.tid != null ? `tid ${f.tid}` : '';
    out.push(
      `  ${SEV_LABEL[f.severity]} ${formatTs(f.ts_ns)} s  ${formatDuration(f.dur_ns).padStart(9)}  ${f.cpu != null ? `cpu${f.cpu}` : '    '}  ${who}  ${f.detector}/${f.kind}`,
    );
    out.push(`      ${f.title}`);
    const kids = covered.get(f.id);
    out.push(
      `      finding:${f.id}  rank ${f.rank}  impact ${formatDuration(f.impact_ns)}  ts=${f.ts_ns} ns  dur=${f.dur_ns} ns  events=${wrapIds(f.event_ids)}` +
        (kids ? `  covers ${kids} finding${kids === 1 ? '' : 's'}` : ''),
    );
    const vals = readableValues(f.values);
    if (showValues && Object.keys(vals).length) {
      out.push(`      ${fmtValue(vals).slice(1, -1)}`);
    }
  }
  if (shown.length < listed.length) out.push(`  ... ${listed.length - shown.length} more (--top, or --json for all)`);

  if (opts.summaries ?? true) {
    for (const [detector, rows] of Object.entries(result.summaries ?? {})) {
      out.push('');
      out.push(`-- ${detector} summary`);
      out.push(...table(rows, opts.maxSummaryRows ?? 20));
    }
  }
  if (opts.timings && result.timings) {
    out.push('');
    out.push('-- detector timings');
    for (const [k, v] of Object.entries(result.timings)) out.push(`    ${k.padEnd(32)} ${v.toFixed(1)} ms`);
  }
  return `${out.join('\n')}\n`;
}
