/**
 * What a share link could not restore, in words, and the nearest sensible
 * view. Hand-edited, stale and tampered links open with a banner naming each
 * problem, never a blank page:
 *
 * - searchProblems: the URL's own syntax (bad trace id, t0 >= t1, garbage selection, unknown track names, bad note id);
 * - reconcileView: against the opened trace (window outside it, finding that does not exist, tracks it does not have);
 * - reconcileNote: against its notes (the note was deleted).
 */
import { MIN_WINDOW_NS, clampWindow } from '../time_axis/time_scale.ts';
import { formatDuration } from '../time_axis/time_format.ts';
import { NOTE_ID_RE, parseSelection, uriFromParam, type Selection, type ViewState } from '../state/view_state.ts';
import type { Note } from './types.ts';

const URI_RE = /^[a-z_]+#[\w.:/-]{1,80}$/;

function show(v: string): string {
  const s = v.length > 40 ? `${v.slice(0, 40)}…` : v;
  return JSON.stringify(s);
}

/** Problems with the link's parameters themselves (viewFromSearch drops what these describe). */
export function searchProblems(search: string): string[] {
  const p = new URLSearchParams(search);
  const out: string[] = [];
  const trace = p.get('trace');
  if (trace !== null && !/^[0-9a-f]{8,128}$/.test(trace)) {
    out.push(`The link's trace id ${show(trace)} is not a trace content hash (64 hex digits): showing the library.`);
  }
  const t0 = p.get('t0');
  const t1 = p.get('t1');
  if (t0 !== null || t1 !== null) {
    const int = (v: string | null) => v !== null && /^-?\d{1,18}$/.test(v);
    if (!int(t0) || !int(t1))
      out.push(
        `The link's time window (t0=${show(t0 ?? '')}, t1=${show(t1 ?? '')}) is not two integers (ns from the trace start): showing the default view.`,
      );
    else if (Number(t1) <= Number(t0))
      out.push(`The link's time window ends before it starts (t0=${t0} > t1=${t1}): showing the default view.`);
  }
  const sel = p.get('sel');
  if (sel && !parseSelection(sel))
    out.push(
      `The link's selection ${show(sel)} is not understood (finding:<n>, event:<id>, slice:<id>): nothing selected.`,
    );
  const bad: string[] = [];
  for (const key of ['pin', 'hide', 'fold']) {
    for (const u of (p.get(key) ?? '').split(',')) if (u && !URI_RE.test(uriFromParam(u))) bad.push(u);
  }
  if (bad.length) out.push(`Ignored malformed track names in the link: ${bad.slice(0, 5).map(show).join(', ')}.`);
  const note = p.get('note');
  if (note !== null && !NOTE_ID_RE.test(note))
    out.push(`The link's note id ${show(note)} is malformed: no note in focus.`);
  return out;
}

export interface TraceFacts {
  /** ns from the trace start of its first / last event (the timeline's bounds). */
  start: number;
  end: number;
  findings: number;
  /** Whether the trace has a finding of this id (ids are stable hashes, not positions); default: 0 <= id < findings. */
  hasFinding?(id: number): boolean;
  /** Every track and arrow uri of the trace (null: do not check tracks yet). */
  uris: Set<string> | null;
  /** The window a selected finding opens with. */
  findingWindow?(index: number): { t0: number; t1: number } | null;
}

/** Checks a view against the opened trace: the nearest sensible view and what was changed. */
export function reconcileView(v: ViewState, f: TraceFacts): { patch: Partial<ViewState>; problems: string[] } {
  const patch: Partial<ViewState> = {};
  const problems: string[] = [];
  let sel: Selection | null = v.sel;
  if (sel?.kind === 'finding' && !(f.hasFinding ? f.hasFinding(sel.id) : sel.id >= 0 && sel.id < f.findings)) {
    problems.push(
      `Finding ${sel.id} of the link does not exist in this trace (it has ${f.findings} finding${f.findings === 1 ? '' : 's'}): nothing selected.`,
    );
    sel = null;
    patch.sel = null;
  }
  if (v.t0 !== null && v.t1 !== null) {
    const bounds = { t0: f.start, t1: Math.max(f.end, f.start + MIN_WINDOW_NS) };
    const full = bounds.t1 - bounds.t0;
    const span = v.t1 - v.t0;
    const c = clampWindow({ t0: v.t0, t1: v.t1 }, bounds);
    const reachable = span >= MIN_WINDOW_NS && span <= full * 1.2 + MIN_WINDOW_NS && Math.abs(c.t0 - v.t0) < 1;
    if (!reachable) {
      const was = `${formatDuration(v.t0)} – ${formatDuration(v.t1)}`;
      const lo = Math.max(v.t0, bounds.t0);
      const hi = Math.min(v.t1, bounds.t1);
      if (hi - lo >= MIN_WINDOW_NS) {
        patch.t0 = Math.floor(lo);
        patch.t1 = Math.ceil(hi);
        problems.push(
          `The link's time window (${was}) reaches outside this trace (0 – ${formatDuration(full)}): showing the part inside it.`,
        );
      } else if (span < MIN_WINDOW_NS && v.t0 >= bounds.t0 && v.t1 <= bounds.t1) {
        const mid = (v.t0 + v.t1) / 2;
        patch.t0 = Math.floor(mid - MIN_WINDOW_NS / 2);
        patch.t1 = Math.ceil(mid + MIN_WINDOW_NS / 2);
        problems.push(`The link's time window (${was}) is narrower than 1 us: widened to 1 us.`);
      } else {
        const w = sel?.kind === 'finding' ? (f.findingWindow?.(sel.id) ?? null) : null;
        patch.t0 = Math.floor(w?.t0 ?? bounds.t0);
        patch.t1 = Math.ceil(w?.t1 ?? bounds.t1);
        problems.push(
          `The link's time window (${was}) is outside this trace (0 – ${formatDuration(full)}): showing ${w ? 'the selected finding' : 'the whole trace'}.`,
        );
      }
    }
  }
  if (!f.uris) return { patch, problems };
  const uris = f.uris;
  const unknown: string[] = [];
  const keep = (list: string[]) =>
    list.filter((u) => {
      const ok = uris.has(u) || u.startsWith('group#');
      if (!ok) unknown.push(u);
      return ok;
    });
  const pinned = keep(v.pinned);
  const hidden = keep(v.hidden);
  const collapsed = keep(v.collapsed);
  if (unknown.length) {
    patch.pinned = pinned;
    patch.hidden = hidden;
    patch.collapsed = collapsed;
    problems.push(
      `This trace has no track${unknown.length > 1 ? 's' : ''} ${unknown
        .slice(0, 5)
        .map((u) => show(u))
        .join(', ')}: ignored.`,
    );
  }
  return { patch, problems };
}

/** Selection that shows a note's anchor. */
export function selectionForNote(n: Note): Selection | null {
  const a = n.anchor;
  if (a.kind === 'finding') return { kind: 'finding', id: a.finding };
  if (a.kind === 'event') return { kind: 'event', id: a.event };
  return a.ref ? parseSelection(a.ref) : null;
}

/** The focused note against the trace's notes: dropped with a message when it is gone. */
export function reconcileNote(v: ViewState, notes: Note[]): { patch: Partial<ViewState>; problems: string[] } {
  if (!v.note) return { patch: {}, problems: [] };
  const n = notes.find((x) => x.id === v.note);
  if (!n) {
    return {
      patch: { note: null },
      problems: [
        'The note this link points to has been deleted (or never existed on this server): showing the rest of the view.',
      ],
    };
  }
  const patch: Partial<ViewState> = {};
  if (v.t0 === null || v.t1 === null) {
    const dur = Math.max(0, n.anchor.t1 - n.anchor.t0);
    const pad = Math.max(dur * 0.35, 50_000);
    patch.t0 = Math.floor(n.anchor.t0 - pad);
    patch.t1 = Math.ceil(n.anchor.t1 + pad);
  }
  if (!v.sel) {
    const sel = selectionForNote(n);
    if (sel) patch.sel = sel;
  }
  return { patch, problems: [] };
}
