/**
 * key=value argument text written straight into a typed table's columns,
 * for text events whose fields are decoded on the field worker
 * (ingest/field_worker.ts).
 *
 * Why: the fields-object path (kvRangeBytes builds an object, the table's
 * compiled field writer reads it back and converts each value) cost about
 * 1 µs per event, most of a text ingest's field decoding. Here a line is
 * scanned once, its numbers land in the column arrays and its symbolic
 * values (flags, enums) are interned from the bytes: no object, no string of
 * the whole block.
 *
 * It only takes text it is sure about: each value a plain decimal (or, for
 * the keys the spec keeps as text, a token without spaces) in a key sequence
 * learned from earlier events of the same name, which is exactly when
 * kvRangeBytes's fast path (kvFastBytes) reads the same keys and values. Anything
 * else (hex, signs, long numbers, other key orders at first sight, missing
 * required keys) is left to the fields-object path, the definition.
 */
import type { DirectRowColumns } from '../../decoded_event.ts';
import { sameBytes, sameRangeBytes } from './byte_keys.ts';
import { internBytes } from './intern.ts';
import { kvSpansBytes } from './key_values_bytes.ts';
import type { KeyRule, KvSpec } from './kv_spec.ts';
import { isKeyChar } from './text_scan.ts';

/** How a scanned value is stored. */
const I32 = 0;
const I64 = 1;
const F64 = 2;
const TEXT = 3;

/** Key sequences remembered per event name (a kernel prints one; text pasted from several, a few). */
const MAX_PLANS = 4;
const TWO_32 = 4294967296;

/** One key sequence and where its values go in the table. */
export interface Plan {
  rules: KeyRule[];
  /** Whether rows of this sequence can be written here; false: leave them to the fields-object path. */
  usable: boolean;
  /** Stores: value at position src[k] goes to column col[k] as store[k]. */
  src: Int32Array;
  col: Int32Array;
  store: Uint8Array;
  /** Columns no key of the sequence fills: NULL. */
  absent: Int32Array;
  /** Its handle in the native reader (NativeKvReader.addPlan), -1: none. */
  handle: number;
  /** Per store k of a text value: the last native token written and its dictionary id (runs of flags repeat). */
  lastToken: Float64Array;
  lastId: Int32Array;
  /** writeNative() for this plan, compiled on its first native row (compileNativeWrite). */
  nativeWrite: NativeWrite | null;
}

type NativeWrite = (cols: DirectRowColumns, vals: Float64Array, base: number) => void;

/**
 * The native reader of learned key sequences (native/native_kv_scanner.ts),
 * as this writer uses it: it is given each plan, and says which plan read a
 * record; text values come back as tokens.
 */
export interface NativeKvReader {
  addPlan(nameId: number, rules: readonly KeyRule[]): number;
  dropPlan(handle: number): void;
  token(id: number): string;
}

/** keyed()'s high word for a native token: the column caches of TableRowWriter never see it from binary fields. */
const TOKEN_KEY_HI = -2;

/** The shape a key=value parser accepts: its spec, and the keys every event must have. */
export interface KvShape {
  spec: KvSpec;
  /** Keys (field names after renames) without which the text does not parse. */
  required: readonly string[];
}

export class KvColumnWriter {
  private plans: Plan[] = [];
  private plan: Plan | null = null;
  /** The scanned event, by position in the key sequence: plain decimals (else NaN) and every value's range. */
  private nums = new Float64Array(16);
  private valueStart = new Int32Array(16);
  private valueEnd = new Int32Array(16);
  private bytes: Uint8Array | null = null;
  /** Where the text scanWith() last read is. */
  private scanStart = 0;
  private scanLength = 0;
  /**
   * The last event written, as its text's place in its block and the values
   * written: reclaim events repeat their text (in the bench's and the
   * fixtures' kswapd recordings, 92% of lru_shrink_inactive and 66% of
   * lru_isolate events print exactly the text of the event of that name
   * before), and comparing ~140 bytes as words is cheaper than scanning them.
   */
  private lastBlock: Uint8Array | null = null;
  private lastStart = 0;
  private lastLength = -1;
  private lastPlan: Plan | null = null;
  private lastNums = new Float64Array(16);
  private lastTexts: string[] = [];
  /** scan() found the last event's text again: write() repeats its values. */
  private repeat = false;

  /** The native reader this writer's plans are given to, and its event name id there. */
  private native: NativeKvReader | null = null;
  private nativeName = -1;

  constructor(
    private readonly shape: KvShape,
    private readonly cols: DirectRowColumns,
  ) {}

  /** Gives every plan learned from now on to a native reader, under event name id `nameId`. */
  useNative(reader: NativeKvReader, nameId: number): void {
    this.native = reader;
    this.nativeName = nameId;
  }

  /** The plan a native handle names, if its rows can be written here; null: use scan(). */
  nativePlan(handle: number): Plan | null {
    const plans = this.plans;
    for (let i = 0; i < plans.length; i++) {
      const p = plans[i]!;
      if (p.handle === handle) return p.usable ? p : null;
    }
    return null;
  }

  /**
   * write() for an event the native reader read with `plan`: its values at
   * vals[base + k], by key position; text values are tokens.
   */
  writeNative(plan: Plan, vals: Float64Array, base: number): void {
    (plan.nativeWrite ??= this.compileNativeWrite(plan))(this.cols, vals, base);
  }

  /**
   * The code of writeNative() for one plan: its columns and stores as
   * constants, one line per value, as compileFieldWriter (typed_rows.ts)
   * does for fields objects. A loop over the plan's arrays stored into
   * Int32Array and Float64Array columns from one site, and cost ~150 ns per
   * row on the field worker's busiest path.
   */
  private compileNativeWrite(plan: Plan): NativeWrite {
    const { src, col, store, absent, lastToken, lastId } = plan;
    const reader = this.native!;
    // A text value not the column's last one: its dictionary id by the token's key cache, else by its text.
    const textMiss = (cols: DirectRowColumns, k: number, c: number, v: number): void => {
      if (!cols.keyed(c, v, TOKEN_KEY_HI)) cols.text(c, reader.token(v));
      lastToken[k] = v;
      lastId[k] = cols.arrays[c]![cols.row]!;
    };
    const lines = ['const A = cols.arrays;', 'const row = cols.row;', 'let v, hi, a;'];
    for (let k = 0; k < src.length; k++) {
      const c = col[k]!;
      lines.push(`v = vals[base + ${src[k]!}];`);
      if (store[k] === TEXT)
        lines.push(`if (v === lastToken[${k}]) A[${c}][row] = lastId[${k}]; else textMiss(cols, ${k}, ${c}, v);`);
      else if (store[k] === I64)
        lines.push(
          `hi = Math.floor(v / ${TWO_32}); a = A[${c}]; a[2 * row] = v - hi * ${TWO_32}; a[2 * row + 1] = hi;`,
        );
      else lines.push(`A[${c}][row] = v;`);
    }
    for (let k = 0; k < absent.length; k++) lines.push(`cols.absent(${absent[k]!});`);
    const make = new Function(
      'lastToken',
      'lastId',
      'textMiss',
      `return function writeNativePlan(cols, vals, base) {\n${lines.join('\n')}\n};`,
    );
    return make(lastToken, lastId, textMiss) as NativeWrite;
  }

  /**
   * Reads b[s, n) (ASCII argument text, trailing spaces removed). True: the
   * values are held for write(); false: not sure, use the fields-object path.
   */
  scan(b: Uint8Array, s: number, n: number): boolean {
    // The same block object: blocks are never refilled (each batch is a
    // message of its own), so equal bytes at the last event's place are the
    // last event's text.
    if (b === this.lastBlock && n - s === this.lastLength && sameRangeBytes(b, s, this.lastStart, n - s)) {
      this.plan = this.lastPlan;
      this.repeat = true;
      return true;
    }
    this.repeat = false;
    const plans = this.plans;
    for (let i = 0; i < plans.length; i++) {
      const plan = plans[i]!;
      if (!sameBytes(b, s, plan.rules[0]!.eqBytes) || !this.scanWith(plan, b, s, n)) continue;
      if (i > 0) {
        plans.splice(i, 1);
        plans.unshift(plan);
      }
      return plan.usable;
    }
    const rules = this.keysOf(b, s, n);
    if (rules === null || plans.some((p) => sameRules(p.rules, rules))) return false;
    const plan = this.makePlan(rules);
    if (!this.scanWith(plan, b, s, n)) return false;
    plans.unshift(plan);
    if (this.native !== null) plan.handle = this.native.addPlan(this.nativeName, rules);
    if (plans.length > MAX_PLANS) this.native?.dropPlan(plans.pop()!.handle);
    return plan.usable;
  }

  /** Writes the values scan() held into the current row's field columns. */
  write(): void {
    const plan = this.plan!;
    const cols = this.cols;
    const arrays = cols.arrays;
    const row = cols.row;
    const { src, col, store } = plan;
    const repeat = this.repeat;
    if (!repeat) this.remember(plan);
    const nums = this.lastNums;
    const texts = this.lastTexts;
    for (let k = 0; k < src.length; k++) {
      const i = src[k]!;
      const c = col[k]!;
      const how = store[k]!;
      if (how === TEXT) {
        if (!repeat) texts[k] = internBytes(this.bytes!, this.valueStart[i]!, this.valueEnd[i]!);
        cols.value(c, texts[k]!);
      } else if (how === I32 || how === F64) arrays[c]![row] = nums[i]!;
      else {
        const v = nums[i]!;
        const hi = Math.floor(v / TWO_32);
        const a = arrays[c]!;
        a[2 * row] = v - hi * TWO_32;
        a[2 * row + 1] = hi;
      }
    }
    const absent = plan.absent;
    for (let k = 0; k < absent.length; k++) cols.absent(absent[k]!);
  }

  /** Keeps the event scan() just read as the one a repeat is compared with. */
  private remember(plan: Plan): void {
    const m = plan.rules.length;
    if (this.lastNums.length < m) this.lastNums = new Float64Array(this.nums.length);
    this.lastNums.set(this.nums.subarray(0, m));
    this.lastPlan = plan;
    this.lastBlock = this.bytes;
    this.lastStart = this.scanStart;
    this.lastLength = this.scanLength;
  }

  /**
   * kvFastBytes's reading of b[s, n) as the sequence `plan.rules` (its first key
   * already matched at s), taking only plain values: false where kvFastBytes
   * would convert a value some other way, or the text is not that sequence.
   */
  private scanWith(plan: Plan, b: Uint8Array, s: number, n: number): boolean {
    const rules = plan.rules;
    if (!kvSpansBytes(b, s, n, rules, this.nums, this.valueStart, this.valueEnd)) return false;
    for (let k = 0; k < rules.length; k++) {
      const v = this.nums[k]!;
      if (rules[k]!.kind !== 1 && v !== v) return false; // not a plain decimal
    }
    this.plan = plan;
    this.bytes = b;
    this.scanStart = s;
    this.scanLength = n - s;
    return true;
  }

  /** The key sequence of b[s, n), read as kvSlow tokenizes it, or null if it has no key. */
  private keysOf(b: Uint8Array, s: number, n: number): KeyRule[] | null {
    const rules: KeyRule[] = [];
    let i = s;
    while (i < n) {
      let j = i;
      let c = 0;
      while (j < n && isKeyChar((c = b[j]!))) j++;
      if (j > i && j < n && c === 61) rules.push(this.shape.spec.rule(internBytes(b, i, j)));
      let sp = j;
      while (sp < n && b[sp] !== 32) sp++;
      if (sp >= n) break;
      while (sp < n && b[sp] === 32) sp++;
      i = sp;
    }
    if (rules.length === 0) return null;
    if (rules.length > this.nums.length) {
      this.nums = new Float64Array(rules.length);
      this.valueStart = new Int32Array(rules.length);
      this.valueEnd = new Int32Array(rules.length);
    }
    return rules;
  }

  /**
   * Where a sequence's values go, as the fields-object path would put them:
   * a repeated key keeps its last value (an object literal's rule); each
   * column takes the first of its field names the sequence has.
   */
  private makePlan(rules: KeyRule[]): Plan {
    const at = new Map<string, number>();
    rules.forEach((r, i) => at.set(r.key, i));
    let usable = this.shape.required.every((k) => at.has(k));
    const src: number[] = [];
    const col: number[] = [];
    const store: number[] = [];
    const absent: number[] = [];
    for (const f of this.cols.fields) {
      let i = -1;
      for (const name of f.names) {
        const hit = at.get(name);
        if (hit !== undefined) {
          i = hit;
          break;
        }
      }
      if (i < 0) {
        absent.push(f.column);
        continue;
      }
      const isText = rules[i]!.kind === 1;
      // A number into a text column, or text into a number column: rare, left to the definition.
      if (isText !== (f.kind === 'text')) usable = false;
      src.push(i);
      col.push(f.column);
      store.push(f.kind === 'text' ? TEXT : f.kind === 'i64' ? I64 : f.kind === 'f64' ? F64 : I32);
    }
    return {
      rules,
      usable,
      src: Int32Array.from(src),
      col: Int32Array.from(col),
      store: Uint8Array.from(store),
      absent: Int32Array.from(absent),
      handle: -1,
      lastToken: new Float64Array(src.length).fill(-1),
      lastId: new Int32Array(src.length),
      nativeWrite: null,
    };
  }
}

function sameRules(a: KeyRule[], b: KeyRule[]): boolean {
  return a.length === b.length && a.every((r, i) => r === b[i]);
}
