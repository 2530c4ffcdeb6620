/**
 * Notes (annotations) on a trace: who wrote what about which finding, event
 * or time range. Kept by the server beside, not inside, the traces:
 *
 *   <dataDir>/notes/<sha256>.json       snapshot: {"format": "stallscope-notes", "version": 1, "seq": N, "notes": [...]}
 *   <dataDir>/notes/<sha256>.log.jsonl  changes since the snapshot, one per line: {"seq": N, "put": Note} | {"seq": N, "del": id}
 *
 * Not inside the trace directory: `stallscope ingest --force` replaces that
 * directory wholesale, and notes are the users' work, not derived data. Not
 * inside trace.duckdb either: that file is opened read-only by every reader.
 *
 * A write appends one line to the change log (and fsyncs it), it does not
 * rewrite every note: with 1,000 notes from 20 clients a rewrite per write
 * took p50 latency from 0.2 s to 2.9 s. Writes that arrive while one is on
 * disk go together in the next append (one fsync for all). When the log
 * grows past the snapshot (and 64 KiB), the next write folds it into a new
 * snapshot (temporary file, fsync, rename) and removes the log: each note is
 * rewritten a bounded number of times, not once per write. Snapshots say the
 * last change they hold (`seq`), so a log left behind by a crash between the
 * rename and its removal is not applied twice. The snapshot is the format
 * notes were always kept in: older files are read as they are.
 *
 * A torn last line (a crash mid-append) is cut off when the notes are next
 * read; temporary files of a writer that died are removed at start. Edits
 * and deletes carry the `version` the client last saw: a stale one is
 * refused (ConflictError, 409), never silently overwritten. One server
 * process per data directory.
 *
 * Ids are 128 random bits in base64url (22 characters): unguessable, and
 * `isNoteId` accepts nothing else, so no id from a URL can become a path.
 */
import { randomBytes } from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { NoteAnchor, Note, NewNote } from '../../shared/contract/notes.ts';

export const NOTE_ID_RE = /^[A-Za-z0-9_-]{22}$/;
import { TRACE_ID_RE } from '../../shared/contract/trace_id.ts';

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

export type { NoteAnchor, Note, NewNote } from '../../shared/contract/notes.ts';
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
  constructor(
    readonly current: Note,
    given: number,
  ) {
    super(
      `note ${current.id} was changed by ${current.author} meanwhile (you edited version ${given}, it is now version ${current.version})`,
    );
    this.name = 'ConflictError';
  }
}

export class NotesLimitError extends Error {}

interface NotesFile {
  format: 'stallscope-notes';
  version: 1;
  /** The last change this snapshot holds (absent in files written before the change log). */
  seq?: number;
  notes: Note[];
}

type Change = { seq: number; put: Note } | { seq: number; del: string };

/** Log bytes past which the next write folds the log into the snapshot (at least the snapshot's own size). */
const COMPACT_AFTER_BYTES = 64 * 1024;

interface Pending {
  line: string;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** One trace's notes in memory, and the state of their files. */
interface TraceNotes {
  notes: Map<string, Note>;
  seq: number;
  hasSnapshot: boolean;
  snapshotBytes: number;
  logBytes: number;
  pending: Pending[];
  flushing: boolean;
  /** A write failed: this copy may hold changes that are not on disk (read again). */
  dead: boolean;
}

export class NotesStore {
  private readonly loaded = new Map<string, Promise<TraceNotes>>();
  private tmpCounter = 0;

  constructor(
    readonly dir: string,
    private readonly clock: () => Date = () => new Date(),
  ) {
    removeDeadWritersTemp(dir);
  }

  /** The snapshot file of a trace's notes; only a sha256 hex id can become a path. */
  fileOf(traceId: string): string {
    if (!TRACE_ID_RE.test(traceId)) throw new Error(`not a trace id: ${JSON.stringify(String(traceId)).slice(0, 80)}`);
    return path.join(this.dir, `${traceId}.json`);
  }

  /** The change log beside the snapshot. */
  logOf(traceId: string): string {
    return path.join(this.dir, `${this.fileOf(traceId).slice(this.dir.length + 1, -'.json'.length)}.log.jsonl`);
  }

  /** Every note of a trace, oldest first. */
  async list(traceId: string): Promise<Note[]> {
    return [...(await this.load(traceId)).notes.values()].map(clone);
  }

  async get(traceId: string, noteId: string): Promise<Note | null> {
    if (!isNoteId(noteId)) return null;
    const n = (await this.load(traceId)).notes.get(noteId);
    return n ? clone(n) : null;
  }

  async create(traceId: string, input: NewNote): Promise<Note> {
    return this.mutate(traceId, (notes) => {
      if (notes.size >= NOTE_LIMITS.notesPerTrace)
        throw new NotesLimitError(`this trace already has ${notes.size} notes (the limit)`);
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
      return { put: note, result: note };
    });
  }

  /** Applies `patch` if `version` is the note's current version; else ConflictError. */
  async update(traceId: string, noteId: string, version: number, patch: NotePatch): Promise<Note> {
    return this.mutate(traceId, (notes) => {
      const cur = notes.get(noteId);
      if (!cur) throw new NoteNotFoundError(noteId);
      if (cur.version !== version) throw new ConflictError(clone(cur), version);
      const next: Note = {
        ...cur,
        ...(patch.text !== undefined ? { text: patch.text } : {}),
        ...(patch.author !== undefined ? { author: patch.author } : {}),
        ...(patch.anchor !== undefined ? { anchor: { ...patch.anchor } } : {}),
        updated_at: this.clock().toISOString(),
        version: cur.version + 1,
      };
      return { put: next, result: next };
    });
  }

  /**
   * Adds notes written elsewhere (a share link's, an annotations file's) as
   * they are: their ids, authors and times are kept. A note whose id is
   * already here is left as it is (never overwritten: ids travel in links,
   * so anyone could send one). All or nothing against the per-trace limit.
   */
  async importNotes(traceId: string, incoming: Note[]): Promise<{ added: Note[]; existing: Note[] }> {
    return this.mutate(traceId, (notes) => {
      const added = new Map<string, Note>();
      const existing: Note[] = [];
      for (const n of incoming) {
        const cur = notes.get(n.id) ?? added.get(n.id);
        if (cur) {
          existing.push(cur);
          continue;
        }
        added.set(n.id, { ...n, trace: traceId, anchor: { ...n.anchor } });
      }
      if (notes.size + added.size > NOTE_LIMITS.notesPerTrace) {
        throw new NotesLimitError(
          `this trace has ${notes.size} notes: ${added.size} more would pass the limit of ${NOTE_LIMITS.notesPerTrace}`,
        );
      }
      // One change per note (one line each in the log), written together.
      return { puts: [...added.values()], result: { added: [...added.values()], existing } };
    });
  }

  /** Deletes a note; with `version`, only if it is still that version. Returns the deleted note. */
  async delete(traceId: string, noteId: string, version?: number): Promise<Note> {
    return this.mutate(traceId, (notes) => {
      const cur = notes.get(noteId);
      if (!cur) throw new NoteNotFoundError(noteId);
      if (version !== undefined && cur.version !== version) throw new ConflictError(clone(cur), version);
      return { del: noteId, result: cur };
    });
  }

  /**
   * Checks and applies one change to the notes in memory (synchronously, so
   * changes are checked in the order they are applied), then waits until it
   * is on disk. A failed write fails every change not yet on disk, and the
   * notes are read again from disk next time.
   */
  private async mutate<T>(
    traceId: string,
    fn: (notes: Map<string, Note>) => { put?: Note; puts?: Note[]; del?: string; result: T },
  ): Promise<T> {
    this.fileOf(traceId);
    for (;;) {
      const t = await this.load(traceId);
      if (t.dead) continue; // load() started reading it again
      const { put, puts, del, result } = fn(t.notes);
      const changes: Change[] = [];
      for (const p of puts ?? (put ? [put] : [])) {
        t.notes.set(p.id, p);
        changes.push({ seq: ++t.seq, put: p });
      }
      if (del !== undefined) {
        t.notes.delete(del);
        changes.push({ seq: ++t.seq, del });
      }
      if (!changes.length) return clone(result);
      const line = changes.map((c) => `${JSON.stringify(c)}\n`).join('');
      const written = new Promise<void>((resolve, reject) => t.pending.push({ line, resolve, reject }));
      if (!t.flushing) void this.flush(traceId, t);
      await written;
      return clone(result);
    }
  }

  /** Writes what is pending, batch after batch, until nothing is. */
  private async flush(traceId: string, t: TraceNotes): Promise<void> {
    t.flushing = true;
    try {
      while (t.pending.length > 0) {
        const batch = t.pending.splice(0);
        try {
          if (!t.hasSnapshot || t.logBytes >= Math.max(COMPACT_AFTER_BYTES, t.snapshotBytes)) {
            // Serialised now, in the same tick as the splice: exactly the changes of this batch and before.
            const body = `${JSON.stringify({ format: 'stallscope-notes', version: 1, seq: t.seq, notes: [...t.notes.values()] } satisfies NotesFile, null, 1)}\n`;
            await this.writeSnapshot(traceId, body);
            t.hasSnapshot = true;
            t.snapshotBytes = Buffer.byteLength(body);
            t.logBytes = 0;
          } else {
            const data = batch.map((p) => p.line).join('');
            await this.append(traceId, data, t.logBytes);
            t.logBytes += Buffer.byteLength(data);
          }
          for (const p of batch) p.resolve();
        } catch (err) {
          t.dead = true;
          this.loaded.delete(traceId);
          for (const p of [...batch, ...t.pending.splice(0)]) p.reject(err);
        }
      }
    } finally {
      t.flushing = false;
    }
  }

  /** Appends to the log and waits until it is on disk; on failure the log is cut back to `before` bytes. */
  private async append(traceId: string, data: string, before: number): Promise<void> {
    const log = this.logOf(traceId);
    await fs.mkdir(this.dir, { recursive: true });
    const fh = await fs.open(log, 'a', 0o644);
    try {
      await fh.write(data);
      await fh.sync();
    } catch (err) {
      await fh.truncate(before).catch(() => undefined);
      throw err;
    } finally {
      await fh.close();
    }
    if (before === 0) await syncDir(this.dir); // a new log: its directory entry must last too
  }

  /** Replaces the snapshot atomically (temporary file, fsync, rename), then removes the log it folded in. */
  private async writeSnapshot(traceId: string, body: string): Promise<void> {
    const file = this.fileOf(traceId);
    await fs.mkdir(this.dir, { recursive: true });
    const tmp = `${file}.${process.pid}.${this.tmpCounter++}.tmp`;
    try {
      const fh = await fs.open(tmp, 'wx', 0o644);
      try {
        await fh.writeFile(body);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fs.rename(tmp, file);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
    await syncDir(this.dir);
    await fs.rm(this.logOf(traceId), { force: true });
  }

  private load(traceId: string): Promise<TraceNotes> {
    const file = this.fileOf(traceId);
    let p = this.loaded.get(traceId);
    if (!p) {
      p = this.read(traceId, file);
      this.loaded.set(traceId, p);
      p.catch(() => {
        if (this.loaded.get(traceId) === p) this.loaded.delete(traceId);
      });
    }
    return p;
  }

  /** The snapshot, then the log's changes after it; a torn last line is cut off the log. */
  private async read(traceId: string, file: string): Promise<TraceNotes> {
    const t: TraceNotes = {
      notes: new Map(),
      seq: 0,
      hasSnapshot: false,
      snapshotBytes: 0,
      logBytes: 0,
      pending: [],
      flushing: false,
      dead: false,
    };
    let text: string | null = null;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text !== null) {
      const parsed = JSON.parse(text) as NotesFile;
      if (parsed?.format !== 'stallscope-notes' || !Array.isArray(parsed.notes))
        throw new Error(`${path.basename(file)}: not a stallscope notes file`);
      for (const n of parsed.notes) if (n && isNoteId(n.id) && n.trace === traceId) t.notes.set(n.id, n);
      t.seq = Number.isSafeInteger(parsed.seq) ? parsed.seq! : 0;
      t.hasSnapshot = true;
      t.snapshotBytes = Buffer.byteLength(text);
    }
    const log = this.logOf(traceId);
    let raw: Buffer | null = null;
    try {
      raw = await fs.readFile(log);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (raw !== null) {
      const end = raw.lastIndexOf(0x0a) + 1;
      if (end < raw.length) await fs.truncate(log, end); // torn by a crash mid-append: that change never happened
      t.logBytes = end;
      for (const line of raw.toString('utf8', 0, end).split('\n')) {
        if (!line) continue;
        let c: Change;
        try {
          c = JSON.parse(line) as Change;
        } catch {
          continue;
        }
        if (!Number.isSafeInteger(c.seq) || c.seq <= t.seq) continue; // already in the snapshot
        t.seq = c.seq;
        if ('put' in c && c.put && isNoteId(c.put.id) && c.put.trace === traceId) t.notes.set(c.put.id, c.put);
        else if ('del' in c && typeof c.del === 'string') t.notes.delete(c.del);
      }
    }
    return t;
  }
}

/** Makes a rename or a new file in `dir` survive a crash. */
async function syncDir(dir: string): Promise<void> {
  let fh: fs.FileHandle | null = null;
  try {
    fh = await fs.open(dir, 'r');
    await fh.sync();
  } catch {
    // Some file systems cannot fsync a directory: the data itself is synced.
  } finally {
    await fh?.close();
  }
}

/** Temporary snapshots a writer left when it died (`<name>.<pid>.<n>.tmp`): removed at start. */
function removeDeadWritersTemp(dir: string): void {
  let names: string[];
  try {
    names = fsSync.readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const m = /\.(\d+)\.\d+\.tmp$/.exec(n);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || pidAlive(pid)) continue;
    fsSync.rmSync(path.join(dir, n), { force: true });
  }
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function newNoteId(): string {
  return randomBytes(16).toString('base64url');
}

function clone<T>(v: T): T {
  return structuredClone(v);
}
