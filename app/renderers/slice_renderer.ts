/**
 * Draws a row of slices (rectangles over time) with optional labels.
 * Pure canvas: no fetching, no React. Rows are sorted by ts; `maxDur` bounds
 * the binary search for the first visible one.
 */
import type { TimeScale } from '../time_axis/time_scale.ts';
import { DIM_ALPHA, SELECTED_OUTLINE } from './colors.ts';

export interface SliceRows {
  count: number;
  ts: Float64Array;
  dur: Float64Array;
  /** Rows per bucket: 1 for a real slice, >1 for a summary of narrow ones. */
  n: Float64Array;
  maxDur: number;
}

export interface SliceStyle {
  color(i: number): string;
  label?(i: number): string | null;
  /** Drawn faded (not linked to the selection). */
  dim?(i: number): boolean;
  /** Drawn with an outline (selected / linked). */
  emphasis?(i: number): boolean;
  /** Restrict to rows where this returns true (e.g. one depth). */
  include?(i: number): boolean;
}

export function firstVisible(ts: Float64Array, count: number, from: number): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ts[mid]! < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function drawSlices(
  ctx: CanvasRenderingContext2D,
  scale: TimeScale,
  y: number,
  h: number,
  rows: SliceRows,
  style: SliceStyle,
): void {
  const width = scale.width;
  const start = firstVisible(rows.ts, rows.count, scale.t0 - rows.maxDur);
  const emph: number[] = [];
  const labels: Array<{ text: string; x: number; avail: number; alpha: number }> = [];
  // Zoomed out, a row is mostly one rectangle per pixel column, often of the same colour as the
  // last: abutting rectangles of the same colour, alpha and height are merged into one fillRect.
  let runColor = '';
  let runAlpha = 1;
  let runSummary = false;
  let runX0 = 0;
  let runX1 = -Infinity;
  let lastColor = '';
  let lastAlpha = 1;
  const flush = () => {
    if (runX1 === -Infinity) return;
    if (runColor !== lastColor) {
      ctx.fillStyle = runColor;
      lastColor = runColor;
    }
    if (runAlpha !== lastAlpha) {
      ctx.globalAlpha = runAlpha;
      lastAlpha = runAlpha;
    }
    // A summary of many narrow slices is drawn a little lower, so it reads as "busy", not as one slice.
    if (runSummary) ctx.fillRect(runX0, y + h * 0.2, runX1 - runX0, h * 0.6);
    else ctx.fillRect(runX0, y, runX1 - runX0, h);
    runX1 = -Infinity;
  };
  for (let i = start; i < rows.count; i++) {
    const ts = rows.ts[i]!;
    if (ts > scale.t1) break;
    const end = ts + rows.dur[i]!;
    if (end < scale.t0) continue;
    if (style.include && !style.include(i)) continue;
    const x0 = Math.max(-1, scale.tsToPx(ts));
    const x1 = Math.min(width + 1, scale.tsToPx(end));
    const w = Math.max(1, x1 - x0);
    const color = style.color(i);
    const alpha = style.dim?.(i) ? DIM_ALPHA : 1;
    const summary = rows.n[i]! > 1;
    if (
      color === runColor &&
      alpha === runAlpha &&
      summary === runSummary &&
      x0 <= runX1 + 0.01 &&
      runX1 !== -Infinity
    ) {
      runX1 = Math.max(runX1, x0 + w);
    } else {
      flush();
      runColor = color;
      runAlpha = alpha;
      runSummary = summary;
      runX0 = x0;
      runX1 = x0 + w;
    }
    if (style.emphasis?.(i)) emph.push(i);
    if (!summary && w > 36 && style.label) {
      const text = style.label(i);
      if (text) {
        const tx = Math.max(x0, 0) + 3;
        const avail = Math.min(x1, width) - tx - 3;
        if (avail > 12) labels.push({ text, x: tx, avail, alpha });
      }
    }
  }
  flush();
  if (labels.length) {
    ctx.fillStyle = '#fff';
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    for (const l of labels) {
      if (l.alpha !== lastAlpha) {
        ctx.globalAlpha = l.alpha;
        lastAlpha = l.alpha;
      }
      ctx.fillText(fitText(ctx, l.text, l.avail), l.x, y + h / 2 + 0.5);
    }
  }
  ctx.globalAlpha = 1;
  if (emph.length) {
    ctx.strokeStyle = SELECTED_OUTLINE;
    ctx.lineWidth = 2;
    for (const i of emph) {
      const x0 = scale.tsToPx(rows.ts[i]!);
      const w = Math.max(2, scale.durToPx(rows.dur[i]!));
      ctx.strokeRect(x0 + 1, y + 1, w - 2 > 0 ? w - 2 : 1, h - 2);
    }
  }
}

const fitCache = new Map<string, string>();

/** Cuts a label to fit `avail` px (ellipsis), cached per text and width bucket. */
export function fitText(ctx: CanvasRenderingContext2D, text: string, avail: number): string {
  const key = `${text}|${Math.floor(avail / 8)}`;
  const hit = fitCache.get(key);
  if (hit !== undefined) return hit;
  let out = text;
  if (ctx.measureText(text).width > avail) {
    const perChar = ctx.measureText('m').width * 0.8;
    let n = Math.max(0, Math.floor(avail / perChar) - 1);
    while (n > 0 && ctx.measureText(`${text.slice(0, n)}…`).width > avail) n--;
    out = n > 0 ? `${text.slice(0, n)}…` : '';
  }
  if (fitCache.size > 5000) fitCache.clear();
  fitCache.set(key, out);
  return out;
}
