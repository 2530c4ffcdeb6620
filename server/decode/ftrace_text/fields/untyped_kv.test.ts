// UntypedKvScan reads an untyped event's key=value text from its bytes into
// kinds, spans and numbers for a shape row. The definition is the event's
// parser (the generic one's fields object, or writeback's `bdi NAME:` one)
// and KeptRaw.of: wherever the
// scan takes a text, the fields' keys, values and kinds, and whether the
// text is kept, must be what those give; these tests check that on every
// untyped event of the committed text fixtures and on texts made to hit
// each case the scan must refuse.
import { describe, expect, it } from 'vitest';
import type { EventFields } from '../../decoded_event.ts';
import { KeptRaw, RAW_KEPT, RAW_PRINTS_BACK, RAW_UNSURE } from '../kept_raw.ts';
import { eventNameInfo, readsGenericKv, writebackBdiSpec } from './index.ts';
import { KV_HEX, KV_INT, KV_NIL, KV_STR, UntypedKvScan } from './untyped_kv.ts';
import { TEXT_FIXTURES, decodedEventsOf } from '../../../../tests/support/decode/ftrace_text/text_fixtures.ts';
import { kmemCorpusArgs } from '../../../../tests/support/decode/ftrace_text/corpus_args.ts';

/** Integers' `0x%lx` text (what a shape stores as `hex`). */
const CANONICAL_HEX = /^0x(0|[1-9a-f][0-9a-f]{0,15})$/;

/**
 * What the scan says about `name`'s `text`, checked against the fields of
 * the event's own parser (the generic one, or writeback's `bdi NAME:` one);
 * null when it refused.
 */
function scanAgainstFields(
  scan: UntypedKvScan,
  name: string,
  text: string,
): { fields: EventFields | null; wrong: string[] } | null {
  const b = Buffer.from(text, 'latin1');
  // The parser first: it learns the key sequence the scan then recognises.
  const fields = eventNameInfo(name).parse(text, 0, text.length, text, b);
  const spec = writebackBdiSpec(name);
  if (!(spec !== null ? scan.scanBdi(b, 0, b.length, spec) : scan.scan(b, 0, b.length))) return null;
  const wrong: string[] = [];
  if (fields === null) return { fields, wrong: ['taken where the parser fails'] };
  const keys = Object.keys(fields);
  if (JSON.stringify(keys) !== JSON.stringify(scan.info.keys)) wrong.push(`keys ${keys} vs ${scan.info.keys}`);
  keys.forEach((key, k) => {
    const v = fields[key];
    const kind = scan.kinds[k];
    const slice = text.slice(scan.starts[k], scan.ends[k]);
    if (typeof v === 'number') {
      if (kind !== KV_INT || scan.nums[k] !== v) wrong.push(`${key}: ${v} read as kind ${kind} ${scan.nums[k]}`);
    } else if (typeof v === 'string') {
      // `(nil)` is the parser's `0x0`, written as a hex 0 (KV_NIL), not from its bytes.
      const nil = slice === '(nil)' && v === '0x0';
      const want = nil ? KV_NIL : CANONICAL_HEX.test(v) ? KV_HEX : KV_STR;
      if (kind !== want || (slice !== v && !nil)) wrong.push(`${key}: '${v}' read as kind ${kind} '${slice}'`);
    } else wrong.push(`${key}: a ${typeof v} taken`);
  });
  const code = keys.reduce((c, _, k) => c + (scan.kinds[k] === KV_NIL ? KV_HEX : scan.kinds[k]!) * 3 ** k, 0);
  if (code !== scan.code) wrong.push(`code ${scan.code}, kinds give ${code}`);
  const pairs = Object.entries(fields).filter(([k]) => !(scan.bdi && k === 'name'));
  const printed = (scan.bdi ? `bdi ${fields.name}: ` : '') + pairs.map(([k, x]) => `${k}=${x}`).join(' ');
  if (scan.printsBack !== (printed === text)) wrong.push(`printsBack ${scan.printsBack} for '${text}'`);
  return { fields, wrong };
}

describe('UntypedKvScan reads what the generic parser reads', () => {
  it.each(TEXT_FIXTURES)('%s: every untyped key=value event it takes', { timeout: 120_000 }, async (file) => {
    const events = (await decodedEventsOf(file)).filter(
      (e) => e.raw !== null && !e.raw.includes('\n') && (readsGenericKv(e.name) || writebackBdiSpec(e.name) !== null),
    );
    const scan = new UntypedKvScan();
    const byFields = new KeptRaw();
    const byScan = new KeptRaw();
    const wrong: string[] = [];
    let taken = 0;
    let takenBdi = 0;
    for (const e of events) {
      const text = e.raw!;
      const got = scanAgainstFields(scan, e.name, text);
      const fields = got !== null ? got.fields : eventNameInfo(e.name).parse(text, 0, text.length, text, null);
      const want = byFields.of(e.name, text, fields);
      if (got === null) {
        byScan.of(e.name, text, fields);
        continue;
      }
      taken++;
      if (scan.bdi) takenBdi++;
      wrong.push(...got.wrong.map((w) => `${e.name} line ${e.where}: ${w}`));
      // Where the scan decides `raw`, the same as of(); where it cannot, the writer takes of().
      const keep = byScan.ofScan(e.name, scan, Buffer.from(text, 'latin1'));
      if (keep === RAW_UNSURE) byScan.of(e.name, text, fields);
      else if ((keep === RAW_PRINTS_BACK) !== (want === null) || (keep === RAW_KEPT) !== (want === text))
        wrong.push(`${e.name} line ${e.where}: raw ${keep} where of() gives ${want === null ? 'null' : 'the text'}`);
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    // Its kmem, irq and timer events are of the plain layout.
    if (file === 'printed_args.tracefs.txt') expect(taken).toBeGreaterThan(0);
    // Its writeback_dirty_inode / writeback_mark_inode_dirty lines are `bdi NAME: k=v`.
    if (file === 'fsync_xfs.report.txt') expect(takenBdi).toBeGreaterThan(0);
  });

  it('takes plain decimals, hex and tokens, and says when they do not print back', () => {
    const scan = new UntypedKvScan();
    const cases: [string, boolean, string?][] = [
      ['bdi 7:0: ino=25516713 state=0x40 flags=0x40', true, 'writeback_mark_inode_dirty'],
      ['bdi 254:0: ino=10001746 state=I_DIRTY_SYNC flags=0x10', true, 'writeback_dirty_inode'],
      ['bdi 254:0: ino=007 index=0', false, 'folio_wait_writeback'],
      ['page=0x2b8c8e pfn=0x2b8c8e order=0 migratetype=0 gfp_flags=GFP_KERNEL|__GFP_ZERO', true],
      ['irq=24 name=ahci', true],
      ['a=007 b=1', false],
      ['a=1  b=2', false],
      ['ptr=0x00ab len=4', true],
      ['ptr=00000000dbab40df len=4', true],
      ['ptr=0000000012345678 len=4', true],
    ];
    for (const [text, back, name = 'mm_page_alloc'] of cases) {
      const got = scanAgainstFields(scan, name, text);
      expect(got, text).not.toBeNull();
      expect(got!.wrong, text).toEqual([]);
      expect(scan.printsBack, text).toBe(back);
    }
  });

  it('reads `/0x` and hex at the edges of a value as the parser does (one walk finds both and the end)', () => {
    const scan = new UntypedKvScan();
    // [text, taken]: `/0x` anywhere but the value's start is left to the parser; hex is told apart from text.
    const cases: [string, boolean][] = [
      ['f=a/0x y=1', false],
      ['f=a/0x1 y=1', false],
      ['f=1/0x2', false],
      ['y=1 f=a/0x', false],
      ['f=a/0 y=1', true],
      ['f=a/x0 y=1', true],
      ['f=a/0y y=1', true],
      ['p=0xABC y=1', true],
      ['p=0x0 y=1', true],
      ['p=0x00 y=1', true],
      ['p=0x12g y=1', true],
      ['p=0x1234567890abcdef y=1', true],
      ['p=0x1234567890abcdef0 y=1', true],
      ['p=12ab y=0x7', true],
      // The hex digits after `0x` are read in the walk that finds the value's end: what may follow them.
      ['p=0x1/0x2 y=1', false],
      ['p=0xab/0 y=1', true],
      ['p=0x y=1', true],
      ['y=1 p=0x', true],
      ['y=1 p=0xab', true],
      ['y=1 p=0x0', true],
      ['p=00x1 y=1', true],
      ['p=0x0x1 y=1', true],
      ['p=0xabZ y=1', true],
    ];
    for (const [text, taken] of cases) {
      const got = scanAgainstFields(scan, 'kmalloc', text);
      expect(got?.wrong ?? [], text).toEqual([]);
      expect(got !== null, text).toBe(taken);
    }
  });

  it('reads a minus sign and `(nil)` as the parser does, in any key and next to any other kind', () => {
    const scan = new UntypedKvScan();
    // [name, text, printsBack]
    const cases: [string, string, boolean][] = [
      [
        'kmalloc',
        'call_site=f+0x10 ptr=0xffff888100000000 bytes_req=8 bytes_alloc=8 gfp_flags=GFP_KERNEL node=-1 accounted=false',
        true,
      ],
      ['kfree', 'call_site=f+0x10 ptr=(nil)', false],
      ['kfree', 'ptr=(nil) call_site=f+0x10', false],
      // One key, a token in one event and a negative number in the next: two kinds, two codes.
      ['mm_page_alloc', 'x=abc y=1', true],
      ['mm_page_alloc', 'x=-5 y=1', true],
      ['mm_page_alloc', 'x=-5 y=-123456789012345', true],
      ['mm_page_alloc', 'x=abc y=-9', true],
      ['mm_page_alloc', 'x=(nil) y=-9', false],
      ['mm_page_alloc', 'x=0x0 y=-9', true],
      ['mm_page_alloc', 'x=(nil)x y=-9', true],
      // writeback's `state` is kept as text (kind 1), `range_start` always a number (kind 2).
      ['writeback_mark_inode_dirty', 'bdi 7:0: ino=1 state=-5 flags=0x40', true],
      ['writeback_mark_inode_dirty', 'bdi 7:0: ino=1 state=(nil) flags=0x40', true],
      ['writeback_write_inode_start', 'bdi 7:0: ino=1 range_start=-5 flags=0x40', true],
    ];
    for (const [name, text, back] of cases) {
      const got = scanAgainstFields(scan, name, text);
      expect(got, text).not.toBeNull();
      expect(got!.wrong, text).toEqual([]);
      expect(scan.printsBack, text).toBe(back);
    }
    // The field that was `-5` is an integer, the one that was `(nil)` a hex 0, in the code too.
    scanAgainstFields(scan, 'mm_page_alloc', 'x=-5 y=(nil)');
    expect([scan.kinds[0], scan.nums[0], scan.kinds[1], scan.code]).toEqual([KV_INT, -5, KV_NIL, KV_INT + KV_HEX * 3]);
  });

  it("reads after the kmem plugin's `(call_site) ` as the parser does, and keeps the text where of() does", () => {
    // [name, text, of() keeps the text]
    const cases: [string, string, boolean][] = [
      ['kfree', '(f+0x10) call_site=f+0x10 ptr=(nil)', false],
      ['kfree', '(f+0x10) call_site=f+0x10 ptr=0xffff888100000000', false],
      [
        'kmalloc',
        '(f) call_site=f ptr=0x1 bytes_req=8 bytes_alloc=8 gfp_flags=GFP_KERNEL node=-1 accounted=false',
        false,
      ],
      ['kfree', '(g) call_site=f ptr=(nil)', true],
      ['kfree', '(f)  call_site=f ptr=(nil)', true],
      ['kfree', '(f) call_site=f  ptr=(nil)', true],
      ['kfree', '(f)x call_site=f ptr=(nil)', true],
      ['kfree', '() ptr=0x1', false],
      ['kfree', '(f) ptr=0x1', true],
      ['kfree', '(f) call_site=f ptr=0x0', true],
      ['kfree', '(f) call_site=f ptr=0', true],
      ['kfree', '(f) call_site=f ptr=00', true],
      ['kfree', '(f) call_site=f x=(nil)', true],
      ['kfree', '(0x0) call_site=(nil) ptr=0x1', true],
      ['kfree', '(12) call_site=12 ptr=0x1', false],
      ['kfree', '(012) call_site=012 ptr=0x1', true],
      ['kfree', '(-3) call_site=-3 ptr=0x1', false],
      ['kfree', 'x (f) call_site=f ptr=0x1', true],
      ['mm_page_alloc', '(f) call_site=f ptr=(nil)', true],
    ];
    for (const [name, text, kept] of cases) {
      const scan = new UntypedKvScan();
      const got = scanAgainstFields(scan, name, text);
      expect(got, text).not.toBeNull();
      expect(got!.wrong, text).toEqual([]);
      expect(new KeptRaw().of(name, text, got!.fields) === text, text).toBe(kept);
      const keep = new KeptRaw().ofScan(name, scan, Buffer.from(text, 'latin1'));
      expect(keep, text).toBe(kept ? RAW_UNSURE : RAW_PRINTS_BACK);
    }
  });

  it('leaves to the general path the values and keys it cannot be sure of', () => {
    const scan = new UntypedKvScan();
    for (const text of [
      'x=+5 y=1',
      'x=-0 y=1',
      'x=-007 y=1',
      'x=- y=1',
      'x=--5 y=1',
      'x=-5x y=1',
      'x=-1234567890123456 y=1',
      'f=sym+0x4/0x10 y=1',
      'q="a" y=1',
      'v=7, w=1',
      'vec=9 [action=RCU]',
      'n=12345678901234567890 y=1',
      'a=1 a=2',
      '0=1 b=2',
      'e= y=1',
      'bdi 254:0[9]: ino=1 flags=0x1',
      'bdi 254:0:  ino=1 flags=0x1',
      'bdi 254:0: ino=1 flags=0x1 ',
      'bdi 254:0: sb_dev 0:0 ino=1',
      'bdi 254:0: name=x ino=1',
    ]) {
      const name = text.startsWith('bdi ') ? 'writeback_mark_inode_dirty' : 'kmalloc';
      const got = scanAgainstFields(scan, name, text);
      expect(got?.wrong ?? [], text).toEqual([]);
      expect(got, text).toBeNull();
    }
  });
});

describe("UntypedKvScan on the kmem corpus's kmalloc and kfree lines (node=-1, ptr=(nil))", () => {
  it.each([
    ['tracefs', true],
    ['report', false],
  ])('%s text: every line it takes reads as the parser reads it', { timeout: 120_000 }, (_form, kernelFormat) => {
    const events = kmemCorpusArgs(['kmalloc', 'kfree'], kernelFormat);
    // awk over `trace-cmd report` of kmem.v7.dat: 42,155 kmalloc + 89,330 kfree.
    expect(events.length).toBe(131_485);
    const scan = new UntypedKvScan();
    const byFields = new KeptRaw();
    const byScan = new KeptRaw();
    const wrong: string[] = [];
    let taken = 0;
    let negative = 0;
    let nil = 0;
    events.forEach(({ name, text }, i) => {
      const got = scanAgainstFields(scan, name, text);
      const fields = got !== null ? got.fields : eventNameInfo(name).parse(text, 0, text.length, text, null);
      const want = byFields.of(name, text, fields);
      if (got === null) {
        byScan.of(name, text, fields);
        return;
      }
      taken++;
      for (let k = 0; k < scan.info.keys!.length; k++) {
        if (scan.kinds[k] === KV_INT && scan.nums[k]! < 0) negative++;
        if (scan.kinds[k] === KV_NIL) nil++;
      }
      wrong.push(...got.wrong.map((w) => `${name} event ${i}: ${w}`));
      const keep = byScan.ofScan(name, scan, Buffer.from(text, 'latin1'));
      if (keep === RAW_UNSURE) byScan.of(name, text, fields);
      else if ((keep === RAW_PRINTS_BACK) !== (want === null) || (keep === RAW_KEPT) !== (want === text))
        wrong.push(`${name} event ${i}: raw ${keep} where of() gives ${want === null ? 'null' : 'the text'}`);
    });
    expect(wrong.slice(0, 5)).toEqual([]);
    // awk over the same text: lines with ` node=-` and with ` ptr=(nil)`.
    const signs = events.filter((e) => / node=-/.test(e.text)).length;
    const nils = events.filter((e) => / ptr=\(nil\)/.test(e.text)).length;
    // Every line, after the report's `(call_site) ` too; a kept text only where of() keeps it.
    expect({ taken, negative, nil }).toEqual({ taken: 131_485, negative: signs, nil: nils });
  });
});
