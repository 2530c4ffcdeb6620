// trace_printk() and trace_puts() messages from trace.dat (bprint.ts).
//
// Nothing on this machine emits them (trace_printk needs a call compiled
// into the kernel or a module), so the whole-file test puts them into a
// real recording: the printk formats section rewritten (same length) with
// the formats, and bprint / bputs records appended where pages have room,
// their arguments packed as the kernel's vbin_printf() packs them.
// `trace-cmd report` on that file is the reference for the messages, except
// where its parser (libtraceevent) reads a format differently from the
// kernel's printf; the unit tests check those (%c, %h, %hh, `-` and `*`)
// against vbin_printf's packing and C printf.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDuckDb } from '../../engine/engine.ts';
import { ingestFile } from '../../ingest/ingest_file.ts';
import { PrintkFormats, renderBprint } from './bprint.ts';
import { parseEventFormat } from './event_format.ts';
import { FileSource } from './file_source.ts';
import { Kallsyms } from './kallsyms.ts';
import { readTraceDatHeader } from './read_file_header.ts';
import { pageRecordsLE, v6Layout } from '../../../tests/support/decode/trace_dat/test_v6_file.ts';

const FIXTURE = path.resolve(__dirname, '../../../fixtures/reclaim_kswapd.v6.dat');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-bprint-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

type Arg = { i8: number } | { i16: number } | { i32: number } | { i64: bigint } | { str: string };

/** Arguments packed as vbin_printf() does: each integer aligned to its size (8-byte ones to 4), strings inline with their NUL. */
function pack(args: Arg[]): Buffer {
  const out: number[] = [];
  const align = (n: number) => {
    while (out.length % n !== 0) out.push(0);
  };
  const bytes = (b: Buffer) => out.push(...b);
  for (const a of args) {
    if ('i8' in a) out.push(a.i8 & 255);
    else if ('i16' in a) {
      align(2);
      const b = Buffer.alloc(2);
      b.writeInt16LE(a.i16);
      bytes(b);
    } else if ('i32' in a) {
      align(4);
      const b = Buffer.alloc(4);
      b.writeInt32LE(a.i32);
      bytes(b);
    } else if ('i64' in a) {
      align(4);
      const b = Buffer.alloc(8);
      b.writeBigInt64LE(BigInt.asIntN(64, a.i64));
      bytes(b);
    } else {
      bytes(Buffer.from(a.str + '\0', 'utf8'));
    }
  }
  align(4);
  return Buffer.from(out);
}

const kallsyms = Kallsyms.parse(
  'ffffffff81300000 t shrink_slab\nffffffff81300400 t do_shrink_slab\nffffffff81400000 t super_cache_scan\n',
);
const render = (fmt: string, args: Arg[]) => {
  const b = pack(args);
  return renderBprint(fmt, b, 0, b.length, true, 8, kallsyms);
};

describe('renderBprint: the kernel packing', () => {
  it('integers of every length, with flags, width and precision', () => {
    expect(render('nr=%lu prio=%d neg=%d', [{ i64: 123n }, { i32: 12 }, { i32: -5 }])).toBe('nr=123 prio=12 neg=-5');
    expect(
      render('[%5d|%-5d|%05d|%+d|% d|%.3d]', [
        { i32: 42 },
        { i32: 42 },
        { i32: -42 },
        { i32: 7 },
        { i32: 7 },
        { i32: 5 },
      ]),
    ).toBe('[   42|42   |-0042|+7| 7|005]');
    expect(
      render('%#x %#o %X %08lx %llu %zu', [
        { i32: 255 },
        { i32: 8 },
        { i32: 0xbeef },
        { i64: 0xabcn },
        { i64: 2n ** 63n },
        { i64: 4096n },
      ]),
    ).toBe('0xff 010 BEEF 00000abc 9223372036854775808 4096');
    expect(render('%lld %llx', [{ i64: -1n }, { i64: -1n }])).toBe('-1 ffffffffffffffff');
  });

  it('%c, %hd and %hhu take one and two bytes, aligned to their size', () => {
    // c (1 byte), then a short aligned to 2, a char, then an int aligned to 4
    expect(render('%c%c %hd %hhu %d', [{ i8: 0x4f }, { i8: 0x4b }, { i16: -300 }, { i8: 200 }, { i32: 9 }])).toBe(
      'OK -300 200 9',
    );
  });

  it('strings, * width and precision, pointers as symbols, pre-formatted %p extensions', () => {
    expect(
      render('[%s] [%.3s] [%-6s] [%*d] [%.*s]', [
        { str: 'kswapd0' },
        { str: 'superblock' },
        { str: 'ab' },
        { i32: 4 },
        { i32: 7 },
        { i32: 2 },
        { str: 'xyz' },
      ]),
    ).toBe('[kswapd0] [sup] [ab    ] [   7] [xy]');
    expect(
      render('%ps %pS %p %pI4 done', [
        { i64: 0xffffffff81400010n },
        { i64: 0xffffffff81300410n },
        { i64: 0xffff8881n },
        { str: '10.0.0.1' },
      ]),
    ).toBe('super_cache_scan do_shrink_slab+0x10 0xffff8881 10.0.0.1 done');
    expect(render('100%% of %d', [{ i32: 3 }])).toBe('100% of 3');
  });

  it('hostile formats: widths capped, a long format read once', () => {
    expect(render('[%999999999d]', [{ i32: 1 }])).toHaveLength(4096 + 2);
    expect(render('[%*d]', [{ i32: -2_000_000_000 }, { i32: 1 }])).toBe('[1' + ' '.repeat(4095) + ']');
    // 200k conversions and one argument: the rest print as nothing
    expect(render('%d'.repeat(200_000), [{ i32: 5 }])).toBe('5');
  });

  it('a buffer shorter than its format prints what is there', () => {
    const b = pack([{ i32: 1 }]);
    expect(renderBprint('a=%d b=%d c=%s', b, 0, b.length, true, 8, kallsyms)).toBe('a=1 b= c=');
  });

  it('printk formats: the kernel file format, escapes undone, looked up by address', () => {
    const p = PrintkFormats.parse(
      '0xffffffff8281942f : "thaw_processes"\n0xffffffffc0de0040 : "a \\"quoted\\"\\tword %d\\n"\n',
    );
    expect(p.size).toBe(2);
    expect(p.lookup(0xffffffff, 0x8281942f)).toBe('thaw_processes');
    expect(p.lookup(0xffffffff, 0xc0de0040)).toBe('a "quoted"\tword %d\n');
    expect(p.lookup(0xffffffff, 0xc0de0044)).toBeNull();
  });
});

/**
 * A trace_printk() call site: its format and the arguments of one call;
 * `message`: what the kernel prints, where trace-cmd cannot be the
 * reference (its parser, libtraceevent, misreads a `-` flag, and fails on
 * `*` widths and on formats without arguments).
 */
interface Call {
  fmt: string;
  args: Arg[];
  message?: string;
}

// Addresses are the fixture's kallsyms: super_cache_scan+0x10, do_shrink_slab+0x10.
const CALLS: Call[] = [
  { fmt: 'shrink %s nr=%lu prio=%d\n', args: [{ str: 'super_cache_scan' }, { i64: 552n }, { i32: 12 }] },
  { fmt: '%ps took %llu ns (%d%%)\n', args: [{ i64: 0xffffffff816bcd00n }, { i64: 312_004_117n }, { i32: 97 }] },
  {
    fmt: 'flags=%#x neg=%d hex=%08lx at %pS w=[%5d]\n',
    args: [{ i32: 0xcc0 }, { i32: -12 }, { i64: 0xdeadn }, { i64: 0xffffffff815adf90n }, { i32: 42 }],
  },
  { fmt: 'left [%-5d]\n', args: [{ i32: 7 }], message: 'left [7    ]' },
  {
    fmt: 'width [%*d] size %zu\n',
    args: [{ i32: 6 }, { i32: 31 }, { i64: 4096n }],
    message: 'width [    31] size 4096',
  },
  { fmt: 'no arguments at all\n', args: [], message: 'no arguments at all' },
];
const PUTS = 'reclaim: direct reclaim starts\n';

/**
 * The fixture with CALLS as bprint events and PUTS as a bputs event, each
 * appended to a page with room for it: the printk section rewritten to
 * hold their formats (its length kept, so no offset moves).
 */
async function withPrintkEvents(): Promise<string> {
  const le = fs.readFileSync(FIXTURE);
  const src = await FileSource.open(FIXTURE);
  const info = await readTraceDatHeader(src);
  await src.close();
  const idOf = (name: string) =>
    info.formats.map((f) => parseEventFormat(f.text, f.system)).find((f) => f.system === 'ftrace' && f.name === name)!
      .id;
  const file = v6Layout(le);
  const out = Buffer.from(le);

  const addrOf = (i: number) => 0xffffffffc0de0000n + BigInt(i) * 0x40n;
  const escape = (s: string) => s.replace(/\n/g, '\\n').replace(/"/g, '\\"');
  let printk = [...CALLS.map((c) => c.fmt), PUTS]
    .map((f, i) => `0x${addrOf(i).toString(16)} : "${escape(f)}"\n`)
    .join('');
  const room = file.printk.size - Buffer.byteLength(printk);
  expect(room).toBeGreaterThan(9);
  printk += `0x1 : "${'x'.repeat(room - 9)}"\n`;
  Buffer.from(printk, 'latin1').copy(out, file.printk.at);

  const ip = 0xffffffff815aeb70n; // shrink_slab in the fixture's kallsyms
  const records = [
    ...CALLS.map((c, i) => {
      const r = Buffer.concat([Buffer.alloc(24), pack(c.args)]);
      r.writeUInt16LE(idOf('bprint'), 0);
      r.writeBigUInt64LE(addrOf(i), 16);
      return r;
    }),
    (() => {
      const r = Buffer.alloc(24);
      r.writeUInt16LE(idOf('bputs'), 0);
      r.writeBigUInt64LE(addrOf(CALLS.length), 16);
      return r;
    })(),
  ];
  for (const r of records) r.writeBigUInt64LE(ip, 8);

  // Append each to the next page whose data ends with an event and has room.
  let next = 0;
  const { offset, size } = file.cpus[0]!;
  for (let at = offset; at + file.pageSize <= offset + size && next < records.length; at += file.pageSize) {
    const commit = le.readUInt32LE(at + 8);
    const used = commit & 0xfffff;
    const rec = records[next]!;
    const last = lastEvent(le, at + 16, at + 16 + used);
    if (16 + used + 4 + rec.length > file.pageSize || last === null) continue;
    rec.writeInt32LE(le.readInt32LE(last.dataAt + 4), 4); // the pid of the page's last event
    out.writeUInt32LE(((rec.length / 4) << 0) | 0, at + 16 + used); // type_len = length / 4, time delta 0
    rec.copy(out, at + 16 + used + 4);
    out.writeUInt32LE((commit & ~0xfffff) | (used + 4 + rec.length), at + 8);
    next++;
  }
  expect(next).toBe(records.length);
  const f = path.join(scratch, 'with_printk.v6.dat');
  fs.writeFileSync(f, out);
  return f;
}

/** The page's last record, if it is an event (not padding, a time stamp or nothing). */
function lastEvent(b: Buffer, start: number, end: number) {
  const last = pageRecordsLE(b, start, end).at(-1);
  return last !== undefined && last.dataAt >= 0 ? last : null;
}

/** `name: ip: buf` of every bprint and bputs event of a model, in time order. */
async function messagesOf(dbPath: string): Promise<string[]> {
  const engine = await openDuckDb(dbPath, { readOnly: true });
  try {
    const rows = await engine.query<{ name: string; ip: string; buf: string }>(
      `SELECT e.name,
              max(a.string_value) FILTER (WHERE a.key = 'ip') AS ip,
              max(a.string_value) FILTER (WHERE a.key = 'buf') AS buf
       FROM ftrace_event e JOIN args a USING (arg_set_id)
       WHERE e.name IN ('bprint', 'bputs') GROUP BY e.id, e.name, e.ts ORDER BY e.ts, e.id`,
    );
    return rows.map((x) => `${x.name}: ${x.ip}: ${x.buf}`);
  } finally {
    engine.close();
  }
}

describe('trace_printk in a trace.dat', () => {
  it('messages as trace-cmd report prints them, in the model as ip and buf', async () => {
    const file = await withPrintkEvents();
    const report = execFileSync('trace-cmd', ['report', file], {
      maxBuffer: 64 << 20,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString();
    const printed = report
      .split('\n')
      .map((l) => /\b(bprint|bputs):\s+(.*)$/.exec(l))
      .filter((m) => m !== null)
      .map((m) => `${m[1]}: ${m[2]!.trimEnd()}`);
    expect(printed).toHaveLength(CALLS.length + 1);
    // trace-cmd prints the messages the calls make (a check of the packing above)
    expect(printed[0]).toBe('bprint: shrink_slab: shrink super_cache_scan nr=552 prio=12');
    const expected = [
      ...CALLS.map((c, i) => (c.message === undefined ? printed[i]! : `bprint: shrink_slab: ${c.message}`)),
      printed.at(-1)!,
    ];

    const r = await ingestFile(file, { dataDir: path.join(scratch, 'data') });
    expect(r.summary.eventsByName.bprint).toBe(CALLS.length);
    expect(r.summary.eventsByName.bputs).toBe(1);
    expect(await messagesOf(r.dbPath)).toEqual(expected);

    // The report's text, ingested, gives the same fields where trace-cmd could print them.
    const reportFile = path.join(scratch, 'with_printk.report.txt');
    fs.writeFileSync(reportFile, report);
    const t = await ingestFile(reportFile, { dataDir: path.join(scratch, 'data') });
    const fromText = await messagesOf(t.dbPath);
    expect(fromText).toHaveLength(expected.length);
    expected.forEach((m, i) => {
      if (CALLS[i]?.message === undefined) expect(fromText[i]).toBe(m);
    });
  });
});
