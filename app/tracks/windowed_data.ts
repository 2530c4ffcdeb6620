/**
 * Per-track cache of one window's data: fetches the buffered bounds of the
 * visible window, keeps the last data to draw while a new one loads, and
 * keeps at most one request in flight (the latest window wins).
 */
import { bufferedBounds, boundsKey, covers, type Bounds } from '../time_axis/buffered_bounds.ts';

export class WindowedData<T> {
  data: T | null = null;
  loaded: Bounds | null = null;
  error: string | null = null;
  private pending: { key: string; abort: AbortController } | null = null;
  /** The bounds wanted while a request was in flight (for debugging). */
  wantKey = '';

  constructor(
    private readonly fetcher: (b: Bounds, signal: AbortSignal) => Promise<T>,
    private readonly redraw: () => void,
  ) {}

  get loading(): boolean {
    return this.pending !== null;
  }

  update(t0: number, t1: number, widthPx: number): void {
    const want = bufferedBounds(t0, t1, widthPx);
    if (this.loaded && covers(this.loaded, want, t0, t1)) return;
    const key = boundsKey(want);
    // At most one request in flight: while it runs the cached data is drawn
    // (scaled); when it lands, the next draw asks again if the window moved on.
    if (this.pending) {
      this.wantKey = key;
      return;
    }
    this.start(want, key);
  }

  private start(b: Bounds, key: string): void {
    const abort = new AbortController();
    this.pending = { key, abort };
    this.fetcher(b, abort.signal).then(
      (data) => {
        this.pending = null;
        this.data = data;
        this.loaded = b;
        this.error = null;
        this.redraw();
      },
      (err: Error) => {
        this.pending = null;
        if (abort.signal.aborted) return;
        this.error = err.message;
        this.redraw();
      },
    );
  }

  /** Drop everything (trace closed). */
  dispose(): void {
    this.pending?.abort.abort();
    this.pending = null;
  }
}

/** Numeric column as Float64Array (null -> NaN). */
export function f64(col: Array<number | string | null> | undefined): Float64Array {
  const n = col?.length ?? 0;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = col![i];
    out[i] = typeof v === 'number' ? v : v === null || v === undefined ? NaN : Number(v);
  }
  return out;
}

export function maxOf(a: Float64Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) if (a[i]! > m) m = a[i]!;
  return m;
}

/** Index of the row under x (ts at px), preferring real slices over summaries; -1 if none. */
export function rowAt(
  ts: Float64Array,
  dur: Float64Array,
  count: number,
  at: number,
  slop: number,
  include?: (i: number) => boolean,
): number {
  let best = -1;
  let bestDist = Infinity;
  // Rows are sorted by ts; scan back from the first row starting after `at + slop`.
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ts[mid]! <= at + slop) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo - 1, seen = 0; i >= 0 && seen < 2000; i--, seen++) {
    if (include && !include(i)) continue;
    const s = ts[i]!;
    const e = s + Math.max(dur[i]!, 0);
    const d = at < s ? s - at : at > e ? at - e : 0;
    if (d <= slop && d < bestDist) {
      best = i;
      bestDist = d;
      if (d === 0) break;
    }
  }
  return best;
}
