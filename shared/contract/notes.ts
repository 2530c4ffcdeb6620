/** Wire types shared by server and app (see shared/contract/README.md). Pure types: no Node or DOM imports. */

/**
 * What a note is attached to. Times are ns from the trace's first event
 * (like the API and the URL); for finding and event anchors the server fills
 * them in from the finding / event, so every note can be drawn.
 */
export type NoteAnchor =
  | { kind: 'finding'; finding: number; t0: number; t1: number; track?: string }
  | { kind: 'event'; event: number; t0: number; t1: number; track?: string }
  /** `ref`: the derived row selected when the note was made (`slice:12`, `sched:3`, `state:7`). */
  | { kind: 'range'; t0: number; t1: number; track?: string; ref?: string };

export interface Note {
  id: string;
  trace: string;
  anchor: NoteAnchor;
  /** Plain text or Markdown (rendered safely by the app). */
  text: string;
  author: string;
  created_at: string;
  updated_at: string;
  /** 1 when created, +1 per edit: edits must name the version they change. */
  version: number;
}

export interface NewNote {
  anchor: NoteAnchor;
  text: string;
  author: string;
}
