/**
 * Share links that carry their notes: the view in the query (as always), the
 * trace's facts and the notes in focus in the fragment
 * (shared/links/link_codec.ts). A reviewer whose stallscope has never seen
 * the notes (or the trace) gets them from the link itself.
 */
import { buildShareLink } from '../../shared/links/link_codec.ts';
import { toPortable, traceFactsOf } from '../../shared/links/portable_notes.ts';
import type { TraceRecord } from '../api/types.ts';
import { viewToSearch, type ViewState } from '../state/view_state.ts';
import type { Note } from '../../shared/contract/notes.ts';
import { shareOrigin } from '../desktop/desktop_bridge.ts';

export interface MadeLink {
  url: string;
  /** Notes in the link. */
  included: number;
  /** Notes in focus left out: the link would have passed 8 KB. */
  omitted: number;
}

/** The link to view `v` of the trace `record`, carrying `notes` (the one in focus first) as far as they fit. */
export function makeShareLink(v: ViewState, record: TraceRecord, notes: Note[]): Promise<MadeLink> {
  // In the desktop window: the team server's URL, or stallscope://open (never the window's own port).
  const base = `${shareOrigin()}/${viewToSearch(v)}`;
  return buildShareLink(base, traceFactsOf(record), notes.map(toPortable));
}

/**
 * The notes a link to view `v` carries: the note in focus, then the other
 * notes on the selection. Each note once.
 */
export function notesInFocus(v: ViewState, notes: Note[], onSelection: (n: Note) => boolean): Note[] {
  const out: Note[] = [];
  const focused = v.note ? notes.find((n) => n.id === v.note) : undefined;
  if (focused) out.push(focused);
  for (const n of notes) if (n !== focused && onSelection(n)) out.push(n);
  return out;
}
