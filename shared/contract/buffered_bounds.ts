/**
 * Which window the app requests for a visible one (as Perfetto's
 * buffered_bounds): padded by half a window on each side and quantised, with
 * the resolution (ns per column) rounded up to a power of two. Panning within
 * the padding or zooming within the same power of two needs no new query.
 *
 * In the contract because the server predicts the first view's requests with
 * it (server/api/first_view_tracks.ts): the first view shows the whole trace,
 * so its requests depend on the timeline's width only through the resolution.
 */
export interface Bounds {
  t0: number;
  t1: number;
  /** ns per requested column (power of two). */
  res: number;
  /** Columns requested: (t1 - t0) / res. */
  px: number;
}

export function bufferedBounds(t0: number, t1: number, widthPx: number): Bounds {
  const span = Math.max(1, t1 - t0);
  const res = 2 ** Math.ceil(Math.log2(Math.max(1, span / Math.max(1, widthPx))));
  const quantum = res * 64;
  const start = Math.floor((t0 - span / 2) / quantum) * quantum;
  const end = Math.ceil((t1 + span / 2) / quantum) * quantum;
  return { t0: start, t1: end, res, px: Math.round((end - start) / res) };
}
