/**
 * Bounds-checked reading of in-memory trace.dat metadata (section bodies,
 * option payloads). Every overrun becomes a TraceDatFormatError carrying the
 * absolute file offset, so callers can turn damage into DecodeError/skipped
 * entries instead of RangeErrors.
 */

/** Damage found while reading trace.dat structures; `where` is a file byte offset. */
export class TraceDatFormatError extends Error {
  constructor(
    readonly where: number,
    message: string,
  ) {
    super(message);
    this.name = 'TraceDatFormatError';
  }
}

const TWO_POW_32 = 4294967296;

export class ByteCursor {
  pos = 0;

  constructor(
    readonly buf: Buffer,
    readonly littleEndian: boolean,
    /** File offset of buf[0] (for error reporting; for decompressed data, the section's offset). */
    readonly fileBase: number,
    /** When true, report every error at fileBase (decompressed data has no file positions). */
    readonly positionsAreVirtual = false,
  ) {}

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  where(): number {
    return this.positionsAreVirtual ? this.fileBase : this.fileBase + this.pos;
  }

  fail(message: string): never {
    throw new TraceDatFormatError(this.where(), message);
  }

  private need(n: number, what: string): void {
    if (n < 0 || this.pos + n > this.buf.length) {
      this.fail(`truncated: need ${n} bytes for ${what}, ${this.remaining} left`);
    }
  }

  u8(): number {
    this.need(1, 'u8');
    return this.buf[this.pos++]!;
  }

  u16(): number {
    this.need(2, 'u16');
    const v = this.littleEndian ? this.buf.readUInt16LE(this.pos) : this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  u32(): number {
    this.need(4, 'u32');
    const v = this.littleEndian ? this.buf.readUInt32LE(this.pos) : this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  /**
   * A u64 as a number. Sizes and offsets above 2^53 cannot be valid in any
   * file we can read, so they are reported as damage rather than rounded.
   */
  u64(what = 'u64'): number {
    this.need(8, what);
    const v = readU64Number(this.buf, this.pos, this.littleEndian);
    if (v === null) this.fail(`${what} too large`);
    this.pos += 8;
    return v;
  }

  u64big(): bigint {
    this.need(8, 'u64');
    const v = this.littleEndian ? this.buf.readBigUInt64LE(this.pos) : this.buf.readBigUInt64BE(this.pos);
    this.pos += 8;
    return v;
  }

  bytes(n: number, what = 'bytes'): Buffer {
    this.need(n, what);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  /** A NUL-terminated string (latin1 keeps arbitrary bytes 1:1). */
  cstring(what = 'string'): string {
    const end = this.buf.indexOf(0, this.pos);
    if (end < 0) this.fail(`unterminated ${what}`);
    const s = this.buf.toString('utf8', this.pos, end);
    this.pos = end + 1;
    return s;
  }

  expectString(expected: string): void {
    const at = this.where();
    const b = this.bytes(expected.length, JSON.stringify(expected));
    if (b.toString('latin1') !== expected) {
      throw new TraceDatFormatError(
        at,
        `expected ${JSON.stringify(expected)}, found ${JSON.stringify(b.toString('latin1'))}`,
      );
    }
  }
}

/** Reads an unsigned 64-bit integer as a number, or null when it exceeds 2^53. */
export function readU64Number(buf: Uint8Array | Buffer, pos: number, littleEndian: boolean): number | null {
  const b = buf as Buffer;
  const lo = littleEndian ? b.readUInt32LE(pos) : b.readUInt32BE(pos + 4);
  const hi = littleEndian ? b.readUInt32LE(pos + 4) : b.readUInt32BE(pos);
  if (hi >= 0x200000) return null;
  return hi * TWO_POW_32 + lo;
}

/** A short printable excerpt of binary data for SkippedInput.excerpt. */
export function hexExcerpt(buf: Uint8Array, start: number, len = 32): string {
  const end = Math.min(buf.length, start + len);
  const parts: string[] = [];
  for (let i = Math.max(0, start); i < end; i++) parts.push(buf[i]!.toString(16).padStart(2, '0'));
  return parts.join(' ');
}
