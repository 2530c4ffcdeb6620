/**
 * Share links, built the same way the app builds them (app/state/view_state.ts):
 *
 *   <origin>/?trace=<sha256>&t0=<ns>&t1=<ns>&sel=finding:<index>|event:<id>&pin=cpu:1,thread:93&hide=...&note=<noteId>
 *
 * t0/t1 are integer ns from the trace's first event. Track uris are written
 * with `:` instead of `#` (`cpu:1` for the track `cpu#1`): a `#` would start
 * the URL's fragment and cut the link.
 */
import { buildShareLink } from '../../shared/links/link_codec.ts';
import { toPortable, traceFactsOf, type PortableNote, type RecordLike } from '../../shared/links/portable_notes.ts';

export interface LinkView {
  trace: string;
  t0?: number | null;
  t1?: number | null;
  sel?: string | null;
  pinned?: string[];
  hidden?: string[];
  collapsed?: string[];
  note?: string | null;
}

export function uriToParam(uri: string): string {
  return uri.replace('#', ':');
}

export function shareSearch(v: LinkView): string {
  const p: string[] = [`trace=${v.trace}`];
  if (v.t0 != null && v.t1 != null) p.push(`t0=${Math.floor(v.t0)}`, `t1=${Math.ceil(v.t1)}`);
  if (v.sel) p.push(`sel=${v.sel}`);
  const list = (key: string, uris: string[] | undefined) => {
    if (uris?.length)
      p.push(`${key}=${uris.map((u) => encodeURIComponent(uriToParam(u)).replace(/%3A/g, ':')).join(',')}`);
  };
  list('pin', v.pinned);
  list('hide', v.hidden);
  list('fold', v.collapsed);
  if (v.note) p.push(`note=${v.note}`);
  return `?${p.join('&')}`;
}

// The base these links are written with is the server's public base URL
// (server/api/public_url.ts publicBaseUrl), never the request's Host.

/**
 * A view's link with the fragment that makes it work for someone without
 * this server: the trace file's facts and `notes` (as many as fit in 8 KB),
 * as the app writes it (app/links/make_link.ts).
 */
export async function withLinkFragment(viewUrl: string, rec: RecordLike, notes: PortableNote[]): Promise<string> {
  return (await buildShareLink(viewUrl, traceFactsOf(rec), notes.map(toPortable))).url;
}
