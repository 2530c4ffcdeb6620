/**
 * The notes and trace facts a share link carries in its fragment
 * (shared/links/link_codec.ts), read once when the page opens.
 *
 * The link's notes are shown beside the local ones, marked as coming from
 * the link, until the user keeps them (POST .../annotations: they become
 * local notes with their original ids, authors and times) or dismisses
 * them. The fragment stays in the address bar while that is undecided (a
 * reload shows them again) and is removed once it is decided, or when the
 * user opens another trace.
 *
 * Nothing here trusts the fragment: it is decoded with bounds and checked
 * field by field by the codec, its notes are rendered like any note
 * (Markdown without HTML, http(s) links only), and its trace facts are only
 * displayed; the server is never asked to read a path or fetch a URL.
 */
import { useSyncExternalStore } from 'react';
import { decodeLinkFragment, type LinkPayload } from '../../shared/links/link_codec.ts';
import { annotationsDocument } from '../../shared/links/annotations_file.ts';
import { requestJson } from '../api/client.ts';
import { viewStore } from '../state/view_store.ts';
import type { Note } from '../../shared/contract/notes.ts';

export interface ImportAnswer {
  added: number;
  existing: number;
  reanchored: Array<{ id: string; reason: string }>;
  skipped: Array<{ id: string; reason: string }>;
  notes: Note[];
}

export interface LinkState {
  /** reading: decoding the fragment; ok: payload; error: the fragment could not be used (message). */
  status: 'none' | 'reading' | 'ok' | 'error';
  payload: LinkPayload | null;
  /** The trace the page was opened on (the link's `?trace=`). */
  trace: string | null;
  error: string | null;
  /** The user kept the link's notes (they are local now) or dismissed them. */
  decided: 'kept' | 'dismissed' | null;
  busy: boolean;
}

type Listener = (s: LinkState) => void;

class LinkModel {
  private state: LinkState = { status: 'none', payload: null, trace: null, error: null, decided: null, busy: false };
  private readonly listeners = new Set<Listener>();
  private done: Promise<void> = Promise.resolve();

  get(): LinkState {
    return this.state;
  }

  subscribe = (l: Listener): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };

  private set(patch: Partial<LinkState>): void {
    this.state = { ...this.state, ...patch };
    for (const l of this.listeners) l(this.state);
  }

  /** Starts reading a page's fragment for the trace it opened on; `onProblem` gets what could not be used. */
  read(hash: string, trace: string | null, onProblem: (message: string) => void): void {
    if (!hash || hash === '#') return;
    this.set({ status: 'reading', trace });
    this.done = decodeLinkFragment(hash).then((r) => {
      if (r.kind === 'none') {
        this.set({ status: 'none' });
      } else if (r.kind === 'error') {
        this.set({ status: 'error', error: r.message });
        this.forgetFragment();
        onProblem(r.message);
      } else if (trace && r.payload.trace.sha256 !== trace) {
        const message = `The notes in this link are for another trace (${r.payload.trace.name}, sha256 ${r.payload.trace.sha256.slice(0, 12)}…) than its view (${trace.slice(0, 12)}…): was the link edited? The view is shown without them.`;
        this.set({ status: 'error', error: message });
        this.forgetFragment();
        onProblem(message);
      } else {
        this.set({ status: 'ok', payload: r.payload });
      }
    });
  }

  /** Resolves when the fragment has been read (at once when there is none). */
  ready(): Promise<void> {
    return this.done;
  }

  /** The link's payload when it belongs to `trace` and is still undecided. */
  pendingFor(trace: string): LinkPayload | null {
    return pendingIn(this.state, trace);
  }

  /** The trace facts the link gives for `trace`, whether or not its notes were decided on. */
  factsFor(trace: string): LinkPayload['trace'] | null {
    const s = this.state;
    return s.status === 'ok' && s.payload && s.payload.trace.sha256 === trace ? s.payload.trace : null;
  }

  /** Adds the link's notes to this server's notes (merged by id: notes already here stay as they are). */
  async keep(trace: string): Promise<ImportAnswer> {
    const p = this.pendingFor(trace);
    if (!p) throw new Error('this link has no notes to keep');
    this.set({ busy: true });
    try {
      const answer = await requestJson<ImportAnswer>(
        'POST',
        `/api/traces/${encodeURIComponent(trace)}/annotations`,
        annotationsDocument(p.trace, p.notes),
      );
      this.set({ decided: 'kept', busy: false });
      this.forgetFragment();
      return answer;
    } catch (e) {
      this.set({ busy: false });
      throw e;
    }
  }

  dismiss(): void {
    this.set({ decided: 'dismissed' });
    this.forgetFragment();
  }

  /** Takes the fragment out of the address bar (the view's query stays). */
  forgetFragment(): void {
    if (typeof location === 'undefined' || !location.hash) return;
    history.replaceState(history.state, '', `${location.pathname}${location.search}`);
  }
}

export const linkModel = new LinkModel();

/** In link state `s`: the link's payload when it is on `trace` and its notes are not yet kept or dismissed. */
export function pendingIn(s: LinkState, trace: string): LinkPayload | null {
  return s.status === 'ok' && s.payload && s.payload.trace.sha256 === trace && s.decided === null ? s.payload : null;
}

// Opening another trace leaves the link behind: its fragment does not follow.
viewStore.subscribe((v, prev) => {
  const s = linkModel.get();
  if (v.trace !== prev.trace && s.trace && v.trace !== s.trace) linkModel.forgetFragment();
});

export function useLink<T>(select: (s: LinkState) => T): T {
  return useSyncExternalStore(
    (cb) => linkModel.subscribe(() => cb()),
    () => select(linkModel.get()),
  );
}
