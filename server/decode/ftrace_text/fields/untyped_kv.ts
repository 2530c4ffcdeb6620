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
 * side effect on the spec's recent list), each value either a plain decimal
 * of at most 15 digits, or a token that printedValue() leaves as it is.
 * Anything else (signs, quotes, `(nil)`, symbols with sizes, long numbers,
 * repeated or index-like keys) is left to the general path, the definition.
 */
import { sameBytes } from './byte_keys.ts';
import { kvSpansBytes } from './key_values_bytes.ts';
import { AUTO_SPEC, type SeqEntry } from './kv_spec.ts';
import { pointerWidthPadded } from './values.ts';

/** Value kinds, as untyped_rows.ts numbers them (ShapeRowColumns.kindOf). */
export const KV_INT = 0;
export const KV_HEX = 1;
export const KV_STR = 2;

/** Keys a sequence may have here: its kind code (kind k times 3^k) stays an exact integer. */
const MAX_KEYS = 30;

/** What a key sequence allows, worked out once per sequence. */
export interface KvSeqInfo {
  /** The fields' names in order; null: the sequence is left to the general path (see seqInfo). */
  readonly keys: string[] | null;
  /** keys joined: the sequence's identity across SeqEntry objects (recent entries are rebuilt). */
  readonly sig: string;
}

const seqInfos = new WeakMap<SeqEntry, KvSeqInfo>();

/**
 * A sequence's keys when the fields object the generic parser builds from
 * it has exactly those keys in that order: no key twice (the object keeps
 * one), none that an object orders first (array indexes: keys starting with
 * a digit) or takes as its prototype (`__proto__`).
 */
function seqInfo(ent: SeqEntry): KvSeqInfo {
  let info = seqInfos.get(ent);
  if (info !== undefined) return info;
  const keys = ent.rules.map((r) => r.key);
  let ok = keys.length > 0 && keys.length <= MAX_KEYS && new Set(keys).size === keys.length;
  for (const k of keys) {
    const c = k.charCodeAt(0);
    if (k === '__proto__' || (c >= 48 && c <= 57)) ok = false;
  }
  info = { keys: ok ? keys : null, sig: keys.join('\u0000') };
  seqInfos.set(ent, info);
  return info;
}

/**
 * One event's scan (scan() true): per field its kind, its value's span in
 * the bytes and, for integers, the value; `code` is the fields' kind code
 * (ShapeRowColumns.begin), `printsBack` whether formatArgs's key=value
 * layout of the fields is the text itself (kept_raw.ts `kv`).
 */
export class UntypedKvScan {
  info: KvSeqInfo = { keys: null, sig: '' };
  nums = new Float64Array(16);
  starts = new Int32Array(16);
  ends = new Int32Array(16);
  kinds = new Int8Array(16);
  code = 0;
  printsBack = false;

  /** Reads the ASCII text b[s, e); false: leave it to the general path. */
  scan(b: Uint8Array, s: number, e: number): boolean {
    const recent = AUTO_SPEC.recent;
    for (let r = 0; r < recent.length; r++) {
      const ent = recent[r]!;
      const rules = ent.rules;
      const m = rules.length;
      if (m > this.nums.length) continue;
      if (!sameBytes(b, s, rules[0]!.eqBytes) || !kvSpansBytes(b, s, e, rules, this.nums, this.starts, this.ends))
        continue;
      // As kvValuesBytes: the sequence read moves to the front.
      if (r > 0) AUTO_SPEC.promote(r);
      const info = seqInfo(ent);
      if (info.keys === null) return false;
      this.info = info;
      return this.classify(b, rules.length, ent);
    }
    return false;
  }

  private classify(b: Uint8Array, m: number, ent: SeqEntry): boolean {
    const { nums, starts, ends, kinds } = this;
    let code = 0;
    let mult = 1;
    let back = true;
    for (let k = 0; k < m; k++) {
      const v0 = starts[k]!;
      const q = ends[k]!;
      const len = q - v0;
      let kind: number;
      if (nums[k] === nums[k]) {
        kind = KV_INT;
        // A leading zero does not print back (`007` is 7).
        if (len > 1 && b[v0] === 48) back = false;
      } else {
        if (len === 0) return false;
        const c0 = b[v0]!;
        // convertRange keeps a zero-padded pointer-width value as printed; any other value must be one
        // printedValue() and parseDecimal leave as it is (no sign, quote, all digits, `,` `]` `)` ending, `/0x`).
        if (!pointerWidthPadded(c0, len)) {
          if (c0 === 45 || c0 === 43 || c0 === 34) return false;
          const last = b[q - 1]!;
          if (last === 44 || last === 93 || last === 41) return false;
          let digits = true;
          for (let i = v0; i < q; i++) {
            const c = b[i]!;
            if (c < 48 || c > 57) digits = false;
            else if (c === 48 && i > v0 && i + 1 < q && b[i - 1] === 47 && b[i + 1] === 120) return false; // `/0x`
          }
          if (digits) return false;
        }
        kind = canonicalHexBytes(b, v0, q) ? KV_HEX : KV_STR;
      }
      // One space between pairs (formatArgs joins them so).
      if (k > 0 && v0 - ent.rules[k]!.eqBytes.n !== ends[k - 1]! + 1) back = false;
      kinds[k] = kind;
      code += kind * mult;
      mult *= 3;
    }
    this.code = code;
    this.printsBack = back;
    return true;
  }
}

/**
 * Whether b[s, e) is an integer's `0x%lx` text, as untyped_rows.ts
 * isCanonicalHex: `0x`, then 1 to 16 lowercase hex digits without a
 * leading zero (or just `0x0`).
 */
export function canonicalHexBytes(b: Uint8Array, s: number, e: number): boolean {
  const n = e - s;
  if (n < 3 || n > 18 || b[s] !== 48 || b[s + 1] !== 120) return false;
  if (b[s + 2] === 48) return n === 3;
  for (let i = s + 2; i < e; i++) {
    const c = b[i]!;
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}
