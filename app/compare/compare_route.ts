/**
 * The compare view's address, which is also its share link:
 *
 *   ?compare=ID,ID                one trace a side (the first is the baseline)
 *   ?compare=ID~ID~ID,ID~ID~ID    iterations: a side's traces joined by ~
 *   &ct0=<ns>&ct1=<ns>            the stacked timelines' window, ns from each trace's first event
 *   &align=EVENT                  the charts' times from each trace's first EVENT (else from its start)
 *
 * Kept apart from the single-trace view state (app/state/view_state.ts):
 * the two views share nothing but the library.
 */
import { useSyncExternalStore } from 'react';

export interface CompareRoute {
  sides: string[][];
  window: { t0: number; t1: number } | null;
  /** an ftrace event name (or system:name): the charts' 0 in each trace */
  align?: string | null;
}

import { TRACE_ID_RE as ID_RE } from '../../shared/contract/trace_id.ts';
const EVENT_RE = /^[A-Za-z0-9_]{1,64}(:[A-Za-z0-9_]{1,64})?$/;
export const isEventName = (s: string) => EVENT_RE.test(s);

export function compareFromSearch(search: string): CompareRoute | null {
  const p = new URLSearchParams(search);
  const text = p.get('compare');
  if (!text) return null;
  const sides = text
    .split(',')
    .map((s) => s.split('~').filter((id) => ID_RE.test(id)))
    .filter((s) => s.length > 0);
  if (sides.length < 2) return null;
  const t0 = Number(p.get('ct0'));
  const t1 = Number(p.get('ct1'));
  const window =
    p.has('ct0') && p.has('ct1') && Number.isFinite(t0) && Number.isFinite(t1) && t1 > t0 ? { t0, t1 } : null;
  const align = p.get('align');
  return { sides, window, align: align && EVENT_RE.test(align) ? align : null };
}

export function compareToSearch(r: CompareRoute): string {
  let s = `?compare=${r.sides.map((side) => side.join('~')).join(',')}`;
  if (r.window) s += `&ct0=${Math.floor(r.window.t0)}&ct1=${Math.ceil(r.window.t1)}`;
  if (r.align) s += `&align=${encodeURIComponent(r.align)}`;
  return s;
}

const listeners = new Set<() => void>();
let current: string = typeof location === 'undefined' ? '' : location.search;
let cached: CompareRoute | null = compareFromSearch(current);

function emit() {
  current = location.search;
  cached = compareFromSearch(current);
  for (const l of listeners) l();
}
if (typeof window !== 'undefined') window.addEventListener('popstate', emit);

export function useCompareRoute(): CompareRoute | null {
  return useSyncExternalStore(
    (cb) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    () => cached,
  );
}

/** Opens a comparison (a new history entry: Back returns to the library). */
export function openCompare(sides: string[][]): void {
  history.pushState(null, '', `${location.pathname}${compareToSearch({ sides, window: null })}`);
  emit();
}

/** The window moved: the address follows (replaced, debounced), so a copied link reopens the same view. */
let timer: ReturnType<typeof setTimeout> | null = null;
export function replaceCompareWindow(route: CompareRoute, window: { t0: number; t1: number } | null): void {
  if (timer) clearTimeout(timer);
  timer = setTimeout(() => {
    timer = null;
    history.replaceState(null, '', `${location.pathname}${compareToSearch({ ...route, window })}`);
  }, 150);
}

/** The charts align on another event (null: each trace's start); the address follows, as a new entry. */
export function setCompareAlign(route: CompareRoute, align: string | null): void {
  history.pushState(null, '', `${location.pathname}${compareToSearch({ ...route, align })}`);
  emit();
}

/** Makes side `i` the baseline (moved first; the others keep their order). The window and alignment stay. */
export function setCompareBaseline(route: CompareRoute, i: number): void {
  if (i <= 0 || i >= route.sides.length) return;
  const sides = [route.sides[i]!, ...route.sides.filter((_, j) => j !== i)];
  history.pushState(null, '', `${location.pathname}${compareToSearch({ ...route, sides })}`);
  emit();
}

export function leaveCompare(): void {
  history.pushState(null, '', location.pathname);
  emit();
}
