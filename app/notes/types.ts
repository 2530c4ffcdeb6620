/** Notes as the API gives them (server/notes/notes_store.ts). Times are ns from the trace start. */
export type { Note, NoteAnchor } from '../../shared/contract/notes.ts';

/** What the client sends: the server fills in t0/t1 of finding and event anchors. */
export type NewAnchor =
  | { kind: 'finding'; finding: number; track?: string }
  | { kind: 'event'; event: number; track?: string }
  | { kind: 'range'; t0: number; t1: number; track?: string; ref?: string };

/** A time range selected with shift+drag: across all tracks (track null) or on one. */
export interface RangeSelection {
  t0: number;
  t1: number;
  track: string | null;
}
