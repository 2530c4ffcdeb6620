/**
 * The fleet view's address: `?fleet=NAME[&by=LABEL][&baseline=VALUE]`, NAME
 * one of the datasets the server was started with (serve --fleet DIR). It
 * survives a reload; Back returns to the library.
 */
import { useSyncExternalStore } from 'react';

export interface FleetRoute {
  name: string;
  by: string | null;
  baseline: string | null;
}

const NAME_RE = /^[A-Za-z0-9._-]{1,200}$/;

export function fleetFromSearch(search: string): FleetRoute | null {
  const p = new URLSearchParams(search);
  const name = p.get('fleet');
  if (!name || !NAME_RE.test(name)) return null;
  return { name, by: p.get('by') || null, baseline: p.get('baseline') || null };
}

export function fleetToSearch(r: FleetRoute): string {
  const p = new URLSearchParams({ fleet: r.name });
  if (r.by) p.set('by', r.by);
  if (r.baseline) p.set('baseline', r.baseline);
  return `?${p.toString()}`;
}

const listeners = new Set<() => void>();
let current = typeof location === 'undefined' ? '' : location.search;
let cached = fleetFromSearch(current);
function emit() {
  if (location.search === current) return;
  current = location.search;
  cached = fleetFromSearch(current);
  for (const l of listeners) l();
}
if (typeof window !== 'undefined') window.addEventListener('popstate', emit);

export function useFleetRoute(): FleetRoute | null {
  return useSyncExternalStore(
    (cb) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    () => cached,
  );
}

/** Opens a fleet dataset, or another label / baseline of it (a new history entry). */
export function openFleet(r: FleetRoute): void {
  history.pushState(null, '', `${location.pathname}${fleetToSearch(r)}`);
  emit();
}
