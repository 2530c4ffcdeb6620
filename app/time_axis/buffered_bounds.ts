/**
 * The buffered window a visible one is requested as (shared/contract/buffered_bounds.ts:
 * the server predicts the first view's requests with the same function), and
 * when data already loaded serves a visible window.
 */
import type { Bounds } from '../../shared/contract/buffered_bounds.ts';

export { bufferedBounds, type Bounds } from '../../shared/contract/buffered_bounds.ts';

/** True when `loaded` can serve the visible window at the wanted resolution. */
export function covers(loaded: Bounds, want: Bounds, t0: number, t1: number): boolean {
  return loaded.res === want.res && loaded.t0 <= t0 && loaded.t1 >= t1;
}

export function boundsKey(b: Bounds): string {
  return `${b.t0}:${b.t1}:${b.res}`;
}
