/** Keys as bytes, compared in place against a block of ASCII text (a word at a time). */

/**
 * A key to compare against bytes: the characters of a string, one byte per
 * UTF-16 unit (a non-ASCII unit becomes 0xff, which no ASCII text holds, so
 * it never matches), also as little-endian 32-bit words for comparing four
 * bytes at a time.
 */
export interface ByteKey {
  readonly n: number;
  readonly bytes: Uint8Array;
  /** Words at 0, 4, 8, ... and, when n % 4 !== 0, a last one at n - 4 (n >= 4). */
  readonly words: Int32Array;
}

export function asciiBytes(s: string): ByteKey {
  const n = s.length;
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    bytes[i] = c < 128 ? c : 0xff;
  }
  const words = new Int32Array(n < 4 ? 0 : (n >> 2) + (n & 3 ? 1 : 0));
  setKeyWords(bytes, n, words);
  return { n, bytes, words };
}

/** A ByteKey rewritten in place (setByteKey): a key that changes often, without allocating. */
export interface MutableByteKey extends ByteKey {
  n: number;
}

export function newMutableByteKey(capacity: number): MutableByteKey {
  return { n: 0, bytes: new Uint8Array(capacity), words: new Int32Array((capacity >> 2) + 1) };
}

/** Makes key the bytes b[s, s + n); if they do not fit, key becomes empty (n = 0, matches nothing here). */
export function setByteKey(key: MutableByteKey, b: Uint8Array, s: number, n: number): void {
  const bytes = key.bytes;
  if (n > bytes.length || n < 4) {
    key.n = 0;
    return;
  }
  for (let k = 0; k < n; k++) bytes[k] = b[s + k]!;
  setKeyWords(bytes, n, key.words);
  key.n = n;
}

/** ByteKey.words of bytes[0, n) (n >= 4: the words; else nothing). */
function setKeyWords(bytes: Uint8Array, n: number, words: Int32Array): void {
  if (n < 4) return;
  const full = n >> 2;
  for (let i = 0; i < full; i++) words[i] = wordAt(bytes, i * 4);
  if (n & 3) words[full] = wordAt(bytes, n - 4);
}

/** The little-endian int32 at bytes[i] (DataView.getInt32(i, true)). */
function wordAt(bytes: Uint8Array, i: number): number {
  return bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
}

/**
 * A DataView over the whole buffer of the last block compared against, and
 * that buffer. Keyed by the buffer, not the view: the field worker hands
 * each event's text to its parser as a view of the batch's bytes of its
 * own, and a DataView made per event was 30-50 ms of the field worker's
 * time on a 1M-event text (cpu-prof, sched_wq and kmem tracefs text).
 * Positions are b's plus b.byteOffset; callers compare only inside b
 * (sameBytes checks its end, sameRangeBytes is given ranges inside b).
 * The last view and its offset are kept too: reading a Buffer's `buffer`
 * and `byteOffset` at every comparison cost as much again (~3% of the
 * field worker on compile_syscalls' report text), and the comparisons of
 * one event all have the same view.
 */
let viewBuffer: ArrayBufferLike | null = null;

let view: DataView = new DataView(new ArrayBuffer(8));

let viewOf: Uint8Array | null = null;

/** viewOf's byteOffset: where b[0] is in view. */
let viewOffset = 0;

/** The DataView over b's buffer (made once per buffer); sets viewOffset to b's offset in it. */
function viewOfBlock(b: Uint8Array): DataView {
  if (b !== viewOf) {
    viewOf = b;
    viewOffset = b.byteOffset;
    const buffer = b.buffer;
    if (buffer !== viewBuffer) {
      viewBuffer = buffer;
      view = new DataView(buffer);
    }
  }
  return view;
}

/** Whether b[s, s + key.n) equals key. */
export function sameBytes(b: Uint8Array, s: number, key: ByteKey): boolean {
  const n = key.n;
  if (s + n > b.length) return false;
  if (n < 4) {
    const kb = key.bytes;
    for (let k = 0; k < n; k++) if (b[s + k] !== kb[k]) return false;
    return true;
  }
  const dv = viewOfBlock(b);
  const at = s + viewOffset;
  const w = key.words;
  const full = n >> 2;
  for (let i = 0; i < full; i++) if (dv.getInt32(at + i * 4, true) !== w[i]) return false;
  return (n & 3) === 0 || dv.getInt32(at + n - 4, true) === w[full];
}

/** sameBytes within the text b[.., e): whether b[s, s + key.n) equals key and ends by e. */
export function sameBytesBefore(b: Uint8Array, s: number, e: number, key: ByteKey): boolean {
  return e - s >= key.n && sameBytes(b, s, key);
}

/** Whether b[s, s + n) equals b[t, t + n) (both ranges inside b). */
export function sameRangeBytes(b: Uint8Array, s: number, t: number, n: number): boolean {
  // The view spans the whole buffer: bytes past b's end are not b's.
  if (s + n > b.length || t + n > b.length) return false;
  if (n < 4) {
    for (let k = 0; k < n; k++) if (b[s + k] !== b[t + k]) return false;
    return true;
  }
  const dv = viewOfBlock(b);
  const o = viewOffset;
  const last = n - 4;
  for (let i = 0; i < last; i += 4) if (dv.getInt32(o + s + i, true) !== dv.getInt32(o + t + i, true)) return false;
  return dv.getInt32(o + s + last, true) === dv.getInt32(o + t + last, true);
}

/** Index of byte `c` in b[s, e), or -1. */
export function indexOfByte(b: Uint8Array, c: number, s: number, e: number): number {
  for (let i = s; i < e; i++) if (b[i] === c) return i;
  return -1;
}
