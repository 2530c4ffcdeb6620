/**
 * The compare view's charts, as plain SVG (a few hundred points each, no
 * interaction beyond hover titles): log2 histograms overlaid, their CDFs,
 * and time series with a line per trace. One colour per side.
 */
const COLORS = ['#3366cc', '#dc3912', '#109618', '#ff9900', '#990099', '#0099c6'];
export const sideColor = (i: number) => COLORS[i % COLORS.length]!;

const W = 420;
const H = 160;
const PAD = { l: 44, r: 8, t: 8, b: 26 };

function bucketLabel(slot: number): string {
  const low = slot === 0 ? 0 : 2 ** slot;
  return low >= 1_000_000 ? `${low / 1_000_000}s` : low >= 1000 ? `${low / 1000}ms` : `${low}µs`;
}

function slotRange(counts: number[][]): [number, number] {
  let first = Infinity;
  let last = -1;
  for (const c of counts)
    c.forEach((n, i) => {
      if (n > 0) {
        first = Math.min(first, i);
        last = Math.max(last, i);
      }
    });
  return Number.isFinite(first) ? [first, last] : [0, 0];
}

/** Bars per bucket, the sides side by side within each bucket, each as a share of its side's events. */
export function HistogramChart({ counts, labels }: { counts: number[][]; labels: string[] }) {
  const [first, last] = slotRange(counts);
  const slots = last - first + 1;
  const totals = counts.map((c) => c.reduce((a, b) => a + b, 0) || 1);
  const maxShare = Math.max(...counts.flatMap((c, si) => c.map((n) => n / totals[si]!)), 1e-9);
  const iw = W - PAD.l - PAD.r;
  const ih = H - PAD.t - PAD.b;
  const bw = iw / slots;
  return (
    <svg
      className="chart histogram"
      viewBox={`0 0 ${W} ${H}`}
      width={W}
      height={H}
      role="img"
      aria-label="log2 histogram"
    >
      <line x1={PAD.l} y1={PAD.t + ih} x2={PAD.l + iw} y2={PAD.t + ih} className="axis" />
      <text x={4} y={PAD.t + 10} className="tick">
        {Math.round(maxShare * 100)}%
      </text>
      {Array.from({ length: slots }, (_, k) => (
        <text key={k} x={PAD.l + k * bw + bw / 2} y={H - 8} className="tick" textAnchor="middle">
          {k % Math.ceil(slots / 8) === 0 ? bucketLabel(first + k) : ''}
        </text>
      ))}
      {counts.map((c, si) => (
        <g key={si} className={`side side-${si}`} data-testid="histogram-side" data-events={totals[si]}>
          {Array.from({ length: slots }, (_, k) => {
            const n = c[first + k] ?? 0;
            const h = (n / totals[si]! / maxShare) * ih;
            const x = PAD.l + k * bw + (bw * si) / counts.length;
            return n > 0 ? (
              <rect
                key={k}
                x={x}
                y={PAD.t + ih - h}
                width={Math.max(1, bw / counts.length - 1)}
                height={h}
                fill={sideColor(si)}
                opacity={0.8}
              >
                <title>{`${labels[si]}: ${n} in ${bucketLabel(first + k)}..${bucketLabel(first + k + 1)}`}</title>
              </rect>
            ) : null;
          })}
        </g>
      ))}
    </svg>
  );
}

/** Cumulative share of events up to each bucket's upper bound, a line per side. */
export function CdfChart({ counts, labels }: { counts: number[][]; labels: string[] }) {
  const [first, last] = slotRange(counts);
  const slots = last - first + 1;
  const iw = W - PAD.l - PAD.r;
  const ih = H - PAD.t - PAD.b;
  const x = (k: number) => PAD.l + (slots <= 1 ? iw : (k / (slots - 1)) * iw);
  return (
    <svg className="chart cdf" viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label="CDF">
      <line x1={PAD.l} y1={PAD.t + ih} x2={PAD.l + iw} y2={PAD.t + ih} className="axis" />
      <text x={4} y={PAD.t + 10} className="tick">
        100%
      </text>
      <text x={PAD.l} y={H - 8} className="tick">{`≤${bucketLabel(first + 1)}`}</text>
      <text x={PAD.l + iw} y={H - 8} className="tick" textAnchor="end">{`≤${bucketLabel(last + 1)}`}</text>
      {counts.map((c, si) => {
        const total = c.reduce((a, b) => a + b, 0) || 1;
        let acc = 0;
        const pts = Array.from({ length: slots }, (_, k) => {
          acc += c[first + k] ?? 0;
          return `${x(k).toFixed(1)},${(PAD.t + ih - (acc / total) * ih).toFixed(1)}`;
        });
        return (
          <polyline
            key={si}
            className="cdf-line"
            data-testid="cdf-line"
            points={pts.join(' ')}
            fill="none"
            stroke={sideColor(si)}
            strokeWidth={2}
          >
            <title>{labels[si]}</title>
          </polyline>
        );
      })}
    </svg>
  );
}

export interface SeriesLine {
  label: string;
  side: number;
  run: number;
  points: [number, number][];
}

/** A line per trace over seconds from its start; the y axis from 0 to the largest value. */
export function SeriesChart({ lines }: { lines: SeriesLine[] }) {
  const xmax = Math.max(1e-9, ...lines.flatMap((l) => l.points.map((p) => p[0])));
  const ymax = Math.max(1e-9, ...lines.flatMap((l) => l.points.map((p) => p[1])));
  const iw = W - PAD.l - PAD.r;
  const ih = H - PAD.t - PAD.b;
  const fmt = (v: number) =>
    v >= 1e6 ? `${(v / 1e6).toFixed(1)}M` : v >= 1e3 ? `${(v / 1e3).toFixed(1)}k` : v.toFixed(v < 10 ? 1 : 0);
  return (
    <svg className="chart series" viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label="time series">
      <line x1={PAD.l} y1={PAD.t + ih} x2={PAD.l + iw} y2={PAD.t + ih} className="axis" />
      <text x={4} y={PAD.t + 10} className="tick">
        {fmt(ymax)}
      </text>
      <text x={PAD.l} y={H - 8} className="tick">
        0 s
      </text>
      <text x={PAD.l + iw} y={H - 8} className="tick" textAnchor="end">{`${xmax.toFixed(2)} s`}</text>
      {lines.map((l, i) => (
        <polyline
          key={i}
          className="series-line"
          data-testid="series-line"
          data-side={l.side}
          points={l.points
            .map(([t, v]) => `${(PAD.l + (t / xmax) * iw).toFixed(1)},${(PAD.t + ih - (v / ymax) * ih).toFixed(1)}`)
            .join(' ')}
          fill="none"
          stroke={sideColor(l.side)}
          strokeWidth={1.5}
          strokeDasharray={l.run > 0 ? '4 2' : undefined}
          opacity={l.run > 0 ? 0.6 : 1}
        >
          <title>{l.label}</title>
        </polyline>
      ))}
    </svg>
  );
}
