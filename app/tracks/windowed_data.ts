/**
 * Per-track cache of one window's data: fetches the buffered bounds of the
 * visible window, keeps the last data to draw while a new one loads, aborts
 * superseded requests, and waits briefly while the window keeps moving.
 */
import { bufferedBounds, boundsKey, covers, type Bounds } from '../timeline/buffered_bounds.ts';

const SETTLE_MS = 40;

export class WindowedData<T> {
  data: T | null = null;
  loaded: Bounds | null = null;
  error: string | null = null;
  private pending: { key: string; abort: AbortController } | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private wantKey = '';

  constructor(
    private readonly fetcher: (b: Bounds, signal: AbortSignal) => Promise<T>,
    private readonly redraw: () => void,
  ) {}

  get loading(): boolean {
    return this.pending !== null || this.timer !== null;
  }

  update(t0: number, t1: number, widthPx: number): void {
    const want = bufferedBounds(t0, t1, widthPx);
    if (this.loaded && covers(this.loaded, want, t0, t1)) {
      this.cancelTimer();
      return;
    }
    const key = boundsKey(want);
    if (this.pending?.key === key || (this.timer && this.wantKey === key)) return;
    this.wantKey = key;
    this.cancelTimer();
    // First data as soon as possible; later ones once the window settles.
    if (!this.data) this.start(want, key);
    else this.timer = setTimeout(() => { this.timer = null; this.start(want, key); }, SETTLE_MS);
  }

  private cancelTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private start(b: Bounds, key: string): void {
    this.pending?.abort.abort();
    const abort = new AbortController();
    this.pending = { key, abort };
    this.fetcher(b, abort.signal).then(
      (data) => {
        if (this.pending?.key !== key) return;
        this.pending = null;
        this.data = data;
        this.loaded = b;
        this.error = null;
        this.redraw();
      },
      (err: Error) => {
        if (abort.signal.aborted) return;
        if (this.pending?.key === key) this.pending = null;
        this.error = err.message;
        this.redraw();
      },
    );
  }

  /** Drop everything (trace closed). */
  dispose(): void {
    this.cancelTimer();
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
export function rowAt(ts: Float64Array, dur: Float64Array, count: number, at: number, slop: number, include?: (i: number) => boolean): number {
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
