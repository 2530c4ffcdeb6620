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
import { loadNativeModule } from './load_wasm.ts';

export const SCAN_KV_WASM = 'scan_kv.wasm';

/** scan_kv.c MAX_RULES: the most keys a native plan takes, and vals' stride per record. */
export const MAX_NATIVE_KEYS = 32;
const MAX_KEY_BYTES = 64;
/** record_batch.ts INTS. */
const REC_INTS = 7;
const PAGE = 65536;

interface ScanKvExports {
  memory: WebAssembly.Memory;
  heap_base(): number;
  kv_reset(): void;
  kv_add_plan(name: number, desc: number): number;
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
    return this.ex.kv_add_plan(nameId, this.heapAt);
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
    const bytesAt = valsAt + count * MAX_NATIVE_KEYS * 8;
    this.ensure(bytesAt + bytes.length);
    const buf = this.ex.memory.buffer;
    new Int32Array(buf, intsAt, count * REC_INTS).set(ints.subarray(0, count * REC_INTS));
    this.memory.set(bytes, bytesAt);
    const read = this.ex.kv_scan(intsAt, count, bytesAt, bytes.length, planAt, baseAt, valsAt);
    this.plan = new Int32Array(buf, planAt, count);
    this.base = new Int32Array(buf, baseAt, count);
    this.vals = new Float64Array(buf, valsAt, count * MAX_NATIVE_KEYS);
    return read;
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
