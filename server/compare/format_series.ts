/**
 * The terminal's view of a comparison's time series (`stallscope compare
 * --series` / `--align EVENT`): where each trace's 0 is, then per series and
 * trace its peak, when (s from that 0) and its mean over the bins, the
 * figures a review quotes ("alloc stall rate goes up to 94/sec"). The whole
 * series are in `--json` (`time_series`, the API's shape).
 */
import type { CompareSeries, Series } from './series.ts';

const fmt = (v: number) =>
  Math.abs(v) >= 100 || v === Math.trunc(v) ? Math.round(v).toLocaleString('en') : v.toPrecision(3);

export function formatSeriesSummary(ts: CompareSeries, names: string[][]): string {
  const lines: string[] = [];
  const from = ts.align ? `the first ${ts.align.event} in each trace` : "each trace's first event";
  lines.push('', `Time series (bins of ${ts.bin_ns / 1e6} ms; times in s from ${from})`);
  if (ts.align) {
    ts.align.offset_s.forEach((side, si) =>
      side.forEach((o, ti) =>
        lines.push(
          `  ${names[si]![ti]!}: ${o === null ? `no ${ts.align!.event}: from its first event` : `${ts.align!.event} at ${o.toFixed(6)} s`}`,
        ),
      ),
    );
  }
  const rows: string[][] = [['series', 'trace', 'peak', 'at', 'mean']];
  const ids = new Map<string, { series: string; key: string | null }>();
  for (const side of ts.series)
    for (const trace of side) for (const s of trace) ids.set(`${s.series}\0${s.key ?? ''}`, s);
  for (const [k, { series, key }] of [...ids].sort((a, b) => a[0].localeCompare(b[0]))) {
    ts.series.forEach((side, si) =>
      side.forEach((trace, ti) => {
        const s = trace.find((x: Series) => `${x.series}\0${x.key ?? ''}` === k);
        const label = key ? `${series} [${key}]` : series;
        if (!s || s.points.length === 0) return void rows.push([label, names[si]![ti]!, 'not traced', '', '']);
        let peak = s.points[0]!;
        for (const p of s.points) if (p[1] > peak[1]) peak = p;
        const mean = s.points.reduce((a, p) => a + p[1], 0) / s.points.length;
        rows.push([
          label,
          names[si]![ti]!,
          `${fmt(peak[1])}${s.unit === 'per_s' ? '/s' : ` ${s.unit}`}`,
          peak[0].toFixed(3),
          fmt(mean),
        ]);
      }),
    );
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows)
    lines.push(
      `  ${r.map((cell, c) => (c >= 2 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ')}`.trimEnd(),
    );
  return `${lines.join('\n')}\n`;
}
