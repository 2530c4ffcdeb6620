/** Draws instant events as small downward chevrons; summarised columns as a bar whose height shows the count. */
import type { TimeScale } from '../time_axis/time_scale.ts';
import { DIM_ALPHA, HIGHLIGHT } from './colors.ts';

export interface InstantRows {
  count: number;
  ts: Float64Array;
  n: Float64Array;
  maxN: number;
}

export function drawInstants(
  ctx: CanvasRenderingContext2D,
  scale: TimeScale,
  y: number,
  h: number,
  rows: InstantRows,
  color: string,
  opts: { dim: boolean; linked?: (i: number) => boolean },
): void {
  ctx.fillStyle = color;
  ctx.globalAlpha = opts.dim ? DIM_ALPHA : 1;
  const linked: number[] = [];
  for (let i = 0; i < rows.count; i++) {
    const ts = rows.ts[i]!;
    if (ts < scale.t0 - scale.nsPerPx * 4) continue;
    if (ts > scale.t1) break;
    const x = scale.tsToPx(ts);
    if (opts.linked?.(i)) linked.push(x);
    if (rows.n[i]! > 1) {
      const bh = Math.max(3, (h - 4) * Math.min(1, Math.log2(1 + rows.n[i]!) / Math.log2(1 + rows.maxN)));
      ctx.fillRect(x, y + h - 2 - bh, Math.max(1, scale.width / 4000), bh);
    } else {
      ctx.beginPath();
      ctx.moveTo(x - 3.5, y + 4);
      ctx.lineTo(x + 3.5, y + 4);
      ctx.lineTo(x, y + h - 4);
      ctx.closePath();
      ctx.fill();
    }
  }
  ctx.globalAlpha = 1;
  if (linked.length) {
    ctx.fillStyle = HIGHLIGHT;
    for (const x of linked) {
      ctx.beginPath();
      ctx.moveTo(x - 5, y + 2);
      ctx.lineTo(x + 5, y + 2);
      ctx.lineTo(x, y + h - 2);
      ctx.closePath();
      ctx.fill();
    }
  }
}
