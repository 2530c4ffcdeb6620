/**
 * Content-based input detection: which compression wraps the bytes, and
 * whether the (decompressed) bytes look like a trace.dat, a Perfetto trace
 * (perfetto/sniff_perfetto.ts) or like text.
 *
 * Never looks at file names. Callers pass the first bytes of a stream (a few
 * KB is plenty: SNIFF_BYTES); for compressed input `format` describes the
 * compressed bytes and is 'unknown' — decompress first and sniff again.
 */

import { looksLikePerfetto } from './perfetto/sniff_perfetto.ts';

export type Compression = 'gzip' | 'zstd' | 'xz';
export type SniffedFormat = 'trace_dat' | 'perfetto' | 'text' | 'unknown';

export interface SniffResult {
  compression: Compression | null;
  format: SniffedFormat;
}

/** How many leading bytes sniffInput() looks at for the text check. */
export const SNIFF_BYTES = 8192;

const GZIP_MAGIC = [0x1f, 0x8b];
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
const XZ_MAGIC = [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00];
/** trace.dat: 0x17 0x08 0x44 'tracing' (trace-cmd's file magic). */
const TRACE_DAT_MAGIC = [0x17, 0x08, 0x44, 0x74, 0x72, 0x61, 0x63, 0x69, 0x6e, 0x67];

/**
 * Share of bytes in the sniffed window that may be non-text before the input
 * counts as binary. Real traces are ASCII apart from the odd non-UTF-8 task
 * name, so 5% leaves room for those while rejecting any real binary format
 * (which has NUL bytes and control characters everywhere).
 */
const MAX_NON_TEXT_SHARE = 0.05;

function startsWith(bytes: Uint8Array, magic: readonly number[]): boolean {
  if (bytes.length < magic.length) return false;
  for (let i = 0; i < magic.length; i++) if (bytes[i] !== magic[i]) return false;
  return true;
}

/**
 * Length of the valid UTF-8 multi-byte sequence starting at i, or 0 if the
 * bytes at i are not one. A sequence cut off by the end of the window counts
 * as valid (the window boundary is arbitrary).
 */
function utf8SeqLen(b: Uint8Array, i: number): number {
  const c = b[i]!;
  let n: number;
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c >= 0xe0 && c <= 0xef) n = 3;
  else if (c >= 0xf0 && c <= 0xf4) n = 4;
  else return 0;
  for (let k = 1; k < n; k++) {
    if (i + k >= b.length) return n; // truncated by the window: give it the benefit of the doubt
    const cc = b[i + k]!;
    if (cc < 0x80 || cc > 0xbf) return 0;
  }
  return n;
}

/** True when the bytes are mostly printable ASCII / valid UTF-8 text. */
export function looksLikeText(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, SNIFF_BYTES);
  if (n === 0) return true; // empty input: text (the text decoder reports "no events")
  let bad = 0;
  let i = 0;
  while (i < n) {
    const c = bytes[i]!;
    if (c === 0x0a || c === 0x0d || c === 0x09 || (c >= 0x20 && c < 0x7f)) {
      i++;
      continue;
    }
    if (c === 0) return false; // NUL never occurs in trace text
    if (c >= 0x80) {
      const len = utf8SeqLen(bytes, i);
      if (len > 0) {
        i += len;
        continue;
      }
    }
    bad++;
    i++;
  }
  return bad <= n * MAX_NON_TEXT_SHARE;
}

export function sniffInput(firstBytes: Uint8Array): SniffResult {
  if (startsWith(firstBytes, GZIP_MAGIC)) return { compression: 'gzip', format: 'unknown' };
  if (startsWith(firstBytes, ZSTD_MAGIC)) return { compression: 'zstd', format: 'unknown' };
  if (startsWith(firstBytes, XZ_MAGIC)) return { compression: 'xz', format: 'unknown' };
  if (startsWith(firstBytes, TRACE_DAT_MAGIC)) return { compression: null, format: 'trace_dat' };
  const text = looksLikeText(firstBytes);
  // No magic number: a structural check, and text wins a tie.
  if (!text && looksLikePerfetto(firstBytes.subarray(0, SNIFF_BYTES))) return { compression: null, format: 'perfetto' };
  return { compression: null, format: text ? 'text' : 'unknown' };
}
