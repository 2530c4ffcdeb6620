/**
 * The plain-text report `stallscope analyze` prints: findings grouped by
 * detector (worst detector first), each with severity, time, duration in
 * human units, thread, title, and the exact ns and event ids underneath;
 * then each detector's summary as a table.
 */
import type { Row } from '../engine/engine.ts';
import { type Finding, SEVERITIES, type Severity, countBySeverity, severityRank } from './finding.ts';

export interface ReportInput {
  findings: Finding[];
  summaries?: Record<string, Row[]>;
  timings?: Record<string, number>;
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
  /** At most this many findings per detector (default: all). */
  maxPerDetector?: number;
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
  out.push(`${result.findings.length} finding${result.findings.length === 1 ? '' : 's'}: ${countsText(result.findings)}`);

  const byDetector = new Map<string, Finding[]>();
  for (const f of result.findings) {
    const list = byDetector.get(f.detector) ?? [];
    list.push(f);
    byDetector.set(f.detector, list);
  }
  const order = [...byDetector.entries()].sort((a, b) => {
    const wa = Math.min(...a[1].map((f) => severityRank(f.severity)));
    const wb = Math.min(...b[1].map((f) => severityRank(f.severity)));
    return wa - wb || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  });
  for (const [detector, list] of order) {
    out.push('');
    out.push(`== ${detector}: ${list.length} finding${list.length === 1 ? '' : 's'} (${countsText(list)})`);
    const shown = opts.maxPerDetector != null ? list.slice(0, opts.maxPerDetector) : list;
    for (const f of shown) {
      const who = f.comm != null ? `${f.comm}${f.tid != null ? `[${f.tid}]` : ''}` : f.tid != null ? `tid ${f.tid}` : '';
      out.push(
        `  ${SEV_LABEL[f.severity]} ${formatTs(f.ts_ns)} s  ${formatDuration(f.dur_ns).padStart(9)}  ${f.cpu != null ? `cpu${f.cpu}` : '    '}  ${who}${f.kind !== detector ? `  (${f.kind})` : ''}`,
      );
      out.push(`      ${f.title}`);
      out.push(`      ts=${f.ts_ns} ns  dur=${f.dur_ns} ns  events=${wrapIds(f.event_ids)}`);
      if (showValues && Object.keys(f.values).length) {
        out.push(`      ${fmtValue(f.values).slice(1, -1)}`);
      }
    }
    if (shown.length < list.length) out.push(`  ... ${list.length - shown.length} more (use --json for all)`);
  }

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
