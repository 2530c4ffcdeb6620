/**
 * mm_shrink_slab_start / mm_shrink_slab_end: prose, not key=value.
 *
 *   3.x: `super_cache_scan+0x0/0x1b0 ffff8800a1b2c3d4: objects to shrink 552 gfp_flags GFP_KERNEL pgs_scanned 45 lru_pgs 198175 cache items 9197 delta 4 total_scan 556`
 *   4.x: `super_cache_scan+0x0/0x1b0 00000000a1b2c3d4: nid: 0 objects to shrink 552 gfp_flags GFP_KERNEL pgs_scanned 45 lru_pgs 198175 cache items 9197 delta 4 total_scan 556`
 *   6.x: `super_cache_scan+0x0/0x210 00000000dbab40df: nid: 0 objects to shrink 0 gfp_flags GFP_KERNEL cache items 1234 delta 2 total_scan 2 priority 12`
 *   trace-cmd report: `super_cache_scan+0x0 0xffff888...: nid: 0 ...` (offset maybe absent)
 *   end: `<sym> <ptr>: nid: 0 unused scan count 552 new scan count 556 total_scan 4 last shrinker return val 0`
 *
 * shrink = bare symbol, shr = `0x` + lowercase hex without leading zeros.
 */
import { type EventFields, type FieldValue, literalKey, setField } from '../../decoded_event.ts';
import { asciiBytes, type ByteKey, sameBytes } from './byte_keys.ts';
import { ranged } from './generic.ts';
import { flat, internBytes, internRange, memoize, RangeMemo } from './intern.ts';
import { KvSpec } from './kv_spec.ts';
import { indexOfChar } from './text_scan.ts';
import { bareSymbol, normalizePointer, parseDecimal, parseDecimalRange, parseDecimalRangeBytes } from './values.ts';
import { orRawFields, rawPointer, rawSymbol } from './raw_fields.ts';
import type { FieldParser } from './types.ts';

/** Printed label -> field name. Values are single tokens. */
const START_LABELS: Readonly<Record<string, string>> = {
  nid: 'nid',
  'objects to shrink': 'nr_objects_to_shrink',
  gfp_flags: 'gfp_flags',
  pgs_scanned: 'pgs_scanned',
  lru_pgs: 'lru_pgs',
  'cache items': 'cache_items',
  delta: 'delta',
  total_scan: 'total_scan',
  priority: 'priority',
};

const END_LABELS: Readonly<Record<string, string>> = {
  nid: 'nid',
  'unused scan count': 'unused_scan',
  'new scan count': 'new_scan',
  total_scan: 'total_scan',
  'last shrinker return val': 'retval',
};

const STRING_FIELDS = new Set(['gfp_flags']);
/** Longest label, in words. */
const MAX_LABEL_WORDS = 4;

function parseShrink(
  t: string,
  labels: Readonly<Record<string, string>>,
  required: readonly string[],
): EventFields | null {
  // head: `<sym>[+off[/size]] [\[module\]] <ptr>:`
  const colon = t.indexOf(': ');
  const headEnd = colon >= 0 ? colon : t.endsWith(':') ? t.length - 1 : -1;
  if (headEnd < 0) return null;
  const head = t.slice(0, headEnd).trim();
  const sp = head.lastIndexOf(' ');
  if (sp < 0) return null;
  const shr = normalizePointer(head.slice(sp + 1));
  if (shr === null) return null;
  const out: EventFields = { shr, shrink: bareSymbol(head.slice(0, sp)) };
  const toks = t.slice(headEnd + 1).split(' ');
  let label = '';
  let words = 0;
  for (let i = 0; i < toks.length; i++) {
    const tok = toks[i]!;
    if (tok === '') continue;
    const cand = label ? label + ' ' + tok : tok;
    const key = cand.endsWith(':') ? cand.slice(0, -1) : cand;
    const field = labels[key];
    if (field !== undefined) {
      let j = i + 1;
      while (j < toks.length && toks[j] === '') j++;
      if (j >= toks.length) return null;
      const v = toks[j]!;
      if (STRING_FIELDS.has(field)) setField(out, field, v);
      else {
        const n = parseDecimal(v);
        if (n === null) return null;
        setField(out, field, n);
      }
      i = j;
      label = '';
      words = 0;
      continue;
    }
    label = cand;
    if (++words >= MAX_LABEL_WORDS) return null;
  }
  if (label !== '') return null;
  for (const k of required) if (out[k] === undefined) return null;
  return out;
}

// ---------------------------------------------------------------------------
// Fast path: the same reading on the line's characters, for text whose head
// is plain ASCII. Whenever it is unsure it returns null and parseShrink (the
// definition) decides.
// ---------------------------------------------------------------------------

interface LabelTable {
  /** [printed label, field] */
  labels: Array<[string, string]>;
  required: readonly string[];
  /** Bit per required field, by field name. */
  requiredBits: Record<string, number>;
  allRequired: number;
  /** Body shape of the last event the token loop read. */
  template: Template | null;
}

function labelTable(labels: Readonly<Record<string, string>>, required: readonly string[]): LabelTable {
  const requiredBits: Record<string, number> = Object.create(null);
  required.forEach((k, i) => (requiredBits[k] = 1 << i));
  return {
    labels: Object.entries(labels),
    required,
    requiredBits,
    allRequired: (1 << required.length) - 1,
    template: null,
  };
}

/** Field whose label is the words of t[ls, te) (runs of spaces = one space), or undefined. */
function matchLabel(t: string, ls: number, te: number, table: LabelTable): string | undefined {
  const labels = table.labels;
  outer: for (let k = 0; k < labels.length; k++) {
    const label = labels[k]![0];
    const n = label.length;
    let p = ls;
    for (let q = 0; q < n; q++) {
      if (p >= te) continue outer;
      const lc = label.charCodeAt(q);
      if (lc === 32) {
        if (t.charCodeAt(p) !== 32) continue outer;
        while (p < te && t.charCodeAt(p) === 32) p++;
      } else {
        if (t.charCodeAt(p) !== lc) continue outer;
        p++;
      }
    }
    if (p === te) return labels[k]![1];
  }
  return undefined;
}

/** `0x` + lowercase hex as printed, or the normalized form. */
const normalizePtr = memoize((s) => normalizePointer(s) ?? '');
const bareSym = memoize(bareSymbol);

/** shr and shrink of a head `<sym>[+off[/size]] [\[module\]] <ptr>`. */
interface Head {
  shr: string;
  shrink: string;
}
/** Heads by their text (a few dozen shrinkers print all of them). */
const heads = new RangeMemo<Head>(10, 4);

/** The head t[s, headEnd) when it is plain (printable ASCII, spaces inside only), else null. */
function readHead(t: string, s: number, headEnd: number, b: Uint8Array | null): Head | null {
  const hit = b !== null ? heads.getBytes(b, s, headEnd) : heads.get(t, s, headEnd);
  if (hit !== undefined) return hit;
  let firstSp = -1;
  let lastSp = -1;
  for (let i = s; i < headEnd; i++) {
    const c = t.charCodeAt(i);
    if (c === 32) {
      if (firstSp < 0) firstSp = i;
      lastSp = i;
    } else if (c < 33 || c > 126) return null;
  }
  if (lastSp < 0 || firstSp === s || lastSp === headEnd - 1) return null;
  const shr = normalizePtr(t.slice(lastSp + 1, headEnd));
  if (shr === '') return null;
  // symbol: up to the first space, `+offset` cut
  let symEnd = firstSp;
  const plus = indexOfChar(t, 43, s, firstSp);
  if (plus > s) symEnd = plus;
  const head: Head = { shr, shrink: bareSym(t.slice(s, symEnd)) };
  heads.set(t, s, headEnd, flat(t.slice(s, headEnd)), head);
  return head;
}

/**
 * The body of the last event parsed by the token loop, as literals: the text
 * between one value and the next (`' nid: '`, `' objects to shrink '`...).
 * A body made of exactly these literals with one space-free token after each
 * tokenizes the same way, so the labels resolve to the same fields.
 */
interface Template {
  lits: string[];
  /** lits as bytes (asciiBytes). */
  litsBytes: ByteKey[];
  fields: string[];
  /** gfp_flags: kept as text. */
  text: boolean[];
  build: (shr: string, shrink: string, v: FieldValue[]) => EventFields;
}

const templateVals: FieldValue[] = [];

/** useTemplate on the bytes of ASCII text (b[i] === t.charCodeAt(i)). */
function useTemplateBytes(
  tp: Template,
  b: Uint8Array,
  t: string,
  p: number,
  e: number,
  head: Head,
): EventFields | null {
  const lits = tp.litsBytes;
  const vals = templateVals;
  for (let k = 0; k < lits.length; k++) {
    const lit = lits[k]!;
    if (!sameBytes(b, p, lit)) return null;
    const v = p + lit.n;
    if (v >= e || b[v] === 32) return null;
    let ve = v + 1;
    while (ve < e && b[ve] !== 32) ve++;
    if (tp.text[k]) vals[k] = internBytes(b, v, ve);
    else {
      const n = parseDecimalRangeBytes(b, t, v, ve);
      if (n === null) return null;
      vals[k] = n;
    }
    p = ve;
  }
  if (p !== e) return null;
  return tp.build(head.shr, head.shrink, vals);
}

function useTemplate(tp: Template, t: string, p: number, e: number, head: Head): EventFields | null {
  const lits = tp.lits;
  const vals = templateVals;
  for (let k = 0; k < lits.length; k++) {
    const lit = lits[k]!;
    if (!t.startsWith(lit, p)) return null;
    const v = p + lit.length;
    if (v >= e || t.charCodeAt(v) === 32) return null;
    let ve = t.indexOf(' ', v);
    if (ve < 0 || ve > e) ve = e;
    if (tp.text[k]) vals[k] = internRange(t, v, ve);
    else {
      const n = parseDecimalRange(t, v, ve);
      if (n === null) return null;
      vals[k] = n;
    }
    p = ve;
  }
  if (p !== e) return null;
  return tp.build(head.shr, head.shrink, vals);
}

function makeTemplate(lits: string[], fields: string[]): Template {
  const body = fields.map((f, i) => `${literalKey(f)}: v[${i}]`).join(', ');
  return {
    lits,
    litsBytes: lits.map(asciiBytes),
    fields,
    text: fields.map((f) => STRING_FIELDS.has(f)),
    build: new Function('a', 'b', 'v', `return { shr: a, shrink: b, ${body} };`) as Template['build'],
  };
}

function sameStrings(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function shrinkFast(t: string, s: number, e: number, table: LabelTable, b: Uint8Array | null): EventFields | null {
  // head: [s, headEnd), printable ASCII and spaces, no space at either end
  let headEnd = t.indexOf(': ', s);
  if (headEnd < 0 || headEnd + 1 >= e) {
    if (e > s && t.charCodeAt(e - 1) === 58) headEnd = e - 1;
    else return null;
  }
  if (headEnd <= s) return null;
  const head = readHead(t, s, headEnd, b);
  if (head === null) return null;
  let p = headEnd + 1;
  const tp = table.template;
  if (tp !== null) {
    const out = b !== null ? useTemplateBytes(tp, b, t, p, e, head) : useTemplate(tp, t, p, e, head);
    if (out !== null) return out;
  }
  // token loop (the definition's reading); learns the template
  const out: EventFields = { shr: head.shr, shrink: head.shrink };
  const lits: string[] = [];
  const fields: string[] = [];
  let litStart = p;
  let seen = 0;
  const bits = table.requiredBits;
  let labelStart = -1;
  let words = 0;
  for (;;) {
    while (p < e && t.charCodeAt(p) === 32) p++;
    if (p >= e) break;
    let q = p;
    while (q < e && t.charCodeAt(q) !== 32) q++;
    if (labelStart < 0) labelStart = p;
    const te = t.charCodeAt(q - 1) === 58 ? q - 1 : q;
    const field = matchLabel(t, labelStart, te, table);
    if (field !== undefined) {
      let v = q;
      while (v < e && t.charCodeAt(v) === 32) v++;
      if (v >= e) return null;
      let ve = v;
      while (ve < e && t.charCodeAt(ve) !== 32) ve++;
      if (STRING_FIELDS.has(field)) setField(out, field, internRange(t, v, ve));
      else {
        const n = parseDecimalRange(t, v, ve);
        if (n === null) return null;
        setField(out, field, n);
      }
      seen |= bits[field] ?? 0;
      lits.push(flat(t.slice(litStart, v)));
      fields.push(field);
      p = ve;
      litStart = ve;
      labelStart = -1;
      words = 0;
      continue;
    }
    if (++words >= MAX_LABEL_WORDS) return null;
    p = q;
  }
  if (labelStart >= 0 || seen !== table.allRequired) return null;
  // trailing spaces are not part of any template
  if (litStart === e && (tp === null || !sameStrings(tp.lits, lits) || !sameStrings(tp.fields, fields))) {
    table.template = makeTemplate(lits, fields);
  }
  return out;
}

const START_REQUIRED = ['nr_objects_to_shrink', 'cache_items', 'delta', 'total_scan'];
const END_REQUIRED = ['unused_scan', 'new_scan', 'total_scan', 'retval'];
const START_TABLE = labelTable(START_LABELS, START_REQUIRED);
const END_TABLE = labelTable(END_LABELS, END_REQUIRED);

/**
 * Raw fields (raw_fields.ts): `shr=0xffff... shrink=super_cache_scan+0x0 nid=0
 * nr_objects_to_shrink=30 gfp_flags=0x140dca ...`; gfp_flags stays the number
 * the record holds. Older kernels' renamed fields (unused_scan_cnt, ...) are
 * typed_tables.ts aliases.
 */
const RAW_SPEC = new KvSpec({}, new Set(['shr', 'shrink', 'gfp_flags']));

function shrinkFromRaw(f: EventFields): EventFields | null {
  const shr = rawPointer(f.shr);
  const shrink = rawSymbol(f.shrink);
  if (shr === undefined || shrink === undefined || typeof f.total_scan !== 'number') return null;
  return { ...f, shr, shrink };
}

export const parseShrinkSlabStart: FieldParser = ranged(
  orRawFields(
    (t, s, e, args, b) => shrinkFast(t, s, e, START_TABLE, b) ?? parseShrink(args, START_LABELS, START_REQUIRED),
    RAW_SPEC,
    ['shr', 'shrink', 'total_scan'],
    shrinkFromRaw,
  ),
);

export const parseShrinkSlabEnd: FieldParser = ranged(
  orRawFields(
    (t, s, e, args, b) => shrinkFast(t, s, e, END_TABLE, b) ?? parseShrink(args, END_LABELS, END_REQUIRED),
    RAW_SPEC,
    ['shr', 'shrink', 'total_scan'],
    shrinkFromRaw,
  ),
);
