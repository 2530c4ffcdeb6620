/**
 * The wire reader and the field converters at the edges this session's
 * speed-ups touch, with expected values from the protobuf encoding rules
 * (protobuf.dev/programming-guides/encoding): a tag is (field << 3) | wire,
 * field numbers stop at 2^29 - 1; a uint32 field written as a wider varint
 * reads as its low 32 bits.
 */
import { describe, expect, it } from 'vitest';
import { compileFieldReader, readFields } from './event_fields.ts';
import { ProtoError, ProtoReader } from './proto_reader.ts';

/** A varint's bytes (little-endian groups of 7 bits), from a bigint: independent of the reader. */
function varintBytes(v: bigint): number[] {
  const out: number[] = [];
  do {
    const low = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? low | 0x80 : low);
  } while (v > 0n);
  return out;
}

describe('ProtoReader tags', () => {
  it('reads the largest field number (2^29 - 1) and its wire type', () => {
    const buf = new Uint8Array([...varintBytes(((2n ** 29n - 1n) << 3n) | 0n), 0x2a]);
    const r = new ProtoReader(buf, 0, buf.length);
    expect(r.next()).toBe(true);
    expect(r.field).toBe(536_870_911);
    expect(r.wire).toBe(0);
    expect(r.varint()).toBe(42);
    expect(r.next()).toBe(false);
  });

  it('refuses a tag past 32 bits (a field number past 2^29) as damage, with its offset', () => {
    const buf = new Uint8Array([...varintBytes((2n ** 29n) << 3n), 0x01]);
    const r = new ProtoReader(buf, 0, buf.length);
    expect(() => r.next()).toThrow(ProtoError);
    expect(() => new ProtoReader(buf, 0, buf.length).next()).toThrow(/field number 536870912 past 2\^29/);
  });
});

describe('ProtoReader.varintWords', () => {
  it("gives a varint's 64 bits as unsigned 32-bit halves, on each side of 2^32, 2^53 and 2^63", () => {
    const values = [0n, 1n, 127n, 128n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 35n + 3n, 2n ** 53n + 1n, 0xffff888012345678n];
    // A negative int64 (10 bytes on the wire) is its two's complement.
    values.push(2n ** 64n - 1n, 2n ** 64n - 2n ** 31n);
    for (const v of values) {
      const buf = new Uint8Array([...varintBytes(v), 0x2a]);
      const r = new ProtoReader(buf, 0, buf.length);
      r.varintWords();
      expect([r.lo, r.hi]).toEqual([Number(v & 0xffffffffn), Number(v >> 32n)]);
      expect(r.varint()).toBe(42);
    }
  });

  it('a varint cut short is damage', () => {
    const buf = new Uint8Array([0xff, 0xff]);
    expect(() => new ProtoReader(buf, 0, buf.length).varintWords()).toThrow(ProtoError);
  });
});

describe('uint32 fields', () => {
  const reader = compileFieldReader('test_event', [undefined, { name: 'v', kind: 'uint32' }], true, true);
  const read = (v: bigint) => {
    const buf = new Uint8Array([0x08, ...varintBytes(v)]);
    return readFields(reader, new ProtoReader(buf, 0, buf.length), null, { n: 0 }).v;
  };

  it('read as written below 2^32', () => {
    expect(read(0n)).toBe(0);
    expect(read(4_294_967_295n)).toBe(4_294_967_295);
  });

  it('keep their low 32 bits when written wider, below and above 2^53', () => {
    expect(read(2n ** 32n + 5n)).toBe(5);
    expect(read(0x1234_5678_9abcn)).toBe(0x5678_9abc);
    expect(read(2n ** 64n - 1n)).toBe(4_294_967_295);
    expect(read(2n ** 60n + 7n)).toBe(7);
  });
});

describe('pointer fields (shr, work)', () => {
  // mm_shrink_slab_end's shr is field 3, uint64; a test event's as int64 (a
  // negative int64 is a 10-byte varint of its two's complement).
  const u64 = compileFieldReader(
    'mm_shrink_slab_end',
    [undefined, undefined, undefined, { name: 'shr', kind: 'uint64' }],
    true,
    true,
  );
  const i64 = compileFieldReader('test_event', [undefined, { name: 'work', kind: 'int64' }], true, true);
  const read = (reader: typeof u64, no: number, v: bigint) => {
    const buf = new Uint8Array([no << 3, ...varintBytes(v)]);
    return readFields(reader, new ProtoReader(buf, 0, buf.length), null, { n: 0 });
  };

  it('print the 64 bits as 0x + lowercase hex, on each side of 2^32 and 2^53', () => {
    const values = [
      0n,
      1n,
      0x1234n,
      2n ** 32n - 1n,
      2n ** 32n,
      2n ** 32n + 0xabn,
      2n ** 53n - 1n,
      2n ** 53n + 1n,
      0xffff888012345678n,
      0xffffffff00000000n,
      2n ** 64n - 1n,
    ];
    for (const v of values) {
      const text = `0x${v.toString(16)}`;
      expect(read(u64, 3, v)).toEqual({ shr: text });
      expect(read(i64, 1, v)).toEqual({ work: text });
    }
  });

  it('a varint cut short is damage', () => {
    const buf = new Uint8Array([3 << 3, 0xff, 0xff]);
    expect(() => readFields(u64, new ProtoReader(buf, 0, buf.length), null, { n: 0 })).toThrow(ProtoError);
  });
});

describe('string fields', () => {
  const reader = compileFieldReader('test_event', [undefined, { name: 'comm', kind: 'string' }], true, true);
  const encoder = new TextEncoder();
  const read = (text: string): unknown => {
    const bytes = encoder.encode(text);
    const buf = new Uint8Array([0x0a, ...varintBytes(BigInt(bytes.length)), ...bytes]);
    return readFields(reader, new ProtoReader(buf, 0, buf.length), null, { n: 0 }).comm;
  };

  it('read as written, repeated or not, more names than the reader keeps', () => {
    const names = Array.from({ length: 3000 }, (_, i) => `kworker/${i % 8}:${i}`);
    names.push('', 'é', 'swapper/0', 'x'.repeat(32), 'y'.repeat(33), 'Ω-task', 'swapper/0');
    // Each name three times, in three orders, so slots are both hit and taken over.
    for (const order of [names, [...names].reverse(), names]) for (const n of order) expect(read(n)).toBe(n);
  });

  it('names that differ in one byte or in length stay apart', () => {
    expect([read('abc'), read('abd'), read('abc'), read('ab'), read('abc\0')]).toEqual([
      'abc',
      'abd',
      'abc',
      'ab',
      'abc\0',
    ]);
  });
});
