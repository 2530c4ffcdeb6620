/**
 * The annotations file in the app (shared/links/annotations_file.ts):
 * download a trace's notes as `<name>.stallscope-notes.json`, and import one
 * (read and checked here first, for a message at once; the server checks it
 * again and merges by note id).
 */
import { ANNOTATIONS_MAX_BYTES, readAnnotations } from '../../shared/links/annotations_file.ts';
import { requestJson } from '../api/client.ts';
import type { ImportAnswer } from './link_state.ts';

const base = (trace: string) => `/api/traces/${encodeURIComponent(trace)}`;

/** Downloads the trace's notes as an annotations file. */
export async function downloadAnnotations(trace: string): Promise<string> {
  // The access token, when there is one, travels in its cookie.
  const res = await fetch(`${base(trace)}/annotations`);
  if (!res.ok)
    throw new Error(((await res.json().catch(() => null)) as { error?: string } | null)?.error ?? `HTTP ${res.status}`);
  const name =
    /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'trace.stallscope-notes.json';
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return name;
}

/** Why a file cannot be imported into `trace` (checked in the page), or null. */
export class AnnotationsFileError extends Error {}

/** Imports an annotations file into `trace`'s notes. */
export async function importAnnotations(trace: string, traceName: string, file: File): Promise<ImportAnswer> {
  if (file.size > ANNOTATIONS_MAX_BYTES) {
    throw new AnnotationsFileError(
      `${file.name} is too large for a notes file (${file.size.toLocaleString('en')} bytes, at most ${ANNOTATIONS_MAX_BYTES.toLocaleString('en')})`,
    );
  }
  const read = readAnnotations(await file.text());
  if (!read.ok) throw new AnnotationsFileError(`${file.name}: ${read.error}`);
  const t = read.file.trace;
  if (t.sha256 !== trace) {
    throw new AnnotationsFileError(
      `${file.name} holds notes for another trace: ${t.name} (sha256 ${t.sha256}), not ${traceName} (sha256 ${trace})`,
    );
  }
  return requestJson<ImportAnswer>('POST', `${base(trace)}/annotations`, read.file);
}

/** The outcome of an import in one sentence. */
export function describeImport(a: ImportAnswer, from: string): string {
  const parts = [`${a.added} note${a.added === 1 ? '' : 's'} added from ${from}`];
  if (a.existing) parts.push(`${a.existing} already here (kept as they are)`);
  if (a.reanchored.length)
    parts.push(`${a.reanchored.length} anchored to their time range (${a.reanchored[0]!.reason})`);
  if (a.skipped.length) parts.push(`${a.skipped.length} skipped (${a.skipped[0]!.reason})`);
  return `${parts.join('; ')}.`;
}
