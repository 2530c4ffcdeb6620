/** Draws a counter as a step line with a light fill; summarised columns show their min..max span. */
import type { TimeScale } from '../time_axis/time_scale.ts';
import { DIM_ALPHA } from './colors.ts';

export interface CounterRows {
  count: number;
  ts: Float64Array;
  lo: Float64Array;
  hi: Float64Array;
  last: Float64Array;
  n: Float64Array;
  /** Value in force before the first row, if any. */
  prev: number | null;
  yMin: number;
  yMax: number;
}

export function drawCounter(
  ctx: CanvasRenderingContext2D,
  scale: TimeScale,
  y: number,
  h: number,
  rows: CounterRows,
  color: string,
  opts: { dim: boolean; end: number; label: string },
): void {
  const pad = 3;
  const top = y + pad;
  const bottom = y + h - 2;
  const span = rows.yMax - rows.yMin || 1;
  const vy = (v: number) => bottom - ((v - rows.yMin) / span) * (bottom - top);
  ctx.globalAlpha = opts.dim ? DIM_ALPHA : 1;
  ctx.beginPath();
  let x = 0;
  let cur = rows.prev;
  ctx.moveTo(0, cur === null ? bottom : vy(cur));
  const spans: Array<[number, number, number]> = [];
  for (let i = 0; i < rows.count; i++) {
    const ts = rows.ts[i]!;
    if (ts > scale.t1) break;
    x = scale.tsToPx(ts);
    if (x < -2) {
      cur = rows.last[i]!;
      continue;
    }
    ctx.lineTo(x, cur === null ? bottom : vy(cur));
    if (rows.n[i]! > 1) spans.push([x, vy(rows.hi[i]!), vy(rows.lo[i]!)]);
    cur = rows.last[i]!;
    ctx.lineTo(x, vy(cur));
  }
  const xEnd = Math.min(scale.width, scale.tsToPx(opts.end));
  ctx.lineTo(Math.max(x, xEnd), cur === null ? bottom : vy(cur));
  ctx.strokeStyle = color;
  ctx.lineWidth = 1.25;
  ctx.stroke();
  ctx.lineTo(Math.max(x, xEnd), bottom);
  ctx.lineTo(0, bottom);
  ctx.closePath();
  ctx.fillStyle = color;
  ctx.globalAlpha = (opts.dim ? DIM_ALPHA : 1) * 0.15;
  ctx.fill();
  ctx.globalAlpha = opts.dim ? DIM_ALPHA : 1;
  if (spans.length) {
    ctx.fillStyle = color;
    for (const [sx, y0, y1] of spans) ctx.fillRect(sx, y0, 1, Math.max(1, y1 - y0));
  }
  ctx.globalAlpha = 1;
  if (opts.label) {
    ctx.font = '10px system-ui, sans-serif';
    ctx.textBaseline = 'top';
    const w = ctx.measureText(opts.label).width;
    ctx.fillStyle = 'rgba(255,255,255,0.85)';
    ctx.fillRect(2, y + 1, w + 4, 12);
    ctx.fillStyle = '#5f6368';
    ctx.fillText(opts.label, 4, y + 2);
  }
}
