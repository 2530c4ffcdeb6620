/**
 * Generic `key=value` parsing, plus the value helpers every family uses.
 *
 * A value runs until the next ` key=` (key = [A-Za-z0-9_.]+), so values with
 * spaces (task names like `Web Content`) survive. Decimal integers become
 * numbers (bigint beyond 2^53); everything else stays a string as printed
 * (hex included: for untyped events we cannot know whether it is a number or
 * a pointer). Typed parsers convert hex where the column is numeric.
 */
import type { EventFields, FieldValue } from '../../decoded_event.ts';
import type { FieldParser } from './types.ts';

function isKeyChar(c: number): boolean {
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
interface KeyRule {
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
  private lastSeq: KeyRule[] = [];
  private lastBuilder: Builder | null = null;
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
      const key = this.rename[printed] ?? printed;
      r = { key, kind: this.strings.has(key) ? 1 : this.numeric.has(key) ? 2 : 0 };
      if (this.rules.size < 1024) this.rules.set(printed, r);
    }
    return r;
  }
  /** Builds the fields object from seq/vals (n pairs). */
  build(n: number): EventFields {
    const seq = this.seq;
    const last = this.lastSeq;
    let same = this.lastBuilder !== null && last.length === n;
    for (let i = 0; same && i < n; i++) if (last[i] !== seq[i]) same = false;
    if (same) return this.lastBuilder!(this.vals);
    if (n > MAX_BUILDER_KEYS) {
      const out: EventFields = {};
      for (let i = 0; i < n; i++) out[seq[i]!.key] = this.vals[i]!;
      return out;
    }
    const sig = seq.slice(0, n).map((r) => r.key).join('\u0000');
    let b = this.builders.get(sig);
    if (b === undefined) {
      const body = seq
        .slice(0, n)
        .map((r, i) => `${JSON.stringify(r.key)}: v[${i}]`)
        .join(', ');
      b = new Function('v', `return { ${body} };`) as Builder;
      if (this.builders.size < MAX_BUILDERS) this.builders.set(sig, b);
    }
    this.lastSeq = seq.slice(0, n);
    this.lastBuilder = b;
    return b(this.vals);
  }
}

const AUTO_SPEC = new KvSpec();

function convert(r: KeyRule, v: string): FieldValue {
  if (r.kind === 1) return v;
  if (r.kind === 2) return parseNumeric(v) ?? v;
  return autoValue(v);
}

/**
 * The key=value pairs of `text` as a fresh fields object following `spec`
 * (renames to format-file names, text-only and numeric keys), or null when
 * the text has no pair. A value runs until the next ` key=`.
 */
export function kvObject(text: string, spec: KvSpec = AUTO_SPEC): EventFields | null {
  const n = text.length;
  const seq = spec.seq;
  const vals = spec.vals;
  let pairs = 0;
  let key: string | null = null;
  let valStart = 0;
  let i = 0;
  while (i < n) {
    // i is at the start of a token
    let j = i;
    let c = 0;
    while (j < n && isKeyChar((c = text.charCodeAt(j)))) j++;
    if (j > i && j < n && c === 61) {
      if (key !== null) {
        let e = i;
        while (e > valStart && text.charCodeAt(e - 1) === 32) e--;
        const r = spec.rule(key);
        seq[pairs] = r;
        vals[pairs] = convert(r, text.slice(valStart, e));
        pairs++;
      }
      key = text.slice(i, j);
      valStart = j + 1;
    }
    let sp = text.indexOf(' ', j);
    if (sp < 0) break;
    while (sp < n && text.charCodeAt(sp) === 32) sp++;
    i = sp;
  }
  if (key === null) return null;
  let e = n;
  while (e > valStart && text.charCodeAt(e - 1) === 32) e--;
  const r = spec.rule(key);
  seq[pairs] = r;
  vals[pairs] = convert(r, text.slice(valStart, e));
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
