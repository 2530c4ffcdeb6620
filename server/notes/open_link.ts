/**
 * `stallscope open URL [FILE]`: a share link made on another stallscope,
 * opened on this one. The link is only parsed, never fetched: its query is
 * the view, its fragment the trace's facts and notes (shared/links/
 * link_codec.ts), its host is ignored. No path in it is read: the only file
 * read is FILE, named by the user, and it must have the link's sha256.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { decodeLinkFragment, LINK_LIMITS } from '../../shared/links/link_codec.ts';
import type { TraceFacts } from '../../shared/links/portable_notes.ts';
import { isTraceId } from '../../shared/contract/trace_id.ts';

export class LinkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LinkError';
  }
}

export interface SharedLink {
  /** The trace's sha256 (the link's `?trace=`). */
  trace: string;
  /** The view (query, without any access token) and the fragment, to open on this server. */
  search: string;
  hash: string;
  /** What the fragment says about the file, when it says. */
  facts: TraceFacts | null;
  notes: number;
  /** Why the fragment could not be read (the view still opens). */
  problem: string | null;
}

export function looksLikeLink(arg: string): boolean {
  return /^https?:\/\//i.test(arg);
}

export async function readSharedLink(text: string): Promise<SharedLink> {
  if (text.length > LINK_LIMITS.urlChars * 2)
    throw new LinkError(
      `the link is ${text.length} characters long: no stallscope link is longer than ${LINK_LIMITS.urlChars}`,
    );
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new LinkError(`not a URL: ${JSON.stringify(text.slice(0, 80))}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new LinkError('a stallscope link starts with http:// or https://');
  const trace = u.searchParams.get('trace') ?? '';
  if (!isTraceId(trace)) throw new LinkError('not a stallscope share link: it has no trace=<sha256 of the trace file>');
  u.searchParams.delete('token');
  const r = await decodeLinkFragment(u.hash);
  let facts: TraceFacts | null = null;
  let notes = 0;
  let problem: string | null = null;
  if (r.kind === 'ok') {
    if (r.payload.trace.sha256 === trace) {
      facts = r.payload.trace;
      notes = r.payload.notes.length;
    } else {
      problem = `the link's notes are for another trace (sha256 ${r.payload.trace.sha256}) than its view: not used`;
    }
  } else if (r.kind === 'error') {
    problem = r.message;
  }
  return { trace, search: u.search, hash: problem ? '' : u.hash, facts, notes, problem };
}

/** The file a link needs, in one line. */
export function describeNeeded(l: SharedLink): string {
  const f = l.facts;
  if (!f) return `the trace with sha256 ${l.trace}`;
  const parts = [`${f.size.toLocaleString('en')} bytes`, `sha256 ${f.sha256}`];
  if (f.format) parts.push(f.format);
  if (f.kernel) parts.push(`kernel ${f.kernel}`);
  if (f.recorded) parts.push(`recorded ${f.recorded}`);
  return `${f.name} (${parts.join(', ')})`;
}

export function sha256OfFile(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (c) => h.update(c))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}
