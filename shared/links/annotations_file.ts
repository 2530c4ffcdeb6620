/**
 * The annotations file: a trace's notes as a small JSON file to attach to a
 * mail or a bug next to the trace, `<trace name>.stallscope-notes.json`:
 *
 *   {
 *     "format": "stallscope-annotations",
 *     "version": 1,
 *     "trace": {"sha256": "...", "name": "trace.dat", "size": 1234, "format": "trace_dat v7", "kernel": "6.1.0", ...},
 *     "exported_at": "2024-05-01T10:12:00.000Z",
 *     "notes": [{"id", "anchor", "text", "author", "created_at", "updated_at", "version"}, ...]
 *   }
 *
 * `trace` and each note are the shapes a share link carries
 * (portable_notes.ts). Importing merges by note id: a note whose id is
 * already there is kept as it is (the file never overwrites anyone's note).
 * A file of a newer version is refused with a message saying so.
 */
import {
  PORTABLE_LIMITS,
  PortableError,
  isObj,
  onlyKeys,
  parsePortableNotes,
  parseTraceFacts,
  portableTime,
  shown,
  type PortableNote,
  type TraceFacts,
} from './portable_notes.ts';

export const ANNOTATIONS_FORMAT = 'stallscope-annotations';
export const ANNOTATIONS_VERSION = 1;
/** The largest annotations file read (5,000 notes of a few KiB each fit). */
export const ANNOTATIONS_MAX_BYTES = 16 * 1024 * 1024;
export const ANNOTATIONS_SUFFIX = '.stallscope-notes.json';

export interface AnnotationsFile {
  format: typeof ANNOTATIONS_FORMAT;
  version: typeof ANNOTATIONS_VERSION;
  trace: TraceFacts;
  exported_at: string;
  notes: PortableNote[];
}

/** `<trace name>.stallscope-notes.json`, a name safe in a Content-Disposition header and on any file system. */
export function annotationsFileName(traceName: string): string {
  const base =
    traceName
      .replace(/^.*[\\/]/, '')
      .replace(/[^\w.+-]+/g, '_')
      .replace(/^\.+/, '')
      .slice(0, 120) || 'trace';
  return `${base}${ANNOTATIONS_SUFFIX}`;
}

export function annotationsDocument(
  trace: TraceFacts,
  notes: PortableNote[],
  exportedAt: Date = new Date(),
): AnnotationsFile {
  return {
    format: ANNOTATIONS_FORMAT,
    version: ANNOTATIONS_VERSION,
    trace,
    exported_at: exportedAt.toISOString(),
    notes,
  };
}

/** Checks a parsed annotations file; a PortableError names what is wrong. */
export function parseAnnotations(json: unknown): AnnotationsFile {
  if (!isObj(json))
    throw new PortableError(
      'not a stallscope annotations file: expected a JSON object {"format": "stallscope-annotations", ...}',
    );
  if (json.format !== ANNOTATIONS_FORMAT) {
    throw new PortableError(
      `not a stallscope annotations file: "format" is ${json.format === undefined ? 'missing' : shown(json.format)}, expected "${ANNOTATIONS_FORMAT}"`,
    );
  }
  const v = json.version;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1)
    throw new PortableError(`"version" must be a positive integer, not ${shown(v)}`);
  if (v > ANNOTATIONS_VERSION) {
    throw new PortableError(
      `this annotations file was written by a newer stallscope (version ${v}; this one reads version ${ANNOTATIONS_VERSION}): update stallscope to import it`,
    );
  }
  onlyKeys(json, ['format', 'version', 'trace', 'exported_at', 'notes'], 'file');
  return {
    format: ANNOTATIONS_FORMAT,
    version: ANNOTATIONS_VERSION,
    trace: parseTraceFacts(json.trace, 'trace'),
    exported_at:
      json.exported_at === undefined ? new Date(0).toISOString() : portableTime(json.exported_at, 'exported_at'),
    notes: parsePortableNotes(json.notes, 'notes', PORTABLE_LIMITS.notesPerFile),
  };
}

/** Reads an annotations file's text: the file, or a message (never an exception). */
export function readAnnotations(text: string): { ok: true; file: AnnotationsFile } | { ok: false; error: string } {
  if (typeof text !== 'string') return { ok: false, error: 'not a stallscope annotations file (no text)' };
  if (text.length > ANNOTATIONS_MAX_BYTES)
    return {
      ok: false,
      error: `the file is too large (${text.length.toLocaleString('en')} characters, at most ${ANNOTATIONS_MAX_BYTES.toLocaleString('en')})`,
    };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return {
      ok: false,
      error: `not a stallscope annotations file: not valid JSON (${(e as Error).message.slice(0, 120)})`,
    };
  }
  try {
    return { ok: true, file: parseAnnotations(json) };
  } catch (e) {
    if (e instanceof PortableError) return { ok: false, error: e.message };
    return { ok: false, error: `could not read the annotations file: ${(e as Error)?.message ?? String(e)}` };
  }
}
