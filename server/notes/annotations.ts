/**
 * Notes coming from elsewhere (an annotations file, the notes of a share
 * link a user chose to keep) become this server's notes here, and a trace's
 * notes leave as an annotations file (shared/links/annotations_file.ts).
 *
 * An incoming note keeps its id, author and times. Its anchor is checked
 * against this trace: a finding or event anchor is kept when this trace has
 * that finding / event at the same time the author's had it; otherwise
 * (another stallscope version numbered findings differently, say) the note
 * is anchored to the time range it carried, and the answer says so. A range
 * that starts after the end of this trace cannot be shown: that note is
 * skipped, with the reason.
 */
import type { PortableAnchor, PortableNote } from '../../shared/links/portable_notes.ts';
import type { Note, NoteAnchor } from './notes_store.ts';

/** Checks an anchor against this trace: the anchor with this trace's times, or why it cannot be used (null: not found). */
export type AnchorResolver = (a: NoteAnchor) => Promise<NoteAnchor | { error: string }>;

export interface ImportPlan {
  notes: Note[];
  /** Notes kept, but anchored to their time range instead of the finding / event they named. */
  reanchored: Array<{ id: string; reason: string }>;
  /** Notes that cannot be placed on this trace. */
  skipped: Array<{ id: string; reason: string }>;
}

function what(a: PortableAnchor): string {
  return a.kind === 'finding' ? `finding ${a.finding}` : a.kind === 'event' ? `event ${a.event}` : 'range';
}

/** Incoming notes as this trace's notes (not yet stored). */
export async function planImport(
  traceId: string,
  incoming: PortableNote[],
  resolve: AnchorResolver,
): Promise<ImportPlan> {
  const plan: ImportPlan = { notes: [], reanchored: [], skipped: [] };
  for (const n of incoming) {
    const carried = n.anchor;
    let anchor: NoteAnchor | null = null;
    const asRange = (): NoteAnchor => ({
      kind: 'range',
      t0: carried.t0,
      t1: carried.t1,
      ...(carried.track ? { track: carried.track } : {}),
    });
    if (carried.kind !== 'range') {
      const r = await resolve({ ...carried });
      if (!('error' in r) && r.t0 === carried.t0 && r.t1 === carried.t1) {
        anchor = r;
      } else {
        const why = 'error' in r ? r.error : `this trace's ${what(carried)} is at another time`;
        anchor = asRange();
        plan.reanchored.push({
          id: n.id,
          reason: `${why}: anchored to the time range ${carried.t0}-${carried.t1} ns instead`,
        });
      }
    } else {
      anchor = { ...carried };
    }
    if (anchor.kind === 'range') {
      const r = await resolve(anchor);
      if ('error' in r) {
        plan.skipped.push({ id: n.id, reason: r.error });
        continue;
      }
      anchor = r;
    }
    plan.notes.push({
      id: n.id,
      trace: traceId,
      anchor,
      text: n.text,
      author: n.author,
      created_at: n.created_at,
      updated_at: n.updated_at,
      version: n.version,
    });
  }
  return plan;
}
