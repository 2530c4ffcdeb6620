/**
 * The native reading of untyped key=value text (scan_kv.c read_untyped,
 * NativeKvScanner.addUntypedPlan) must be UntypedKvScan.scan's reading of
 * the same text: the same lines taken, and for each the same keys, kinds,
 * spans, numbers, kind code and print-back flags. Checked as the field
 * worker uses it (records in batches over one block of bytes, sequences
 * learned on the JavaScript path first, then read natively), on the bench
 * corpus's kmem recording as `trace-cmd report` prints it in both text
 * forms, each taken line also against an independent reading of its
 * key=value pairs; and on hostile variants of those lines.
 */
import { describe, expect, it } from 'vitest';
import { eventNameInfo, readsGenericKv } from '../fields/index.ts';
import { KV_HEX, KV_INT, KV_NIL, KV_STR, UntypedKvScan } from '../fields/untyped_kv.ts';
import { kmemCorpusArgs } from '../../../../tests/support/decode/ftrace_text/corpus_args.ts';
import { loadNativeModule } from './load_wasm.ts';
import { NativeKvScanner, SCAN_KV_WASM } from './native_kv_scanner.ts';

/** record_batch.ts: ints per record (format, at, len, kind at 0, 4, 5, 6). */
const REC_INTS = 7;
const BATCH = 512;

type Event = { name: string; text: Buffer };

/** Untyped key=value events of the kmem corpus's text (kmemCorpusArgs), the first `limit`. */
function kmemEvents(kernelFormat: boolean, limit: number): Event[] {
  return kmemCorpusArgs([], kernelFormat)
    .filter((e) => readsGenericKv(e.name))
    .slice(0, limit)
    .map((e) => ({ name: e.name, text: Buffer.from(e.text, 'latin1') }));
}

/** One line's reading: by the JavaScript scan or the native one (null: not taken). */
interface Reading {
  keys: string[];
  kinds: number[];
  spans: [number, number][];
  ints: (number | null)[];
  code: number;
  pairsAt: number;
  pairsBack: boolean;
  printsBack: boolean;
}

function readingOf(scan: UntypedKvScan, s: number): Reading {
  const keys = scan.info.keys!;
  return {
    keys,
    kinds: keys.map((_, k) => scan.kinds[k]!),
    spans: keys.map((_, k): [number, number] => [scan.starts[k]! - s, scan.ends[k]! - s]),
    ints: keys.map((_, k) => (scan.kinds[k] === KV_INT ? scan.nums[k]! : null)),
    code: scan.code,
    pairsAt: scan.pairsAt - s,
    pairsBack: scan.pairsBack,
    printsBack: scan.printsBack,
  };
}

/**
 * Reads `events` in batches as the field worker does: native first, the
 * JavaScript scan for what it leaves (whose sequences the native reader
 * then learns). Per event: the JavaScript scan's reading of it (a scan of
 * its own, so the native path's learning changes nothing it sees) and the
 * native one's (null: left to JavaScript).
 */
function readBoth(events: Event[], batchRecords = BATCH): { js: (Reading | null)[]; native: (Reading | null)[] } {
  const scanner = new NativeKvScanner(loadNativeModule(SCAN_KV_WASM)!);
  scanner.reset();
  const learner = new UntypedKvScan();
  const reference = new UntypedKvScan();
  const fromNative = new UntypedKvScan();
  const nameIds = new Map<string, number>();
  const learned = new Map<string, Set<string>>();
  const infos: UntypedKvScan['info'][] = [];
  const js: (Reading | null)[] = [];
  const native: (Reading | null)[] = [];
  for (let from = 0; from < events.length; from += batchRecords) {
    const batch = events.slice(from, from + batchRecords);
    const block = Buffer.concat(batch.flatMap((e) => [e.text, Buffer.from('\n')]));
    const ints = new Int32Array(batch.length * REC_INTS);
    const at: number[] = [];
    let pos = 0;
    batch.forEach((e, i) => {
      if (!nameIds.has(e.name)) nameIds.set(e.name, nameIds.size);
      ints.set([nameIds.get(e.name)!, 0, 0, 0, pos, e.text.length, 0], i * REC_INTS);
      at.push(pos);
      pos += e.text.length + 1;
    });
    scanner.scan(ints, batch.length, block);
    batch.forEach((e, i) => {
      const s = at[i]!;
      const end = s + e.text.length;
      // The event's parser first, as on the field worker's general path: it learns the key sequences the scan knows.
      const text = e.text.toString('latin1');
      eventNameInfo(e.name).parse(text, 0, text.length, text, e.text);
      js.push(reference.scan(block, s, end) ? readingOf(reference, s) : null);
      const h = scanner.plan[i]!;
      if (h >= 0) {
        scanner.untypedInto(fromNative, infos[h]!, i, s);
        native.push(readingOf(fromNative, s));
        return;
      }
      native.push(null);
      if (!learner.scan(block, s, end)) return;
      const sigs = learned.get(e.name) ?? new Set();
      learned.set(e.name, sigs);
      if (sigs.has(learner.info.sig)) return;
      sigs.add(learner.info.sig);
      const handle = scanner.addUntypedPlan(nameIds.get(e.name)!, learner.entry!.rules);
      if (handle >= 0) infos[handle] = learner.info;
    });
  }
  return { js, native };
}

/**
 * The pairs of a taken line read with a regex, not as the scanners walk
 * it: from the pairs' start, `key=value` tokens split on runs of spaces.
 */
function pairsByRegex(text: string, pairsAt: number): { key: string; value: string; at: number }[] {
  const pairs: { key: string; value: string; at: number }[] = [];
  for (const m of text.slice(pairsAt).matchAll(/([A-Za-z0-9_.]+)=(\S*)/g))
    pairs.push({ key: m[1]!, value: m[2]!, at: pairsAt + m.index! + m[1]!.length + 1 });
  return pairs;
}

/** The kind a value's text has: a decimal of at most 15 digits (not zero-padded to 8 or 16), `0x%lx` hex, `(nil)`, else text. */
function kindByText(value: string): number {
  if (/^(-[1-9]\d{0,14}|\d{1,15})$/.test(value) && !(value[0] === '0' && (value.length === 8 || value.length === 16))) return KV_INT;
  if (value === '(nil)') return KV_NIL;
  if (/^0x(0|[1-9a-f][0-9a-f]{0,15})$/.test(value)) return KV_HEX;
  return KV_STR;
}

describe("the native untyped key=value reader reads what UntypedKvScan reads, on the kmem corpus's lines", () => {
  it.each([
    ['tracefs', true],
    ['report', false],
  ])('%s text', { timeout: 120_000 }, (_form, kernelFormat) => {
    const events = kmemEvents(kernelFormat, 60_000);
    expect(events.length).toBe(60_000);
    const { js, native } = readBoth(events);
    let nativeTaken = 0;
    const wrong: string[] = [];
    events.forEach((e, i) => {
      const n = native[i];
      if (n === null || n === undefined) return;
      nativeTaken++;
      const text = e.text.toString('latin1');
      if (JSON.stringify(n) !== JSON.stringify(js[i])) wrong.push(`${e.name} '${text}': ${JSON.stringify(n)} vs ${JSON.stringify(js[i])}`);
      // Against the line's own text: keys, value spans, integers and kinds.
      const pairs = pairsByRegex(text, n.pairsAt);
      if (JSON.stringify(pairs.map((p) => p.key)) !== JSON.stringify(n.keys)) wrong.push(`${text}: keys ${n.keys}`);
      pairs.forEach((p, k) => {
        if (n.spans[k]![0] !== p.at || n.spans[k]![1] !== p.at + p.value.length) wrong.push(`${text}: span of ${p.key}`);
        const kind = kindByText(p.value);
        if (n.kinds[k] !== kind) wrong.push(`${text}: ${p.key}=${p.value} kind ${n.kinds[k]}, not ${kind}`);
        if (kind === KV_INT && n.ints[k] !== Number(p.value)) wrong.push(`${text}: ${p.key}=${p.value} read ${n.ints[k]}`);
      });
      const code = n.kinds.reduce((c, kind, k) => c + (kind === KV_NIL ? KV_HEX : kind) * 3 ** k, 0);
      if (n.code !== code) wrong.push(`${text}: code ${n.code}, not ${code}`);
      const printed = pairs.map((p) => `${p.key}=${p.value}`).join(' ');
      const back = n.pairsAt === 0 && !n.kinds.includes(KV_NIL) && printed === text;
      if (n.printsBack !== back) wrong.push(`${text}: printsBack ${n.printsBack}`);
    });
    expect(wrong.slice(0, 5)).toEqual([]);
    // Every line the JavaScript scan takes, the native reader takes once its sequence was learned
    // (the first batch of each: a few per event name); the report's `(call_site) ` lines too.
    const jsTaken = js.filter((r) => r !== null).length;
    expect(jsTaken).toBeGreaterThan(events.length * 0.9);
    expect(nativeTaken).toBeGreaterThan(jsTaken - 3 * BATCH);
    expect(native.some((r, i) => r !== null && r.pairsAt > 0 && events[i]!.text[0] === 40)).toBe(!kernelFormat);
  });
});

describe('the native untyped key=value reader on hostile text takes only what UntypedKvScan takes, and reads it the same', () => {
  it('variants of real lines: unterminated values, huge keys, NUL and non-UTF-8 bytes, numbers it must leave', () => {
    const lines = kmemEvents(true, 4000);
    const seen = new Map<string, Event>();
    for (const e of lines) if (!seen.has(e.name)) seen.set(e.name, e);
    const variants: Event[] = [];
    for (const e of seen.values()) {
      const t = e.text.toString('latin1');
      const mutate = (text: string) => variants.push({ name: e.name, text: Buffer.from(text, 'latin1') });
      const mutateBytes = (text: Buffer) => variants.push({ name: e.name, text });
      // The original first, so its sequence is learned, and again after.
      mutate(t);
      mutate(t.replace(/=\S*$/, '='));
      mutate(t.replace(/ \S+$/, ''));
      mutate(t.slice(0, t.length - 1));
      mutate(`${t} `);
      mutate(` ${t}`);
      mutate(t.replace(' ', '  '));
      mutate(t.replace(/=(\S*)/, '=$1\u0000'));
      mutate(t.replace(/=(\S*)/, '=\u0000$1'));
      mutate(t.replace(/=(\S*)/, '=$1\u00ff\u00fe'));
      mutate(t.replace(/=\d+/, '=1234567890123456'));
      mutate(t.replace(/=\d+/, '=0000000000000012'));
      mutate(t.replace(/=\d+/, '=00000012'));
      mutate(t.replace(/=\d+/, '=-0'));
      mutate(t.replace(/=\d+/, '=+1'));
      mutate(t.replace(/=\d+/, '=-7'));
      mutate(t.replace(/=\d+/, '=007'));
      mutate(t.replace(/=(\S+)/, '="$1"'));
      mutate(t.replace(/=(\S+)/, '=$1,'));
      mutate(t.replace(/=(\S+)/, '=sym+0x1/0x40'));
      mutate(t.replace(/=(\S+)/, '=(nil)'));
      mutate(t.replace(/=(\S+)/, '=0x00ff'));
      mutate(t.replace(/=(\S+)/, '=0xABC'));
      mutate(t.replace(/^(\w+)=/, `${'k'.repeat(100)}=`));
      mutate(t.replace(/ (\w+)=/, ` ${'k'.repeat(70)}=`));
      mutate(`${'x'.repeat(300)}=1 ${t}`);
      mutateBytes(Buffer.concat([Buffer.from(t, 'latin1'), Buffer.from([0])]));
      mutate(t);
    }
    // Twice, a batch each: every sequence learned in the first pass is read natively in the second.
    const events = [...variants, ...variants];
    const { js, native } = readBoth(events, variants.length);
    const wrong: string[] = [];
    let nativeTaken = 0;
    events.forEach((e, i) => {
      const n = native[i];
      if (n === null || n === undefined) return;
      nativeTaken++;
      if (JSON.stringify(n) !== JSON.stringify(js[i]))
        wrong.push(`${e.name} ${JSON.stringify(e.text.toString('latin1'))}: ${JSON.stringify(n)} vs ${JSON.stringify(js[i])}`);
    });
    expect(wrong.slice(0, 5)).toEqual([]);
    // The second pass: native takes every variant the JavaScript scan takes (their sequences are learned), no other.
    const second = events.length / 2;
    // (Keys longer than scan_kv.c's 64 bytes excepted: the JavaScript scan reads those.)
    for (let i = second; i < events.length; i++) {
      const text = events[i]!.text.toString('latin1');
      const longKey = /[A-Za-z0-9_.]{65,}=/.test(text);
      expect(native[i] !== null, JSON.stringify(text)).toBe(js[i] !== null && !longKey);
    }
    expect(nativeTaken).toBeGreaterThan(seen.size);
  });

  it("a key running past its text's end into the next line is no match (the batch's bytes go on)", () => {
    // `order=` of the plan reads `order` then `=`, which the next line starts with.
    const line = 'page=0x1234 pfn=0x1234 order=0 migratetype=1 gfp_flags=GFP_KERNEL';
    const cut = line.slice(0, line.indexOf('=', line.indexOf('order')));
    const events: Event[] = [
      { name: 'mm_page_alloc', text: Buffer.from(line, 'latin1') },
      { name: 'mm_page_alloc', text: Buffer.from(line, 'latin1') },
    ];
    for (let k = 0; k < BATCH; k++) events.push({ name: 'mm_page_alloc', text: Buffer.from(line, 'latin1') });
    events.push({ name: 'mm_page_alloc', text: Buffer.from(cut, 'latin1') });
    events.push({ name: 'mm_page_alloc', text: Buffer.from(line.slice(cut.length), 'latin1') });
    const { js, native } = readBoth(events);
    expect(native[BATCH + 1]).not.toBeNull();
    expect(js[BATCH + 2]).toBeNull();
    expect(native[BATCH + 2]).toBeNull();
  });
});
