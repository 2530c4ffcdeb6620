/**
 * The native key=value reader (scan_kv.c, committed as scan_kv.wasm): reads
 * a whole record batch's key=value argument texts with the key sequences
 * the JavaScript writers learned (KvColumnWriter plans), for the field
 * worker (ingest/field_worker.ts). See scan_kv.c for what it reads.
 *
 * One instance per thread. Plans belong to one ingest (reset() between
 * ingests); tokens (the text values' ids) are kept for the thread's life,
 * with their strings here.
 */
import type { KeyRule } from '../fields/kv_spec.ts';
import { latin1 } from '../fields/intern.ts';
import type { KvSeqInfo, UntypedKvScan } from '../fields/untyped_kv.ts';
import { loadNativeModule } from './load_wasm.ts';

export const SCAN_KV_WASM = 'scan_kv.wasm';

/** scan_kv.c MAX_RULES: the most keys a native plan takes, and vals' stride per record. */
export const MAX_NATIVE_KEYS = 32;
const MAX_KEY_BYTES = 64;
/** record_batch.ts INTS. */
const REC_INTS = 7;
const PAGE = 65536;
/** scan_kv.c: untypedFlags' bits (the pairs are their `kv` text; and so is the whole text: UntypedKvScan.printsBack). */
const U_PAIRS_BACK = 1;
const U_PRINTS_BACK = 2;

interface ScanKvExports {
  memory: WebAssembly.Memory;
  heap_base(): number;
  kv_reset(): void;
  kv_add_plan(name: number, desc: number): number;
  kv_add_untyped_plan(name: number, desc: number): number;
  kv_untyped_out(code: number, flags: number, pairsAt: number, starts: number, ends: number, kinds: number): void;
  kv_drop_plan(handle: number): void;
  kv_scan(ints: number, count: number, bytes: number, nbytes: number, outPlan: number, outBase: number, vals: number): number;
  tokens(): number;
  token_starts(): number;
  token_lengths(): number;
  token_arena(): number;
}

export class NativeKvScanner {
  private readonly ex: ScanKvExports;
  private readonly heapAt: number;
  private memory: Uint8Array;
  /** Token id -> its text. */
  private readonly tokenText: string[] = [];
  /** After scan(): per record, the plan handle that read it (-1: none) and where its values start in vals. */
  plan: Int32Array = new Int32Array(0);
  base: Int32Array = new Int32Array(0);
  vals: Float64Array = new Float64Array(0);
  /**
   * After scan(), of records an untyped plan read (addUntypedPlan): per
   * record the kinds' code, flags (U_PAIRS_BACK, U_PRINTS_BACK) and where
   * its pairs start; per key (from base) its value's span and kind
   * (untyped_kv.ts KV_INT ... KV_NIL); integers in vals.
   */
  untypedCode: Float64Array = new Float64Array(0);
  untypedFlags: Int32Array = new Int32Array(0);
  untypedPairsAt: Int32Array = new Int32Array(0);
  untypedStarts: Int32Array = new Int32Array(0);
  untypedEnds: Int32Array = new Int32Array(0);
  untypedKinds: Uint8Array = new Uint8Array(0);

  constructor(module: WebAssembly.Module) {
    this.ex = new WebAssembly.Instance(module, {}).exports as unknown as ScanKvExports;
    this.heapAt = (this.ex.heap_base() + 15) & ~15;
    this.memory = new Uint8Array(this.ex.memory.buffer);
  }

  /** A new ingest: its plans (and event name ids) are its own. */
  reset(): void {
    this.ex.kv_reset();
  }

  /** Gives the module a key sequence of event name id `nameId`; its handle, or -1 if not taken. */
  addPlan(nameId: number, rules: readonly KeyRule[]): number {
    const desc = this.planDesc(rules);
    return desc < 0 ? -1 : this.ex.kv_add_plan(nameId, desc);
  }

  /**
   * Gives the module a key sequence UntypedKvScan.scan read for the untyped
   * event name id `nameId` (its events are then scanned as it scans them);
   * its handle, or -1 if not taken.
   */
  addUntypedPlan(nameId: number, rules: readonly KeyRule[]): number {
    const desc = this.planDesc(rules);
    return desc < 0 ? -1 : this.ex.kv_add_untyped_plan(nameId, desc);
  }

  /** A plan's description (scan_kv.c kv_add_plan) written at heapAt, or -1 if the module cannot take it. */
  private planDesc(rules: readonly KeyRule[]): number {
    if (rules.length > MAX_NATIVE_KEYS) return -1;
    const keys = rules.map((r) => r.eqBytes.bytes);
    if (keys.some((k) => k.length === 0 || k.length > MAX_KEY_BYTES)) return -1;
    const size = 1 + 2 * rules.length + keys.reduce((a, k) => a + k.length, 0);
    this.ensure(this.heapAt + size);
    const m = this.memory;
    let at = this.heapAt;
    m[at++] = rules.length;
    for (let k = 0; k < rules.length; k++) {
      m[at++] = rules[k]!.kind;
      m[at++] = keys[k]!.length;
    }
    for (const k of keys) {
      m.set(k, at);
      at += k.length;
    }
    return this.heapAt;
  }

  dropPlan(handle: number): void {
    if (handle >= 0) this.ex.kv_drop_plan(handle);
  }

  /**
   * Reads a batch (record_batch.ts: `ints` 7 per record, `bytes` the pages):
   * fills plan, base and vals for its first `count` records.
   */
  scan(ints: Int32Array, count: number, bytes: Uint8Array): number {
    const intsAt = this.heapAt;
    const planAt = intsAt + count * REC_INTS * 4;
    const baseAt = planAt + count * 4;
    const valsAt = (baseAt + count * 4 + 7) & ~7;
    const keys = count * MAX_NATIVE_KEYS;
    const codeAt = valsAt + keys * 8;
    const flagsAt = codeAt + count * 8;
    const pairsAt = flagsAt + count * 4;
    const startsAt = pairsAt + count * 4;
    const endsAt = startsAt + keys * 4;
    const kindsAt = endsAt + keys * 4;
    const bytesAt = kindsAt + keys;
    this.ensure(bytesAt + bytes.length);
    const buf = this.ex.memory.buffer;
    new Int32Array(buf, intsAt, count * REC_INTS).set(ints.subarray(0, count * REC_INTS));
    this.memory.set(bytes, bytesAt);
    this.ex.kv_untyped_out(codeAt, flagsAt, pairsAt, startsAt, endsAt, kindsAt);
    const read = this.ex.kv_scan(intsAt, count, bytesAt, bytes.length, planAt, baseAt, valsAt);
    this.plan = new Int32Array(buf, planAt, count);
    this.base = new Int32Array(buf, baseAt, count);
    this.vals = new Float64Array(buf, valsAt, keys);
    this.untypedCode = new Float64Array(buf, codeAt, count);
    this.untypedFlags = new Int32Array(buf, flagsAt, count);
    this.untypedPairsAt = new Int32Array(buf, pairsAt, count);
    this.untypedStarts = new Int32Array(buf, startsAt, keys);
    this.untypedEnds = new Int32Array(buf, endsAt, keys);
    this.untypedKinds = new Uint8Array(buf, kindsAt, keys);
    return read;
  }

  /**
   * Record i of the last scan(), read by an untyped plan reading `info`'s
   * key sequence (its text starting at s), given to `into` as its own
   * scan() would leave it.
   */
  untypedInto(into: UntypedKvScan, info: KvSeqInfo, i: number, s: number): void {
    const flags = this.untypedFlags[i]!;
    into.takeNative(
      info,
      s,
      this.untypedPairsAt[i]!,
      this.untypedCode[i]!,
      (flags & U_PAIRS_BACK) !== 0,
      (flags & U_PRINTS_BACK) !== 0,
      this.base[i]!,
      this.untypedKinds,
      this.untypedStarts,
      this.untypedEnds,
      this.vals,
    );
  }

  /** The text of a token scan() put in vals. */
  token(id: number): string {
    const known = this.tokenText;
    if (id >= known.length) {
      const buf = this.ex.memory.buffer;
      const count = this.ex.tokens();
      const starts = new Int32Array(buf, this.ex.token_starts(), count);
      const lengths = new Int32Array(buf, this.ex.token_lengths(), count);
      const arena = this.ex.token_arena();
      for (let t = known.length; t < count; t++) known.push(latin1(this.memory, arena + starts[t]!, arena + starts[t]! + lengths[t]!));
    }
    return known[id]!;
  }

  private ensure(bytes: number): void {
    if (bytes <= this.memory.length) return;
    this.ex.memory.grow(Math.ceil((bytes - this.memory.length) / PAGE));
    this.memory = new Uint8Array(this.ex.memory.buffer);
  }
}

let shared: NativeKvScanner | null | undefined;

/**
 * This thread's scanner, or null where WebAssembly is unavailable (then the
 * field worker reads every record in JavaScript, as before).
 */
export function nativeKvScanner(): NativeKvScanner | null {
  if (shared === undefined) {
    const module = loadNativeModule(SCAN_KV_WASM);
    shared = module !== null ? new NativeKvScanner(module) : null;
  }
  return shared;
}
