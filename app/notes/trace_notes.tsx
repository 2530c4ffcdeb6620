/**
 * Notes and sharing for one open trace: what the trace view wires in.
 *
 * useTraceNotes() loads the notes (and re-loads them when the tab comes
 * back, to show colleagues' notes), checks a share link's focused note,
 * and returns the actions behind the buttons and keys:
 *   N  add a note to the selected range, finding, event or slice
 *   L  copy a share link to the current view (with the notes in focus in its fragment)
 *   T  copy the selection as text (trace-cmd lines, values, notes, link)
 *
 * A share link's own notes (app/links/link_state.ts) are shown with the
 * local ones, marked as coming from the link, until they are kept or
 * dismissed.
 */
import { useCallback, useEffect, useMemo, useRef } from 'react';
import { api, ApiError } from '../api/client.ts';
import type { Finding, TraceRecord } from '../api/types.ts';
import { describeImport, downloadAnnotations, importAnnotations } from '../links/annotations_io.ts';
import { linkModel, pendingIn, useLink, type LinkState } from '../links/link_state.ts';
import { makeShareLink, notesInFocus } from '../links/make_link.ts';
import { useView, viewStore } from '../state/view_store.ts';
import { uriToParam, type Selection } from '../state/view_state.ts';
import { formatDuration } from '../time_axis/time_format.ts';
import type { NoteMark, RangeMark } from '../renderers/notes_overlay.ts';
import { reconcileNote, selectionForNote } from './link_check.ts';
import { plainPreview } from './markdown.tsx';
import { notesApi } from './notes_api.ts';
import { notesModel, useNotes } from './notes_model.ts';
import { NoteCard } from './notes_ui.tsx';
import { copyLink, copyText } from './share.ts';
import type { NewAnchor, Note } from './types.ts';

const ROW_TABLE = { sched: 'sched_slice', state: 'thread_state', slice: 'slice' } as const;

function selKey(s: Selection | null): string | null {
  return s ? `${s.kind}:${s.id}` : null;
}

/** Is this note attached to that selection? */
export function noteOnSelection(n: Note, s: Selection | null): boolean {
  if (!s) return false;
  return selKey(selectionForNote(n)) === selKey(s);
}

/** The notes of a share link (link state `link`) on `trace` that are not among `local` (by id), as notes of the trace. */
function linkNotesFor(trace: string, local: Note[], link: LinkState): Note[] {
  const p = pendingIn(link, trace);
  if (!p) return [];
  const have = new Set(local.map((n) => n.id));
  return p.notes.filter((n) => !have.has(n.id)).map((n) => ({ ...n, trace }));
}

export function useTraceNotes(traceId: string, findings: Finding[], record: TraceRecord) {
  const byIndex = useMemo(() => new Map(findings.map((f) => [f.index, f])), [findings]);
  const local = useNotes((s) => s.notes);
  const link = useLink((s) => s);
  const linkNotes = useMemo(() => linkNotesFor(traceId, local, link), [traceId, local, link]);
  const linkIds = useMemo(() => new Set(linkNotes.map((n) => n.id)), [linkNotes]);
  /** Local notes and the link's, for the timeline, the selection and the link checks. */
  const notes = useMemo(() => (linkNotes.length ? [...local, ...linkNotes] : local), [local, linkNotes]);
  const notesRef = useRef(notes);
  notesRef.current = notes;
  const range = useNotes((s) => s.range);
  const focused = useView((v) => v.note);
  /** The track of the last click on the timeline (event notes are drawn there). */
  const lastTrack = useRef<string | null>(null);

  // Load; check the link's note; reload when the tab is shown again.
  useEffect(() => {
    let live = true;
    void Promise.all([notesModel.load(traceId), linkModel.ready()]).then(([list]) => {
      if (!live || !notesModel.get().loaded) return;
      if (notesModel.get().error) return;
      const { patch, problems } = reconcileNote(viewStore.get(), [
        ...list,
        ...linkNotesFor(traceId, list, linkModel.get()),
      ]);
      if (Object.keys(patch).length) viewStore.update(patch, { history: 'replace' });
      notesModel.warn(problems);
    });
    const onVisible = () => {
      if (document.visibilityState === 'visible') void notesModel.load(traceId);
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      live = false;
      document.removeEventListener('visibilitychange', onVisible);
      notesModel.leave();
    };
  }, [traceId]);

  const labelFor = useCallback(
    (n: Note): string => {
      const a = n.anchor;
      if (a.kind === 'finding') {
        const f = byIndex.get(a.finding);
        return f ? `Finding ${a.finding}: ${plainPreview(f.title, 70)}` : `Finding ${a.finding}`;
      }
      if (a.kind === 'event') return `Event ${a.event} at ${formatDuration(a.t0, 6)}${a.track ? ` on ${a.track}` : ''}`;
      const what = a.ref ? `${a.ref.replace(':', ' ')}, ` : '';
      return `${what}${formatDuration(a.t0, 6)} + ${formatDuration(a.t1 - a.t0)}${a.track ? ` on ${a.track}` : ' (all tracks)'}`;
    },
    [byIndex],
  );

  const marks: NoteMark[] = useMemo(
    () =>
      notes.map((n) => ({
        id: n.id,
        t0: n.anchor.t0,
        t1: n.anchor.t1,
        track: n.anchor.kind === 'finding' ? null : (n.anchor.track ?? null),
        tip: `${linkIds.has(n.id) ? '(from the link) ' : ''}${n.author}: ${plainPreview(n.text, 300)}`,
      })),
    [notes, linkIds],
  );

  const focusNote = useCallback((n: Note) => {
    const v = viewStore.get();
    const patch: Parameters<typeof viewStore.update>[0] = { note: n.id, sel: selectionForNote(n) };
    const { t0, t1 } = n.anchor;
    if (v.t0 === null || v.t1 === null || t0 < v.t0 || t1 > v.t1 || v.t1 - v.t0 > Math.max(t1 - t0, 100_000) * 50) {
      const pad = Math.max((t1 - t0) * 0.35, 50_000);
      patch.t0 = Math.floor(t0 - pad);
      patch.t1 = Math.ceil(t1 + pad);
    }
    viewStore.update(patch, { history: 'push' });
  }, []);

  const focusNoteId = useCallback(
    (id: string) => {
      const n = notesRef.current.find((x) => x.id === id);
      if (n) focusNote(n);
    },
    [focusNote],
  );

  const exportAnnotations = useCallback(() => {
    downloadAnnotations(traceId).then(
      (name) =>
        notesModel.toast(
          'ok',
          `Downloaded ${name}: send it with the trace; stallscope imports it with "Import notes".`,
        ),
      (e: Error) => notesModel.toast('error', `Could not export the notes: ${e.message}`),
    );
  }, [traceId]);

  /** Copies a link to view `v`, carrying the notes in focus; says when some did not fit. */
  const copyViewLink = useCallback(
    async (v: ReturnType<typeof viewStore.get>) => {
      const carried = notesInFocus(v, notesRef.current, (n) => noteOnSelection(n, v.sel));
      let made;
      try {
        made = await makeShareLink(v, record, carried);
      } catch (e) {
        notesModel.toast('error', `Could not make the link: ${(e as Error).message}`);
        return;
      }
      const w = window as Window & { __stallscopeLink?: typeof made };
      w.__stallscopeLink = made;
      if (!made.omitted) {
        await copyLink(made.url);
        return;
      }
      const ok = await copyText(made.url);
      notesModel.toast(
        'error',
        `${ok ? 'Link copied' : 'Could not copy: select the link below'}, without ${made.omitted} of its ${carried.length} note${carried.length === 1 ? '' : 's'}: ` +
          'they would make the link longer than 8 KB. Send the notes file with it.',
        made.url,
        { label: 'Download notes file', run: exportAnnotations, testid: 'toast-download-annotations' },
      );
    },
    [record, exportAnnotations],
  );

  const copyCurrentLink = useCallback(() => void copyViewLink(viewStore.get()), [copyViewLink]);

  const copyNoteLink = useCallback(
    (n: Note) => {
      const v = viewStore.get();
      const pad = Math.max((n.anchor.t1 - n.anchor.t0) * 0.35, 50_000);
      const inView = v.t0 !== null && v.t1 !== null && n.anchor.t0 >= v.t0 && n.anchor.t1 <= v.t1;
      void copyViewLink({
        ...v,
        note: n.id,
        sel: selectionForNote(n),
        ...(inView ? {} : { t0: Math.floor(n.anchor.t0 - pad), t1: Math.ceil(n.anchor.t1 + pad) }),
      });
    },
    [copyViewLink],
  );

  const keepLinkNotes = useCallback(async () => {
    try {
      const answer = await linkModel.keep(traceId);
      await notesModel.load(traceId);
      notesModel.toast('ok', `Kept the link's notes: ${describeImport(answer, 'the link')}`);
    } catch (e) {
      notesModel.toast('error', `Could not keep the link's notes: ${(e as Error).message}`);
    }
  }, [traceId]);

  const dismissLinkNotes = useCallback(() => linkModel.dismiss(), []);

  const importNotesFile = useCallback(
    async (file: File) => {
      try {
        const answer = await importAnnotations(traceId, record.name, file);
        await notesModel.load(traceId);
        notesModel.toast(
          answer.added || answer.existing ? 'ok' : 'error',
          `Imported ${file.name}: ${describeImport(answer, 'the file')}`,
        );
      } catch (e) {
        notesModel.toast('error', `Could not import notes: ${(e as Error).message}`);
      }
    },
    [traceId, record.name],
  );

  /** The anchor and label for what is selected now (a range first), or null. */
  const currentTarget = useCallback(async (): Promise<{ anchor: NewAnchor; label: string } | null> => {
    const r = notesModel.get().range;
    if (r) {
      return {
        anchor: {
          kind: 'range',
          t0: Math.max(0, Math.floor(r.t0)),
          t1: Math.max(0, Math.ceil(r.t1)),
          ...(r.track ? { track: r.track } : {}),
        },
        label: `${formatDuration(r.t0, 6)} + ${formatDuration(r.t1 - r.t0)}${r.track ? ` on ${r.track}` : ' (all tracks)'}`,
      };
    }
    const sel = viewStore.get().sel;
    if (!sel) return null;
    if (sel.kind === 'finding') {
      const f = byIndex.get(sel.id);
      return f
        ? { anchor: { kind: 'finding', finding: f.index }, label: `finding ${f.index}: ${plainPreview(f.title, 60)}` }
        : null;
    }
    if (sel.kind === 'event') {
      return {
        anchor: { kind: 'event', event: sel.id, ...(lastTrack.current ? { track: lastTrack.current } : {}) },
        label: `event ${sel.id}`,
      };
    }
    const row = await api.row(traceId, ROW_TABLE[sel.kind], sel.id);
    const ts = Number(row.row.ts);
    const dur = Math.max(0, Number(row.row.dur));
    return {
      anchor: {
        kind: 'range',
        t0: Math.max(0, ts),
        t1: Math.max(0, ts + dur),
        ref: `${sel.kind}:${sel.id}`,
        ...(lastTrack.current ? { track: lastTrack.current } : {}),
      },
      label: `${row.table} ${sel.id}`,
    };
  }, [byIndex, traceId]);

  const addNote = useCallback(async () => {
    if (notesModel.get().editor) {
      // A note is being written: keep its draft.
      document.querySelector<HTMLTextAreaElement>('[data-testid="note-text"]')?.focus();
      return;
    }
    try {
      const t = await currentTarget();
      if (!t) {
        notesModel.toast(
          'error',
          'Select a finding, an event or a slice, or shift+drag a time range first, then add a note.',
        );
        return;
      }
      notesModel.openNew(t.anchor, t.label);
    } catch (e) {
      notesModel.toast('error', `Cannot add a note here: ${(e as Error).message}`);
    }
  }, [currentTarget]);

  const copyAsText = useCallback(async () => {
    const v = viewStore.get();
    const r = notesModel.get().range;
    const params: Record<string, string> = {};
    if (r) {
      params.t0 = String(Math.max(0, Math.floor(r.t0)));
      params.t1 = String(Math.max(1, Math.ceil(r.t1)));
      if (r.track) params.track = uriToParam(r.track);
    } else if (v.sel) {
      params.sel = `${v.sel.kind}:${v.sel.id}`;
      if (v.t0 !== null && v.t1 !== null && v.t0 >= 0) {
        params.t0 = String(Math.floor(v.t0));
        params.t1 = String(Math.ceil(v.t1));
      }
      const n = v.note ? notesModel.get().notes.find((x) => x.id === v.note) : null;
      if (n && noteOnSelection(n, v.sel)) params.note = n.id;
    } else {
      notesModel.toast('error', 'Select a finding, an event or a slice, or shift+drag a time range first.');
      return;
    }
    if (v.pinned.length) params.pin = v.pinned.map(uriToParam).join(',');
    if (v.hidden.length) params.hide = v.hidden.map(uriToParam).join(',');
    try {
      const text = await notesApi.excerpt(traceId, params);
      const ok = await copyText(text);
      const lines = text.split('\n').length;
      if (ok) notesModel.toast('ok', `Copied as text (${lines} lines): trace lines, values, notes and the link`);
      else notesModel.toast('error', 'Could not copy: the clipboard was refused');
      const w = window as Window & { __stallscopeCopied?: string };
      w.__stallscopeCopied = text;
    } catch (e) {
      notesModel.toast('error', `Could not make the text: ${(e as ApiError).message}`);
    }
  }, [traceId]);

  const exportFile = useCallback(
    (kind: 'json' | 'md') => {
      notesApi.download(traceId, kind).catch((e: Error) => notesModel.toast('error', `Export failed: ${e.message}`));
    },
    [traceId],
  );

  const onRange = useCallback((r: RangeMark | null) => notesModel.setRange(r), []);

  return {
    traceId,
    notes,
    local,
    linkNotes,
    linkIds,
    link,
    marks,
    range,
    focused,
    lastTrack,
    labelFor,
    focusNote,
    focusNoteId,
    copyCurrentLink,
    copyNoteLink,
    addNote,
    copyAsText,
    exportFile,
    onRange,
    exportAnnotations,
    importNotesFile,
    keepLinkNotes,
    dismissLinkNotes,
  };
}

export type TraceNotes = ReturnType<typeof useTraceNotes>;

/** The selection's notes and actions, under its fields in the details panel. */
export function SelectionNotes({ tn, sel }: { tn: TraceNotes; sel: Selection }) {
  const mine = tn.notes.filter((n) => noteOnSelection(n, sel));
  return (
    <div className="selection-notes" data-testid="selection-notes">
      <div className="selection-actions">
        <button onClick={() => void tn.addNote()} data-testid="add-note" title="Add a note (N)">
          Add note
        </button>
        <button onClick={() => void tn.copyAsText()} data-testid="copy-text" title="Copy as text for an email (T)">
          Copy as text
        </button>
        <button onClick={tn.copyCurrentLink} title="Copy a link to this view (L)">
          Copy link
        </button>
      </div>
      {mine.map((n) => (
        <NoteCard
          key={n.id}
          note={n}
          label={tn.labelFor(n)}
          focused={n.id === tn.focused}
          compact
          fromLink={tn.linkIds.has(n.id)}
          onFocus={tn.focusNote}
          onCopyLink={tn.copyNoteLink}
        />
      ))}
    </div>
  );
}

/** The shift+drag range: what it is and what to do with it. */
export function RangeBar({ tn }: { tn: TraceNotes }) {
  const r = tn.range;
  if (!r) return null;
  return (
    <div className="range-bar" data-testid="range-bar">
      <span>
        Range <b>{formatDuration(r.t1 - r.t0)}</b> from {formatDuration(r.t0, 6)}{' '}
        {r.track ? (
          <>
            on <b>{r.track}</b>
          </>
        ) : (
          '(all tracks)'
        )}
      </span>
      <button onClick={() => void tn.addNote()} data-testid="range-add-note">
        Add note (N)
      </button>
      <button onClick={() => void tn.copyAsText()} data-testid="range-copy-text">
        Copy as text (T)
      </button>
      <button onClick={() => viewStore.update({ t0: r.t0, t1: Math.max(r.t1, r.t0 + 1000) }, { history: 'push' })}>
        Zoom to range
      </button>
      <button className="icon close" onClick={() => notesModel.setRange(null)} aria-label="clear range">
        ×
      </button>
    </div>
  );
}
