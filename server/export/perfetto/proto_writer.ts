/**
 * A protobuf wire-format writer for the export's hot path (one message per
 * ftrace event), the counterpart of decode/perfetto/proto_reader.ts.
 * protobufjs encodes the rare packets (process tree, track events) from
 * the .proto types; building one object per event for it cost more than
 * the rest of the export together, and its Writer has no call for a
 * 64-bit varint from a bigint.
 */
const encoder = new TextEncoder();
/** A 64-bit value's low and high 32 bits (varint64). */
const halves = new DataView(new ArrayBuffer(8));

export class ProtoWriter {
  buf = new Uint8Array(1 << 16);
  pos = 0;

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf.subarray(0, this.pos));
    this.buf = b;
  }

  /** A non-negative integer below 2^53 as a varint. */
  varint(n: number): void {
    this.room(10);
    const buf = this.buf;
    let p = this.pos;
    if (n <= 0x7fffffff) {
      while (n >= 0x80) {
        buf[p++] = (n & 0x7f) | 0x80;
        n >>>= 7;
      }
    } else {
      while (n >= 0x80) {
        buf[p++] = (n % 0x80) | 0x80;
        n = Math.floor(n / 0x80);
      }
    }
    buf[p++] = n;
    this.pos = p;
  }

  /**
   * Any 64-bit value (negative: two's complement, 10 bytes) as a varint.
   * A bigint goes through `halves` as two 32-bit numbers: seven bigint
   * shifts and masks per value (every event's timestamp) were a tenth of the
   * export's JS time (issue 33).
   */
  varint64(v: bigint | number): void {
    if (typeof v === 'number') {
      if (v >= 0 && v <= Number.MAX_SAFE_INTEGER) return this.varint(v);
      v = BigInt(v);
    }
    halves.setBigUint64(0, v, true); // modulo 2^64: a negative value as its two's complement
    let lo = halves.getUint32(0, true);
    let hi = halves.getUint32(4, true);
    this.room(10);
    const buf = this.buf;
    let p = this.pos;
    while (hi !== 0) {
      buf[p++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    while (lo >= 0x80) {
      buf[p++] = (lo & 0x7f) | 0x80;
      lo >>>= 7;
    }
    buf[p++] = lo;
    this.pos = p;
  }

  tag(no: number, wire: number): void {
    this.varint(no * 8 + wire);
  }

  uintField(no: number, v: bigint | number): void {
    this.tag(no, 0);
    this.varint64(v);
  }

  bytesField(no: number, b: Uint8Array): void {
    this.tag(no, 2);
    this.varint(b.length);
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /**
   * Short ASCII text (comms, event and field names, most values) is copied
   * into the buffer a character at a time: TextEncoder.encode's new array
   * per string was a tenth of the export's JS time.
   */
  stringField(no: number, s: string): void {
    const n = s.length;
    if (n < 0x80) {
      const start = this.pos;
      this.tag(no, 2);
      this.room(n + 1);
      const buf = this.buf;
      let p = this.pos;
      buf[p++] = n;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[p++] = c;
      }
      if (i === n) {
        this.pos = p;
        return;
      }
      this.pos = start;
    }
    this.bytesField(no, encoder.encode(s));
  }

  /** A length-delimited field whose body `body` writes (length patched in after). */
  nested(no: number, body: () => void): void {
    const at = this.begin(no);
    body();
    this.end(at);
  }

  /** Opens a length-delimited field; end(at) closes it. The hot path's nested() without a closure per message. */
  begin(no: number): number {
    this.tag(no, 2);
    this.room(5);
    const lenAt = this.pos;
    this.pos += 5;
    return lenAt;
  }

  /** Closes the field begin() opened at `lenAt`: its length, as a varint, in place of the 5 bytes kept. */
  end(lenAt: number): void {
    const len = this.pos - lenAt - 5;
    let k = 1;
    for (let n = len; n >= 0x80; n = Math.floor(n / 0x80)) k++;
    if (k < 5) this.buf.copyWithin(lenAt + k, lenAt + 5, this.pos);
    this.pos -= 5 - k;
    let n = len;
    let p = lenAt;
    while (n >= 0x80) {
      this.buf[p++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[p] = n;
  }

  /** Bytes that are already encoded fields. */
  raw(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}
