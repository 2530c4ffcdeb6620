/**
 * Printed values to field values: decimal and hex numbers (bigint beyond
 * 2^53), pointers, symbols, and the shapes trace-cmd's plugins print.
 *
 * A pointer-width run of digits with a leading zero (`0000000010000000`,
 * `00000040`) is not a decimal: 16 or 8 characters zero-padded is how %p
 * (hashed) and %016lx / %08x print, and a hex value that happens to have
 * no letter would otherwise be stored as a wrong decimal (and give one key
 * ints and strings by chance). Auto keys keep it as printed. Shorter padded
 * runs stay decimals: formats such as sched_waking's `target_cpu=%03d` pad
 * them.
 */
import type { FieldValue } from '../../decoded_event.ts';

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

/**
 * Whether a value of `length` characters starting with character code c0
 * has the shape of a zero-padded pointer-width hex (see the header): then
 * auto keys keep it as text even when every character is a digit.
 */
export function pointerWidthPadded(c0: number, length: number): boolean {
  return c0 === 48 && (length === 16 || length === 8);
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
