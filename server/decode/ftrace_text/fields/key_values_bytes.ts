/** key_values.ts's `key=value` parsing on the bytes of an ASCII text: keys compared and numbers read from the bytes. */
import type { EventFields, FieldValue } from '../../decoded_event.ts';
import { sameBytes } from './byte_keys.ts';
import { internBytes } from './intern.ts';
import { convertRange, kvRange, kvSlow } from './key_values.ts';
import { AUTO_SPEC, type KeyRule, KvSpec, type SeqEntry } from './kv_spec.ts';
import { isKeyChar } from './text_scan.ts';
import { parseDecimalRangeBytes, pointerWidthPadded } from './values.ts';

/** convertRange on bytes (b[i] === t.charCodeAt(i), ASCII). */
function convertRangeBytes(r: KeyRule, b: Uint8Array, t: string, s: number, e: number): FieldValue {
  if (r.kind === 1) return internBytes(b, s, e);
  if (r.kind === 0 && pointerWidthPadded(b[s]!, e - s)) return t.slice(s, e);
  const d = parseDecimalRangeBytes(b, t, s, e);
  if (d !== null) return d;
  return convertRange(r, t, s, e);
}

/** kvSpansBytes `shapes`: every byte of the value is a digit (an empty value too; of a `-N` read as a number, the bytes after the sign). */
export const VALUE_DIGITS = 1;
/** kvSpansBytes `shapes`: the value holds `/0x` (the `0` not its first byte). */
export const VALUE_SLASH_HEX = 2;
/**
 * kvSpansBytes `shapes`: the value is an integer's `0x%lx` text
 * (untyped_rows.ts isCanonicalHex): `0x`, then 1 to 16 lowercase hex
 * digits without a leading zero, or just `0x0`.
 */
export const VALUE_HEX = 4;

/**
 * kvFast's reading of the ASCII text b[s, n) as the key sequence `rules`
 * (the first key already checked at s): each value runs to the next space
 * and is followed by one run of spaces and the next key, the last one runs
 * to n. Gives each value's range (starts, ends) and, for keys not kept as
 * text, the value when it is a plain decimal of at most 15 digits (nums,
 * else NaN). False: the text is not that sequence in that shape. Shared by
 * kvFastBytes and KvColumnWriter (kv_columns.ts), so both read the same keys and
 * values.
 *
 * With `shapes`, what UntypedKvScan (untyped_kv.ts) needs of each value
 * (VALUE_DIGITS, VALUE_SLASH_HEX, VALUE_HEX) is read in the same walk that
 * finds the value's end. Why: its own second walk over the values' bytes
 * cost about as much as this one (together ~20% of the field worker's
 * profile on kmem text; bench/README.md, "Session of 2026-11-29 (third):
 * text"), and its hex test walked kmem's pointers and pfns again (fifth).
 */
export function kvSpansBytes(
  b: Uint8Array,
  s: number,
  n: number,
  rules: KeyRule[],
  nums: Float64Array,
  starts: Int32Array,
  ends: Int32Array,
  shapes: Uint8Array | null = null,
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
      // With `shapes`, a minus sign before a digit other than 0 (kmalloc's `node=-1`), which
      // parseDecimalRange reads as the parser does; `-0` and `-007` are left (they print back
      // otherwise), and `+` too (rare). The other callers keep their plain decimals.
      const d0 = shapes !== null && b[v0] === 45 && v0 + 1 < n && (c = b[v0 + 1]!) >= 49 && c <= 57 ? v0 + 1 : v0;
      q = d0;
      while (q < n && (c = b[q]!) >= 48 && c <= 57) {
        v = v * 10 + (c - 48);
        q++;
      }
      if (q === d0 || q - d0 > 15 || (q < n && c !== 32) || (rule.kind === 0 && pointerWidthPadded(b[v0]!, q - v0)))
        v = NaN;
      else if (d0 !== v0) v = -v;
    }
    if (shapes === null) while (q < n && b[q] !== 32) q++;
    else {
      // Only the two facts a second walk would need: digits (the run read above, for keys
      // not kept as text) up to the value's end, and a `/0x` seen while looking for that end.
      let c = 0;
      if (rule.kind === 1) while (q < n && (c = b[q]!) >= 48 && c <= 57) q++;
      let shape = q === n || b[q] === 32 ? VALUE_DIGITS : 0;
      // Both digit runs above stop at the `x` of a `0x` value: its lowercase hex digits read once here.
      if (q === v0 + 1 && b[v0] === 48 && q < n && b[q] === 120) {
        q++;
        while (q < n && (((c = b[q]!) >= 48 && c <= 57) || (c >= 97 && c <= 102))) q++;
        const len = q - v0;
        if ((q === n || b[q] === 32) && len >= 3 && len <= 18 && (b[v0 + 2] !== 48 || len === 3)) shape = VALUE_HEX;
      }
      for (; q < n && (c = b[q]!) !== 32; q++)
        if (c === 47 && q + 2 < n && b[q + 1] === 48 && b[q + 2] === 120) shape = VALUE_SLASH_HEX;
      shapes[k] = shape;
    }
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
  if (ent !== null) return ent.builder(spec.vals);
  // kvSlow reads from its first `key=` token on, passing over the tokens
  // before it (the kmem plugin's `(call_site) `, mm_filemap_*'s
  // `dev 254:0 ino 9b0969 `): without one, no pair (ext4's `dev 254,0 ino 12
  // lblk 0`); from there, a known key sequence reads as kvFast reads it.
  const k = firstKeyToken(b, s, n);
  if (k < 0) return null;
  if (k > s) {
    const after = kvValuesBytes(b, text, k, n, spec);
    if (after !== null) return after.builder(spec.vals);
  }
  return kvSlow(text, s, n, spec);
}

/**
 * Where kvSlow's walk over the tokens of the ASCII text b[s, n) meets its
 * first `key=` token (key characters, then '='), or -1 when none is.
 */
export function firstKeyToken(b: Uint8Array, s: number, n: number): number {
  let i = s;
  while (i < n) {
    let j = i;
    let c = 0;
    while (j < n && isKeyChar((c = b[j]!))) j++;
    if (j > i && j < n && c === 61) return i;
    while (j < n && b[j] !== 32) j++;
    if (j >= n) return -1;
    while (j < n && b[j] === 32) j++;
    i = j;
  }
  return -1;
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
