import { describe, expect, it } from 'vitest';
import { decodePage, PageRecords } from './ring_buffer_page.ts';
import type { PageLayout } from './event_format.ts';

const PAGE = 4096;
const layout: PageLayout = { timestampOffset: 0, commitOffset: 8, commitSize: 8, dataOffset: 16 };

/** Builds a little-endian page from (typeLen, delta, payload words) records. */
function page(
  ts: bigint,
  records: { typeLen: number; delta: number; words: number[] }[],
  flags = 0,
  lostCount?: number,
): Buffer {
  const b = Buffer.alloc(PAGE);
  b.writeBigUInt64LE(ts, 0);
  let p = 16;
  for (const r of records) {
    b.writeUInt32LE(((r.delta << 5) | r.typeLen) >>> 0, p);
    p += 4;
    for (const w of r.words) {
      b.writeUInt32LE(w >>> 0, p);
      p += 4;
    }
  }
  const size = p - 16;
  b.writeUInt32LE((size | flags) >>> 0, 8);
  if (lostCount !== undefined) b.writeBigUInt64LE(BigInt(lostCount), p);
  return b;
}

describe('decodePage', () => {
  it('decodes small, extended, time-extend and padding records', () => {
    const base = { hi: 0, lo: 1000 };
    const b = page(1000n, [
      { typeLen: 2, delta: 5, words: [0x11, 0x22] }, // 8 data bytes at ts 1005
      { typeLen: 30, delta: 3, words: [2] }, // time extend: +2<<27 + 3
      { typeLen: 0, delta: 1, words: [12, 0xaa, 0xbb] }, // length word 12 -> 8 data bytes
      { typeLen: 29, delta: 7, words: [4] }, // discarded event (padding with length)
      { typeLen: 1, delta: 2, words: [0x33] },
    ]);
    const out = new PageRecords(PAGE);
    decodePage(b, 0, PAGE, layout, true, base, out);
    expect(out.error).toBeNull();
    expect(out.count).toBe(3);
    expect(out.ts[0]).toBe(5);
    expect(out.dataLen[0]).toBe(8);
    expect(out.ts[1]).toBe(5 + 2 * 2 ** 27 + 3 + 1);
    expect(out.dataLen[1]).toBe(8);
    expect(b.readUInt32LE(out.dataOff[1]!)).toBe(0xaa);
    expect(out.ts[2]).toBe(out.ts[1]! + 2);
    expect(b.readUInt32LE(out.dataOff[2]!)).toBe(0x33);
  });

  it('keeps timestamps exact beyond 2^53 absolute ns (relative to a base)', () => {
    const abs = (1n << 60n) + 123n;
    const base = { hi: Number(abs >> 32n), lo: Number(abs & 0xffffffffn) };
    const b = page(abs, [{ typeLen: 1, delta: 7, words: [1] }]);
    const out = new PageRecords(PAGE);
    decodePage(b, 0, PAGE, layout, true, base, out);
    expect(out.ts[0]).toBe(7);
  });

  it('reports missed events with and without a stored count', () => {
    const out = new PageRecords(PAGE);
    decodePage(
      page(0n, [{ typeLen: 1, delta: 1, words: [1] }], 0x80000000 | 0x40000000, 42),
      0,
      PAGE,
      layout,
      true,
      { hi: 0, lo: 0 },
      out,
    );
    expect(out.lost).toBe(42);
    decodePage(
      page(0n, [{ typeLen: 1, delta: 1, words: [1] }], 0x80000000),
      0,
      PAGE,
      layout,
      true,
      { hi: 0, lo: 0 },
      out,
    );
    expect(out.lost).toBe(-1);
  });

  it('stops at damage and says where', () => {
    const b = page(0n, [
      { typeLen: 1, delta: 1, words: [1] },
      { typeLen: 0, delta: 1, words: [100000] },
    ]);
    const out = new PageRecords(PAGE);
    decodePage(b, 0, PAGE, layout, true, { hi: 0, lo: 0 }, out);
    expect(out.count).toBe(1);
    expect(out.error).toMatch(/bad record length/);
    expect(out.errorOff).toBe(24);
    // commit size larger than the page
    b.writeUInt32LE(0x7ffffff, 8);
    decodePage(b, 0, PAGE, layout, true, { hi: 0, lo: 0 }, out);
    expect(out.error).not.toBeNull();
  });
});
