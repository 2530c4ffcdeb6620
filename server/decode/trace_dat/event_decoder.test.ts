import { describe, expect, it } from 'vitest';
import { makeHelpers } from './event_decoder.ts';
import { Kallsyms } from './kallsyms.ts';

describe('makeHelpers: 16-byte names (cstr16)', () => {
  // Expected: the bytes up to the first NUL (or all 16), as UTF-8, computed here from the bytes.
  const names: number[][] = [
    [...Buffer.from('kworker/u8:3'), 0, 0, 0, 0],
    [...Buffer.from('kworker/u8:3'), 0, 0x41, 0x42, 0x43], // garbage after the NUL: same text
    [...Buffer.from('systemd-journal'), 0],
    [...Buffer.from('0123456789abcdef')], // no NUL: all 16 bytes
    [0, ...Buffer.from('hidden-after-0')], // empty
    [...Buffer.from('dd-ñand'), 0, 0, 0, 0, 0, 0, 0, 0].slice(0, 16), // UTF-8
    [...Buffer.from('kworker/u8:4'), 0, 0, 0, 0],
  ];
  const expected = (bytes: number[]) => {
    const nul = bytes.indexOf(0);
    return Buffer.from(bytes.slice(0, nul < 0 ? 16 : nul)).toString('utf8');
  };

  it('gives each name as the bytes up to its NUL read, hit or miss, in any order', () => {
    const h = makeHelpers(true, Kallsyms.parse(''));
    const order = [0, 1, 2, 3, 4, 5, 6, 0, 6, 1, 3, 2, 5, 4, 0];
    const buf = Buffer.alloc(8 + 16 * order.length);
    order.forEach((n, i) => Buffer.from(names[n]!).copy(buf, 8 + 16 * i));
    order.forEach((n, i) => {
      expect(h.cstr16(buf, 8 + 16 * i)).toBe(expected(names[n]!));
      expect(h.cstr16(buf, 8 + 16 * i)).toBe(h.cstr(buf, 8 + 16 * i, 16));
    });
  });

  it('keeps names apart when thousands share the table', () => {
    const h = makeHelpers(false, Kallsyms.parse(''));
    const buf = Buffer.alloc(16 * 20000);
    for (let i = 0; i < 20000; i++) buf.write(`task-${i}`, 16 * i, 'utf8');
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < 20000; i += 7) expect(h.cstr16(buf, 16 * i)).toBe(`task-${i}`);
  });
});
