/**
 * Client state for notes, outside React like the view store: the open
 * trace's notes, the note editor, the shift+drag range selection, the toast
 * ("Link copied") and the link banner (what a stale or broken link could not
 * restore). React reads it with useNotes(); the timeline subscribes.
 */
import { useSyncExternalStore } from 'react';
import { ApiError } from '../api/client.ts';
import { notesApi } from './notes_api.ts';
import type { NewAnchor, Note, RangeSelection } from './types.ts';

export interface EditorState {
  mode: 'new' | 'edit';
  /** What the note is about, for the editor's title. */
  label: string;
  anchor?: NewAnchor;
  /** The note being edited, as it was when editing began (its version). */
  note?: Note;
  /** Someone else saved this note meanwhile: the server's current one. */
  conflict?: Note;
  /** The note was deleted meanwhile. */
  gone?: boolean;
  error?: string;
  busy?: boolean;
}

export interface Toast {
  id: number;
  kind: 'ok' | 'error';
  text: string;
  /** A link to show (and select) under the text. */
  link?: string;
  /** A button beside the text (e.g. download the annotations file). */
  action?: ToastAction;
}

export interface ToastAction {
  label: string;
  run(): void;
  testid?: string;
}

export interface NotesState {
  trace: string | null;
  notes: Note[];
  loaded: boolean;
  error: string | null;
  editor: EditorState | null;
  range: RangeSelection | null;
  toast: Toast | null;
  banner: string[];
}

const INITIAL: NotesState = {
  trace: null,
  notes: [],
  loaded: false,
  error: null,
  editor: null,
  range: null,
  toast: null,
  banner: [],
};

type Listener = (s: NotesState) => void;

class NotesModel {
  private state: NotesState = INITIAL;
  private readonly listeners = new Set<Listener>();
  private toastTimer: ReturnType<typeof setTimeout> | null = null;
  private toastId = 0;
  private loadSeq = 0;

  get(): NotesState {
    return this.state;
  }

  subscribe = (l: Listener): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };

  private set(patch: Partial<NotesState>): void {
    this.state = { ...this.state, ...patch };
    for (const l of this.listeners) l(this.state);
  }

  /** Loads (or reloads) a trace's notes. */
  async load(trace: string): Promise<Note[]> {
    const seq = ++this.loadSeq;
    if (this.state.trace !== trace)
      this.set({ trace, notes: [], loaded: false, error: null, editor: null, range: null });
    try {
      const notes = await notesApi.list(trace);
      if (seq === this.loadSeq && this.state.trace === trace)
        this.set({ notes: sortNotes(notes), loaded: true, error: null });
      return notes;
    } catch (e) {
      if (seq === this.loadSeq && this.state.trace === trace) this.set({ loaded: true, error: (e as Error).message });
      return this.state.notes;
    }
  }

  leave(): void {
    this.loadSeq++;
    this.set({ trace: null, notes: [], loaded: false, error: null, editor: null, range: null });
  }

  private upsert(note: Note): void {
    this.set({ notes: sortNotes([...this.state.notes.filter((n) => n.id !== note.id), note]) });
  }

  private drop(id: string): void {
    this.set({ notes: this.state.notes.filter((n) => n.id !== id) });
  }

  // ---- editor --------------------------------------------------------

  openNew(anchor: NewAnchor, label: string): void {
    this.set({ editor: { mode: 'new', anchor, label } });
  }

  openEdit(note: Note, label: string): void {
    this.set({ editor: { mode: 'edit', note, label } });
  }

  closeEditor(): void {
    this.set({ editor: null });
  }

  /** Saves the editor's text. Resolves with the saved note, or null (conflict, gone, error: shown in the editor). */
  async save(text: string, author: string, opts: { overwrite?: boolean } = {}): Promise<Note | null> {
    const ed = this.state.editor;
    const trace = this.state.trace;
    if (!ed || !trace) return null;
    this.set({ editor: { ...ed, busy: true, error: undefined } });
    try {
      let note: Note;
      if (ed.mode === 'new' || (ed.gone && opts.overwrite)) {
        const anchor = ed.anchor ?? anchorOf(ed.note!);
        note = await notesApi.create(trace, { anchor, text, author });
      } else {
        const version = opts.overwrite && ed.conflict ? ed.conflict.version : ed.note!.version;
        note = await notesApi.update(trace, ed.note!.id, { version, text });
      }
      this.upsert(note);
      // A range noted is done with: clear it (the note now marks it).
      this.set({
        editor: null,
        ...(ed.mode === 'new' && ed.anchor?.kind === 'range' && !ed.anchor.ref ? { range: null } : {}),
      });
      return note;
    } catch (e) {
      const err = e as ApiError;
      const cur = this.state.editor ?? ed;
      if (err.status === 409 && (err.body as { note?: Note } | null)?.note) {
        const theirs = (err.body as { note: Note }).note;
        this.upsert(theirs);
        this.set({ editor: { ...cur, busy: false, conflict: theirs } });
      } else if (err.status === 404 && ed.mode === 'edit') {
        this.drop(ed.note!.id);
        this.set({ editor: { ...cur, busy: false, gone: true } });
      } else {
        this.set({ editor: { ...cur, busy: false, error: err.message } });
      }
      return null;
    }
  }

  async remove(note: Note): Promise<boolean> {
    const trace = this.state.trace;
    if (!trace) return false;
    try {
      await notesApi.remove(trace, note.id, note.version);
      this.drop(note.id);
      return true;
    } catch (e) {
      const err = e as ApiError;
      if (err.status === 404) {
        this.drop(note.id);
        return true;
      }
      if (err.status === 409 && (err.body as { note?: Note } | null)?.note) {
        this.upsert((err.body as { note: Note }).note);
        this.toast(
          'error',
          `Not deleted: ${err.message}. Look at the new text, then delete again if you still want to.`,
        );
      } else {
        this.toast('error', `Could not delete the note: ${err.message}`);
      }
      return false;
    }
  }

  // ---- range, toast, banner ---------------------------------------------

  setRange(range: RangeSelection | null): void {
    this.set({ range });
  }

  toast(kind: Toast['kind'], text: string, link?: string, action?: ToastAction): void {
    if (this.toastTimer) clearTimeout(this.toastTimer);
    this.set({ toast: { id: ++this.toastId, kind, text, link, action } });
    this.toastTimer = setTimeout(() => this.set({ toast: null }), link || action ? 12_000 : 5_000);
  }

  closeToast(): void {
    this.set({ toast: null });
  }

  /** Adds messages to the link banner (duplicates once). */
  warn(messages: string[]): void {
    const next = [...this.state.banner];
    for (const m of messages) if (!next.includes(m)) next.push(m);
    if (next.length !== this.state.banner.length) this.set({ banner: next });
  }

  clearBanner(): void {
    this.set({ banner: [] });
  }
}

/** Notes in time order (then creation). */
export function sortNotes(notes: Note[]): Note[] {
  return [...notes].sort((a, b) => a.anchor.t0 - b.anchor.t0 || a.created_at.localeCompare(b.created_at));
}

export function anchorOf(n: Note): NewAnchor {
  const a = n.anchor;
  if (a.kind === 'finding') return { kind: 'finding', finding: a.finding, ...(a.track ? { track: a.track } : {}) };
  if (a.kind === 'event') return { kind: 'event', event: a.event, ...(a.track ? { track: a.track } : {}) };
  return {
    kind: 'range',
    t0: a.t0,
    t1: a.t1,
    ...(a.track ? { track: a.track } : {}),
    ...(a.ref ? { ref: a.ref } : {}),
  };
}

export const notesModel = new NotesModel();

export function useNotes<T>(select: (s: NotesState) => T): T {
  return useSyncExternalStore(
    (cb) => notesModel.subscribe(() => cb()),
    () => select(notesModel.get()),
  );
}

// ---- the author's name, asked once ----------------------------------------

const AUTHOR_KEY = 'stallscope.author';

export function savedAuthor(): string {
  try {
    return localStorage.getItem(AUTHOR_KEY) ?? '';
  } catch {
    return '';
  }
}

export function saveAuthor(name: string): void {
  try {
    localStorage.setItem(AUTHOR_KEY, name.trim().slice(0, 80));
  } catch {
    /* private mode: asked again next time */
  }
}
