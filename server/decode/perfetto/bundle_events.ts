/**
 * One ftrace bundle framed for pass 2: every event's time, task and where
 * its fields are, in time order. Regular events keep their bytes where they
 * lie (fields are decoded when the event is emitted); compact_sched events
 * (sched_switch / sched_waking as parallel arrays with delta-encoded
 * timestamps and interned comms) are unpacked into the same order.
 */
import { F } from './perfetto_schema.ts';
import { internedUtf8, ProtoError, ProtoReader, toSigned64, WIRE_LEN, WIRE_VARINT } from './proto_reader.ts';

/** kind values below zero: compact events. */
export const COMPACT_SWITCH = -1;
export const COMPACT_WAKING = -2;

export class BundleEvents {
  count = 0;
  /** Boot-clock ns (exact below 2^53). */
  ts: Float64Array = new Float64Array(0);
  pid: Int32Array = new Int32Array(0);
  /** common_flags, -1 when the event has none. */
  flags: Int32Array = new Int32Array(0);
  /** FtraceEvent field number of the event, or COMPACT_SWITCH / COMPACT_WAKING. */
  kind: Int32Array = new Int32Array(0);
  /** Payload bounds in buf (regular events), or the compact array index in a/b. */
  a: Int32Array = new Int32Array(0);
  b: Int32Array = new Int32Array(0);

  buf: Uint8Array = new Uint8Array(0);
  /** The bundle's bytes in buf: buf[start, end) (a page of raw records, RawRecords.page). */
  start = 0;
  end = 0;
  cpu = 0;
  lostEvents = false;
  errors = 0;
  /** Events without a timestamp or an event field (counted, not emitted). */
  malformed = 0;
  /** The bundle's compact arrays did not line up (Perfetto counts compact_sched_has_parse_errors). */
  compactDamaged = false;

  // Compact arrays (by compact index).
  switchPrevState: (number | bigint)[] = [];
  switchNextPid: number[] = [];
  switchNextPrio: number[] = [];
  switchNextComm: string[] = [];
  wakingPid: number[] = [];
  wakingTargetCpu: number[] = [];
  wakingPrio: number[] = [];
  wakingComm: string[] = [];
  wakingFlags: number[] = [];
}

function packedVarints(buf: Uint8Array, s: number, e: number, out: number[]): void {
  const r = new ProtoReader(buf, s, e);
  while (r.pos < e) out.push(r.varint());
}

/** Reads a bundle's bytes buf[start, end) into `out`, its timestamps shifted by clockDelta. */
export function frameBundle(buf: Uint8Array, start: number, end: number, clockDelta: number, out: BundleEvents): void {
  const r = new ProtoReader(buf, start, end);
  const q = new ProtoReader(buf, start, end);
  let compact = -1;
  let compactEnd = -1;
  out.buf = buf;
  out.start = start;
  out.end = end;
  out.lostEvents = false;
  out.errors = 0;
  out.malformed = 0;
  out.compactDamaged = false;
  let n = 0;
  let sorted = true;
  let lastTs = -Infinity;
  while (r.next()) {
    const f = r.field;
    if (f === F.bundle.event && r.wire === WIRE_LEN) {
      const s = r.bytes();
      // FtraceEvent: timestamp, pid, common_flags, then one length-delimited event field.
      q.reset(s, r.pos);
      let ts = NaN;
      let pid = 0;
      let flags = -1;
      let kind = 0;
      let a = 0;
      let b = 0;
      while (q.next()) {
        const g = q.field;
        if (g === F.event.timestamp && q.wire === WIRE_VARINT) ts = q.varint();
        else if (g === F.event.pid && q.wire === WIRE_VARINT) pid = q.varint() | 0;
        else if (g === F.event.commonFlags && q.wire === WIRE_VARINT) flags = q.varint();
        else if (q.wire === WIRE_LEN && kind === 0) {
          kind = g;
          a = q.bytes();
          b = q.pos;
        } else q.skip();
      }
      if (Number.isNaN(ts) || kind === 0) {
        out.malformed++;
        continue;
      }
      ts += clockDelta;
      if (ts < lastTs) sorted = false;
      lastTs = ts;
      if (n === out.ts.length) grow(out, n + 1);
      out.ts[n] = ts;
      out.pid[n] = pid;
      out.flags[n] = flags;
      out.kind[n] = kind;
      out.a[n] = a;
      out.b[n] = b;
      n++;
    } else if (f === F.bundle.cpu && r.wire === WIRE_VARINT) out.cpu = r.varint();
    else if (f === F.bundle.lostEvents && r.wire === WIRE_VARINT) out.lostEvents = r.varint() !== 0;
    else if (f === F.bundle.error && r.wire === WIRE_LEN) {
      out.errors++;
      r.skip();
    } else if (f === F.bundle.compactSched && r.wire === WIRE_LEN) {
      compact = r.bytes();
      compactEnd = r.pos;
    } else r.skip();
  }
  out.count = n;
  if (compact >= 0) {
    unpackCompact(buf, compact, compactEnd, clockDelta, out);
    // The regular events' order is known (sorted): check from the first compact one on.
    for (let i = n > 0 ? n : 1; i < out.count && sorted; i++) if (out.ts[i]! < out.ts[i - 1]!) sorted = false;
  }
  if (!sorted) sortByTs(out);
}

/** Appends one compact event (pid 0: the task is the CPU's running one, found when it is emitted). */
function pushCompact(out: BundleEvents, ts: number, flags: number, kind: number, a: number): void {
  if (out.count === out.ts.length) grow(out, out.count + 1);
  const k = out.count++;
  out.ts[k] = ts;
  out.pid[k] = 0;
  out.flags[k] = flags;
  out.kind[k] = kind;
  out.a[k] = a;
  out.b[k] = 0;
}

function grow(out: BundleEvents, need: number): void {
  const cap = Math.max(need, out.ts.length * 2, 256);
  const f64 = (a: Float64Array) => {
    const b = new Float64Array(cap);
    b.set(a);
    return b;
  };
  const i32 = (a: Int32Array) => {
    const b = new Int32Array(cap);
    b.set(a);
    return b;
  };
  out.ts = f64(out.ts);
  out.pid = i32(out.pid);
  out.flags = i32(out.flags);
  out.kind = i32(out.kind);
  out.a = i32(out.a);
  out.b = i32(out.b);
}

/**
 * Scratch columns of sortByTs, kept from bundle to bundle (as long as the
 * largest bundle, a few thousand events): eight new typed arrays per bundle
 * (the order, the merge buffer, a copy of each column) were most of its cost
 * on a compact_sched trace.
 */
let orderScratch = new Int32Array(0);
let mergeScratch = new Int32Array(0);
let f64Scratch = new Float64Array(0);
let i32Scratch = new Int32Array(0);
/** Up to this many runs merge in one pass (the earliest head of all); more merge pairwise. */
const ONE_PASS_RUNS = 4;
const heads = new Int32Array(ONE_PASS_RUNS);
const ends = new Int32Array(ONE_PASS_RUNS);

/** Stable sort of the bundle's events by timestamp (ties keep bundle order). */
export function sortByTs(out: BundleEvents): void {
  const n = out.count;
  const ts = out.ts;
  // The events come in a few runs already in order (the regular events, the
  // compact switches, the compact wakings): merge them, ties keeping their
  // order. A sort with a comparator was ~10% of the main thread on a
  // compact_sched trace.
  const runs = [0];
  for (let i = 1; i < n; i++) if (ts[i]! < ts[i - 1]!) runs.push(i);
  runs.push(n);
  if (runs.length <= 2) return;
  if (orderScratch.length < n) {
    orderScratch = new Int32Array(Math.max(n, orderScratch.length * 2));
    mergeScratch = new Int32Array(orderScratch.length);
  }
  let idx = orderScratch;
  if (runs.length - 1 <= ONE_PASS_RUNS) {
    // Each position takes the earliest head, the first run's on ties (bundle order).
    const r = runs.length - 1;
    for (let k = 0; k < r; k++) {
      heads[k] = runs[k]!;
      ends[k] = runs[k + 1]!;
    }
    for (let o = 0; o < n; o++) {
      let best = -1;
      let bestTs = 0;
      for (let k = 0; k < r; k++) {
        const h = heads[k]!;
        if (h < ends[k]! && (best < 0 || ts[h]! < bestTs)) {
          best = k;
          bestTs = ts[h]!;
        }
      }
      idx[o] = heads[best]!++;
    }
  } else {
    let tmp = mergeScratch;
    for (let i = 0; i < n; i++) idx[i] = i;
    let bounds = runs;
    while (bounds.length > 2) {
      const merged = [0];
      for (let r = 0; r + 1 < bounds.length; r += 2) {
        const lo = bounds[r]!;
        const mid = bounds[r + 1]!;
        const hi = r + 2 < bounds.length ? bounds[r + 2]! : mid;
        let i = lo;
        let j = mid;
        let o = lo;
        while (i < mid && j < hi) tmp[o++] = ts[idx[j]!]! < ts[idx[i]!]! ? idx[j++]! : idx[i++]!;
        while (i < mid) tmp[o++] = idx[i++]!;
        while (j < hi) tmp[o++] = idx[j++]!;
        merged.push(hi);
      }
      const t = idx;
      idx = tmp;
      tmp = t;
      bounds = merged;
    }
  }
  if (f64Scratch.length < n) f64Scratch = new Float64Array(Math.max(n, f64Scratch.length * 2));
  if (i32Scratch.length < n) i32Scratch = new Int32Array(Math.max(n, i32Scratch.length * 2));
  const c = f64Scratch;
  c.set(ts.subarray(0, n));
  for (let i = 0; i < n; i++) ts[i] = c[idx[i]!]!;
  pickInt(out.pid, idx, n);
  pickInt(out.flags, idx, n);
  pickInt(out.kind, idx, n);
  pickInt(out.a, idx, n);
  pickInt(out.b, idx, n);
}

/** a[i] = a[idx[i]] for i < n, through the scratch copy. */
function pickInt(a: Int32Array, idx: Int32Array, n: number): void {
  const c = i32Scratch;
  c.set(a.subarray(0, n));
  for (let i = 0; i < n; i++) a[i] = c[idx[i]!]!;
}

/**
 * The names of compact_sched's intern tables: every bundle has its own table,
 * of the same few names, as one string per name for the whole trace.
 */
const commText = internedUtf8();

function unpackCompact(buf: Uint8Array, start: number, end: number, clockDelta: number, out: BundleEvents): void {
  const intern: string[] = [];
  const swTs: number[] = [];
  const swState: number[] = [];
  const swPid: number[] = [];
  const swPrio: number[] = [];
  const swComm: number[] = [];
  const wkTs: number[] = [];
  const wkPid: number[] = [];
  const wkCpu: number[] = [];
  const wkPrio: number[] = [];
  const wkComm: number[] = [];
  const wkFlags: number[] = [];
  const C = F.compact;
  const r = new ProtoReader(buf, start, end);
  while (r.next()) {
    const f = r.field;
    if (r.wire !== WIRE_LEN) {
      // A non-packed repeated varint (allowed by the wire format): one value.
      if (r.wire === WIRE_VARINT) {
        const v = r.varint();
        const arr = {
          [C.switchTimestamp]: swTs,
          [C.switchPrevState]: swState,
          [C.switchNextPid]: swPid,
          [C.switchNextPrio]: swPrio,
          [C.switchNextCommIndex]: swComm,
          [C.wakingTimestamp]: wkTs,
          [C.wakingPid]: wkPid,
          [C.wakingTargetCpu]: wkCpu,
          [C.wakingPrio]: wkPrio,
          [C.wakingCommIndex]: wkComm,
          [C.wakingCommonFlags]: wkFlags,
        }[f];
        if (arr) arr.push(v);
      } else r.skip();
      continue;
    }
    const s = r.bytes();
    const e = r.pos;
    switch (f) {
      case C.internTable:
        intern.push(commText(buf, s, e));
        break;
      case C.switchTimestamp:
        packedVarints(buf, s, e, swTs);
        break;
      case C.switchPrevState:
        packedVarints(buf, s, e, swState);
        break;
      case C.switchNextPid:
        packedVarints(buf, s, e, swPid);
        break;
      case C.switchNextPrio:
        packedVarints(buf, s, e, swPrio);
        break;
      case C.switchNextCommIndex:
        packedVarints(buf, s, e, swComm);
        break;
      case C.wakingTimestamp:
        packedVarints(buf, s, e, wkTs);
        break;
      case C.wakingPid:
        packedVarints(buf, s, e, wkPid);
        break;
      case C.wakingTargetCpu:
        packedVarints(buf, s, e, wkCpu);
        break;
      case C.wakingPrio:
        packedVarints(buf, s, e, wkPrio);
        break;
      case C.wakingCommIndex:
        packedVarints(buf, s, e, wkComm);
        break;
      case C.wakingCommonFlags:
        packedVarints(buf, s, e, wkFlags);
        break;
      default:
        break;
    }
  }
  // Switches: Perfetto walks the arrays in step and stops at the shortest.
  const ns = Math.min(swTs.length, swState.length, swPid.length, swPrio.length, swComm.length);
  if (ns !== Math.max(swTs.length, swState.length, swPid.length, swPrio.length, swComm.length))
    out.compactDamaged = true;
  out.switchNextPid.length = out.switchPrevState.length = out.switchNextPrio.length = out.switchNextComm.length = 0;
  let t = 0;
  for (let i = 0; i < ns; i++) {
    t += swTs[i]!;
    const ci = swComm[i]!;
    if (ci >= intern.length) {
      out.compactDamaged = true;
      break;
    }
    out.switchPrevState.push(toSigned64(swState[i]!));
    out.switchNextPid.push(swPid[i]! | 0);
    out.switchNextPrio.push(swPrio[i]! | 0);
    out.switchNextComm.push(intern[ci]!);
    pushCompact(out, t + clockDelta, -1, COMPACT_SWITCH, out.switchNextPid.length - 1);
  }
  out.wakingPid.length =
    out.wakingTargetCpu.length =
    out.wakingPrio.length =
    out.wakingComm.length =
    out.wakingFlags.length =
      0;
  const nw = Math.min(wkTs.length, wkPid.length, wkCpu.length, wkPrio.length, wkComm.length);
  if (nw !== Math.max(wkTs.length, wkPid.length, wkCpu.length, wkPrio.length, wkComm.length)) out.compactDamaged = true;
  t = 0;
  for (let i = 0; i < nw; i++) {
    t += wkTs[i]!;
    const ci = wkComm[i]!;
    if (ci >= intern.length) {
      out.compactDamaged = true;
      break;
    }
    out.wakingPid.push(wkPid[i]! | 0);
    out.wakingTargetCpu.push(wkCpu[i]! | 0);
    out.wakingPrio.push(wkPrio[i]! | 0);
    out.wakingComm.push(intern[ci]!);
    out.wakingFlags.push(wkFlags[i] ?? -1);
    pushCompact(out, t + clockDelta, wkFlags[i] ?? -1, COMPACT_WAKING, out.wakingPid.length - 1);
  }
}

export { ProtoError };
