/**
 * key=value argument text of events without a typed table (mm_page_alloc,
 * irq_handler_entry, most events of a kmem trace) read from its bytes into
 * per-field kinds and spans, for a writer that puts them straight into the
 * event's shape row (ingest/field_worker.ts, model/untyped_rows.ts).
 *
 * Why: the general path builds a string of the text, a fields object
 * (parseGenericRange), renders or compares the text back from it
 * (kept_raw.ts) and finds the shape by walking the object's keys
 * (UntypedRows.shapeFor): on kmem's text (62% mm_page_alloc) that was most
 * of the field worker, the critical thread of a text ingest.
 *
 * It only takes text it is sure about, the case where the definition is
 * obvious from the bytes: the pairs are one of the generic parser's recent
 * key sequences (exactly when kvValuesBytes reads them, and with the same
 * side effect on the spec's recent list; from the text's start, or, as
 * kvRangeBytes, from the first `key=` token after tokens it passes over,
 * such as the kmem plugin's `(call_site) ` in trace-cmd's report), each
 * value either a plain decimal of at most 15 digits (a minus sign too,
 * kmalloc's `node=-1`), `(nil)` (read as printedValue() reads it, `0x0`),
 * or a token that printedValue() leaves as it is. Anything else (`+`,
 * `-0`, quotes, symbols with sizes, long numbers, repeated or index-like
 * keys) is left to the general path, the definition.
 */
import { sameBytes } from './byte_keys.ts';
import { VALUE_DIGITS, VALUE_HEX, VALUE_SLASH_HEX, firstKeyToken, kvSpansBytes } from './key_values_bytes.ts';
import { AUTO_SPEC, type KvSpec, type SeqEntry } from './kv_spec.ts';
import { isKeyChar } from './text_scan.ts';
import { pointerWidthPadded } from './values.ts';

/** Value kinds, as untyped_rows.ts numbers them (ShapeRowColumns.kindOf). */
export const KV_INT = 0;
export const KV_HEX = 1;
export const KV_STR = 2;
/**
 * Not a kind of its own: a NULL pointer printed `(nil)`, which the parser
 * reads as the text `0x0` (values.ts printedValue), so a hex 0, not the
 * value's bytes (the field's kind in `code` is KV_HEX).
 */
export const KV_NIL = 3;

/** Keys a sequence may have here: its kind code (kind k times 3^k) stays an exact integer. */
const MAX_KEYS = 30;

/** What a key sequence allows, worked out once per sequence. */
export interface KvSeqInfo {
  /** The fields' names in order; null: the sequence is left to the general path (see seqInfo). */
  readonly keys: string[] | null;
  /** keys joined: the sequence's identity across SeqEntry objects (recent entries are rebuilt). */
  readonly sig: string;
}

/**
 * Fields a byte scan read for a shape row (UntypedKvScan, block_bytes.ts
 * BlockTextScan): the key sequence, per field its kind (KV_INT, KV_HEX,
 * KV_STR, KV_NIL), its value's span in the bytes and an integer's value,
 * and the fields' kind code (ShapeRowColumns.begin).
 */
export interface ScannedFields {
  readonly info: KvSeqInfo;
  readonly kinds: Int8Array;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  readonly nums: Float64Array;
  readonly code: number;
}

const seqInfos = new WeakMap<SeqEntry, KvSeqInfo>();
/** The same for the sequences read after writeback's `bdi NAME: ` (their fields start with `name`). */
const bdiSeqInfos = new WeakMap<SeqEntry, KvSeqInfo>();

/**
 * A sequence's keys (after `lead`, the keys the parser puts first) when
 * the fields object the parser builds from it has exactly those keys in
 * that order: no key twice (the object keeps one), none that an object
 * orders first (array indexes: keys starting with a digit) or takes as its
 * prototype (`__proto__`).
 */
function seqInfo(ent: SeqEntry, lead: readonly string[], cache: WeakMap<SeqEntry, KvSeqInfo>): KvSeqInfo {
  let info = cache.get(ent);
  if (info !== undefined) return info;
  const keys = [...lead, ...ent.rules.map((r) => r.key)];
  let ok = keys.length > 0 && keys.length <= MAX_KEYS && new Set(keys).size === keys.length;
  for (const k of keys) {
    if (typeof k !== 'string') ok = false;
    else {
      const c = k.charCodeAt(0);
      if (k === '__proto__' || (c >= 48 && c <= 57)) ok = false;
    }
  }
  info = { keys: ok ? keys : null, sig: ok ? keys.join('\u0000') : '' };
  cache.set(ent, info);
  return info;
}

const NO_LEAD: readonly string[] = [];
const BDI_LEAD: readonly string[] = ['name'];

/**
 * One event's scan (scan() true): per field its kind, its value's span in
 * the bytes and, for integers, the value; `code` is the fields' kind code
 * (ShapeRowColumns.begin), `printsBack` whether formatArgs's key=value
 * layout of the fields is the text itself (kept_raw.ts `kv`).
 */
export class UntypedKvScan {
  info: KvSeqInfo = { keys: null, sig: '' };
  nums = new Float64Array(MAX_KEYS);
  starts = new Int32Array(MAX_KEYS);
  ends = new Int32Array(MAX_KEYS);
  kinds = new Int8Array(MAX_KEYS);
  code = 0;
  /** Whether formatArgs's key=value layout of the fields is the text itself (kept_raw.ts `kv`). */
  printsBack = false;
  /**
   * Where the pairs start: the text's start, or after the tokens the parser
   * passes over before its first `key=` (the kmem plugin's `(call_site) `
   * in trace-cmd's report; kvRangeBytes).
   */
  pairsAt = 0;
  /** The text's start (scan()'s s). */
  textAt = 0;
  /**
   * Whether the pairs are their fields' key=value text, each `(nil)` field
   * printed `(nil)` (kept_raw.ts kmemPrintsBack: the kmem plugin's layout
   * prints a NULL `ptr` so).
   */
  pairsBack = false;
  /** The text was `bdi NAME: ` and pairs (scanBdi): field 0 is `name`. */
  bdi = false;
  /** The key sequence scan() read the pairs as (scanBdi: null), for the native reader to learn. */
  entry: SeqEntry | null = null;
  /** kvSpansBytes's output for the pairs (copied after the lead fields). */
  private readonly pairNums = new Float64Array(MAX_KEYS);
  private readonly pairStarts = new Int32Array(MAX_KEYS);
  private readonly pairEnds = new Int32Array(MAX_KEYS);
  /** kvSpansBytes's reading of each pair's value bytes (VALUE_DIGITS ...), for classify. */
  private readonly pairShapes = new Uint8Array(MAX_KEYS);

  /** Reads the ASCII text b[s, e) as the generic parser (AUTO_SPEC); false: leave it to the general path. */
  scan(b: Uint8Array, s: number, e: number): boolean {
    this.bdi = false;
    this.textAt = s;
    let at = s;
    let ent = this.pairs(b, s, e, AUTO_SPEC);
    if (ent === null) {
      // kvRangeBytes: the known sequence from the first `key=` token on, when tokens come before it.
      at = firstKeyToken(b, s, e);
      if (at <= s) return false;
      ent = this.pairs(b, at, e, AUTO_SPEC);
      if (ent === null) return false;
    }
    this.pairsAt = at;
    const info = seqInfo(ent, NO_LEAD, seqInfos);
    if (info.keys === null) return false;
    this.info = info;
    this.entry = ent;
    return this.classify(b, ent, 0);
  }

  /**
   * What scan() gives, taken from the native reader's reading of the same
   * text (scan_kv.c read_untyped, record i of its last batch, its values
   * from `base`, the text starting at s), for writers that read this
   * object (the field worker's shape rows, KeptRaw.ofScan).
   */
  takeNative(
    info: KvSeqInfo,
    s: number,
    pairsAt: number,
    code: number,
    pairsBack: boolean,
    printsBack: boolean,
    base: number,
    kinds: Uint8Array,
    starts: Int32Array,
    ends: Int32Array,
    vals: Float64Array,
  ): void {
    this.bdi = false;
    this.entry = null;
    this.info = info;
    this.textAt = s;
    this.pairsAt = pairsAt;
    this.code = code;
    this.pairsBack = pairsBack;
    this.printsBack = printsBack;
    const m = info.keys!.length;
    for (let k = 0; k < m; k++) {
      const kind = kinds[base + k]!;
      this.kinds[k] = kind;
      this.starts[k] = starts[base + k]!;
      this.ends[k] = ends[base + k]!;
      if (kind === KV_INT) this.nums[k] = vals[base + k]!;
    }
  }

  /**
   * Reads writeback's `bdi NAME: k=v ...` (without `[ID]`) as its parser
   * does (writeback.ts bdiKv, `spec` its KvSpec): the fields are `name`
   * then the pairs. Only text without spaces to trim: one space after the
   * colon, none at the end.
   */
  scanBdi(b: Uint8Array, s: number, e: number, spec: KvSpec): boolean {
    this.bdi = true;
    this.entry = null;
    this.textAt = s;
    if (e - s < 8 || b[s] !== 98 || b[s + 1] !== 100 || b[s + 2] !== 105 || b[s + 3] !== 32) return false;
    // bdiKv: the first `: ` after `bdi ` ends the name
    let colon = s + 4;
    while (colon + 1 < e && !(b[colon] === 58 && b[colon + 1] === 32)) colon++;
    if (colon + 1 >= e || b[colon - 1] === 93) return false;
    const rs = colon + 2;
    const last = b[e - 1]!;
    if (rs >= e || !isKeyChar(b[rs]!) || last === 32 || (last >= 9 && last <= 13)) return false;
    const ent = this.pairs(b, rs, e, spec);
    if (ent === null) return false;
    this.pairsAt = rs;
    const info = seqInfo(ent, BDI_LEAD, bdiSeqInfos);
    if (info.keys === null) return false;
    this.info = info;
    // The name: its text (interned by the parser), as any text value.
    this.starts[0] = s + 4;
    this.ends[0] = colon;
    return this.classify(b, ent, 1);
  }

  /** The spec's recent sequence the pairs b[s, e) are (as kvValuesBytes finds it, moved to the front), or null. */
  private pairs(b: Uint8Array, s: number, e: number, spec: KvSpec): SeqEntry | null {
    const recent = spec.recent;
    for (let r = 0; r < recent.length; r++) {
      const ent = recent[r]!;
      const rules = ent.rules;
      if (rules.length > MAX_KEYS) continue;
      if (
        !sameBytes(b, s, rules[0]!.eqBytes) ||
        !kvSpansBytes(b, s, e, rules, this.pairNums, this.pairStarts, this.pairEnds, this.pairShapes)
      )
        continue;
      if (r > 0) spec.promote(r);
      return ent;
    }
    return null;
  }

  /** Kinds, code and printsBack of the lead fields (spans set, text) and the pairs after them. */
  private classify(b: Uint8Array, ent: SeqEntry, lead: number): boolean {
    const { nums, starts, ends, kinds, pairNums, pairStarts, pairEnds, pairShapes } = this;
    const rules = ent.rules;
    const m = lead + rules.length;
    let code = 0;
    let mult = 1;
    let back = true;
    let nil = false;
    for (let k = 0; k < m; k++) {
      let v0: number;
      let q: number;
      let ruleKind: number;
      let num: number;
      let shape: number;
      if (k < lead) {
        v0 = starts[k]!;
        q = ends[k]!;
        ruleKind = 1;
        num = NaN;
        shape = valueShape(b, v0, q);
      } else {
        const j = k - lead;
        v0 = pairStarts[j]!;
        q = pairEnds[j]!;
        ruleKind = rules[j]!.kind;
        num = pairNums[j]!;
        shape = pairShapes[j]!;
        starts[k] = v0;
        ends[k] = q;
        // One space between pairs (formatArgs joins them so).
        if (j > 0 && v0 - rules[j]!.eqBytes.n !== pairEnds[j - 1]! + 1) back = false;
      }
      const len = q - v0;
      let kind: number;
      if (num === num) {
        kind = KV_INT;
        nums[k] = num;
        // A leading zero does not print back (`007` is 7).
        if (len > 1 && b[v0] === 48) back = false;
      } else {
        if (len === 0) return false;
        const c0 = b[v0]!;
        // Whether it is all digits, holds `/0x`, is an integer's `0x%lx` text (VALUE_HEX).
        const digits = (shape & VALUE_DIGITS) !== 0;
        const slashHex = (shape & VALUE_SLASH_HEX) !== 0;
        const hex = (shape & VALUE_HEX) !== 0;
        // Keys kept as text (kind 1) take the token as it is. Numeric keys (kind 2) read hex as a number:
        // not here. Auto keys: convertRange keeps a zero-padded pointer-width value as printed; any other
        // value must be one printedValue() and parseDecimal leave as it is (no sign, quote, all digits,
        // `,` `]` `)` ending, `/0x`).
        if (ruleKind === 2) return false;
        if (ruleKind === 0 && len === 5 && isNil(b, v0)) {
          // printedValue's `(nil)` -> `0x0`: a hex 0 that prints back otherwise.
          kinds[k] = KV_NIL;
          code += KV_HEX * mult;
          mult *= 3;
          nil = true;
          continue;
        }
        if (ruleKind === 0 && !pointerWidthPadded(c0, len)) {
          if (c0 === 45 || c0 === 43 || c0 === 34 || digits || slashHex) return false;
          const last = b[q - 1]!;
          if (last === 44 || last === 93 || last === 41) return false;
        }
        kind = hex ? KV_HEX : KV_STR;
      }
      kinds[k] = kind;
      code += kind * mult;
      mult *= 3;
    }
    this.code = code;
    this.pairsBack = back;
    // formatArgs's layout prints `0x0`; tokens before the pairs are not printed (scanBdi's are the `bdi` layout's).
    this.printsBack = back && !nil && (this.bdi || this.pairsAt === this.textAt);
    return true;
  }
}

/**
 * What kvSpansBytes's `shapes` says of a value, for the text b[v0, q) it
 * did not walk (scanBdi's name).
 */
function valueShape(b: Uint8Array, v0: number, q: number): number {
  let shape = VALUE_DIGITS;
  for (let i = v0; i < q; i++) {
    const c = b[i]!;
    if (c < 48 || c > 57) shape &= ~VALUE_DIGITS;
    if (c === 47 && i + 2 < q && b[i + 1] === 48 && b[i + 2] === 120) shape |= VALUE_SLASH_HEX;
  }
  const len = q - v0;
  let hex = len >= 3 && len <= 18 && b[v0] === 48 && b[v0 + 1] === 120 && (b[v0 + 2] !== 48 || len === 3);
  for (let i = v0 + 2; hex && i < q; i++) {
    const c = b[i]!;
    hex = (c >= 48 && c <= 57) || (c >= 97 && c <= 102);
  }
  return hex ? shape | VALUE_HEX : shape;
}

/** Whether b[v0, v0 + 5) is `(nil)`, how trace-cmd and the kernel print a NULL %p. */
function isNil(b: Uint8Array, v0: number): boolean {
  return b[v0] === 40 && b[v0 + 1] === 110 && b[v0 + 2] === 105 && b[v0 + 3] === 108 && b[v0 + 4] === 41;
}
