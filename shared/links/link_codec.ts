/**
 * Self-contained share links: the trace's facts and the notes in focus
 * travel in the URL's fragment, so a reviewer whose stallscope has never
 * seen them (another laptop, a team server) gets them too:
 *
 *   http://127.0.0.1:7420/?trace=<sha256>&t0=..&t1=..&sel=finding:3&note=<id>#link=v1.<payload>
 *
 * The view stays in the query, as before (hand-editable, and what older
 * stallscopes read). The fragment never reaches a server: browsers do not
 * send it, and `stallscope open URL` only parses it.
 *
 * payload = base64url(deflate-raw(UTF-8 JSON)), without padding, where the
 * JSON of format v1 is
 *
 *   {"trace": TraceFacts, "notes": PortableNote[], "omitted": <notes that did not fit>}
 *
 * The version is in the link (`v1.`): a later stallscope keeps a decoder for
 * every version it ever wrote (tests/unit/link_codec.test.ts holds a v1
 * link string that must keep opening), and a link from a newer one is
 * refused with a message saying so, not misread.
 *
 * Bounded at every step, whatever the link holds: the payload at most
 * LINK_LIMITS.payloadChars characters (checked before decoding), the
 * inflated JSON at most LINK_LIMITS.jsonBytes (inflation stops there:
 * the compressed bytes are fed in small slices, so even a deflate bomb
 * produces at most ~1 KiB per input byte of a slice before it is cut off),
 * at most LINK_LIMITS.notes notes, each checked by portable_notes.ts.
 * decodeLinkFragment never throws: every failure is a message.
 *
 * Compression is the platform's CompressionStream('deflate-raw') (Chromium,
 * WebKit, Firefox; Node >= 20.12): no library to ship to the browser, the
 * same code in the app and the command line, and a streaming decompressor
 * that lets us stop at the bound.
 */
import {
  PortableError,
  isObj,
  onlyKeys,
  parsePortableNotes,
  parseTraceFacts,
  type PortableNote,
  type TraceFacts,
} from './portable_notes.ts';

export const LINK_FORMAT_VERSION = 1;

export const LINK_LIMITS = {
  /** A whole link with its fragment: past this the app offers an annotations file. */
  urlChars: 8192,
  /** The fragment's payload, checked before anything is decoded. */
  payloadChars: 8192,
  /** The JSON the payload inflates to. */
  jsonBytes: 64 * 1024,
  /** Notes in one link. */
  notes: 100,
} as const;

/** Compressed bytes handed to the decompressor at a time (deflate expands at most ~1032x). */
const INFLATE_SLICE = 64;

export interface LinkPayload {
  trace: TraceFacts;
  notes: PortableNote[];
  /** Notes in focus that did not fit the link (the author can send an annotations file). */
  omitted: number;
}

export type LinkDecodeResult =
  { kind: 'none' } | { kind: 'ok'; payload: LinkPayload; version: number } | { kind: 'error'; message: string };

const FRAGMENT_KEY = 'link';

// ---- base64url ------------------------------------------------------------

export function bytesToBase64url(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The bytes, or a message naming the first character that is not base64url. */
export function base64urlToBytes(s: string): Uint8Array | string {
  const bad = /[^A-Za-z0-9_-]/.exec(s);
  if (bad) return `character ${bad.index + 1} (${JSON.stringify(bad[0])}) is not base64url`;
  if (s.length % 4 === 1) return `${s.length} characters cannot be base64url (cut short?)`;
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// ---- deflate-raw ------------------------------------------------------------

function hasDeflateRaw(): boolean {
  try {
    new DecompressionStream('deflate-raw');
    return true;
  } catch {
    return false;
  }
}

export async function deflateRaw(bytes: Uint8Array): Promise<Uint8Array> {
  const cs = new CompressionStream('deflate-raw');
  const writer = cs.writable.getWriter();
  void writer.write(bytes as Uint8Array<ArrayBuffer>).catch(() => undefined);
  void writer.close().catch(() => undefined);
  return new Uint8Array(await new Response(cs.readable).arrayBuffer());
}

/**
 * Inflates at most `maxBytes`: 'too-big' as soon as the output passes it
 * (the decompressor is cancelled there), 'corrupt' for damaged or cut-off data.
 */
export async function inflateRawBounded(
  input: Uint8Array,
  maxBytes: number,
): Promise<Uint8Array | 'too-big' | 'corrupt'> {
  const ds = new DecompressionStream('deflate-raw');
  const writer = ds.writable.getWriter();
  const reader = ds.readable.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let over = false;
  const read = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      total += value.byteLength;
      if (total > maxBytes) {
        over = true;
        await reader.cancel().catch(() => undefined);
        return;
      }
      chunks.push(value);
    }
  })();
  const write = (async () => {
    for (let i = 0; i < input.length && !over; i += INFLATE_SLICE) {
      await writer.write(input.slice(i, i + INFLATE_SLICE));
    }
    if (!over) await writer.close();
  })();
  const [r, w] = await Promise.allSettled([read, write]);
  if (over) return 'too-big';
  if (r.status === 'rejected' || w.status === 'rejected') return 'corrupt';
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

// ---- the fragment -------------------------------------------------------------

/** The fragment (without `#`) that carries `payload`. */
export async function encodeLinkFragment(payload: LinkPayload): Promise<string> {
  const json = JSON.stringify({ trace: payload.trace, notes: payload.notes, omitted: payload.omitted });
  const packed = await deflateRaw(new TextEncoder().encode(json));
  return `${FRAGMENT_KEY}=v${LINK_FORMAT_VERSION}.${bytesToBase64url(packed)}`;
}

/** The `link=` value of a URL fragment (`#link=v1....`, also among other `&`-separated parts), or null. */
export function linkFragmentValue(hash: string): string | null {
  const h = hash.startsWith('#') ? hash.slice(1) : hash;
  for (const part of h.split('&')) {
    if (part.startsWith(`${FRAGMENT_KEY}=`)) return part.slice(FRAGMENT_KEY.length + 1);
  }
  return null;
}

const DAMAGED = 'The notes in this link are damaged';

/** Reads a URL fragment. Never throws: a link that cannot be read gives a message saying why. */
export async function decodeLinkFragment(hash: string): Promise<LinkDecodeResult> {
  try {
    return await decode(hash);
  } catch (e) {
    return {
      kind: 'error',
      message: `${DAMAGED} (${(e as Error)?.message ?? String(e)}): the view is shown without them.`,
    };
  }
}

async function decode(hash: string): Promise<LinkDecodeResult> {
  if (typeof hash !== 'string') return { kind: 'none' };
  // Bound before anything else: a fragment is not read past its limit.
  if (hash.length > LINK_LIMITS.payloadChars + 64) {
    return {
      kind: 'error',
      message: `The notes in this link are too large to read (${hash.length.toLocaleString('en')} characters, at most ${LINK_LIMITS.payloadChars.toLocaleString('en')}): the view is shown without them. Ask for the annotations file (.stallscope-notes.json) instead.`,
    };
  }
  const value = linkFragmentValue(hash);
  if (value === null) return { kind: 'none' };
  const m = /^v(\d{1,6})\.(.*)$/s.exec(value);
  if (!m)
    return {
      kind: 'error',
      message: `${DAMAGED} (the fragment does not start with a format version like v1.): the view is shown without them.`,
    };
  const version = Number(m[1]);
  if (version !== LINK_FORMAT_VERSION) {
    return {
      kind: 'error',
      message:
        version > LINK_FORMAT_VERSION
          ? `This link was made by a newer stallscope (link format v${version}; this one reads v${LINK_FORMAT_VERSION}): its notes are not shown, the view is. Update stallscope, or ask for the annotations file.`
          : `This link's format v${version} is not one stallscope ever wrote: its notes are not shown, the view is.`,
    };
  }
  if (!hasDeflateRaw()) {
    return {
      kind: 'error',
      message:
        "This browser cannot decompress the link's notes (no CompressionStream 'deflate-raw'): the view is shown without them.",
    };
  }
  const bytes = base64urlToBytes(m[2]!);
  if (typeof bytes === 'string')
    return {
      kind: 'error',
      message: `${DAMAGED} (${bytes}; was the link cut or edited?): the view is shown without them.`,
    };
  const inflated = await inflateRawBounded(bytes, LINK_LIMITS.jsonBytes);
  if (inflated === 'too-big') {
    return {
      kind: 'error',
      message: `The notes in this link expand to more than ${LINK_LIMITS.jsonBytes / 1024} KiB: refused (no link stallscope writes is that large). The view is shown without them.`,
    };
  }
  if (inflated === 'corrupt')
    return {
      kind: 'error',
      message: `${DAMAGED} (the compressed data is corrupt or cut short; was the link cut or edited?): the view is shown without them.`,
    };
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(inflated));
  } catch {
    return { kind: 'error', message: `${DAMAGED} (not JSON after decompression): the view is shown without them.` };
  }
  try {
    return { kind: 'ok', payload: parsePayloadV1(json), version };
  } catch (e) {
    if (e instanceof PortableError)
      return { kind: 'error', message: `${DAMAGED} (${e.message}): the view is shown without them.` };
    throw e;
  }
}

export function parsePayloadV1(json: unknown): LinkPayload {
  if (!isObj(json)) throw new PortableError('the payload must be an object {trace, notes}');
  onlyKeys(json, ['trace', 'notes', 'omitted'], 'payload');
  const omitted = json.omitted ?? 0;
  if (typeof omitted !== 'number' || !Number.isSafeInteger(omitted) || omitted < 0)
    throw new PortableError('omitted must be a non-negative integer');
  return {
    trace: parseTraceFacts(json.trace, 'trace'),
    notes: parsePortableNotes(json.notes ?? [], 'notes', LINK_LIMITS.notes),
    omitted,
  };
}

/**
 * A share link: `base` (origin, path and query of the view) with a fragment
 * carrying the trace's facts and as many of `notes` as fit in
 * LINK_LIMITS.urlChars, taken in the order given (the one in focus first):
 * a note that does not fit is left out and the next is tried. `omitted`
 * counts the notes left out: the app then offers the annotations file.
 */
export async function buildShareLink(
  base: string,
  trace: TraceFacts,
  notes: PortableNote[],
  maxChars: number = LINK_LIMITS.urlChars,
): Promise<{ url: string; included: number; omitted: number }> {
  const kept: PortableNote[] = [];
  const link = (omitted: number) => encodeLinkFragment({ trace, notes: kept, omitted }).then((f) => `${base}#${f}`);
  // Compression is not additive, so each candidate set is encoded whole
  // (at most LINK_LIMITS.notes tries of a few KiB each). `omitted` is counted
  // as if every remaining note were left out: its digits only shrink as notes are kept.
  for (const n of notes.slice(0, LINK_LIMITS.notes)) {
    kept.push(n);
    if ((await link(notes.length - kept.length)).length > maxChars) kept.pop();
  }
  // Deflate is not monotonic to the byte: if the final count's encoding came out longer, drop from the end.
  for (;;) {
    const url = await link(notes.length - kept.length);
    if (url.length <= maxChars || kept.length === 0)
      return { url, included: kept.length, omitted: notes.length - kept.length };
    kept.pop();
  }
}
