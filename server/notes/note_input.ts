/**
 * Hand-written validation of note request bodies (no schema library): every
 * field is checked for type, size and shape, unknown keys are refused, and
 * the messages say what was wrong.
 */
import { NOTE_LIMITS, type NoteAnchor, type NewNote, type NotePatch } from './notes_store.ts';

export class NoteInputError extends Error {}

/** Track uris as the app names them: `cpu#0`, `thread#12`, `slice#shrinker`. */
export const TRACK_URI_RE = /^[a-z_]+#[\w.:/-]{1,80}$/;
/** A derived row a range note was made from. */
export const ROW_REF_RE = /^(sched|state|slice):\d{1,15}$/;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function onlyKeys(o: Obj, allowed: readonly string[], what: string): void {
  for (const k of Object.keys(o))
    if (!allowed.includes(k)) throw new NoteInputError(`${what}: unknown field ${JSON.stringify(k.slice(0, 40))}`);
}

function nonNegInt(v: unknown, what: string): number {
  if (typeof v === 'string' && /^\d{1,16}$/.test(v)) v = Number(v);
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw new NoteInputError(`${what} must be a non-negative integer`);
  return v;
}

/** Note text: a string, at most NOTE_LIMITS.textChars, control characters other than tab/newline removed, not blank. */
export function parseText(v: unknown): string {
  if (typeof v !== 'string') throw new NoteInputError('text must be a string');
  if (v.length > NOTE_LIMITS.textChars)
    throw new NoteInputError(`text is too long (${v.length} characters, at most ${NOTE_LIMITS.textChars})`);
  const text = v.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
  if (!text.trim()) throw new NoteInputError('text is empty');
  return text;
}

export function parseAuthor(v: unknown): string {
  if (typeof v !== 'string') throw new NoteInputError('author must be a string (the name you set once)');
  const a = v.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  if (!a) throw new NoteInputError('author is empty: set your name first');
  if (a.length > NOTE_LIMITS.authorChars)
    throw new NoteInputError(`author is too long (at most ${NOTE_LIMITS.authorChars} characters)`);
  return a;
}

/**
 * An anchor as the client sends it. For `finding` and `event` anchors t0/t1
 * are ignored here: the route fills them in from the trace.
 */
export function parseAnchor(v: unknown): NoteAnchor {
  if (!isObj(v)) throw new NoteInputError('anchor must be an object {kind: "finding"|"event"|"range", ...}');
  const track = v.track === undefined || v.track === null ? undefined : v.track;
  if (
    track !== undefined &&
    (typeof track !== 'string' || track.length > NOTE_LIMITS.trackChars || !TRACK_URI_RE.test(track))
  ) {
    throw new NoteInputError('anchor.track must be a track uri like cpu#0 or thread#12');
  }
  const withTrack = <T extends object>(a: T): T => (track === undefined ? a : { ...a, track });
  switch (v.kind) {
    case 'finding':
      onlyKeys(v, ['kind', 'finding', 'track', 't0', 't1'], 'anchor');
      return withTrack({ kind: 'finding', finding: nonNegInt(v.finding, 'anchor.finding'), t0: 0, t1: 0 });
    case 'event':
      onlyKeys(v, ['kind', 'event', 'track', 't0', 't1'], 'anchor');
      return withTrack({ kind: 'event', event: nonNegInt(v.event, 'anchor.event'), t0: 0, t1: 0 });
    case 'range': {
      onlyKeys(v, ['kind', 't0', 't1', 'track', 'ref'], 'anchor');
      const t0 = nonNegInt(v.t0, 'anchor.t0');
      const t1 = nonNegInt(v.t1, 'anchor.t1');
      if (t1 < t0) throw new NoteInputError('anchor.t1 must not be before anchor.t0');
      let ref: string | undefined;
      if (v.ref !== undefined && v.ref !== null) {
        if (typeof v.ref !== 'string' || !ROW_REF_RE.test(v.ref))
          throw new NoteInputError('anchor.ref must look like slice:12, sched:3 or state:7');
        ref = v.ref;
      }
      return withTrack({ kind: 'range' as const, t0, t1, ...(ref ? { ref } : {}) });
    }
    default:
      throw new NoteInputError('anchor.kind must be "finding", "event" or "range"');
  }
}

export function parseNewNote(body: unknown): NewNote {
  if (!isObj(body)) throw new NoteInputError('send a JSON object {anchor, text, author}');
  onlyKeys(body, ['anchor', 'text', 'author'], 'note');
  return { anchor: parseAnchor(body.anchor), text: parseText(body.text), author: parseAuthor(body.author) };
}

export function parsePatch(body: unknown): { version: number; patch: NotePatch } {
  if (!isObj(body)) throw new NoteInputError('send a JSON object {version, text?, author?, anchor?}');
  onlyKeys(body, ['version', 'text', 'author', 'anchor'], 'note');
  if (body.version === undefined) throw new NoteInputError('version is required (the version of the note you edited)');
  const version = nonNegInt(body.version, 'version');
  const patch: NotePatch = {};
  if (body.text !== undefined) patch.text = parseText(body.text);
  if (body.author !== undefined) patch.author = parseAuthor(body.author);
  if (body.anchor !== undefined) patch.anchor = parseAnchor(body.anchor);
  if (!Object.keys(patch).length) throw new NoteInputError('nothing to change: give text, author or anchor');
  return { version, patch };
}
