/**
 * A protobuf wire-format walker for the hot path of Perfetto traces: the
 * packets of a file and the events of an ftrace bundle.
 *
 * Why not protobufjs' decode() here: it builds one object per message and
 * per field, and cannot read Perfetto's generic events (their messages are
 * described inside the trace). On the typed events of a real tracebox
 * recording, this walker with stallscope's value conventions applied took
 * 70 ms where protobufjs' decode of the raw values took 104 ms (1.5x,
 * bench/perfetto_walker_vs_protobufjs.ts, load 11 on 2 cores); and the
 * framing pass needs only a few fields of each event, which the walker
 * reads without decoding the rest. protobufjs stays the source of the field
 * numbers (perfetto_schema.ts) and decodes the rare packets (clock
 * snapshots, statistics, the trace config).
 *
 * Varints are read as JS numbers: exact below 2^53, which every length,
 * pid, count and timestamp of under 104 days of uptime is. A 64-bit value
 * past that (pointers, flags) is read exactly as a bigint with varint64().
 */

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_FIXED32 = 5;

/** Thrown when bytes are not valid protobuf (a varint past the end, a length past the message...). */
export class ProtoError extends Error {
  constructor(
    readonly pos: number,
    message: string,
  ) {
    super(message);
  }
}

export class ProtoReader {
  pos: number;
  /** Tag read last: field number and wire type. */
  field = 0;
  wire = 0;
  /**
   * The 64 bits of the varint varintWords() read last, as unsigned 32-bit
   * halves (NaN before the first). Doubles from the start: halves of 2^31 and
   * more are not small integers, and a field that starts as one and changes
   * kind changes the reader's hidden class, which threw away the optimized
   * code of every function using a reader (`node --trace-deopt`: wrong map).
   */
  lo = NaN;
  hi = NaN;

  constructor(
    readonly buf: Uint8Array,
    start: number,
    public end: number,
  ) {
    this.pos = start;
  }

  /** Reads buf[start, end) next (one reader for many small messages of one buffer). */
  reset(start: number, end: number): this {
    this.pos = start;
    this.end = end;
    return this;
  }

  /** Reads the next tag; false at the end of the message. */
  next(): boolean {
    if (this.pos >= this.end) return false;
    const tag = this.varint();
    // Field numbers stop below 2^29, so a valid tag fits in 32 bits (and shifts exactly).
    if (tag > 0xffffffff) throw new ProtoError(this.pos, `field number ${Math.floor(tag / 8)} past 2^29`);
    this.field = tag >>> 3;
    this.wire = tag & 7;
    if (this.field === 0) throw new ProtoError(this.pos, 'field number 0');
    return true;
  }

  /** A varint as a number (exact below 2^53; above, the nearest double). */
  varint(): number {
    const b = this.buf;
    let p = this.pos;
    if (p >= this.end) throw new ProtoError(p, 'varint runs past the end');
    let c = b[p++]!;
    if (c < 0x80) {
      this.pos = p;
      return c;
    }
    let lo = c & 0x7f;
    let shift = 7;
    // Up to 28 bits with shifts, the rest with multiplication (no 32-bit overflow).
    while (shift < 28) {
      if (p >= this.end) throw new ProtoError(p, 'varint runs past the end');
      c = b[p++]!;
      lo |= (c & 0x7f) << shift;
      if (c < 0x80) {
        this.pos = p;
        return lo;
      }
      shift += 7;
    }
    let value = lo;
    let mul = 2 ** 28;
    for (let i = 0; i < 6; i++) {
      if (p >= this.end) throw new ProtoError(p, 'varint runs past the end');
      c = b[p++]!;
      value += (c & 0x7f) * mul;
      if (c < 0x80) {
        this.pos = p;
        return value;
      }
      mul *= 128;
    }
    throw new ProtoError(p, 'varint longer than 10 bytes');
  }

  /** A varint as an exact unsigned 64-bit bigint. */
  varint64(): bigint {
    const b = this.buf;
    let p = this.pos;
    let v = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (p >= this.end) throw new ProtoError(p, 'varint runs past the end');
      const c = b[p++]!;
      v |= BigInt(c & 0x7f) << shift;
      if (c < 0x80) {
        this.pos = p;
        return v & 0xffffffffffffffffn;
      }
      shift += 7n;
    }
    throw new ProtoError(p, 'varint longer than 10 bytes');
  }

  /**
   * A varint's 64 bits into lo and hi, without a bigint (a pointer or flag
   * word past 2^53 made ~30 BigInts in varint64()); a 10th byte's bits past
   * 64 drop, as varint64() masks them.
   */
  varintWords(): void {
    const b = this.buf;
    let p = this.pos;
    const end = this.end;
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (p >= end) throw new ProtoError(p, 'varint runs past the end');
      const c = b[p++]!;
      const bits = c & 0x7f;
      const shift = 7 * i;
      // Bits 0-31 into lo, 32-63 into hi.
      if (shift < 32) {
        lo |= bits << shift;
        if (shift > 25) hi |= bits >>> (32 - shift);
      } else if (shift < 64) hi |= bits << (shift - 32);
      if (c < 0x80) {
        this.pos = p;
        this.lo = lo >>> 0;
        this.hi = hi >>> 0;
        return;
      }
    }
    throw new ProtoError(p, 'varint longer than 10 bytes');
  }

  /** Start of a length-delimited field's bytes; pos moves past them. */
  bytes(): number {
    const len = this.varint();
    const start = this.pos;
    if (len > this.end - start) throw new ProtoError(start, `length ${len} runs past the end of its message`);
    this.pos = start + len;
    return start;
  }

  fixed32(): number {
    const p = this.pos;
    if (p + 4 > this.end) throw new ProtoError(p, 'fixed32 runs past the end');
    const b = this.buf;
    this.pos = p + 4;
    return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
  }

  fixed64(): bigint {
    const lo = BigInt(this.fixed32());
    const hi = BigInt(this.fixed32());
    return (hi << 32n) | lo;
  }

  double(): number {
    const p = this.pos;
    if (p + 8 > this.end) throw new ProtoError(p, 'double runs past the end');
    this.pos = p + 8;
    return new DataView(this.buf.buffer, this.buf.byteOffset + p, 8).getFloat64(0, true);
  }

  /** Skips the value of the tag read last. */
  skip(): void {
    switch (this.wire) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_FIXED64:
        if (this.pos + 8 > this.end) throw new ProtoError(this.pos, 'fixed64 runs past the end');
        this.pos += 8;
        return;
      case WIRE_LEN:
        this.bytes();
        return;
      case WIRE_FIXED32:
        if (this.pos + 4 > this.end) throw new ProtoError(this.pos, 'fixed32 runs past the end');
        this.pos += 4;
        return;
      default:
        throw new ProtoError(this.pos, `unsupported wire type ${this.wire}`);
    }
  }
}

const utf8 = new TextDecoder('utf-8');

/** UTF-8 text of buf[start, end) (short ASCII strings without TextDecoder's call cost). */
export function utf8Text(buf: Uint8Array, start: number, end: number): string {
  const n = end - start;
  if (n <= 24) {
    let s = '';
    for (let i = start; i < end; i++) {
      const c = buf[i]!;
      if (c >= 0x80) return utf8.decode(buf.subarray(start, end));
      s += String.fromCharCode(c);
    }
    return s;
  }
  return utf8.decode(buf.subarray(start, end));
}

/** Longest text internedUtf8() keeps (task names are at most 15 bytes). */
const INTERNED_MAX_BYTES = 32;
const INTERNED_SLOT_BITS = 10;

/**
 * utf8Text() that returns the same string for the same bytes: task names
 * (prev_comm, next_comm, comm, compact_sched's intern tables) repeat
 * endlessly, and decoding each occurrence (utf8Text builds short ASCII
 * strings a character at a time) was ~110 MB of garbage on a 1.3M-event
 * trace, a third of what the decode allocated; the same string also
 * compares and hashes at once where it is looked up (the rows' dictionaries,
 * the decoder's task names). A direct-mapped table keyed by a hash of the
 * bytes, checked byte by byte (as the trace.dat decoder's internedStrings());
 * a miss decodes and takes the slot.
 */
export function internedUtf8(): (buf: Uint8Array, start: number, end: number) => string {
  const slots = 1 << INTERNED_SLOT_BITS;
  const keyBytes = new Uint8Array(slots * INTERNED_MAX_BYTES);
  const keyLength = new Int32Array(slots).fill(-1);
  const texts: string[] = new Array<string>(slots).fill('');
  return (b, s, e) => {
    const len = e - s;
    if (len > INTERNED_MAX_BYTES) return utf8Text(b, s, e);
    let h = 0x811c9dc5 ^ len;
    for (let i = s; i < e; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
    const slot = Math.imul(h, 0x9e3779b1) >>> (32 - INTERNED_SLOT_BITS);
    const k = slot * INTERNED_MAX_BYTES;
    if (keyLength[slot] === len) {
      let i = 0;
      while (i < len && keyBytes[k + i] === b[s + i]) i++;
      if (i === len) return texts[slot]!;
    }
    const text = utf8Text(b, s, e);
    keyBytes.set(b.subarray(s, e), k);
    keyLength[slot] = len;
    texts[slot] = text;
    return text;
  };
}

/** A uint64 varint value (number or bigint) as a signed int64. */
export function toSigned64(v: number): number | bigint {
  if (v < 2 ** 63) return v;
  // Doubles above 2^63 are not exact; callers that need exact negatives use varint64.
  return v - 2 ** 64;
}

/** Exact signed value of an unsigned 64-bit bigint. */
export function signed64(v: bigint): bigint {
  return v >= 1n << 63n ? v - (1n << 64n) : v;
}

/** A value as a JS number when exact, else as a bigint (the DecodedEvent convention). */
export function exact(v: bigint): number | bigint {
  return v >= -BigInt(Number.MAX_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}
