/**
 * In the notes panel: a share link's notes (marked as coming from the link,
 * with "Keep these notes" and "Dismiss"), and the notes file's export and
 * import buttons.
 */
import { useRef } from 'react';
import { NoteCard } from './notes_ui.tsx';
import type { TraceNotes } from './trace_notes.tsx';

export function LinkNotesSection({ tn }: { tn: TraceNotes }) {
  const payload =
    tn.link.status === 'ok' && tn.link.decided === null && tn.link.payload?.trace.sha256 === tn.traceId
      ? tn.link.payload
      : null;
  const omitted = payload?.omitted ?? 0;
  const carried = payload?.notes.length ?? 0;
  if (!tn.linkNotes.length && !omitted) return null;
  const authors = [...new Set(tn.linkNotes.map((n) => n.author))];
  return (
    <div className="link-notes" data-testid="link-notes" role="region" aria-label="Notes from the link">
      <div className="link-notes-head">
        {tn.linkNotes.length > 0 ? (
          <span>
            <b>From the link:</b> {tn.linkNotes.length} note{tn.linkNotes.length === 1 ? '' : 's'} by{' '}
            {authors.join(', ')} that {tn.linkNotes.length === 1 ? 'is' : 'are'} not in your notes.
          </span>
        ) : carried > 0 ? (
          <span>
            <b>From the link:</b> its {carried === 1 ? 'note is' : `${carried} notes are`} already in your notes.
          </span>
        ) : (
          <span>
            <b>From the link:</b> no notes fitted in it.
          </span>
        )}
        {omitted > 0 && (
          <span className="muted" data-testid="link-notes-omitted">
            {' '}
            {omitted} more did not fit in the link: ask its author for the notes file (.stallscope-notes.json).
          </span>
        )}
      </div>
      {tn.linkNotes.length > 0 && (
        <div className="link-notes-actions">
          <button
            className="primary"
            data-testid="keep-link-notes"
            disabled={tn.link.busy}
            onClick={() => void tn.keepLinkNotes()}
            title="Add these notes to your notes on this server (their authors and times are kept)"
          >
            {tn.link.busy ? 'Keeping…' : tn.linkNotes.length === 1 ? 'Keep this note' : 'Keep these notes'}
          </button>
          <button data-testid="dismiss-link-notes" onClick={tn.dismissLinkNotes}>
            Dismiss
          </button>
        </div>
      )}
      {tn.linkNotes.map((n) => (
        <NoteCard
          key={n.id}
          note={n}
          label={tn.labelFor(n)}
          focused={n.id === tn.focused}
          fromLink
          onFocus={tn.focusNote}
          onCopyLink={tn.copyNoteLink}
        />
      ))}
    </div>
  );
}

/** Export and import of the notes file, beside the other exports. */
export function AnnotationsButtons({ tn }: { tn: TraceNotes }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button
        className="link"
        onClick={tn.exportAnnotations}
        data-testid="export-annotations"
        title="This trace's notes as a .stallscope-notes.json file, to send with the trace"
      >
        Notes file
      </button>
      <button
        className="link"
        onClick={() => input.current?.click()}
        data-testid="import-annotations"
        title="Add the notes of a .stallscope-notes.json file (merged by note id)"
      >
        Import notes…
      </button>
      <input
        ref={input}
        type="file"
        accept=".json,application/json"
        data-testid="import-annotations-input"
        style={{ display: 'none' }}
        onChange={(e) => {
          const f = e.target.files?.[0];
          if (f) void tn.importNotesFile(f);
          e.target.value = '';
        }}
      />
    </>
  );
}
