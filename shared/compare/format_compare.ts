/**
 * A comparison as text, laid out as MMTests' compare-kernels prints it: one
 * row per metric, one column per side (mean, ± stddev over iterations, the
 * change against the first side in percent), a mark where the change is
 * significant; then the log2 histograms side by side (funclatency's layout).
 * The app's "copy as text" uses the same function, so a mail gets the same
 * table the terminal shows.
 */
import type { CompareResult, CompareRow } from '../contract/compare.ts';
import { formatSideBySide } from './log2_hist.ts';

export interface FormatOptions {
  /** Include the log2 histograms (default true). */
  histograms?: boolean;
}

/** p < alpha: '*'; p < alpha/5: '**'; p < alpha/50: '***'. */
export function significanceMark(p: number | null | undefined, alpha: number): string {
  if (p === null || p === undefined || !(p < alpha)) return '';
  return p < alpha / 50 ? '***' : p < alpha / 5 ? '**' : '*';
}

export function formatValue(v: number | null, unit: string): string {
  if (v === null || !Number.isFinite(v)) return '-';
  switch (unit) {
    case 'ns': {
      const a = Math.abs(v);
      if (a >= 1e9) return `${(v / 1e9).toFixed(2)} s`;
      if (a >= 1e6) return `${(v / 1e6).toFixed(2)} ms`;
      if (a >= 1e3) return `${(v / 1e3).toFixed(1)} us`;
      return `${v.toFixed(0)} ns`;
    }
    case 'ratio':
      return v.toFixed(3);
    case 'per_s':
      return `${v.toFixed(1)}/s`;
    case 'priority':
      return Number.isInteger(v) ? String(v) : v.toFixed(1);
    default:
      return Number.isInteger(v) ? v.toLocaleString('en') : v.toLocaleString('en', { maximumFractionDigits: 1 });
  }
}

function formatPct(p: number | null, hasBoth: boolean): string {
  if (p === null) return hasBoth ? 'new' : '';
  const s = p.toFixed(1);
  return `${p > 0 ? '+' : ''}${s === '-0.0' ? '0.0' : s}%`;
}

function rowLabel(r: CompareRow): string {
  return r.key === null ? r.metric : `${r.metric} [${r.key}]`;
}

/** The table alone (what "copy table as text" puts on the clipboard). */
export function formatCompareTable(c: CompareResult): string {
  const iterations = c.sides.some((s) => s.traces.length > 1);
  const heads = c.sides.map((s) => (s.traces.length > 1 ? `${s.label} (${s.traces.length})` : s.label));
  const cells: string[][] = c.rows.map((r) =>
    r.sides.map((sv, i) => {
      const ch = r.changes[i];
      let cell = formatValue(sv.mean, r.unit);
      if (iterations && sv.n > 1) cell += ` ± ${formatValue(sv.stddev, r.unit)}`;
      if (ch) {
        const pct = formatPct(ch.change_pct, sv.mean !== null && r.sides[0]!.mean !== null);
        const mark = significanceMark(ch.test?.p, c.alpha);
        if (pct || mark) cell += ` (${pct}${mark ? ` ${mark}` : ''})`;
        if (ch.regression) cell += ' !';
      }
      return cell;
    }),
  );
  const labelW = Math.max(6, ...c.rows.map((r) => rowLabel(r).length));
  const colW = c.sides.map((_, i) => Math.max(heads[i]!.length, ...cells.map((row) => row[i]!.length)));
  const lines: string[] = [];
  lines.push(`${''.padEnd(labelW)}  ${heads.map((h, i) => h.padStart(colW[i]!)).join('  ')}`);
  let detector = '';
  c.rows.forEach((r, ri) => {
    if (r.detector !== detector) {
      detector = r.detector;
      lines.push(`${detector}`);
    }
    lines.push(`${rowLabel(r).padEnd(labelW)}  ${cells[ri]!.map((x, i) => x.padStart(colW[i]!)).join('  ')}`);
  });
  return `${lines.join('\n')}\n`;
}

export function formatCompare(c: CompareResult, opts: FormatOptions = {}): string {
  const out: string[] = [];
  out.push(
    c.sides
      .map((s, i) => `${i === 0 ? 'baseline' : `side ${i + 1}`} ${s.label}: ${s.traces.map((t) => t.name).join(', ')}`)
      .join('\n'),
  );
  const iterations = c.sides.every((s) => s.traces.length >= 2);
  out.push(
    `change against ${c.sides[0]!.label} in percent; * p < ${c.alpha}, ** p < ${c.alpha / 5}, *** p < ${c.alpha / 50}, ` +
      (iterations
        ? `Welch's t over the iterations`
        : `Mann-Whitney U on the events of stall and call percentiles, no test for the rest (one run a side: ` +
          `runs of the same kernel differ too, record iterations with --a a1 a2 .. --b b1 b2 ..)`) +
      (c.regression_pct !== null ? `; ! a significant change for the worse of more than ${c.regression_pct}%` : ''),
  );
  out.push('');
  out.push(formatCompareTable(c));
  if (opts.histograms !== false && c.histograms.length) {
    for (const h of c.histograms) {
      const title = `${h.samples}${h.key === null ? '' : ` [${h.key}]`}: log2 histogram, usecs, ${c.sides.map((s, i) => `${s.label} ${h.counts[i]!.reduce((a, b) => a + b, 0)}`).join(' / ')} events`;
      out.push(formatSideBySide({ title, labels: c.sides.map((s) => s.label), counts: h.counts }));
    }
  }
  if (c.regression_pct !== null) {
    out.push(
      c.regressions.length
        ? `${c.regressions.length} regression(s) of more than ${c.regression_pct}%: ${c.regressions.map((i) => rowLabel(c.rows[i]!)).join(', ')}`
        : `no regression of more than ${c.regression_pct}%`,
    );
  }
  return `${out.join('\n')}\n`;
}
