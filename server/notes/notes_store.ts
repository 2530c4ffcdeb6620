/**
 * Notes (annotations) on a trace: who wrote what about which finding, event
 * or time range. Stored by the server with the trace, one JSON file per trace:
 *
 *   <dataDir>/notes/<sha256>.json   {"format": "stallscope-notes", "version": 1, "notes": [...]}
 *
 * Not inside the trace directory: `stallscope ingest --force` replaces that
 * directory wholesale, and notes are the users' work, not derived data. Not
 * inside trace.duckdb either: that file is opened read-only by every reader.
 *
 * Every change runs under a per-trace async mutex: it reads the current
 * notes, applies the change and writes the whole file atomically (temporary
 * file, fsync, rename), so concurrent requests never lose each other's notes
 * and a crash leaves the previous file intact. Edits and deletes carry the
 * `version` the client last saw: a stale one is refused (ConflictError, 409),
 * never silently overwritten. One server process per data directory.
 *
 * Ids are 128 random bits in base64url (22 characters): unguessable, and
 * `isNoteId` accepts nothing else, so no id from a URL can become a path.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

export const NOTE_ID_RE = /^[A-Za-z0-9_-]{22}$/;
const TRACE_ID_RE = /^[0-9a-f]{64}$/;

/** Limits (also enforced by the routes, with messages). */
export const NOTE_LIMITS = {
  textChars: 16_000,
  authorChars: 80,
  notesPerTrace: 5_000,
  trackChars: 100,
} as const;

export function isNoteId(id: unknown): id is string {
  return typeof id === 'string' && NOTE_ID_RE.test(id);
}

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

export interface NotePatch {
  text?: string;
  author?: string;
  anchor?: NoteAnchor;
}

export class NoteNotFoundError extends Error {
  constructor(readonly id: string) {
    super(`no note ${id} on this trace (it may have been deleted)`);
    this.name = 'NoteNotFoundError';
  }
}

/** An edit or delete named a version that is no longer current. `current` is the note as it is now. */
export class ConflictError extends Error {
  constructor(readonly current: Note, given: number) {
    super(`note ${current.id} was changed by ${current.author} meanwhile (you edited version ${given}, it is now version ${current.version})`);
    this.name = 'ConflictError';
  }
}

export class NotesLimitError extends Error {}

interface NotesFile {
  format: 'stallscope-notes';
  version: 1;
  notes: Note[];
}

/** Serialises async work per key (one queue per trace). */
class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}

export class NotesStore {
  private readonly mutex = new KeyedMutex();
  /** Parsed files, by trace id (the file is only written through this store). */
  private readonly cache = new Map<string, Note[]>();
  private tmpCounter = 0;

  constructor(readonly dir: string, private readonly clock: () => Date = () => new Date()) {}

  /** The file of a trace's notes; only a sha256 hex id can become a path. */
  fileOf(traceId: string): string {
    if (!TRACE_ID_RE.test(traceId)) throw new Error(`not a trace id: ${JSON.stringify(String(traceId)).slice(0, 80)}`);
    return path.join(this.dir, `${traceId}.json`);
  }

  /** Every note of a trace, oldest first. */
  async list(traceId: string): Promise<Note[]> {
    return (await this.load(traceId)).map(clone);
  }

  async get(traceId: string, noteId: string): Promise<Note | null> {
    if (!isNoteId(noteId)) return null;
    const n = (await this.load(traceId)).find((x) => x.id === noteId);
    return n ? clone(n) : null;
  }

  async create(traceId: string, input: NewNote): Promise<Note> {
    return this.mutate(traceId, (notes) => {
      if (notes.length >= NOTE_LIMITS.notesPerTrace) throw new NotesLimitError(`this trace already has ${notes.length} notes (the limit)`);
      const now = this.clock().toISOString();
      const note: Note = {
        id: newNoteId(),
        trace: traceId,
        anchor: { ...input.anchor },
        text: input.text,
        author: input.author,
        created_at: now,
        updated_at: now,
        version: 1,
      };
      return { notes: [...notes, note], result: note };
    });
  }

  /** Applies `patch` if `version` is the note's current version; else ConflictError. */
  async update(traceId: string, noteId: string, version: number, patch: NotePatch): Promise<Note> {
    return this.mutate(traceId, (notes) => {
      const i = notes.findIndex((n) => n.id === noteId);
      if (i < 0) throw new NoteNotFoundError(noteId);
      const cur = notes[i]!;
      if (cur.version !== version) throw new ConflictError(clone(cur), version);
      const next: Note = {
        ...cur,
        ...(patch.text !== undefined ? { text: patch.text } : {}),
        ...(patch.author !== undefined ? { author: patch.author } : {}),
        ...(patch.anchor !== undefined ? { anchor: { ...patch.anchor } } : {}),
        updated_at: this.clock().toISOString(),
        version: cur.version + 1,
      };
      const out = notes.slice();
      out[i] = next;
      return { notes: out, result: next };
    });
  }

  /** Deletes a note; with `version`, only if it is still that version. Returns the deleted note. */
  async delete(traceId: string, noteId: string, version?: number): Promise<Note> {
    return this.mutate(traceId, (notes) => {
      const cur = notes.find((n) => n.id === noteId);
      if (!cur) throw new NoteNotFoundError(noteId);
      if (version !== undefined && cur.version !== version) throw new ConflictError(clone(cur), version);
      return { notes: notes.filter((n) => n.id !== noteId), result: cur };
    });
  }

  private async mutate<T>(traceId: string, fn: (notes: Note[]) => { notes: Note[]; result: T }): Promise<T> {
    const file = this.fileOf(traceId);
    return this.mutex.run(traceId, async () => {
      const notes = await this.load(traceId);
      const { notes: next, result } = fn(notes);
      await this.write(file, next);
      this.cache.set(traceId, next);
      return clone(result);
    });
  }

  private async load(traceId: string): Promise<Note[]> {
    const file = this.fileOf(traceId);
    const cached = this.cache.get(traceId);
    if (cached) return cached;
    let notes: Note[] = [];
    try {
      const parsed = JSON.parse(await fs.readFile(file, 'utf8')) as NotesFile;
      if (parsed?.format !== 'stallscope-notes' || !Array.isArray(parsed.notes)) throw new Error(`${file}: not a stallscope notes file`);
      notes = parsed.notes.filter((n) => n && isNoteId(n.id) && n.trace === traceId);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    // Another caller may have loaded it meanwhile: keep the first.
    const raced = this.cache.get(traceId);
    if (raced) return raced;
    this.cache.set(traceId, notes);
    return notes;
  }

  private async write(file: string, notes: Note[]): Promise<void> {
    await fs.mkdir(path.dirname(file), { recursive: true });
    const body: NotesFile = { format: 'stallscope-notes', version: 1, notes };
    const tmp = `${file}.${process.pid}.${this.tmpCounter++}.tmp`;
    const fh = await fs.open(tmp, 'wx', 0o644);
    try {
      await fh.writeFile(`${JSON.stringify(body, null, 1)}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await fs.rename(tmp, file);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
  }
}

export function newNoteId(): string {
  return randomBytes(16).toString('base64url');
}

function clone<T>(v: T): T {
  return structuredClone(v);
}
