/**
 * The byte-level fast path (parseNormalLineBytes, RangeParsers given the
 * arguments' bytes) must read every ASCII line it accepts exactly as the
 * string path does; what it does not accept the decoder reads with the
 * string path. Checked line by line on every text fixture, plus mutations of
 * each line that push the fast paths into their fallbacks (extra spaces,
 * non-decimal values, truncations).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newEventLine, parseNormalLineBytes, parseNormalLine, type EventLine } from './parse_event_line.ts';
import { lineReading } from '../../../tests/support/decode/ftrace_text/test_line_reading.ts';

const FIX = join(import.meta.dirname, '../../../fixtures');
const FILES = [
  'tracefs_plain.txt',
  'tracefs_tgid.txt',
  'reclaim_kswapd.report.txt',
  'fsync_xfs.report.txt',
  'memcg_reclaim.report.txt',
  'swap_writeback.report.txt',
  'multi_instance.report.txt',
  'handmade/kernel3x_writepage.txt',
  'handmade/kernel4x_kswapd_escalation.txt',
  'handmade/report_v6_trace_cmd_old.txt',
  'handmade/tracefs6x_odd_tasks_tgid.txt',
  'handmade/bad_garbage_middle.txt',
  'handmade/bad_out_of_order.txt',
];

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) return false;
  return true;
}

/** What one parse produced (the EventLine's data and the fields, parsed on the arguments' bytes if it has them). */
function snapshot(ok: boolean, ev: EventLine) {
  // `fields` absent: read as undefined where a test looks at a line that did not parse
  if (!ok) return { ok, fields: undefined };
  const b = ev.argsBytes === null ? null : ev.argsBytes.subarray(ev.argsStart, ev.argsEnd);
  const reading = lineReading(ev);
  const args = reading.args;
  const fields = ev.nameInfo!.parse(args, 0, args.length, args, b);
  return {
    ok,
    ...reading,
    fields,
    // the order of the fields is the order of the event's `args` rows
    keys: fields === null ? null : Object.keys(fields),
  };
}

/**
 * Parses `line` embedded in a block (other text around it) both ways; where
 * the byte path is not sure (`bytesSure` false), `b` is the string path's
 * reading, as in the decoder.
 */
function both(line: string, instances: boolean) {
  const block = `xx\n${line}\nyy`;
  const start = 3;
  const end = start + line.length;
  const bytes = Buffer.from(block, 'latin1');
  const evS = newEventLine();
  const okS = parseNormalLine(line, 'kernel', evS, instances);
  const s = snapshot(okS, evS);
  const evBytes = newEventLine();
  const bytesSure = !instances && parseNormalLineBytes(bytes, 'kernel', evBytes, start, end);
  const b = bytesSure ? snapshot(true, evBytes) : s;
  return { s, b, bytesSure };
}

/** Every `head + line` is read on its bytes, exactly as the string path reads it. */
function expectBytesReadAsString(head: string, lines: string[]): void {
  let onBytes = 0;
  for (const line of lines) {
    const { s, b, bytesSure } = both(head + line, false);
    expect(b, line).toStrictEqual(s);
    if (bytesSure) onBytes++;
  }
  expect(onBytes).toBe(lines.length);
}

function mutations(line: string): string[] {
  const out = [line, line + '  ', '  ' + line, line.replace(': ', ':  ')];
  const colon = line.indexOf(': ', line.indexOf(']'));
  const args = line.indexOf(': ', colon + 2);
  if (args > 0) {
    const sp = line.indexOf(' ', args + 2);
    if (sp > 0) out.push(line.slice(0, sp) + '  ' + line.slice(sp + 1));
    const d = line.slice(args).search(/\d/);
    if (d >= 0) out.push(line.slice(0, args + d) + 'x' + line.slice(args + d + 1));
    const eq = line.indexOf('=', args);
    if (eq > 0) out.push(line.slice(0, eq) + '_' + line.slice(eq));
    // a number past 2^53 (the string path makes it a bigint)
    out.push(line.slice(0, args) + line.slice(args).replace(/=\d+/, '=12345678901234567890'));
    out.push(line.slice(0, args + Math.floor((line.length - args) / 2)));
    out.push(line.slice(0, line.length - 1));
  }
  return out;
}

describe('byte path reads ASCII lines exactly as the string path', () => {
  for (const f of FILES) {
    it(f, () => {
      // the first 20k lines of each file: every event shape they hold, in bounded time
      const lines = readFileSync(join(FIX, f), 'latin1')
        .split('\n')
        .slice(0, 20_000)
        .map((l) => l.replace(/\r$/, ''));
      const instances = f.startsWith('multi_instance');
      let checked = 0;
      let events = 0;
      let onBytes = 0;
      for (const line of lines) {
        if (!isAscii(line) || line.startsWith('#')) continue;
        for (const m of mutations(line)) {
          const { s, b, bytesSure } = both(m, instances);
          if (bytesSure) onBytes++;
          if (
            JSON.stringify(s, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)) !==
            JSON.stringify(b, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))
          ) {
            expect(b, m).toStrictEqual(s);
          }
          checked++;
          if (s.ok) events++;
        }
      }
      expect(checked).toBeGreaterThan(0);
      expect(events).toBeGreaterThan(0);
      // the fast path takes the common lines (not in multi-buffer files: it reads no instance prefix)
      if (instances) expect(onBytes).toBe(0);
      else expect(onBytes).toBeGreaterThan(events / 4);
    });
  }

  it('odd heads: tgid column, dashes and digits in task names, no flags, raw clock stamps', () => {
    const lines = [
      '   <...>-1234    (   -----) [001] d..2.  100.000001: sched_waking: comm=a b pid=5 prio=120 target_cpu=001',
      '  my-task-2-77   (     77) [000] .....  7.5: mm_vmscan_kswapd_sleep: nid=0',
      '          kswapd0-52    [003]   5021.530120: mm_vmscan_kswapd_wake: nid=0 order=3',
      '          kswapd0-52    [003] d..2  5021530120000: mm_vmscan_kswapd_wake: nid=0 order=3',
      '          kswapd0-52    [003] d..2  12345678901234567890: mm_vmscan_kswapd_wake: nid=0 order=3',
      '         work.sh-25815 [001]63167804969507: mm_vmscan_kswapd_wake: nid=0 order=3',
      '          kswapd0-52    [003] d..2  999999999999999: mm_vmscan_kswapd_wake: nid=0 order=3',
      '          kswapd0-52    [003] d..2  1000000000000000: mm_vmscan_kswapd_wake: nid=0 order=3',
      '          kswapd0-52    [003] d..2  1.2: foo_bar:',
      '          kswapd0-52    [003] d..2  1.2: <stack trace>',
      '          kswapd0-52    [003] d..2  1.2: do_thing <-caller',
      '          kswapd0-x    [003] d..2  1.2: foo: a=1',
      '          kswapd0-52    [003] d.Q2  1.2: foo: a=1',
      '          kswapd0-52 [3] 1.2: foo: a=1 b=0x10 c="q q" d=-5 e=99999999999999999999',
    ];
    for (const line of lines) {
      const { s, b } = both(line, false);
      expect(b, line).toStrictEqual(s);
    }
    // A raw clock of up to 15 digits is read on the bytes (a trace-cmd report of a mono/counter clock is all such lines).
    expect(lines.filter((l) => /[\] ]\d{14,15}: /.test(l)).map((l) => both(l, false).bytesSure)).toEqual([true, true]);
  });

  it('a head like the line before differing in one byte is read afresh (the byte path reuses an equal head)', () => {
    // In this order: each line's head differs from the one before in the
    // pid, the CPU, the tgid, the task name (same length), its padding, or
    // not at all, and the event names alternate as they do in reclaim runs.
    const lines = [
      '            node-14383   [001] .....  5200.905099: mm_vmscan_lru_isolate: classzone=3 order=0 nr_requested=32',
      '            node-14383   [001] .....  5200.905100: mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned=32 nr_reclaimed=32',
      '            node-14384   [001] .....  5200.905101: mm_vmscan_lru_isolate: classzone=3 order=0 nr_requested=32',
      '            node-14384   [002] .....  5200.905102: mm_vmscan_lru_isolate: classzone=3 order=0 nr_requested=32',
      '            node-14384   [002] d..1.  5200.905103: mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned=32 nr_reclaimed=32',
      '            nade-14384   [002] d..1.  5200.905104: mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned=32 nr_reclaimed=32',
      '             node-1438   [002] d..1.  5200.905105: mm_vmscan_lru_isolat: classzone=3',
      '            node-14384 (  100) [002] d..1.  5200.905106: mm_vmscan_lru_isolate: classzone=3',
      '            node-14384 (  101) [002] d..1.  5200.905107: mm_vmscan_lru_isolate: classzone=3',
      '            node-14384 (-----) [002] d..1.  5200.905108: mm_vmscan_lru_isolate: classzone=3',
      '            node-14384 (-----) [002]',
      '            node-14384 (-----) [002] d..1.  5200.905109: mm_vmscan_lru_isolate:classzone=3',
      '            node-14384 (-----) [002] d..1.  5200.905110: mm_vmscan_lru_isolate: classzone=3',
      '            <...>-14384   [002] .....  5200.905111: mm_vmscan_lru_isolate: classzone=3',
      '            <...>-14384   [002] .....  5200.905112: mm_vmscan_lru_isolate: classzone=3',
    ];
    let onBytes = 0;
    for (const line of lines) {
      const { s, b, bytesSure } = both(line, false);
      expect(b, line).toStrictEqual(s);
      if (bytesSure) onBytes++;
    }
    expect(onBytes).toBeGreaterThan(lines.length / 2);
  });

  it('writeback lines (`bdi NAME[ID]: k=v`, `dev M,m ino N ...`): the byte path reads them as the string path, fields in its order', () => {
    const head = '          dbench-32363   [001] d..1.  7858.252747: ';
    const lines = [
      'track_foreign_dirty: bdi 7:0[1]: ino=8709489 memcg_id=1 cgroup_ino=1 page_cgroup_ino=2883',
      'track_foreign_dirty: bdi 7:0[1]: ino=8709489 memcg_id=1 cgroup_ino=1 page_cgroup_ino=2883',
      'track_foreign_dirty: bdi [3]: ino=1',
      'track_foreign_dirty: bdi a]b[4]: ino=1',
      'track_foreign_dirty: bdi a[b]: ino=1',
      'track_foreign_dirty: bdi 7:0[123456789012345678]: ino=1',
      'writeback_mark_inode_dirty: bdi 254:0: ino=266338304 state=0x40 flags=0x40',
      'writeback_mark_inode_dirty: bdi 254:0: ino=266338305 state=I_DIRTY_SYNC flags=0x40',
      'writeback_mark_inode_dirty: bdi 254:0: name=other ino=1 bdi_id=7',
      'writeback_mark_inode_dirty: bdi 254:0[2]: bdi_id=7 ino=1',
      'writeback_mark_inode_dirty: bdi 254:0:   ino=1',
      'writeback_mark_inode_dirty: bdi 254:0: junk ino=1',
      'writeback_mark_inode_dirty: bdi 254:0:',
      'writeback_mark_inode_dirty: bdi 254:0: ino=1: x',
      'writeback_queue: bdi 7:0: sb_dev 0:0 nr_pages=9223372036854775807 sync_mode=0 kupdate=0 range_cyclic=0 background=1 reason=background cgroup_ino=1',
      'writeback_queue: bdi 7:0: sb_dev=0 nr_pages=1',
      'balance_dirty_pages: bdi 7:0: limit=1 setpoint=2 dirty=3',
      'folio_wait_writeback: bdi 254:0: ino=9978209 index=1162724',
      'sb_mark_inode_writeback: dev 254,0 ino 9978209 dirtied 4296856771 state 0x40 mode 0100644',
      'sb_mark_inode_writeback: dev 7:0 ino 1 dirtied 2 state I_DIRTY_SYNC|I_DIRTY_DATASYNC mode 0100644 extra',
      'sb_mark_inode_writeback: dev 254,0  ino 1 dirtied 2 state 0 mode 644',
      'sb_mark_inode_writeback: dev 254,0 ino -1 dirtied 2 state 0 mode 0100644',
      'sb_mark_inode_writeback: dev 254,0 ino 1 dirtied 2 state 0 mode 0100648',
      'sb_mark_inode_writeback: dev 1234567890,0 ino 1 dirtied 2 state 0 mode 0',
      'sb_mark_inode_writeback: dev 254;0 ino 1 dirtied 2 state 0 mode 0',
      'sb_mark_inode_writeback: dev 254,0 ino 12345678901234567890 dirtied 2 state 0 mode 0',
      'sb_mark_inode_writeback: dev 254,0 ino 1 dirtied 2 state 0',
      'sb_mark_inode_writeback: dev 254,0 inode 1 dirtied 2 state 0 mode 0',
    ];
    expectBytesReadAsString(head, lines);
  });

  it('workqueue lines with key=value pairs: the byte path reads them as the string path, `work` after the pairs', () => {
    const head = '     ksoftirqd/1-22      [001] d.s3.  7858.252302: ';
    const lines = [
      'workqueue_queue_work: work struct=0xffff88810252cdd0 function=blk_mq_requeue_work workqueue=kblockd req_cpu=256 cpu=1',
      'workqueue_queue_work: work struct=0xffff88810252cdd0 function=blk_mq_requeue_work workqueue=kblockd req_cpu=256 cpu=1',
      'workqueue_queue_work: work struct=0000000012345678 function=vmstat_update+0x0/0x90 workqueue=mm_percpu_wq req_cpu=1 cpu=1',
      'workqueue_queue_work: work struct=0000000012345678 function=a function=b+0x4/0x8 workqueue=w req_cpu=1 cpu=1',
      'workqueue_queue_work: work struct=0000000012345678 work=7 function=f workqueue=w req_cpu=1 cpu=1',
      'workqueue_queue_work: work struct=0000000012345678 workqueue=ffff888100051000 req_cpu=8 cpu=1',
      'workqueue_activate_work: work struct 0xffff88810252cdd0 function=blk_mq_requeue_work',
      'workqueue_activate_work: work struct 0xffff88810252cdd0 function=blk_mq_requeue_work',
      'workqueue_activate_work: work struct 0xffff88810252cdd0',
      'workqueue_execute_start: work struct 0xffffe8ffffd08210: function xfs_inodegc_worker',
    ];
    expectBytesReadAsString(head, lines);
  });

  it("untyped lines not all key=value: the kmem plugin's `(call_site) ` or mm_filemap's `dev 254:0 ino N ` first, ext4's `dev 254,0 ino N` (no pair at all)", () => {
    const head = '            node-25510 [000]63167816088910: ';
    const lines = [
      'kmalloc:              (__pfx_do_open_execat+0x315) call_site=__pfx_do_open_execat+0x315 ptr=0xffff88814ea65600 bytes_req=408 bytes_alloc=512 gfp_flags=GFP_KERNEL|__GFP_ZERO node=-1 accounted=false',
      'kmalloc:              (f+0x1) call_site=f+0x1 ptr=0xffff88814ea65601 bytes_req=8 bytes_alloc=8 gfp_flags=GFP_KERNEL node=0 accounted=true',
      'kfree:                (__pfx_bm_evict_inode+0x207c) call_site=__pfx_bm_evict_inode+0x207c ptr=(nil)',
      'kfree:                (x+0x1) call_site=x+0x1 ptr=0xffff888225d732a0',
      'kfree:                (x+0x1)  (y) call_site=x+0x1 ptr=0x1',
      'kfree:                (x=1) call_site=x+0x1 ptr=0x2',
      'kfree:                (x+0x1) call_site=x+0x1 ptr=a b',
      'kfree:                (x+0x1)',
      'mm_filemap_add_to_page_cache: dev 254:0 ino 9b0969 pfn=0x36b9ce ofs=0 order=0',
      'mm_filemap_add_to_page_cache: dev 254:0 ino 9b096a pfn=0x36b9cf ofs=4096 order=0',
      'mm_filemap_add_to_page_cache: dev 254:0 ino 9b096a pfn=0x36b9cf ofs=4096 order=0 x',
      'mm_filemap_add_to_page_cache: dev 254:0 ino=9b096a ofs=4096 order=0',
      'ext4_es_lookup_extent_enter: dev 254,0 ino 10160489 lblk 0',
      'ext4_es_lookup_extent_exit: dev 254,0 ino 10160489 found 0 [0/0) 0',
      'ext4_da_reserve_space: dev 254,0 ino 10160489 mode 0100644 i_blocks 0 reserve_blocks 1reserved_data_blocks 1',
    ];
    // Twice: the second time the key sequences are known (the quick reading).
    expectBytesReadAsString(head, [...lines, ...lines]);
    const fields = lines.map((l) => both(head + l, false).b.fields);
    expect(fields[0]).toEqual({
      call_site: '__pfx_do_open_execat+0x315',
      ptr: '0xffff88814ea65600',
      bytes_req: 408,
      bytes_alloc: 512,
      gfp_flags: 'GFP_KERNEL|__GFP_ZERO',
      node: -1,
      accounted: 'false',
    });
    // A NULL pointer printed as (nil) is read as 0x0 (values.ts normalizePointer), on both paths.
    expect(fields[2]).toEqual({ call_site: '__pfx_bm_evict_inode+0x207c', ptr: '0x0' });
    expect(fields[6]).toEqual({ call_site: 'x+0x1', ptr: 'a b' });
    expect(fields.slice(8, 12)).toEqual([
      { pfn: '0x36b9ce', ofs: 0, order: 0 },
      { pfn: '0x36b9cf', ofs: 4096, order: 0 },
      { pfn: '0x36b9cf', ofs: 4096, order: '0 x' },
      { ino: '9b096a', ofs: 4096, order: 0 },
    ]);
    expect([fields[7], ...fields.slice(12)]).toEqual([{}, {}, {}, {}]);
  });

  it('untyped key=value lines with zero-padded digits: pointer width stays text on both paths', () => {
    const head = '              dd-4211    [003] ..... 16171.466373: ';
    const lines = [
      'kmalloc: call_site=kmem_cache_alloc+0x1c/0x30 ptr=0000000010000000 bytes_req=64 bytes_alloc=64 gfp_flags=GFP_KERNEL node=-1',
      'kmalloc: call_site=kmem_cache_alloc+0x1c/0x30 ptr=00000000a1b2c3d4 bytes_req=64 bytes_alloc=64 gfp_flags=GFP_KERNEL node=-1',
      'kmalloc: call_site=kmem_cache_alloc+0x1c/0x30 ptr=0000000012345678 bytes_req=64 bytes_alloc=64 gfp_flags=GFP_KERNEL node=-1',
      'some_event: flags=00000040 mask=00001234 cpu=003 n=0 m=00',
      'some_event: flags=00000041 mask=00001235 cpu=004 n=1 m=01',
    ];
    expectBytesReadAsString(head, lines);
    const fields = lines.map((l) => both(head + l, false).b.fields);
    expect(fields.map((x) => x?.ptr)).toEqual([
      '0000000010000000',
      '00000000a1b2c3d4',
      '0000000012345678',
      undefined,
      undefined,
    ]);
    expect(fields[3]).toEqual({ flags: '00000040', mask: '00001234', cpu: 3, n: 0, m: 0 });
  });
});
