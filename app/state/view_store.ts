/**
 * The one view-state store: React reads it with useView(), the timeline
 * subscribes directly (no re-render per frame), and every change is mirrored
 * to the URL: replaceState for the moving window (throttled), pushState when
 * the trace or the selection changes, so Back goes to the previous one.
 * The URL's fragment is left as it is: a share link's notes travel there
 * (app/links/link_state.ts removes it once they are decided on).
 */
import { useSyncExternalStore } from 'react';
import { EMPTY_VIEW, viewFromSearch, viewToSearch, type ViewState } from './view_state.ts';

type Listener = (v: ViewState, prev: ViewState) => void;

export class ViewStore {
  private state: ViewState;
  private readonly listeners = new Set<Listener>();
  private urlTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(initial: ViewState = EMPTY_VIEW) {
    this.state = initial;
  }

  get(): ViewState {
    return this.state;
  }

  subscribe = (l: Listener): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };

  update(patch: Partial<ViewState>, opts: { history?: 'push' | 'replace' } = {}): void {
    const prev = this.state;
    const next = { ...prev, ...patch };
    if (viewToSearch(next) === viewToSearch(prev) && next.sel === prev.sel) return;
    this.state = next;
    for (const l of this.listeners) l(next, prev);
    const push =
      opts.history === 'push' ||
      next.trace !== prev.trace ||
      next.sel?.kind !== prev.sel?.kind ||
      next.sel?.id !== prev.sel?.id;
    this.syncUrl(push && opts.history !== 'replace');
  }

  private syncUrl(push: boolean): void {
    if (typeof history === 'undefined') return;
    const write = () => {
      this.urlTimer = null;
      const url = `${location.pathname}${viewToSearch(this.state)}${location.hash}`;
      if (url !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(null, '', url);
    };
    if (push) {
      if (this.urlTimer) clearTimeout(this.urlTimer);
      this.urlTimer = null;
      const url = `${location.pathname}${viewToSearch(this.state)}${location.hash}`;
      if (url !== `${location.pathname}${location.search}${location.hash}`) history.pushState(null, '', url);
    } else {
      // Debounced: a moving window rewrites the URL once it settles (replaceState costs a few ms:
      // doing it during a zoom or pan costs frames).
      if (this.urlTimer) clearTimeout(this.urlTimer);
      this.urlTimer = setTimeout(write, 150);
    }
  }

  /** Back/forward: take the state from the URL. */
  fromUrl(): void {
    const prev = this.state;
    this.state = viewFromSearch(location.search);
    for (const l of this.listeners) l(this.state, prev);
  }
}

export const viewStore = new ViewStore(typeof location === 'undefined' ? EMPTY_VIEW : viewFromSearch(location.search));
if (typeof window !== 'undefined') window.addEventListener('popstate', () => viewStore.fromUrl());

export function useView<T>(select: (v: ViewState) => T): T {
  return useSyncExternalStore(
    (cb) => viewStore.subscribe(() => cb()),
    () => select(viewStore.get()),
  );
}
