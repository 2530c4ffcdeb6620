// BlockTextScan reads a block event's positional text from its bytes into
// kinds, spans and numbers for a shape row. The definition is block.ts's
// parser (the event's fields object, read as printed): wherever the scan
// takes a text, the keys, values and kinds must be the parser's; these tests
// check that on every block event of the many_systems corpus recording (the
// tracefs text's args), against the line's own words too, and on texts made
// to hit each case the scan must refuse.
import { describe, expect, it } from 'vitest';
import type { EventFields } from '../../decoded_event.ts';
import { PRINTED_PARSERS } from './index.ts';
import { blockTextScanFor } from './block_bytes.ts';
import { KV_HEX, KV_INT, KV_STR } from './untyped_kv.ts';
import type { BlockTextScan } from './block_bytes.ts';
import { corpusArgs } from '../../../../tests/support/decode/ftrace_text/corpus_args.ts';

const CANONICAL_HEX = /^0x(0|[1-9a-f][0-9a-f]{0,15})$/;

const BLOCK_NAMES = Object.keys(PRINTED_PARSERS);

/** What the scan read of `name`'s `text` as a fields object (null: refused), and where it differs from the parser's. */
function scanAgainstParser(name: string, text: string): { taken: boolean; wrong: string[]; scan: BlockTextScan } {
  const b = Buffer.from(text, 'latin1');
  const fields: EventFields | null = PRINTED_PARSERS[name]!(text);
  const scan = scanOf(name);
  if (!scan.scan(b, 0, b.length)) return { taken: false, wrong: [], scan };
  if (fields === null) return { taken: true, wrong: [`taken where the parser fails: '${text}'`], scan };
  const wrong: string[] = [];
  const keys = Object.keys(fields);
  if (JSON.stringify(keys) !== JSON.stringify(scan.info.keys)) wrong.push(`keys ${keys} vs ${scan.info.keys}`);
  if (scan.info.sig !== keys.join('\u0000')) wrong.push(`sig of ${keys}`);
  keys.forEach((key, k) => {
    const v = fields[key];
    const kind = scan.kinds[k];
    const slice = text.slice(scan.starts[k], scan.ends[k]);
    if (typeof v === 'number') {
      if (kind !== KV_INT || !Object.is(scan.nums[k], v))
        wrong.push(`${key}: ${v} read as kind ${kind} ${scan.nums[k]}`);
    } else if (typeof v === 'string') {
      const want = CANONICAL_HEX.test(v) ? KV_HEX : KV_STR;
      if (kind !== want || slice !== v) wrong.push(`${key}: '${v}' read as kind ${kind} '${slice}'`);
    } else wrong.push(`${key}: a ${typeof v} taken`);
  });
  const code = keys.reduce((c, _, k) => c + scan.kinds[k]! * 3 ** k, 0);
  if (code !== scan.code) wrong.push(`code ${scan.code}, kinds give ${code}`);
  return { taken: true, wrong, scan };
}

/** One reader per event name, as the field worker keeps them. */
const scans = new Map<string, BlockTextScan>();
function scanOf(name: string): BlockTextScan {
  let scan = scans.get(name);
  if (scan === undefined) scans.set(name, (scan = blockTextScanFor(name)!));
  return scan;
}

describe('BlockTextScan reads what block.ts reads', () => {
  it("every block event of the many_systems corpus text: taken, and read as the parser and the line's words give", () => {
    const events = corpusArgs('many_systems', BLOCK_NAMES, true);
    // Counted from the recording (trace-cmd report -N -F block_... | wc -l, less its `cpus=2` line).
    expect(events.length).toBe(274739);
    const wrong: string[] = [];
    const refused: string[] = [];
    const names = new Set<string>();
    for (const { name, text } of events) {
      names.add(name);
      const r = scanAgainstParser(name, text);
      const scan = r.scan;
      if (!r.taken) refused.push(`${name}: ${text}`);
      wrong.push(...r.wrong.map((w) => `${name} ${w}`));
      // The line's own words: `M,m` first (dev is MKDEV(M, m)), the comm or error between the brackets last.
      if (r.taken) {
        const words = /^(\d+),(\d+) /.exec(text);
        if (words !== null && scan.nums[0] !== Number(words[1]) * 2 ** 20 + Number(words[2]))
          wrong.push(`dev of ${text}`);
        const last = scan.info.keys!.indexOf('comm');
        const bracket = /\[([^\]]*)\]( \d+)?$/.exec(text);
        if (last >= 0 && bracket !== null && text.slice(scan.starts[last], scan.ends[last]) !== bracket[1])
          wrong.push(`comm of ${text}`);
      }
    }
    expect(wrong.slice(0, 10)).toEqual([]);
    // Refused: only numbers of 16 or more digits (an unmapped buffer's sector, 2^64 - 1), which fit no shape.
    expect(refused.filter((l) => !/\d{16,}/.test(l))).toEqual([]);
    expect(refused.length).toBe(events.filter((e) => /\d{16,}/.test(e.text)).length);
    expect([...names].sort()).toEqual(
      [
        'block_bio_queue',
        'block_dirty_buffer',
        'block_getrq',
        'block_io_done',
        'block_io_start',
        'block_plug',
        'block_rq_complete',
        'block_rq_insert',
        'block_rq_issue',
        'block_split',
        'block_touch_buffer',
        'block_unplug',
      ].sort(),
    );
  });

  // Each: [name, text, whether the scan takes it]. Where it takes one, the reading must be the parser's.
  const cases: [string, string, boolean][] = [
    ['block_rq_issue', '254,0 WSM 4096 () 319291408 + 8 0x2,0,4 [kworker/u8:2]', true],
    ['block_rq_issue', '254,0 WSM 4096 () 319291408 + 8 [kworker/u8:2]', true], // no ioprio (before 6.10)
    ['block_rq_issue', '254,0 WS 0 (5a 00) 0 + 0 [kworker/u8:2]', true], // a command in the parentheses
    ['block_rq_issue', '254,0  4096 () 1 + 8 [a]', true], // empty rwbs
    ['block_rq_issue', '254,0 W 4096 () 1 + 8 []', true], // empty comm
    ['block_rq_issue', '254,0 W 4096 () 1 + 8 [0x1f]', true], // a comm that is hex text
    ['block_rq_issue', '254,0 W 4096 () 1 + 8 [my prog]', true], // a comm with a space
    ['block_rq_issue', '0254,007 W 04096 () 01 + 08 [a]', true], // zero-padded numbers
    ['block_rq_issue', '254,0 W 4096 () 1 + 8 [a', false], // unterminated
    ['block_rq_issue', '254,0 W 4096 () 1 + 8 [a] ', false],
    ['block_rq_issue', '254,0 W 4096 () 1 + 8 [a]]', false], // two closing brackets
    ['block_rq_issue', '254,0 W 4096 () 1 + 8 [a [b]', false], // two opening brackets
    ['block_rq_issue', '254,0 W 4096 () 1 + 8 [x,1,2 [b]', false], // brackets the ioprio group could take
    ['block_rq_issue', '254,0 W 4096 (a)b) 1 + 8 [c]', false], // a parenthesis in the command
    ['block_rq_issue', '254,0 W 4096 () 1 + 8 [a) 5 + 6 [b]', false],
    ['block_rq_issue', '254,0 W 4096 () 1 + 8 [a\u0000b]', false], // NUL byte
    ['block_rq_issue', '254,0 W 4096 () 1 + 8 [a\u00ffb]', false], // not ASCII
    ['block_rq_issue', '254,0 W 4096 () 1 + 8 [a\tb]', false],
    ['block_rq_issue', '254,0 W 4096 () 1234567890123456 + 8 [a]', false], // 16 digits: left to the parser
    ['block_rq_issue', '254,0 W 4096 () 18446744073709551615 + 8 [a]', false],
    ['block_rq_issue', '1234567890,0 W 4096 () 1 + 8 [a]', false], // a major past 9 digits
    ['block_rq_issue', '254,0 W () 1 + 8 [a]', false], // no bytes: not this parser's
    ['block_rq_issue', '254,0 W 4096 () 1 + 8 0x2,0 [a]', false], // an ioprio of two parts
    ['block_rq_issue', '254,0 W 4096 () 1 + 8 ,0,4 [a]', false],
    ['block_rq_issue', '254,0 W 4096 () 1 +  8 [a]', false],
    ['block_rq_issue', 'x=1 y=2', false], // another kernel's key=value text: the generic parser's
    ['block_rq_issue', '', false],
    ['block_rq_complete', '254,0 RA () 65994752 + 8192 0x2,0,4 [0]', true],
    ['block_rq_complete', '254,0 RA () 65994752 + 8192 [-5]', true],
    ['block_rq_complete', '254,0 RA () 65994752 + 8192 [-0]', true], // -0, as Number() reads it
    ['block_rq_complete', '254,0 RA () 65994752 + 8192 [kworker]', false], // not an error number
    ['block_rq_complete', '254,0 RA () 65994752 + 8192 [--5]', false],
    ['block_rq_complete', '254,0 RA () 65994752 + 8192 []', false],
    ['block_rq_complete', '254,0 RA 4096 () 65994752 + 8192 [0]', false], // with bytes: not this parser's
    ['block_bio_queue', '254,0 WSM 319291408 + 8 [kworker/u8:2]', true],
    ['block_bio_queue', '254,0 WSM 319291408 + 8 [kworker/u8:2] ', false],
    ['block_bio_queue', '254,0 WSM 319291408 + 8 [a] [b]', false],
    ['block_bio_queue', '254,0 WSM 319291408 / 8 [a]', false],
    ['block_split', '254,0 W 2048 / 2304 [kworker/1:0]', true],
    ['block_split', '254,0 W 2048 + 2304 [kworker/1:0]', false],
    ['block_dirty_buffer', '254,0 sector=39911426 size=4096', true],
    ['block_dirty_buffer', '254,0 sector=18446744073709551615 size=4096', false], // fits no shape: the general path's
    ['block_dirty_buffer', '254,0 sector=39911426 size=4096 ', false],
    ['block_dirty_buffer', '254,0 sector= size=4096', false],
    ['block_dirty_buffer', '254,0 size=4096 sector=1', false],
    ['block_touch_buffer', '7,0 sector=1 size=1024', true],
    ['block_plug', '[dbench]', true],
    ['block_plug', '[]', true],
    ['block_plug', '[a] b]', true], // the regex's greedy `(.*)`: all between the first and the last byte
    ['block_plug', '[dbench', false],
    ['block_plug', 'dbench]', false],
    ['block_unplug', '[dbench] 1', true],
    ['block_unplug', '[] 12', true],
    ['block_unplug', '[a] 2] 3', true], // the comm up to the last `] ` before the closing digits
    ['block_unplug', '[dbench]', false],
    ['block_unplug', '[dbench] ', false],
    ['block_unplug', '[dbench] 1x', false],
    ['block_unplug', '[dbench] 1234567890123456', false],
  ];

  it('made texts: taken exactly where expected, and then read as the parser reads them', () => {
    const got = cases.map(([name, text]) => {
      const r = scanAgainstParser(name, text);
      expect(r.wrong).toEqual([]);
      return [name, text, r.taken];
    });
    expect(got).toEqual(cases);
  });

  it('a taken text read by hand: block_rq_issue with an I/O priority', () => {
    const scan = blockTextScanFor('block_rq_issue')!;
    const text = '254,0 WSM 4096 () 319291408 + 8 0x2,0,4 [kworker/u8:2]';
    expect(scan.scan(Buffer.from(text, 'latin1'), 0, text.length)).toBe(true);
    expect(scan.info.keys).toEqual(['dev', 'sector', 'nr_sector', 'bytes', 'ioprio', 'rwbs', 'comm', 'cmd']);
    const values = scan.info.keys!.map((_, k) =>
      scan.kinds[k] === KV_INT ? scan.nums[k] : text.slice(scan.starts[k], scan.ends[k]),
    );
    expect(values).toEqual([254 * 1048576, 319291408, 8, 4096, '0x2', 'WSM', 'kworker/u8:2', '']);
    expect(Array.from(scan.kinds.subarray(0, 8))).toEqual([
      KV_INT,
      KV_INT,
      KV_INT,
      KV_INT,
      KV_HEX,
      KV_STR,
      KV_STR,
      KV_STR,
    ]);
  });

  it('names without a block layout: no reader (key=value events, typed events)', () => {
    expect(blockTextScanFor('mm_page_alloc')).toBeNull();
    expect(blockTextScanFor('sched_switch')).toBeNull();
    expect(blockTextScanFor('block_rq_issue')).not.toBeNull();
  });
});
