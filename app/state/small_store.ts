/**
 * A minimal observable value for app features that keep state outside the
 * URL (the drawer's tab, query tracks, search steps): get / set / subscribe,
 * and a React hook that re-renders on the slice it reads.
 */
import { useSyncExternalStore } from 'react';

export interface SmallStore<T> {
  get(): T;
  set(patch: Partial<T> | ((s: T) => Partial<T>)): void;
  subscribe(l: (s: T) => void): () => void;
  use<U>(select: (s: T) => U): U;
}

export function smallStore<T extends object>(initial: T): SmallStore<T> {
  let state = initial;
  const listeners = new Set<(s: T) => void>();
  const store: SmallStore<T> = {
    get: () => state,
    set(patch) {
      const p = typeof patch === 'function' ? patch(state) : patch;
      state = { ...state, ...p };
      for (const l of listeners) l(state);
    },
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    use<U>(select: (s: T) => U): U {
      return useSyncExternalStore(store.subscribe, () => select(state));
    },
  };
  return store;
}
