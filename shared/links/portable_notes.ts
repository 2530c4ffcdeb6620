/**
 * Notes that travel outside the server that keeps them: in a share link's
 * fragment (link_codec.ts) and in an annotations file
 * (`<name>.stallscope-notes.json`, annotations_file.ts). Both come from
 * someone else: everything here is untrusted input, checked field by field
 * with a message that names the field (`notes[2].anchor.t0 must be ...`).
 *
 * Pure TypeScript with no Node or DOM imports: the app (opening a link), the
 * server (importing a file) and the command line (`stallscope open URL`)
 * use the same checks. The shapes and limits are the notes store's
 * (server/notes/notes_store.ts, note_input.ts); a test keeps them equal.
 *
 * The file name, kernel and format of a trace are shown, never used: no path
 * or URL in a link or a file is ever opened or fetched by anyone.
 */

export const PORTABLE_LIMITS = {
  /** As NOTE_LIMITS (server/notes/notes_store.ts). */
  textChars: 16_000,
  authorChars: 80,
  trackChars: 100,
  /** Notes in one annotations file (the store's per-trace limit). */
  notesPerFile: 5_000,
  nameChars: 200,
  kernelChars: 200,
} as const;

/** Track uris as the app names them: `cpu#0`, `thread#12`, `slice#shrinker`. */
export const TRACK_URI_RE = /^[a-z_]+#[\w.:/-]{1,80}$/;
/** A derived row a range note was made from. */
export const ROW_REF_RE = /^(sched|state|slice):\d{1,15}$/;
export const NOTE_ID_RE = /^[A-Za-z0-9_-]{22}$/;
export const SHA256_RE = /^[0-9a-f]{64}$/;
const ISO_TIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** What a note is attached to; times are ns from the trace's first event, as the author's server filled them in. */
export type PortableAnchor =
  | { kind: 'finding'; finding: number; t0: number; t1: number; track?: string }
  | { kind: 'event'; event: number; t0: number; t1: number; track?: string }
  | { kind: 'range'; t0: number; t1: number; track?: string; ref?: string };

/** A note as it travels: its id, author and times are the original ones. */
export interface PortableNote {
  id: string;
  anchor: PortableAnchor;
  text: string;
  author: string;
  created_at: string;
  updated_at: string;
  version: number;
}

/** The few facts that name a trace file for someone who does not have it yet. */
export interface TraceFacts {
  /** The file's content hash: the trace's id in every stallscope. */
  sha256: string;
  /** The file name it was added as (display only). */
  name: string;
  /** Bytes. */
  size: number;
  /** `trace_dat v7`, `trace_cmd_report`, ... */
  format?: string | null;
  kernel?: string | null;
  cpus?: number | null;
  events?: number | null;
  /** When it was recorded (ISO 8601), when the file says. */
  recorded?: string | null;
}

/** Untrusted input that does not fit: the message names the field. */
export class PortableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PortableError';
  }
}

type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A short, printable rendering of a bad value for a message. */
export function shown(v: unknown): string {
  let s: string;
  try {
    s = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  } catch {
    s = String(v);
  }
  s = s.replace(/[\u0000-\u001f\u007f]/g, '?');
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}

export function onlyKeys(o: Obj, allowed: readonly string[], where: string): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) throw new PortableError(`${where}: unknown field ${shown(k)}`);
  }
}

function nonNegInt(v: unknown, where: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw new PortableError(`${where} must be a non-negative integer, not ${shown(v)}`);
  return v;
}

function optional<T>(v: unknown, parse: (v: unknown) => T): T | undefined {
  return v === undefined || v === null ? undefined : parse(v);
}

/** Note text: at most PORTABLE_LIMITS.textChars, control characters other than tab/newline removed, not blank (as note_input.ts parseText). */
export function portableText(v: unknown, where: string): string {
  if (typeof v !== 'string') throw new PortableError(`${where} must be a string`);
  if (v.length > PORTABLE_LIMITS.textChars)
    throw new PortableError(`${where} is too long (${v.length} characters, at most ${PORTABLE_LIMITS.textChars})`);
  const text = v.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
  if (!text.trim()) throw new PortableError(`${where} is empty`);
  return text;
}

export function portableAuthor(v: unknown, where: string): string {
  if (typeof v !== 'string') throw new PortableError(`${where} must be a string`);
  const a = v.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  if (!a) throw new PortableError(`${where} is empty`);
  if (a.length > PORTABLE_LIMITS.authorChars)
    throw new PortableError(`${where} is too long (at most ${PORTABLE_LIMITS.authorChars} characters)`);
  return a;
}

export function portableTime(v: unknown, where: string): string {
  if (typeof v !== 'string' || v.length > 40 || !ISO_TIME_RE.test(v) || !Number.isFinite(Date.parse(v))) {
    throw new PortableError(`${where} must be a date and time like 2024-05-01T10:12:00Z, not ${shown(v)}`);
  }
  return v;
}

export function portableAnchor(v: unknown, where: string): PortableAnchor {
  if (!isObj(v)) throw new PortableError(`${where} must be an object {kind: "finding"|"event"|"range", t0, t1, ...}`);
  const track = optional(v.track, (t) => {
    if (typeof t !== 'string' || t.length > PORTABLE_LIMITS.trackChars || !TRACK_URI_RE.test(t))
      throw new PortableError(`${where}.track must be a track uri like cpu#0 or thread#12, not ${shown(t)}`);
    return t;
  });
  const t0 = nonNegInt(v.t0, `${where}.t0`);
  const t1 = nonNegInt(v.t1, `${where}.t1`);
  if (t1 < t0) throw new PortableError(`${where}.t1 must not be before ${where}.t0`);
  const withTrack = <T extends object>(a: T): T => (track === undefined ? a : { ...a, track });
  switch (v.kind) {
    case 'finding':
      onlyKeys(v, ['kind', 'finding', 'track', 't0', 't1'], where);
      return withTrack({ kind: 'finding' as const, finding: nonNegInt(v.finding, `${where}.finding`), t0, t1 });
    case 'event':
      onlyKeys(v, ['kind', 'event', 'track', 't0', 't1'], where);
      return withTrack({ kind: 'event' as const, event: nonNegInt(v.event, `${where}.event`), t0, t1 });
    case 'range': {
      onlyKeys(v, ['kind', 't0', 't1', 'track', 'ref'], where);
      const ref = optional(v.ref, (r) => {
        if (typeof r !== 'string' || !ROW_REF_RE.test(r))
          throw new PortableError(`${where}.ref must look like slice:12, sched:3 or state:7, not ${shown(r)}`);
        return r;
      });
      return withTrack({ kind: 'range' as const, t0, t1, ...(ref ? { ref } : {}) });
    }
    default:
      throw new PortableError(`${where}.kind must be "finding", "event" or "range", not ${shown(v.kind)}`);
  }
}

export function parsePortableNote(v: unknown, where: string): PortableNote {
  if (!isObj(v))
    throw new PortableError(`${where} must be an object {id, anchor, text, author, created_at, updated_at, version}`);
  onlyKeys(v, ['id', 'anchor', 'text', 'author', 'created_at', 'updated_at', 'version', 'trace'], where);
  if (typeof v.id !== 'string' || !NOTE_ID_RE.test(v.id))
    throw new PortableError(`${where}.id must be a note id (22 characters A-Z a-z 0-9 _ -), not ${shown(v.id)}`);
  const version = nonNegInt(v.version ?? 1, `${where}.version`);
  const created = portableTime(v.created_at, `${where}.created_at`);
  const updated = v.updated_at === undefined ? created : portableTime(v.updated_at, `${where}.updated_at`);
  return {
    id: v.id,
    anchor: portableAnchor(v.anchor, `${where}.anchor`),
    text: portableText(v.text, `${where}.text`),
    author: portableAuthor(v.author, `${where}.author`),
    created_at: created,
    updated_at: updated,
    version: Math.max(1, version),
  };
}

function printable(v: unknown, max: number, where: string): string {
  if (typeof v !== 'string') throw new PortableError(`${where} must be a string`);
  if (v.length > max) throw new PortableError(`${where} is too long (at most ${max} characters)`);
  return v.replace(/[\u0000-\u001f\u007f]/g, '').trim();
}

export function parseTraceFacts(v: unknown, where: string): TraceFacts {
  if (!isObj(v)) throw new PortableError(`${where} must be an object {sha256, name, size, ...}`);
  onlyKeys(v, ['sha256', 'name', 'size', 'format', 'kernel', 'cpus', 'events', 'recorded'], where);
  if (typeof v.sha256 !== 'string' || !SHA256_RE.test(v.sha256))
    throw new PortableError(`${where}.sha256 must be 64 lower-case hex digits, not ${shown(v.sha256)}`);
  // Display only: a path in it is cut to its last part, so nothing looks like a place to read from.
  const name = printable(v.name, PORTABLE_LIMITS.nameChars, `${where}.name`).replace(/^.*[\\/]/, '') || 'trace';
  const facts: TraceFacts = { sha256: v.sha256, name, size: nonNegInt(v.size, `${where}.size`) };
  const format = optional(v.format, (f) => printable(f, 60, `${where}.format`));
  if (format) facts.format = format;
  const kernel = optional(v.kernel, (k) => printable(k, PORTABLE_LIMITS.kernelChars, `${where}.kernel`));
  if (kernel) facts.kernel = kernel;
  const cpus = optional(v.cpus, (c) => nonNegInt(c, `${where}.cpus`));
  if (cpus !== undefined) facts.cpus = cpus;
  const events = optional(v.events, (e) => nonNegInt(e, `${where}.events`));
  if (events !== undefined) facts.events = events;
  const recorded = optional(v.recorded, (r) => portableTime(r, `${where}.recorded`));
  if (recorded) facts.recorded = recorded;
  return facts;
}

/** The notes of one trace, in a list at most `max` long, with no id twice. */
export function parsePortableNotes(v: unknown, where: string, max: number): PortableNote[] {
  if (!Array.isArray(v)) throw new PortableError(`${where} must be a list`);
  if (v.length > max) throw new PortableError(`${where} has ${v.length} notes, at most ${max}`);
  const seen = new Set<string>();
  return v.map((n, i) => {
    const note = parsePortableNote(n, `${where}[${i}]`);
    if (seen.has(note.id)) throw new PortableError(`${where}[${i}].id ${note.id} is there twice`);
    seen.add(note.id);
    return note;
  });
}

/** A note as the store keeps it, as it travels (no trace field: the link or file names the trace once). */
export function toPortable(n: PortableNote): PortableNote {
  const a = n.anchor;
  const anchor: PortableAnchor =
    a.kind === 'finding'
      ? { kind: 'finding', finding: a.finding, t0: a.t0, t1: a.t1, ...(a.track ? { track: a.track } : {}) }
      : a.kind === 'event'
        ? { kind: 'event', event: a.event, t0: a.t0, t1: a.t1, ...(a.track ? { track: a.track } : {}) }
        : {
            kind: 'range',
            t0: a.t0,
            t1: a.t1,
            ...(a.track ? { track: a.track } : {}),
            ...(a.ref ? { ref: a.ref } : {}),
          };
  return {
    id: n.id,
    anchor,
    text: n.text,
    author: n.author,
    created_at: n.created_at,
    updated_at: n.updated_at,
    version: n.version,
  };
}

/** The fields of a library record (shared/contract/library.ts TraceRecord) the facts come from. */
export interface RecordLike {
  id: string;
  name: string;
  sizeBytes: number;
  format?: string | null;
  formatVersion?: string | null;
  kernel?: string | null;
  cpus?: number | null;
  eventsTotal?: number | null;
  /** When the file says it was recorded (no format stallscope reads gives it yet). */
  recordedAt?: string | null;
}

/** The facts that name a trace's file, for a link or an annotations file. */
export function traceFactsOf(rec: RecordLike): TraceFacts {
  const facts: TraceFacts = { sha256: rec.id, name: rec.name, size: rec.sizeBytes };
  if (rec.format) facts.format = `${rec.format}${rec.formatVersion ? ` v${rec.formatVersion}` : ''}`;
  if (rec.kernel) facts.kernel = rec.kernel;
  if (typeof rec.cpus === 'number') facts.cpus = rec.cpus;
  if (rec.eventsTotal) facts.events = rec.eventsTotal;
  if (rec.recordedAt) facts.recorded = rec.recordedAt;
  return facts;
}
