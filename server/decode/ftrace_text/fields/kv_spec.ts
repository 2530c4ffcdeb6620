/** How the printed keys of one parser are stored, and the object builders compiled for each key sequence seen. */
import { type EventFields, type FieldValue, literalKey, setField } from '../../decoded_event.ts';
import { type ByteKey, asciiBytes } from './byte_keys.ts';
import { flat } from './intern.ts';

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
      // Own keys only: a printed `constructor` or `__proto__` must not find Object.prototype's.
      const key = Object.hasOwn(this.rename, printed) ? this.rename[printed]! : printed;
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
      for (let i = 0; i < n; i++) setField(out, seq[i]!.key, this.vals[i]!);
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
        .map((r, i) => `${literalKey(r.key)}: v[${i}]`)
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
      const lead = extra.lead.map((k, i) => `${literalKey(k)}: x[${i}]`);
      const pairs = ent.rules.map((r, i) => `${literalKey(r.key)}: v[${i}]`);
      const tail = extra.tail.map((k, i) => `${literalKey(k)}: x[${extra.lead.length + i}]`);
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

export const AUTO_SPEC = new KvSpec();
