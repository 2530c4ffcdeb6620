/** Maps ns (relative to the trace start) to CSS pixels within a track's drawing area. */
export class TimeScale {
  readonly nsPerPx: number;
  constructor(
    readonly t0: number,
    readonly t1: number,
    readonly width: number,
  ) {
    this.nsPerPx = (t1 - t0) / Math.max(1, width);
  }
  tsToPx(ts: number): number {
    return (ts - this.t0) / this.nsPerPx;
  }
  pxToTs(px: number): number {
    return this.t0 + px * this.nsPerPx;
  }
  durToPx(dur: number): number {
    return dur / this.nsPerPx;
  }
}

/** A visible window in ns; never narrower than MIN_WINDOW_NS. */
export interface TimeWindow {
  t0: number;
  t1: number;
}

export const MIN_WINDOW_NS = 1000;

/** Zooms around `anchor` (ns) by `factor` (<1 zooms in), clamped to [start - pad, end + pad]. */
export function zoomWindow(w: TimeWindow, anchor: number, factor: number, bounds: TimeWindow): TimeWindow {
  const span = w.t1 - w.t0;
  const maxSpan = (bounds.t1 - bounds.t0) * 1.2 + MIN_WINDOW_NS;
  const next = Math.min(maxSpan, Math.max(MIN_WINDOW_NS, span * factor));
  const ratio = span > 0 ? (anchor - w.t0) / span : 0.5;
  return clampWindow({ t0: anchor - ratio * next, t1: anchor - ratio * next + next }, bounds);
}

export function panWindow(w: TimeWindow, deltaNs: number, bounds: TimeWindow): TimeWindow {
  return clampWindow({ t0: w.t0 + deltaNs, t1: w.t1 + deltaNs }, bounds);
}

/** Keeps at least part of the trace on screen (a tenth of the window's width of margin). */
export function clampWindow(w: TimeWindow, bounds: TimeWindow): TimeWindow {
  const span = w.t1 - w.t0;
  const margin = span * 0.1;
  let { t0 } = w;
  if (t0 > bounds.t1 - margin) t0 = bounds.t1 - margin;
  if (t0 + span < bounds.t0 + margin) t0 = bounds.t0 + margin - span;
  return { t0, t1: t0 + span };
}
