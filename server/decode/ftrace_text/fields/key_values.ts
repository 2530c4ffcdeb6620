/**
 * Generic `key=value` parsing on text.
 *
 * A value runs until the next ` key=` (key = [A-Za-z0-9_.]+), so values with
 * spaces (task names like `Web Content`) survive. Decimal integers become
 * numbers (bigint beyond 2^53); everything else stays a string as printed
 * (hex included: for untyped events we cannot know whether it is a number or
 * a pointer; see values.ts for zero-padded pointers). Typed parsers convert
 * hex where the column is numeric. The byte form is key_values_bytes.ts.
 */
import { type EventFields, type FieldValue, setField } from '../../decoded_event.ts';
import { internRange } from './intern.ts';
import { AUTO_SPEC, type KeyRule, KvSpec } from './kv_spec.ts';
import { isKeyChar, sameChars } from './text_scan.ts';
import { parseDecimalRange, parseNumeric, pointerWidthPadded, printedValue } from './values.ts';

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

/** A value t[s, e) converted by its key's rule. */
export function convertRange(r: KeyRule, t: string, s: number, e: number): FieldValue {
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
export function kvSlow(text: string, s: number, n: number, spec: KvSpec): EventFields | null {
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
    setField(out, key, o[key]!);
    k++;
  }
  return k;
}
