/**
 * Generic `key=value` parsing, plus the value helpers every family uses.
 *
 * A value runs until the next ` key=` (key = [A-Za-z0-9_.]+), so values with
 * spaces (task names like `Web Content`) survive. Decimal integers become
 * numbers (bigint beyond 2^53); everything else stays a string as printed
 * (hex included: for untyped events we cannot know whether it is a number or
 * a pointer). Typed parsers convert hex where the column is numeric.
 *
 * Nor is a pointer-width run of digits with a leading zero
 * (`0000000010000000`, `00000040`): 16 or 8 characters zero-padded is how
 * %p (hashed) and %016lx / %08x print, and a hex value that happens to have
 * no letter would otherwise be stored as a wrong decimal (and give one key
 * ints and strings by chance). Auto keys keep it as printed. Shorter padded
 * runs stay decimals: formats such as sched_waking's `target_cpu=%03d` pad
 * them.
 */
import type { EventFields, FieldValue } from '../../decoded_event.ts';
import type { FieldParser, RangeParser } from './types.ts';

export function isKeyChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 46;
}

/** Decimal integer (optional sign) -> number / bigint, else null. */
export function parseDecimal(s: string): number | bigint | null {
  const n = s.length;
  if (n === 0) return null;
  let i = 0;
  let neg = false;
  const c0 = s.charCodeAt(0);
  if (c0 === 45 || c0 === 43) {
    neg = c0 === 45;
    i = 1;
    if (n === 1) return null;
  }
  if (n - i <= 15) {
    let v = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 48 || c > 57) return null;
      v = v * 10 + (c - 48);
    }
    return neg ? -v : v;
  }
  for (let k = i; k < n; k++) {
    const c = s.charCodeAt(k);
    if (c < 48 || c > 57) return null;
  }
  const big = BigInt(s);
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

/** parseDecimal(t.slice(s, e)) without the slice (numbers beyond 15 digits take the slice path). */
export function parseDecimalRange(t: string, s: number, e: number): number | bigint | null {
  const n = e - s;
  if (n <= 0) return null;
  let i = s;
  let neg = false;
  const c0 = t.charCodeAt(s);
  if (c0 === 45 || c0 === 43) {
    neg = c0 === 45;
    i = s + 1;
    if (n === 1) return null;
  }
  if (e - i <= 15) {
    let v = 0;
    for (; i < e; i++) {
      const c = t.charCodeAt(i);
      if (c < 48 || c > 57) return null;
      v = v * 10 + (c - 48);
    }
    return neg ? -v : v;
  }
  return parseDecimal(t.slice(s, e));
}

// ---------------------------------------------------------------------------
// String interning by character range
// ---------------------------------------------------------------------------

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

/** A DataView over the last block compared against (blocks change once per ~1 MB). */
let viewOf: Uint8Array | null = null;
let view: DataView = new DataView(new ArrayBuffer(8));

/** The DataView over b, made once per block. */
function viewOfBlock(b: Uint8Array): DataView {
  if (b !== viewOf) {
    viewOf = b;
    view = new DataView(b.buffer, b.byteOffset, b.byteLength);
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
  const w = key.words;
  const full = n >> 2;
  for (let i = 0; i < full; i++) if (dv.getInt32(s + i * 4, true) !== w[i]) return false;
  return (n & 3) === 0 || dv.getInt32(s + n - 4, true) === w[full];
}

/** Whether b[s, s + n) equals b[t, t + n) (both ranges inside b). */
export function sameRangeBytes(b: Uint8Array, s: number, t: number, n: number): boolean {
  if (n < 4) {
    for (let k = 0; k < n; k++) if (b[s + k] !== b[t + k]) return false;
    return true;
  }
  const dv = viewOfBlock(b);
  const last = n - 4;
  for (let i = 0; i < last; i += 4) if (dv.getInt32(s + i, true) !== dv.getInt32(t + i, true)) return false;
  return dv.getInt32(s + last, true) === dv.getInt32(t + last, true);
}

/** Index of byte `c` in b[s, e), or -1. */
export function indexOfByte(b: Uint8Array, c: number, s: number, e: number): number {
  for (let i = s; i < e; i++) if (b[i] === c) return i;
  return -1;
}

/** parseDecimalRange on bytes (b[i] === t.charCodeAt(i)). */
export function parseDecimalRangeBytes(b: Uint8Array, t: string, s: number, e: number): number | bigint | null {
  const n = e - s;
  if (n <= 0) return null;
  let i = s;
  let neg = false;
  const c0 = b[s]!;
  if (c0 === 45 || c0 === 43) {
    neg = c0 === 45;
    i = s + 1;
    if (n === 1) return null;
  }
  if (e - i <= 15) {
    let v = 0;
    for (; i < e; i++) {
      const c = b[i]!;
      if (c < 48 || c > 57) return null;
      v = v * 10 + (c - 48);
    }
    return neg ? -v : v;
  }
  return parseDecimal(t.slice(s, e));
}

/** Index of char code `c` in t[s, e), or -1 (never scans past e). */
export function indexOfChar(t: string, c: number, s: number, e: number): number {
  for (let i = s; i < e; i++) if (t.charCodeAt(i) === c) return i;
  return -1;
}

/** Whether t[s, s + str.length) equals str. */
export function sameChars(t: string, s: number, str: string): boolean {
  const n = str.length;
  for (let k = 0; k < n; k++) if (t.charCodeAt(s + k) !== str.charCodeAt(k)) return false;
  return true;
}

/** String.prototype.trim's whitespace other than ' ' (and the line terminators). */
export function isOtherSpace(c: number): boolean {
  return (
    (c >= 9 && c <= 13) ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
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

/** Hex digits (with or without 0x) -> number / bigint, else null. */
export function parseHex(s: string): number | bigint | null {
  let t = s;
  if (t.startsWith('0x') || t.startsWith('0X')) t = t.slice(2);
  if (t.length === 0 || !/^[0-9a-fA-F]+$/.test(t)) return null;
  if (t.length <= 13) return parseInt(t, 16);
  const big = BigInt('0x' + t);
  return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

/** A numeric column's value: decimal or 0x-hex. */
export function parseNumeric(s: string): number | bigint | null {
  const d = parseDecimal(s);
  if (d !== null) return d;
  if (s.startsWith('0x') || s.startsWith('0X')) return parseHex(s);
  return null;
}

/**
 * Pointer convention shared with the trace.dat decoder: `0x` + lowercase hex
 * without leading zeros (`00000000dbab40df` -> `0xdbab40df`). Returns null
 * when the text is not hex.
 */
export function normalizePointer(s: string): string | null {
  let t = s;
  if (t.startsWith('0x') || t.startsWith('0X')) t = t.slice(2);
  if (t.length === 0 || !/^[0-9a-fA-F]+$/.test(t)) return null;
  t = t.toLowerCase().replace(/^0+(?=.)/, '');
  return '0x' + t;
}

/**
 * A %pS / %ps function symbol as the bare name: `super_cache_scan+0x0/0x1b0`
 * -> `super_cache_scan`, `xfs_foo+0x0/0x50 [xfs]` -> `xfs_foo`. An address
 * without symbol becomes a normalized pointer.
 */
export function bareSymbol(s: string): string {
  let t = s.trim();
  const sp = t.indexOf(' ');
  if (sp >= 0) t = t.slice(0, sp); // module suffix ` [xfs]`
  const plus = t.indexOf('+');
  if (plus > 0) t = t.slice(0, plus);
  if (t.startsWith('0x') || t.startsWith('0X')) return normalizePointer(t) ?? t;
  return t;
}

/** Decimal -> number, else the string as printed (quotes around the whole value removed). */
export function autoValue(v: string): FieldValue {
  const d = parseDecimal(v);
  if (d !== null) return d;
  if (v.length >= 2 && v.charCodeAt(0) === 34 && v.charCodeAt(v.length - 1) === 34) return v.slice(1, -1);
  return v;
}

/** Key/value pairs of `text` in order; `prefixEnd` receives where the first key starts. */
export function splitKeyValues(text: string): { pairs: Array<[string, string]>; firstKeyAt: number } {
  const n = text.length;
  const starts: number[] = [];
  const eqs: number[] = [];
  let i = 0;
  while (i < n) {
    let j = i;
    while (j < n && isKeyChar(text.charCodeAt(j))) j++;
    if (j > i && j < n && text.charCodeAt(j) === 61) {
      starts.push(i);
      eqs.push(j);
    }
    const sp = text.indexOf(' ', j);
    if (sp < 0) break;
    i = sp + 1;
    while (i < n && text.charCodeAt(i) === 32) i++;
  }
  const pairs: Array<[string, string]> = [];
  for (let k = 0; k < starts.length; k++) {
    const key = text.slice(starts[k]!, eqs[k]!);
    let end = k + 1 < starts.length ? starts[k + 1]! : n;
    while (end > eqs[k]! + 1 && text.charCodeAt(end - 1) === 32) end--;
    pairs.push([key, text.slice(eqs[k]! + 1, end)]);
  }
  return { pairs, firstKeyAt: starts.length ? starts[0]! : n };
}

/** How one printed key is stored: final field name and value kind. */
export interface KeyRule {
  /** The key as printed. */
  printed: string;
  /** printed + '=' */
  eq: string;
  /** eq as bytes (asciiBytes). */
  eqBytes: ByteKey;
  key: string;
  /** 0 = auto (decimal -> number, else text), 1 = always text, 2 = numeric (hex accepted). */
  kind: 0 | 1 | 2;
}

type Builder = (v: FieldValue[]) => EventFields;

/** Longest key sequence given a compiled object builder; longer ones are built key by key. */
const MAX_BUILDER_KEYS = 40;
/** Distinct key sequences remembered per spec (events print a fixed sequence per kernel). */
const MAX_BUILDERS = 64;

/**
 * Per-parser key rules, resolved once per distinct printed key and cached.
 *
 * Speed: storing fields one by one under varying keys makes every store a
 * megamorphic keyed store with a hidden-class transition (~0.3 us each).
 * Events print a fixed key sequence, so each distinct sequence gets a
 * compiled object-literal builder (`{"nid": v[0], ...}`): one fast
 * allocation per event. Keys are restricted to [A-Za-z0-9_.] by the scanner
 * and quoted with JSON.stringify, so input text cannot inject code.
 */
export class KvSpec {
  private readonly rules = new Map<string, KeyRule>();
  private readonly builders = new Map<string, Builder>();
  private readonly extraBuilders = new Map<string, ExtraBuilder>();
  /** Key sequences built lately, most recent first: the likely keys of the next event. */
  readonly recent: SeqEntry[] = [];
  /** Scratch: rules and values of the event being parsed. */
  readonly seq: KeyRule[] = [];
  readonly vals: FieldValue[] = [];
  constructor(
    private readonly rename: Readonly<Record<string, string>> = {},
    private readonly strings: ReadonlySet<string> = new Set(),
    private readonly numeric: ReadonlySet<string> = new Set(),
  ) {}
  rule(printed: string): KeyRule {
    let r = this.rules.get(printed);
    if (r === undefined) {
      printed = flat(printed);
      const key = this.rename[printed] ?? printed;
      r = {
        printed,
        eq: printed + '=',
        eqBytes: asciiBytes(printed + '='),
        key,
        kind: this.strings.has(key) ? 1 : this.numeric.has(key) ? 2 : 0,
      };
      if (this.rules.size < 1024) this.rules.set(printed, r);
    }
    return r;
  }
  /** Moves recent[i] to the front. */
  promote(i: number): void {
    const r = this.recent;
    const ent = r[i]!;
    for (let k = i; k > 0; k--) r[k] = r[k - 1]!;
    r[0] = ent;
  }
  /** Builds the fields object from seq/vals (n pairs). */
  build(n: number): EventFields {
    const seq = this.seq;
    const recent = this.recent;
    for (let r = 0; r < recent.length; r++) {
      const rules = recent[r]!.rules;
      if (rules.length !== n) continue;
      let same = true;
      for (let i = 0; i < n; i++) {
        if (rules[i] !== seq[i]) {
          same = false;
          break;
        }
      }
      if (same) {
        if (r > 0) this.promote(r);
        return recent[0]!.builder(this.vals);
      }
    }
    if (n > MAX_BUILDER_KEYS) {
      const out: EventFields = {};
      for (let i = 0; i < n; i++) out[seq[i]!.key] = this.vals[i]!;
      return out;
    }
    const sig = seq
      .slice(0, n)
      .map((r) => r.key)
      .join('\u0000');
    let b = this.builders.get(sig);
    if (b === undefined) {
      const body = seq
        .slice(0, n)
        .map((r, i) => `${JSON.stringify(r.key)}: v[${i}]`)
        .join(', ');
      b = new Function('v', `return { ${body} };`) as Builder;
      if (this.builders.size < MAX_BUILDERS) this.builders.set(sig, b);
    }
    if (recent.length >= MAX_RECENT_SEQS) recent.pop();
    recent.unshift({ rules: seq.slice(0, n), builder: b, withExtra: null });
    return b(this.vals);
  }

  /**
   * A builder of the object {extra.lead keys, then the entry's keys, then
   * extra.tail keys} from (x, v): x holds the lead values then the tail
   * values, v the pairs' (spec.vals after kvValuesBytes). Compiled once per
   * entry and ExtraKeys: for parsers that read a few fields around the
   * key=value pairs (writeback's `bdi NAME:` before them, workqueue's
   * `work struct PTR` added after them), so the fields come in one object
   * literal rather than by adding keys to the pairs' object one by one (a
   * megamorphic store each). A key the pairs also have keeps the position
   * it would get by assigning in that order (lead fields, then the pairs,
   * then the tail) and the value assigned last: an object literal's rule.
   */
  builderWith(ent: SeqEntry, extra: ExtraKeys): ExtraBuilder {
    // On the entry, by the ExtraKeys object (each parser passes its few
    // constants); entries come and go with `recent`, so compiled builders
    // are also kept by their keys, as build() keeps its own.
    const withExtra = (ent.withExtra ??= new Map());
    let b = withExtra.get(extra);
    if (b === undefined) {
      const lead = extra.lead.map((k, i) => `${JSON.stringify(k)}: x[${i}]`);
      const pairs = ent.rules.map((r, i) => `${JSON.stringify(r.key)}: v[${i}]`);
      const tail = extra.tail.map((k, i) => `${JSON.stringify(k)}: x[${extra.lead.length + i}]`);
      const body = [...lead, ...pairs, ...tail].join(', ');
      b = this.extraBuilders.get(body);
      if (b === undefined) {
        b = new Function('x', 'v', `return { ${body} };`) as ExtraBuilder;
        if (this.extraBuilders.size < MAX_BUILDERS) this.extraBuilders.set(body, b);
      }
      withExtra.set(extra, b);
    }
    return b;
  }
}

/** Fields a parser reads around the key=value pairs (KvSpec.builderWith). */
export interface ExtraKeys {
  readonly lead: readonly string[];
  readonly tail: readonly string[];
}

type ExtraBuilder = (x: FieldValue[], v: FieldValue[]) => EventFields;

/** A key sequence and its object builder. */
export interface SeqEntry {
  rules: KeyRule[];
  builder: Builder;
  /** builderWith()'s builders for this sequence, by ExtraKeys. */
  withExtra: Map<ExtraKeys, ExtraBuilder> | null;
}

/** Key sequences tried on the fast path per spec. */
const MAX_RECENT_SEQS = 4;

const AUTO_SPEC = new KvSpec();

/**
 * Whether a value of `length` characters starting with character code c0
 * has the shape of a zero-padded pointer-width hex (see the header): then
 * auto keys keep it as text even when every character is a digit.
 */
function pointerWidthPadded(c0: number, length: number): boolean {
  return c0 === 48 && (length === 16 || length === 8);
}

/** A value t[s, e) converted by its key's rule. */
function convertRange(r: KeyRule, t: string, s: number, e: number): FieldValue {
  if (r.kind === 1) return internRange(t, s, e);
  if (r.kind === 0 && pointerWidthPadded(t.charCodeAt(s), e - s)) return t.slice(s, e);
  const d = parseDecimalRange(t, s, e);
  if (d !== null) return d;
  if (r.kind === 2) {
    const v = t.slice(s, e);
    return parseNumeric(v) ?? v;
  }
  if (e - s >= 2 && t.charCodeAt(s) === 34 && t.charCodeAt(e - 1) === 34) return t.slice(s + 1, e - 1);
  return r.kind === 0 ? printedValue(t.slice(s, e)) : t.slice(s, e);
}

/** `sym+0xoff/0xsize` (the kernel's %pS) or `sym/0x0` (trace-cmd's hrtimer plugin): the part before the size. */
const SYMBOL_WITH_SIZE = /^([A-Za-z_][\w.]*(?:\+0x[0-9a-f]+)?)\/0x[0-9a-f]+$/;
/** `7 [action=SCHED]`, `4306014073 [timeout=25]`: a number and, in brackets, what it means. */
const NUMBER_WITH_NOTE = /^(-?\d+) \[[^\]]*\]$/;
/** `flush on task switch (0)` (tlb_flush `reason:%s (%d)`): a name and, in parentheses, its number. */
const NAME_WITH_NUMBER = /^[^()]* \((-?\d+)\)$/;

/**
 * A printed value that is not a plain decimal, in the form the trace.dat
 * decoder gives the same field (event_decoder.ts, `asPrinted`), so that an
 * untyped event's args read alike from every source of one recording:
 *   `(nil)` (a NULL %p, as trace-cmd prints it)     -> `0x0`, as other pointers
 *   `f+0x45/0x1b0` (%pS), `f/0x0`                   -> `f+0x45`, `f` (trace-cmd report's form)
 *   `7 [action=SCHED]`, `flush on task switch (0)`  -> 7, 0 (the field; the name is the format's table)
 *   `sched_ttwu_pending,` (`func=%ps, csd=%p`)      -> `sched_ttwu_pending` (the comma separates fields)
 * Anything else stays as printed.
 */
export function printedValue(v: string): FieldValue {
  const n = v.length;
  if (n === 0) return v;
  if (v === '(nil)') return '0x0';
  if (n > 1 && v.charCodeAt(n - 1) === 44 /* , */) {
    const bare = v.slice(0, -1);
    return parseDecimal(bare) ?? printedValue(bare);
  }
  const last = v.charCodeAt(n - 1);
  if (last === 93 /* ] */) {
    const m = NUMBER_WITH_NOTE.exec(v);
    if (m !== null) return parseDecimal(m[1]!) ?? v;
  } else if (last === 41 /* ) */) {
    const m = NAME_WITH_NUMBER.exec(v);
    if (m !== null) return parseDecimal(m[1]!) ?? v;
  } else if (v.includes('/0x')) {
    const m = SYMBOL_WITH_SIZE.exec(v);
    if (m !== null) return m[1]!;
  }
  return v;
}

/** convertRange on bytes (b[i] === t.charCodeAt(i), ASCII). */
function convertRangeBytes(r: KeyRule, b: Uint8Array, t: string, s: number, e: number): FieldValue {
  if (r.kind === 1) return internBytes(b, s, e);
  if (r.kind === 0 && pointerWidthPadded(b[s]!, e - s)) return t.slice(s, e);
  const d = parseDecimalRangeBytes(b, t, s, e);
  if (d !== null) return d;
  return convertRange(r, t, s, e);
}

/**
 * The key=value pairs of `text` as a fresh fields object following `spec`
 * (renames to format-file names, text-only and numeric keys), or null when
 * the text has no pair. A value runs until the next ` key=`.
 */
export function kvObject(text: string, spec: KvSpec = AUTO_SPEC): EventFields | null {
  return kvRange(text, 0, text.length, spec);
}

const NO_RULES: KeyRule[] = [];

/**
 * The pairs of t[s, n) when they are exactly the key sequence `rules` (the
 * first key already checked at s) with values free of spaces, each followed
 * by one run of spaces and the next key: then the general scan below would
 * find the same keys and values. Values go to `vals`. False: not sure.
 */
function kvFast(t: string, s: number, n: number, rules: KeyRule[], vals: FieldValue[]): boolean {
  const m = rules.length;
  let p = s;
  for (let k = 0; ; k++) {
    const rule = rules[k]!;
    const eq = rule.eq;
    if (k > 0 && !t.startsWith(eq, p)) return false;
    const v0 = p + eq.length;
    if (v0 > n) return false;
    if (rule.kind !== 1) {
      // a plain decimal: read it, the space after it ends the value
      let q = v0;
      let v = 0;
      let c = 0;
      while (q < n && (c = t.charCodeAt(q)) >= 48 && c <= 57) {
        v = v * 10 + (c - 48);
        q++;
      }
      if (q > v0 && q - v0 <= 15 && !(rule.kind === 0 && pointerWidthPadded(t.charCodeAt(v0), q - v0))) {
        if (q === n) {
          if (k !== m - 1) return false;
          vals[k] = v;
          return true;
        }
        if (c === 32 && k !== m - 1) {
          let r = q + 1;
          while (r < n && t.charCodeAt(r) === 32) r++;
          vals[k] = v;
          p = r;
          continue;
        }
      }
    }
    const sp = t.indexOf(' ', v0);
    if (k === m - 1) {
      // the last value runs to the end, without a space
      if (sp >= 0 && sp < n) return false;
      vals[k] = convertRange(rule, t, v0, n);
      return true;
    }
    if (sp < 0 || sp >= n) return false;
    let r = sp + 1;
    while (r < n && t.charCodeAt(r) === 32) r++;
    vals[k] = convertRange(rule, t, v0, sp);
    p = r;
  }
}

/**
 * kvFast's reading of the ASCII text b[s, n) as the key sequence `rules`
 * (the first key already checked at s): each value runs to the next space
 * and is followed by one run of spaces and the next key, the last one runs
 * to n. Gives each value's range (starts, ends) and, for keys not kept as
 * text, the value when it is a plain decimal of at most 15 digits (nums,
 * else NaN). False: the text is not that sequence in that shape. Shared by
 * kvFastBytes and KvColumnWriter (kv_columns.ts), so both read the same keys and
 * values.
 */
export function kvSpansBytes(
  b: Uint8Array,
  s: number,
  n: number,
  rules: KeyRule[],
  nums: Float64Array,
  starts: Int32Array,
  ends: Int32Array,
): boolean {
  const m = rules.length;
  let p = s;
  for (let k = 0; k < m; k++) {
    const rule = rules[k]!;
    const eq = rule.eqBytes;
    if (k > 0 && !sameBytes(b, p, eq)) return false;
    const v0 = p + eq.n;
    if (v0 > n) return false;
    let q = v0;
    let v = NaN;
    if (rule.kind !== 1) {
      let c = 0;
      v = 0;
      while (q < n && (c = b[q]!) >= 48 && c <= 57) {
        v = v * 10 + (c - 48);
        q++;
      }
      if (q === v0 || q - v0 > 15 || (q < n && c !== 32) || (rule.kind === 0 && pointerWidthPadded(b[v0]!, q - v0)))
        v = NaN;
    }
    while (q < n && b[q] !== 32) q++;
    const last = k === m - 1;
    if (last ? q < n : q >= n) return false;
    nums[k] = v;
    starts[k] = v0;
    ends[k] = q;
    if (!last) {
      p = q + 1;
      while (p < n && b[p] === 32) p++;
    }
  }
  return true;
}

/** kvSpansBytes's scratch for kvFastBytes, grown to the longest key sequence. */
let spanNums = new Float64Array(16);
let spanStarts = new Int32Array(16);
let spanEnds = new Int32Array(16);

/** kvFast on the bytes of an ASCII text (b[i] === t.charCodeAt(i)). */
function kvFastBytes(b: Uint8Array, t: string, s: number, n: number, rules: KeyRule[], vals: FieldValue[]): boolean {
  const m = rules.length;
  if (m > spanNums.length) {
    spanNums = new Float64Array(m);
    spanStarts = new Int32Array(m);
    spanEnds = new Int32Array(m);
  }
  if (!kvSpansBytes(b, s, n, rules, spanNums, spanStarts, spanEnds)) return false;
  for (let k = 0; k < m; k++) {
    const v = spanNums[k]!;
    vals[k] = v === v ? v : convertRangeBytes(rules[k]!, b, t, spanStarts[k]!, spanEnds[k]!);
  }
  return true;
}

/**
 * kvRange with the bytes of an ASCII text (b[i] === text.charCodeAt(i)), or
 * b = null: kvRange.
 */
export function kvRangeBytes(
  b: Uint8Array | null,
  text: string,
  s: number,
  n: number,
  spec: KvSpec = AUTO_SPEC,
): EventFields | null {
  if (b === null) return kvRange(text, s, n, spec);
  const ent = kvValuesBytes(b, text, s, n, spec);
  return ent !== null ? ent.builder(spec.vals) : kvSlow(text, s, n, spec);
}

/**
 * kvRangeBytes's fast path alone: when the ASCII text b[s, n) is one of the
 * spec's recent key sequences, its values are left in spec.vals and the
 * sequence's entry returned (what kvRangeBytes would build is
 * entry.builder(spec.vals)). Null: not sure, use kvRangeBytes.
 */
export function kvValuesBytes(b: Uint8Array, text: string, s: number, n: number, spec: KvSpec): SeqEntry | null {
  const recent = spec.recent;
  for (let r = 0; r < recent.length; r++) {
    const ent = recent[r]!;
    if (sameBytes(b, s, ent.rules[0]!.eqBytes) && kvFastBytes(b, text, s, n, ent.rules, spec.vals)) {
      if (r > 0) spec.promote(r);
      return ent;
    }
  }
  return null;
}

/**
 * kvObject(text.slice(s, n), spec) without slicing: keys are compared in
 * place with the previous event's key sequence, numbers are read from the
 * characters, only string values are materialised.
 */
export function kvRange(text: string, s: number, n: number, spec: KvSpec = AUTO_SPEC): EventFields | null {
  const recent = spec.recent;
  for (let r = 0; r < recent.length; r++) {
    const ent = recent[r]!;
    if (text.startsWith(ent.rules[0]!.eq, s) && kvFast(text, s, n, ent.rules, spec.vals)) {
      if (r > 0) spec.promote(r);
      return ent.builder(spec.vals);
    }
  }
  return kvSlow(text, s, n, spec);
}

/** kvRange's general scan (no predicted key sequence matched). */
function kvSlow(text: string, s: number, n: number, spec: KvSpec): EventFields | null {
  const recent = spec.recent;
  const seq = spec.seq;
  const vals = spec.vals;
  const known = recent.length > 0 ? recent[0]!.rules : NO_RULES;
  const knownLen = known.length;
  let pairs = 0;
  let rule: KeyRule | null = null;
  let valStart = 0;
  let i = s;
  while (i < n) {
    // i is at the start of a token
    let j = i;
    let c = 0;
    while (j < n && isKeyChar((c = text.charCodeAt(j)))) j++;
    if (j > i && j < n && c === 61) {
      if (rule !== null) {
        let e = i;
        while (e > valStart && text.charCodeAt(e - 1) === 32) e--;
        seq[pairs] = rule;
        vals[pairs] = convertRange(rule, text, valStart, e);
        pairs++;
      }
      let r: KeyRule | null = null;
      if (pairs < knownLen) {
        const cand = known[pairs]!;
        if (cand.printed.length === j - i && sameChars(text, i, cand.printed)) r = cand;
      }
      rule = r ?? spec.rule(text.slice(i, j));
      valStart = j + 1;
    }
    let sp = text.indexOf(' ', j);
    if (sp < 0 || sp >= n) break;
    while (sp < n && text.charCodeAt(sp) === 32) sp++;
    i = sp;
  }
  if (rule === null) return null;
  let e = n;
  while (e > valStart && text.charCodeAt(e - 1) === 32) e--;
  seq[pairs] = rule;
  vals[pairs] = convertRange(rule, text, valStart, e);
  pairs++;
  return spec.build(pairs);
}

/** Adds the key=value pairs of `text` to `out`; returns the number of pairs. */
export function addKeyValues(text: string, out: EventFields, spec: KvSpec = AUTO_SPEC): number {
  const o = kvObject(text, spec);
  if (o === null) return 0;
  let k = 0;
  for (const key in o) {
    out[key] = o[key]!;
    k++;
  }
  return k;
}

/** Any event without a dedicated parser: its key=value pairs, or {} if none. */
export const parseGeneric: FieldParser = (args) => kvObject(args) ?? {};

/** parseGeneric on t[s, e) (b: t's bytes when ASCII, else null). */
export function parseGenericRange(
  t: string,
  s: number,
  e: number,
  _args?: string,
  b: Uint8Array | null = null,
): EventFields {
  return kvRangeBytes(b, t, s, e) ?? {};
}

/** Range parsers of the FieldParsers made by `ranged`. */
export const RANGE_PARSERS = new Map<FieldParser, RangeParser>();

/** A FieldParser defined by its range form (one implementation for both). */
export function ranged(rp: RangeParser): FieldParser {
  const fp: FieldParser = (t) => rp(t, 0, t.length, t, null);
  RANGE_PARSERS.set(fp, rp);
  return fp;
}

/** Start of t[s, e) with spaces skipped, or -1 if other whitespace (String.trim's) is there. */
export function trimStart(t: string, s: number, e: number): number {
  while (s < e && t.charCodeAt(s) === 32) s++;
  return s < e && isOtherSpace(t.charCodeAt(s)) ? -1 : s;
}

/** End of t[s, e) with spaces dropped, or -1 if other whitespace (String.trim's) is there. */
export function trimEnd(t: string, s: number, e: number): number {
  while (e > s && t.charCodeAt(e - 1) === 32) e--;
  return e > s && isOtherSpace(t.charCodeAt(e - 1)) ? -1 : e;
}
