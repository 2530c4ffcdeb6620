import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../decoded_event.ts';
import { openDecompressed } from '../decompress.ts';
import { chunked, CollectingSink } from '../../../tests/support/decode/ftrace_text/collecting_sink.ts';
import { decodeFtraceText } from './decode_ftrace_text.ts';
import { hasTypedParser } from './fields/index.ts';

const FIX = join(import.meta.dirname, '../../../fixtures');
const HAND = join(FIX, 'handmade');

async function decodeBytes(bytes: Uint8Array, chunk = 61) {
  const sink = new CollectingSink();
  const summary = await decodeFtraceText(chunked(bytes, chunk), sink, { fileLabel: 'test' });
  return { sink, summary };
}
const decodeHand = (name: string, chunk?: number) => decodeBytes(readFileSync(join(HAND, name)), chunk);

describe('handmade fixtures', () => {
  it('kernel 4.x kswapd escalation', async () => {
    const { sink, summary } = await decodeHand('kernel4x_kswapd_escalation.txt');
    expect(summary).toMatchObject({
      format: 'tracefs_text',
      events: 19,
      skippedLines: 0,
      unparsedEvents: 0,
      outOfOrderLines: 0,
      maxCpu: 3,
    });
    expect(sink.calls[0]).toBe('header');
    expect(sink.headers).toHaveLength(1);
    expect(sink.headers[0]).toMatchObject({
      format: 'tracefs_text',
      formatVersion: null,
      cpus: 4,
      tsBaseNs: 5021_000_000_000n,
      meta: { tracer: 'nop', entries_in_buffer: '19', entries_written: '19' },
    });
    const prios = sink.events.filter((e) => e.name === 'mm_vmscan_lru_shrink_inactive').map((e) => e.fields!.priority);
    expect(prios).toEqual([12, 10, 8, 6, 4, 2, 1]);
    const start = sink.events.find((e) => e.name === 'mm_shrink_slab_start')!;
    const end = sink.events.find((e) => e.name === 'mm_shrink_slab_end')!;
    expect(start.fields).toMatchObject({
      shrink: 'super_cache_scan',
      shr: '0xa1b2c3d4',
      pgs_scanned: 45,
      lru_pgs: 198175,
    });
    expect(end.ts - start.ts).toBe(252_785_000); // 5021.782905 - 5021.530120
    expect(start).toMatchObject({
      ts: 530_120_000,
      cpu: 1,
      pid: 52,
      comm: 'kswapd0',
      tgid: null,
      system: 'vmscan',
      flags: 0,
      preemptCount: 0,
      where: 22,
    });
    const wp = sink.events.filter((e) => e.name === 'mm_vmscan_writepage');
    expect(wp.map((e) => e.fields)).toEqual([
      { pfn: 1215180, reclaim_flags: 'RECLAIM_WB_FILE|RECLAIM_WB_ASYNC' },
      { pfn: 1215181, reclaim_flags: 'RECLAIM_WB_FILE|RECLAIM_WB_ASYNC' },
      { pfn: 1215182, reclaim_flags: 'RECLAIM_WB_FILE|RECLAIM_WB_ASYNC' },
    ]);
    expect(wp.every((e) => e.comm === 'kswapd0')).toBe(true);
    expect(sink.events[0]).toMatchObject({
      comm: null,
      pid: 3121,
      flags: 0x1,
      preemptCount: 2,
      raw: 'comm=kswapd0 pid=52 prio=120 success=1 target_cpu=001',
    });
  });

  it('kernel 3.x writepage excerpt', async () => {
    const { sink, summary } = await decodeHand('kernel3x_writepage.txt');
    expect(summary).toMatchObject({ events: 6, unparsedEvents: 0, skippedLines: 0 });
    expect(sink.events[3]!.fields).toEqual({ pfn: 478610, reclaim_flags: 'RECLAIM_WB_ANON|RECLAIM_WB_ASYNC' });
    expect(sink.events[1]!.fields).toEqual({
      shr: '0xffff88003690b400',
      shrink: 'super_cache_scan',
      unused_scan: 12,
      new_scan: 0,
      total_scan: 20,
      retval: 1024,
    });
  });

  it('6.x tracefs: tgid column, odd task names, CPU 127, 9 decimals, lost events, stack trace', async () => {
    const { sink, summary } = await decodeHand('tracefs6x_odd_tasks_tgid.txt');
    expect(summary).toMatchObject({ events: 20, skippedLines: 0, unparsedEvents: 0, lostEventNotices: 2, maxCpu: 127 });
    expect(sink.headers[0]).toMatchObject({ cpus: 128, tsBaseNs: 81234_000_000_000n });
    expect(sink.lost).toEqual([
      { cpu: 127, count: null, where: 13 },
      { cpu: 3, count: 1234, where: 19 },
    ]);
    expect(sink.calls.slice(0, 3)).toEqual(['header', 'lost', 'event']);
    expect(sink.events[0]).toMatchObject({
      ts: 123_456_789,
      cpu: 127,
      pid: 1234,
      comm: 'Web Content',
      tgid: 1200,
      flags: 1,
      preemptCount: 2,
    });
    expect(sink.events[3]).toMatchObject({ comm: null, pid: 5678, tgid: null, cpu: 3 });
    expect(sink.events[4]).toMatchObject({ comm: 'npm list @tauri', pid: 28184, tgid: 28180 });
    const stack = sink.events.find((e) => e.name === 'kernel_stack')!;
    expect(stack.raw).toBe('=> __alloc_pages\n=> alloc_pages_vma');
    const xfs = sink.events.find((e) => e.name === 'xfs_ilock')!;
    expect(xfs).toMatchObject({
      fields: {},
      system: 'xfs',
      raw: 'dev 7:0 ino 0x83 flags ILOCK_SHARED caller xfs_ilock_data_map_shared',
    });
  });

  it('old trace-cmd report (version = 6, cpus=128, empty CPUs, dropped events)', async () => {
    const { sink, summary } = await decodeHand('report_v6_trace_cmd_old.txt');
    expect(summary).toMatchObject({
      format: 'trace_cmd_report',
      events: 10,
      skippedLines: 0,
      unparsedEvents: 0,
      maxCpu: 127,
    });
    expect(sink.headers[0]).toMatchObject({
      format: 'trace_cmd_report',
      formatVersion: '6',
      cpus: 128,
      meta: { empty_cpus: '3,64' },
    });
    expect(sink.lost).toEqual([
      { cpu: 2, count: 37, where: 10 },
      { cpu: 5, count: 5, where: 12 },
    ]);
    expect(sink.events.every((e) => e.flags === null && e.preemptCount === null)).toBe(true);
    expect(sink.events[5]!.fields).toEqual({
      prev_comm: 'kworker/u161:6',
      prev_pid: 718,
      prev_prio: 120,
      prev_state: 'D',
      next_comm: 'npm list @tauri',
      next_pid: 28184,
      next_prio: 120,
    });
    expect(sink.events[7]!.raw).toBe(
      'super_cache_scan 0xffff888101d2c000: nid: 0 unused scan count 552 new scan count 556 total_scan 4 last shrinker return val 0',
    );
  });

  it('report -l latency layout', async () => {
    const { sink, summary } = await decodeHand('report_latency_l.txt');
    expect(summary).toMatchObject({ events: 3, skippedLines: 0 });
    expect(sink.events.map((e) => [e.comm, e.pid, e.cpu, e.flags, e.preemptCount])).toEqual([
      ['kswapd0', 52, 1, 0x11, 3],
      ['kworker/', 12, 0, 0x25, 1],
      ['npm list', 28184, 1, 0, 0],
    ]);
  });
});

describe('bad input', () => {
  it('garbage lines in the middle are skipped with line number and excerpt', async () => {
    const { sink, summary } = await decodeHand('bad_garbage_middle.txt');
    expect(summary).toMatchObject({ events: 4, skippedLines: 2 });
    expect(sink.skips).toEqual([
      { where: 5, unit: 'line', reason: 'not an ftrace event line', excerpt: 'this is not a trace line' },
      { where: 6, unit: 'line', reason: 'not an ftrace event line', excerpt: '@@@ %%% 12345 [garbage]' },
    ]);
  });
  it('CRLF line endings decode like LF', async () => {
    const a = await decodeHand('bad_crlf.txt', 7);
    expect(a.summary).toMatchObject({ events: 4, skippedLines: 0, unparsedEvents: 0 });
    expect(a.sink.events[1]!.fields).toMatchObject({ next_prio: 120 });
    expect(a.sink.events.map((e) => e.raw).every((r) => !r!.includes('\r'))).toBe(true);
  });
  it('non-UTF-8 task name decodes with replacement characters', async () => {
    const { sink, summary } = await decodeHand('bad_non_utf8_task.txt', 5);
    expect(summary).toMatchObject({ events: 5, skippedLines: 0 });
    expect(sink.events[4]).toMatchObject({
      comm: 'caf\uFFFD\uFFFD',
      pid: 300,
      fields: { comm: 'caf\uFFFD\uFFFD', pid: 300, prio: 120 },
    });
  });
  it('per-CPU lines out of time order are kept in file order and counted', async () => {
    const { sink, summary } = await decodeHand('bad_out_of_order.txt');
    expect(summary).toMatchObject({ events: 6, outOfOrderLines: 2, firstOutOfOrderLine: 5, skippedLines: 0 });
    expect(sink.events.map((e) => e.ts)).toEqual([10_000, 11_000, 5_000, 12_000, 20_000, -1_000]);
  });
  it('empty file -> DecodeError', async () => {
    await expect(decodeHand('bad_empty.txt')).rejects.toThrow(DecodeError);
    await expect(decodeHand('bad_empty.txt')).rejects.toThrow(/no ftrace events found/);
  });
  it('binary non-trace file -> DecodeError naming a line', async () => {
    const err = await decodeHand('bad_binary_not_trace.bin').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).unit).toBe('line');
    expect((err as DecodeError).message).toMatch(/no ftrace events found/);
  });
  it('an absurdly long line is skipped without buffering it', async () => {
    const head = Buffer.from('# tracer: nop\n   a-1 [000] ..... 1.000000: x: a=1\n');
    const long = Buffer.alloc(3 << 20, 0x41); // 3 MiB, no newline
    const tail = Buffer.from('\n   a-1 [000] ..... 1.000001: x: a=2\n');
    const { sink, summary } = await decodeBytes(Buffer.concat([head, long, tail]), 65536);
    expect(summary).toMatchObject({ events: 2, skippedLines: 1 });
    expect(sink.skips[0]).toMatchObject({ where: 3, unit: 'line' });
    expect(sink.skips[0]!.excerpt).toBe('A'.repeat(200));
    expect(sink.events[1]).toMatchObject({ where: 4, fields: { a: 2 } });
  });
  it('CPU numbers no machine has are skipped lines, not per-CPU state sized by them', async () => {
    // CPU 99999999999 used to grow an array to that length: V8 aborted the process
    const text = [
      '# tracer: nop',
      '# entries-in-buffer/entries-written: 4/4   #P:99999999999',
      '   a-1 [000] ..... 1.000000: x: a=1',
      '   a-1 [99999999999] ..... 1.000001: x: a=2',
      '   a-1 [70000] ..... 1.000002: x: a=3',
      'CPU:4294967296 [LOST 5 EVENTS]',
      '##### CPU 99999999999 buffer started ####',
      '   a-1 [65535] ..... 1.000003: x: a=4',
      '',
    ].join('\n');
    const { sink, summary } = await decodeBytes(Buffer.from(text));
    expect(summary).toMatchObject({ events: 2, skippedLines: 5 });
    expect(sink.headers[0]!.cpus).toBeNull();
    expect(sink.skips.map((p) => [p.where, p.reason])).toEqual([
      [2, 'implausible CPU count 99999999999'],
      [4, 'implausible CPU number 99999999999'],
      [5, 'implausible CPU number 70000'],
      [6, 'lost-events notice with an implausible CPU number 4294967296'],
      [7, 'lost-events notice with an implausible CPU number 99999999999'],
    ]);
    expect(sink.lost).toEqual([]);
    // the largest plausible CPU number is kept
    expect(sink.events.map((e) => [e.cpu, e.fields])).toEqual([
      [0, { a: 1 }],
      [65535, { a: 4 }],
    ]);
  });
  it('pids and tgids past the kernel PID_MAX_LIMIT are skipped lines, not wrapped into INTEGER columns', async () => {
    // pid 99999999999 used to be stored as 1215752191
    const text = [
      '# tracer: nop',
      '   a-99999999999 [000] ..... 1.000000: x: a=1',
      '   a-4194305 [000] ..... 1.000001: x: a=2',
      '   a-7 (4194305) [000] ..... 1.000002: x: a=3',
      '   a-4194304 (4194304) [000] ..... 1.000003: x: a=4',
      '',
    ].join('\n');
    const { sink, summary } = await decodeBytes(Buffer.from(text));
    expect(summary).toMatchObject({ events: 1, skippedLines: 3 });
    expect(sink.skips.map((p) => [p.where, p.reason])).toEqual([
      [2, 'implausible pid 99999999999'],
      [3, 'implausible pid 4194305'],
      [4, 'implausible tgid 4194305'],
    ]);
    expect(sink.events[0]).toMatchObject({ pid: 4194304, tgid: 4194304, fields: { a: 4 } });
  });
  it('a report header claiming more CPUs than any machine has is reported, not believed', async () => {
    const { sink } = await decodeBytes(
      Buffer.from('cpus=99999999999\n           bash-1234  [000]  1000.000001: kmalloc: a=1\n'),
    );
    expect(sink.headers[0]).toMatchObject({ format: 'trace_cmd_report', cpus: null });
    expect(sink.skips).toMatchObject([{ where: 1, reason: 'implausible CPU count 99999999999' }]);
  });
});

// ---------------------------------------------------------------------------
// Real recordings (fixtures/*.report*.txt, tracefs_*.txt with *.counts.json)
// ---------------------------------------------------------------------------

interface Counts {
  events_by_name: Record<string, number>;
  events_total: number;
}

function realTextFixtures(): Array<{ file: string; counts: string | null }> {
  if (!existsSync(FIX)) return [];
  return readdirSync(FIX)
    .filter((f) => /\.txt$/.test(f) && (f.includes('.report') || f.startsWith('tracefs_')))
    .map((f) => {
      const stem = f.replace(/\.report(-l)?\.txt$/, '').replace(/\.txt$/, '');
      const c = join(FIX, `${stem}.counts.json`);
      return { file: f, counts: existsSync(c) ? c : null };
    });
}

describe.each(realTextFixtures())('real fixture $file', ({ file, counts }) => {
  it('decodes every line: counts equal trace-cmd, no skipped lines, typed events all parsed', async () => {
    const sink = new CollectingSink();
    const summary = await decodeFtraceText(openDecompressed(join(FIX, file)), sink, { fileLabel: file });
    expect(summary.skippedLines).toBe(0);
    expect(sink.skips).toEqual([]);
    expect(summary.unparsedByName).toEqual({});
    const typedNull = sink.events.filter((e) => hasTypedParser(e.name) && e.fields === null);
    expect(typedNull.length).toBe(0);
    if (counts && !file.startsWith('tracefs_')) {
      const want = JSON.parse(readFileSync(counts, 'utf8')) as Counts;
      if (want.events_total > 0) {
        expect(sink.countsByName()).toEqual(want.events_by_name);
        expect(summary.events).toBe(want.events_total);
      }
    }
  });
});

function compressedFixtures(): string[] {
  const dir = join(FIX, 'compressed');
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.includes('.txt') || f.includes('report')) : [];
}

describe.each(compressedFixtures())('compressed fixture %s', (file) => {
  it('decodes identically to the uncompressed original', async () => {
    const base = file.replace(/\.(gz|zst|xz)$/g, '').replace(/\.(gz|zst|xz)$/g, '');
    const orig = join(FIX, base);
    if (!existsSync(orig)) return;
    const a = new CollectingSink();
    const b = new CollectingSink();
    const sa = await decodeFtraceText(openDecompressed(orig), a, { fileLabel: base });
    const sb = await decodeFtraceText(openDecompressed(join(FIX, 'compressed', file)), b, { fileLabel: file });
    expect(sb).toEqual(sa);
    expect(b.events).toEqual(a.events);
    expect(b.headers).toEqual(a.headers);
  });
});

describe('compressed input decodes identically (generated copies)', () => {
  it('gzip and zstd copies of a real report (or the handmade tracefs file)', async () => {
    const { execFileSync } = await import('node:child_process');
    const { gzipSync } = await import('node:zlib');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const real = join(FIX, 'reclaim_kswapd.report.txt');
    const src =
      existsSync(real) && readFileSync(real).length > 1000 ? real : join(HAND, 'tracefs6x_odd_tasks_tgid.txt');
    const orig = readFileSync(src);
    const dir = mkdtempSync(join(tmpdir(), 'stallscope-text-'));
    const copies: string[] = [];
    writeFileSync(join(dir, 'a'), gzipSync(orig));
    copies.push(join(dir, 'a'));
    try {
      writeFileSync(join(dir, 'b'), execFileSync('zstd', ['-c', '-q'], { input: orig, maxBuffer: 1 << 28 }));
      copies.push(join(dir, 'b'));
    } catch {
      /* no zstd tool: gzip only */
    }
    const a = new CollectingSink();
    const sa = await decodeFtraceText(openDecompressed(src), a, { fileLabel: 'x' });
    for (const c of copies) {
      const b = new CollectingSink();
      const sb = await decodeFtraceText(openDecompressed(c), b, { fileLabel: 'x' });
      expect(sb).toEqual(sa);
      expect(b.events.length).toBe(a.events.length);
      expect(b.events).toEqual(a.events);
    }
  });
});

describe('ASCII blocks (byte path) and non-ASCII blocks (string path) decode alike', () => {
  it('same events, notices and line numbers whatever the chunking, with CRLF, garbage and non-UTF-8 lines', async () => {
    const tracefs = readFileSync(join(HAND, 'tracefs6x_odd_tasks_tgid.txt'), 'latin1');
    const body = tracefs
      .split('\n')
      .filter((l) => !l.startsWith('#') && l.trim() !== '')
      .join('\n');
    // The same lines three times: LF, CRLF, then with a non-UTF-8 task name and
    // a garbage line in between. Chunk sizes cut lines (and CRLF pairs) at
    // every place; a 1 MiB chunk gives one block per part.
    const bad = Buffer.from(
      '   caf\xe9\xff-300   [000] .....   199.000001: sched_waking: comm=x pid=1 prio=120 target_cpu=000\n',
      'latin1',
    );
    const text = Buffer.concat([
      Buffer.from(`# tracer: nop\n${body}\n`, 'latin1'),
      Buffer.from(`${body.replace(/\n/g, '\r\n')}\r\n`, 'latin1'),
      bad,
      Buffer.from(`garbage here\n${body}\n`, 'latin1'),
    ]);
    const runs = [];
    for (const size of [1 << 20, 4096, 97, 13, 2]) runs.push(await decodeBytes(text, size));
    const ref = runs[0]!;
    expect(ref.summary.events).toBeGreaterThan(30);
    expect(ref.sink.skips.map((s) => s.excerpt)).toContain('garbage here');
    const lines = body.split('\n').length;
    const garbage = ref.sink.skips.find((s) => s.excerpt === 'garbage here')!;
    expect(garbage.where).toBe(1 + lines * 2 + 1 + 1);
    expect(ref.sink.events.find((e) => e.pid === 300)!.comm).toBe('caf\uFFFD\uFFFD');
    // the LF and CRLF copies give the same events, line numbers aside
    const n = ref.sink.events.filter((e) => e.where <= 1 + lines).length;
    const strip = (e: { where: number }) => ({ ...e, where: 0 });
    expect(ref.sink.events.slice(n, 2 * n).map(strip)).toEqual(ref.sink.events.slice(0, n).map(strip));
    for (const r of runs.slice(1)) {
      expect(r.summary).toEqual(ref.summary);
      expect(r.sink.events).toEqual(ref.sink.events);
      expect(r.sink.lost).toEqual(ref.sink.lost);
      expect(r.sink.skips).toEqual(ref.sink.skips);
      expect(r.sink.calls).toEqual(ref.sink.calls);
    }
  });
});
