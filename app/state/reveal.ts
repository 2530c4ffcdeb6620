/**
 * Moving the timeline to a time: keeps the zoom when the thing fits in the
 * window, else zooms so it fills half of it; centres it when it is not in
 * view (or always, for `center`). A whole-trace view zooms in to
 * REVEAL_SPAN_NS around it, so what was found can be seen.
 */
import { viewStore } from './view_store.ts';

const REVEAL_SPAN_NS = 10_000_000;
/** A window wider than this is "zoomed out": stepping zooms in. */
const WIDE_NS = 500_000_000;

export function revealTime(ts: number, dur: number, center = false): void {
  const v = viewStore.get();
  const cur = v.t0 !== null && v.t1 !== null ? { t0: v.t0, t1: v.t1 } : null;
  let width = cur ? cur.t1 - cur.t0 : REVEAL_SPAN_NS;
  if (width > WIDE_NS) width = Math.max(REVEAL_SPAN_NS, dur * 3);
  if (dur * 1.25 > width) width = dur * 2;
  const visible = cur && ts >= cur.t0 && ts + dur <= cur.t1 && cur.t1 - cur.t0 === width;
  if (visible && !center) return;
  const mid = ts + dur / 2;
  viewStore.update({ t0: Math.floor(mid - width / 2), t1: Math.ceil(mid + width / 2) }, { history: 'push' });
}
