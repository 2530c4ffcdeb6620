/** Strings of repeated values, one instance each: ranges of a text or of its bytes interned, and memoised string functions. */
import { type ByteKey, asciiBytes, sameBytes } from './byte_keys.ts';

/**
 * A cache keyed by a range of characters, looked up without slicing: the
 * key's length and a few of its characters pick a bucket, a native
 * `startsWith` confirms the entry. Direct-mapped buckets of a few entries;
 * a full bucket starts over (bounded memory whatever the input).
 */
export class RangeMemo<T> {
  private readonly keys: string[][];
  /** keys[i][k] as bytes (asciiBytes), for getBytes. */
  private readonly keysBytes: ByteKey[][];
  private readonly values: T[][];
  private readonly mask: number;
  constructor(
    bits = 10,
    private readonly perBucket = 8,
  ) {
    this.mask = (1 << bits) - 1;
    this.keys = Array.from({ length: 1 << bits }, () => []);
    this.keysBytes = Array.from({ length: 1 << bits }, () => []);
    this.values = Array.from({ length: 1 << bits }, () => []);
  }
  private slot(t: string, s: number, e: number): number {
    const len = e - s;
    let h = Math.imul(len, 0x9e3779b1) ^ t.charCodeAt(e - 1);
    h = Math.imul(h, 31) + t.charCodeAt(s);
    h = Math.imul(h, 31) + t.charCodeAt(s + (len >> 1));
    if (len > 2) {
      h = Math.imul(h, 31) + t.charCodeAt(e - 2);
      h = Math.imul(h, 31) + t.charCodeAt(e - 3);
    }
    if (len > 6) h = Math.imul(h, 31) + t.charCodeAt(s + (len >> 2));
    return (h ^ (h >>> 11) ^ (h >>> 21)) & this.mask;
  }
  /** slot() on bytes: b[i] === t.charCodeAt(i) for the ASCII text b holds. */
  private slotBytes(b: Uint8Array, s: number, e: number): number {
    const len = e - s;
    let h = Math.imul(len, 0x9e3779b1) ^ b[e - 1]!;
    h = Math.imul(h, 31) + b[s]!;
    h = Math.imul(h, 31) + b[s + (len >> 1)]!;
    if (len > 2) {
      h = Math.imul(h, 31) + b[e - 2]!;
      h = Math.imul(h, 31) + b[e - 3]!;
    }
    if (len > 6) h = Math.imul(h, 31) + b[s + (len >> 2)]!;
    return (h ^ (h >>> 11) ^ (h >>> 21)) & this.mask;
  }
  /** get() for the ASCII text whose bytes are `b` (same positions): compares bytes. */
  getBytes(b: Uint8Array, s: number, e: number): T | undefined {
    const i = this.slotBytes(b, s, e);
    const ks = this.keysBytes[i]!;
    const len = e - s;
    for (let k = 0; k < ks.length; k++) {
      const key = ks[k]!;
      if (key.n === len && sameBytes(b, s, key)) return this.values[i]![k];
    }
    return undefined;
  }
  /** The value stored for t.slice(s, e) (e > s), or undefined. */
  get(t: string, s: number, e: number): T | undefined {
    const i = this.slot(t, s, e);
    const ks = this.keys[i]!;
    const len = e - s;
    for (let k = 0; k < ks.length; k++) {
      const key = ks[k]!;
      if (key.length === len && t.startsWith(key, s)) return this.values[i]![k];
    }
    return undefined;
  }
  /** Stores value for key === t.slice(s, e). */
  set(t: string, s: number, e: number, key: string, value: T): void {
    const i = this.slot(t, s, e);
    const ks = this.keys[i]!;
    const kb = this.keysBytes[i]!;
    const vs = this.values[i]!;
    if (ks.length >= this.perBucket) {
      ks.length = 0;
      kb.length = 0;
      vs.length = 0;
    }
    ks.push(key);
    kb.push(asciiBytes(key));
    vs.push(value);
  }
}

/**
 * A copy of `s` that does not share the characters of a larger string. A
 * slice of the decoded block keeps the whole block (1 MB) alive; strings kept
 * in long-lived caches must not. (Concatenation + slice makes V8 allocate a
 * fresh flat string.)
 */
export function flat(s: string): string {
  return s.length < 13 ? s : (s + ' ').slice(0, -1);
}

/** Longest string interned; longer ones are sliced. */
const INTERN_MAX_CHARS = 80;

const internMemo = new RangeMemo<string>(12, 4);

/**
 * t.slice(s, e), returning the same string instance for repeated values
 * (symbolic flags, symbols, pointers, task names): no allocation for a
 * repeat, and consumers that hash strings (Map keys) hash each instance once.
 */
export function internRange(t: string, s: number, e: number): string {
  const len = e - s;
  if (len > INTERN_MAX_CHARS || len <= 0) return t.slice(s, e);
  const hit = internMemo.get(t, s, e);
  if (hit !== undefined) return hit;
  const v = flat(t.slice(s, e));
  internMemo.set(t, s, e, v, v);
  return v;
}

/**
 * internRange on bytes: the ASCII text b[s, e) as a string, the same
 * instance for repeated values (internRange's memo), made from the bytes
 * (no string of the whole block is needed).
 */
export function internBytes(b: Uint8Array, s: number, e: number): string {
  const len = e - s;
  if (len <= 0) return '';
  if (len <= INTERN_MAX_CHARS) {
    const hit = internMemo.getBytes(b, s, e);
    if (hit !== undefined) return hit;
  }
  const v = latin1(b, s, e);
  if (len <= INTERN_MAX_CHARS) internMemo.set(v, 0, len, v, v);
  return v;
}

// Buffer's native latin1 decoder, which works on any Uint8Array view.
const latin1Slice = (Buffer.prototype as unknown as { latin1Slice: (this: Uint8Array, s: number, e: number) => string })
  .latin1Slice;

/** The bytes b[s, e) as a string of the same character codes (ASCII text: the text). */
export function latin1(b: Uint8Array, s: number, e: number): string {
  return latin1Slice.call(b, s, e);
}

/** internRange, on bytes when b (t's ASCII bytes) is given. */
export function internAt(b: Uint8Array | null, t: string, s: number, e: number): string {
  return b !== null ? internBytes(b, s, e) : internRange(t, s, e);
}

/** Bounded memo for pure string -> string functions of repeated values. */
export function memoize(fn: (s: string) => string, max = 4096): (s: string) => string {
  let cache = new Map<string, string>();
  return (s) => {
    let v = cache.get(s);
    if (v === undefined) {
      const key = flat(s);
      v = flat(fn(key));
      if (cache.size >= max) cache = new Map();
      cache.set(key, v);
    }
    return v;
  };
}
