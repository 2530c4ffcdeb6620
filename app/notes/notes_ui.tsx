/**
 * Notes in the page: a note card (list, details panel), the notes list, the
 * note editor, the link banner and the toast. Text is rendered with
 * <Markdown> (safe by construction) or as React text; never as HTML.
 */
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { viewStore } from '../state/view_store.ts';
import { Markdown } from './markdown.tsx';
import { notesModel, saveAuthor, savedAuthor, useNotes } from './notes_model.ts';
import type { Note } from './types.ts';

export function timeAgo(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return iso;
  const s = Math.round((now - t) / 1000);
  if (s < 45) return 'just now';
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
  return new Date(t).toISOString().slice(0, 10);
}

interface CardProps {
  note: Note;
  label: string;
  focused: boolean;
  compact?: boolean;
  /** A note a share link carries, not (yet) one of this server's: shown, not editable. */
  fromLink?: boolean;
  onFocus(n: Note): void;
  onCopyLink(n: Note): void;
}

export function NoteCard({ note, label, focused, compact, fromLink, onFocus, onCopyLink }: CardProps) {
  const [confirm, setConfirm] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (focused && !compact) ref.current?.scrollIntoView({ block: 'nearest' });
  }, [focused, compact]);
  return (
    <div
      ref={ref}
      className={`note-card${focused ? ' focused' : ''}${compact ? ' compact' : ''}${fromLink ? ' from-link' : ''}`}
      data-testid={`note-${note.id}`}
      data-note-id={note.id}
      data-focused={focused ? 'true' : 'false'}
      data-from-link={fromLink ? 'true' : 'false'}
    >
      <div className="note-head">
        <button className="link note-anchor" onClick={() => onFocus(note)} title="Show this note on the timeline">
          {label}
        </button>
        <span
          className="note-meta muted"
          title={`created ${note.created_at}${note.version > 1 ? `, edited ${note.updated_at}` : ''}`}
        >
          <span className="note-author" data-testid="note-author">
            {note.author}
          </span>{' '}
          · {timeAgo(note.updated_at)}
          {note.version > 1 ? ' (edited)' : ''}
        </span>
        {fromLink && (
          <span
            className="from-link-badge"
            data-testid="from-link-badge"
            title="This note came with the link you opened; it is not in your notes unless you keep it"
          >
            from the link
          </span>
        )}
      </div>
      <Markdown text={note.text} className="note-text" />
      <div className="note-actions">
        {fromLink ? (
          <button
            className="link"
            data-testid="note-copy-link"
            onClick={() => onCopyLink(note)}
            title="Copy a link to this note"
          >
            Link
          </button>
        ) : confirm ? (
          <>
            <span className="muted">Delete this note?</span>
            <button
              data-testid="note-delete-yes"
              onClick={() => {
                setConfirm(false);
                void notesModel.remove(note);
              }}
            >
              Delete
            </button>
            <button onClick={() => setConfirm(false)}>Keep</button>
          </>
        ) : (
          <>
            <button className="link" data-testid="note-edit" onClick={() => notesModel.openEdit(note, label)}>
              Edit
            </button>
            <button className="link" data-testid="note-delete" onClick={() => setConfirm(true)}>
              Delete
            </button>
            <button
              className="link"
              data-testid="note-copy-link"
              onClick={() => onCopyLink(note)}
              title="Copy a link to this note"
            >
              Link
            </button>
          </>
        )}
      </div>
    </div>
  );
}

export function NotesPanel({
  labelFor,
  focused,
  onFocus,
  onCopyLink,
  onExport,
  exportExtra,
  top,
}: {
  /** Shown above the list (a share link's notes). */
  top?: ReactNode;
  labelFor(n: Note): string;
  focused: string | null;
  onFocus(n: Note): void;
  onCopyLink(n: Note): void;
  onExport(kind: 'json' | 'md'): void;
  /** Further export actions shown after these (the Perfetto export). */
  exportExtra?: ReactNode;
}) {
  const notes = useNotes((s) => s.notes);
  const loaded = useNotes((s) => s.loaded);
  const error = useNotes((s) => s.error);
  return (
    <section className="notes-panel" data-testid="notes-panel">
      <div className="notes-head">
        <h2>
          Notes{' '}
          <span className="muted" data-testid="notes-count">
            ({notes.length})
          </span>
        </h2>
        <span className="notes-export">
          Export
          <button
            className="link"
            onClick={() => onExport('md')}
            data-testid="export-md"
            title="Findings and notes as Markdown"
          >
            Markdown
          </button>
          <button
            className="link"
            onClick={() => onExport('json')}
            data-testid="export-json"
            title="Findings and notes as JSON"
          >
            JSON
          </button>
          {exportExtra}
        </span>
      </div>
      {top}
      <div className="notes-list" data-testid="notes-list">
        {error && <div className="error pad">Could not load notes: {error}</div>}
        {loaded && !notes.length && !error && (
          <div className="muted pad">
            No notes yet. Select a finding or an event, or shift+drag a time range, then press N.
          </div>
        )}
        {notes.map((n) => (
          <NoteCard
            key={n.id}
            note={n}
            label={labelFor(n)}
            focused={n.id === focused}
            onFocus={onFocus}
            onCopyLink={onCopyLink}
          />
        ))}
      </div>
    </section>
  );
}

/** The floating note editor (new note or edit); Ctrl+Enter saves, Escape cancels. */
export function NoteEditor() {
  const editor = useNotes((s) => s.editor);
  const [text, setText] = useState('');
  const [author, setAuthor] = useState(savedAuthor());
  const [askName, setAskName] = useState(!savedAuthor());
  const [preview, setPreview] = useState(false);
  const taRef = useRef<HTMLTextAreaElement>(null);
  const key = editor ? `${editor.mode}:${editor.note?.id ?? editor.label}` : '';

  useEffect(() => {
    if (!editor) return;
    setText(editor.note?.text ?? '');
    setPreview(false);
    setTimeout(
      () =>
        (askName
          ? document.querySelector<HTMLInputElement>('[data-testid="note-author-input"]')
          : taRef.current
        )?.focus(),
      0,
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);

  if (!editor) return null;
  const name = author.trim();
  const canSave = !!text.trim() && !!name && !editor.busy;
  const save = (overwrite = false) => {
    if (!canSave) return;
    saveAuthor(name);
    setAskName(false);
    void notesModel.save(text, name, { overwrite }).then((n) => {
      // The note just written is the one in focus: Copy link now points at it.
      if (n) viewStore.update({ note: n.id }, { history: 'replace' });
    });
  };
  const onKey = (e: React.KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      notesModel.closeEditor();
    }
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      save();
    }
  };
  return (
    <div className="note-editor" data-testid="note-editor" role="dialog" aria-label="Note editor" onKeyDown={onKey}>
      <div className="note-editor-head">
        <b>{editor.mode === 'new' ? 'New note' : 'Edit note'}</b> <span className="muted">on {editor.label}</span>
        <button className="icon close" onClick={() => notesModel.closeEditor()} aria-label="close">
          ×
        </button>
      </div>
      {askName ? (
        <label className="note-author-row">
          Your name <span className="muted">(shown with your notes; asked once)</span>
          <input
            data-testid="note-author-input"
            value={author}
            maxLength={80}
            onChange={(e) => setAuthor(e.target.value)}
            placeholder="e.g. Jane Doe"
          />
        </label>
      ) : (
        <div className="note-author-row muted">
          as <b data-testid="note-author-name">{name}</b>{' '}
          <button className="link" onClick={() => setAskName(true)}>
            change
          </button>
        </div>
      )}
      {editor.conflict && (
        <div className="note-conflict" data-testid="note-conflict" role="alert">
          <b>{editor.conflict.author}</b> changed this note meanwhile (version {editor.conflict.version}). Their text:
          <Markdown text={editor.conflict.text} className="note-text theirs" />
          <div>
            <button data-testid="note-keep-theirs" onClick={() => notesModel.closeEditor()}>
              Keep theirs
            </button>{' '}
            <button data-testid="note-overwrite" onClick={() => save(true)}>
              Save mine over it
            </button>
          </div>
        </div>
      )}
      {editor.gone && (
        <div className="note-conflict" role="alert">
          This note was deleted meanwhile. <button onClick={() => save(true)}>Save mine as a new note</button>
        </div>
      )}
      {preview ? (
        <div className="note-preview">
          <Markdown text={text || '*nothing yet*'} className="note-text" />
        </div>
      ) : (
        <textarea
          ref={taRef}
          data-testid="note-text"
          value={text}
          maxLength={16_000}
          onChange={(e) => setText(e.target.value)}
          placeholder="What is going on here? Markdown works: **bold**, `code`, - lists, [links](https://…)"
          rows={6}
        />
      )}
      {editor.error && <div className="error">{editor.error}</div>}
      <div className="note-editor-actions">
        <button className="link" onClick={() => setPreview((p) => !p)}>
          {preview ? 'Edit' : 'Preview'}
        </button>
        <span className="muted">Ctrl+Enter saves</span>
        <button onClick={() => notesModel.closeEditor()}>Cancel</button>
        <button className="primary" data-testid="note-save" disabled={!canSave} onClick={() => save(false)}>
          {editor.busy ? 'Saving…' : 'Save'}
        </button>
      </div>
    </div>
  );
}

/** What a share link could not restore (unknown trace, window outside it, deleted note...). */
export function LinkBanner() {
  const banner = useNotes((s) => s.banner);
  if (!banner.length) return null;
  return (
    <div className="link-banner" data-testid="link-banner" role="alert">
      <div className="link-banner-body">
        <b>This link could not be opened exactly as shared.</b>
        <ul>
          {banner.map((m) => (
            <li key={m}>{m}</li>
          ))}
        </ul>
      </div>
      <button
        className="icon close"
        onClick={() => notesModel.clearBanner()}
        aria-label="dismiss"
        data-testid="link-banner-close"
      >
        ×
      </button>
    </div>
  );
}

export function ToastView() {
  const toast = useNotes((s) => s.toast);
  if (!toast) return null;
  return (
    <div className={`toast ${toast.kind}`} data-testid="toast" role="status">
      <span data-testid="toast-text">{toast.text}</span>
      {toast.link && (
        <input
          className="share-link"
          data-testid="share-link"
          readOnly
          value={toast.link}
          onFocus={(e) => e.currentTarget.select()}
        />
      )}
      {toast.action && (
        <button
          data-testid={toast.action.testid ?? 'toast-action'}
          onClick={() => {
            toast.action!.run();
            notesModel.closeToast();
          }}
        >
          {toast.action.label}
        </button>
      )}
      <button className="icon close" onClick={() => notesModel.closeToast()} aria-label="close">
        ×
      </button>
    </div>
  );
}
