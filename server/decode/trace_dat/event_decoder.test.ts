import { describe, expect, it } from 'vitest';
import { compileEvent, makeHelpers } from './event_decoder.ts';
import { parseEventFormat } from './event_format.ts';
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

describe('compileEvent: formats of the same layout share generated code, not their tables', () => {
  // Two events whose fields are laid out alike (so their readers' sources are
  // the same) but whose print formats name the values differently.
  const format = (name: string, id: number, table: string) =>
    parseEventFormat(
      `name: ${name}
ID: ${id}
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:unsigned int mode;\toffset:8;\tsize:4;\tsigned:0;
\tfield:int count;\toffset:12;\tsize:4;\tsigned:1;

print fmt: "mode=%s count=%d", __print_symbolic(REC->mode, ${table}), REC->count
`,
      'demo',
    );
  const a = format('demo_a', 901, '{ 0, "ZERO_A" }, { 1, "ONE_A" }');
  const b = format('demo_b', 902, '{ 0, "ZERO_B" }, { 1, "ONE_B" }, { 2, "TWO_B" }');
  const record = (mode: number, count: number) => {
    const buf = Buffer.alloc(16);
    buf.writeUInt32LE(mode, 8);
    buf.writeInt32LE(count, 12);
    return buf;
  };

  it("each event's values come from its own print format, in any order and from any file's helpers", () => {
    for (const helpers of [makeHelpers(true, Kallsyms.parse('')), makeHelpers(true, Kallsyms.parse(''))]) {
      const ea = compileEvent(a, helpers, true, 8);
      const eb = compileEvent(b, helpers, true, 8);
      // Expected: the names in the tables above; a value a table lacks prints as hex.
      expect(eb.fast(record(2, -3), 0, 16)).toEqual({ mode: 'TWO_B', count: -3 });
      expect(ea.fast(record(1, 7), 0, 16)).toEqual({ mode: 'ONE_A', count: 7 });
      expect(eb.fast(record(1, 7), 0, 16)).toEqual({ mode: 'ONE_B', count: 7 });
      expect(ea.fast(record(2, 0), 0, 16)).toEqual({ mode: '0x2', count: 0 });
      expect(ea.safe(record(0, 1), 0, 16)).toEqual({ mode: 'ZERO_A', count: 1 });
      expect(eb.safe(record(0, 1), 0, 16)).toEqual({ mode: 'ZERO_B', count: 1 });
    }
  });
});
