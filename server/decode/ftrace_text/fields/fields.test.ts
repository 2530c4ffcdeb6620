import { describe, expect, it } from 'vitest';
import { stackFields } from './ftrace.ts';
import { parseEventFields } from './index.ts';

const f = parseEventFields;

describe('sched', () => {
  it('sched_switch kernel form (comm with spaces)', () => {
    expect(
      f(
        'sched_switch',
        'prev_comm=Web Content prev_pid=1234 prev_prio=120 prev_state=S ==> next_comm=kworker/u161:6 next_pid=718 next_prio=120',
      ),
    ).toEqual({
      prev_comm: 'Web Content',
      prev_pid: 1234,
      prev_prio: 120,
      prev_state: 'S',
      next_comm: 'kworker/u161:6',
      next_pid: 718,
      next_prio: 120,
    });
    expect(
      f(
        'sched_switch',
        'prev_comm=dd prev_pid=1 prev_prio=120 prev_state=R+ ==> next_comm=swapper/0 next_pid=0 next_prio=120',
      ),
    ).toMatchObject({ prev_state: 'R+' });
  });
  it('sched_switch trace-cmd report form (comm with spaces and colons), state letters as the kernel prints them', () => {
    expect(f('sched_switch', 'kworker/u161:6:718 [120] D ==> npm list @tauri:28184 [120]')).toEqual({
      prev_comm: 'kworker/u161:6',
      prev_pid: 718,
      prev_prio: 120,
      prev_state: 'D',
      next_comm: 'npm list @tauri',
      next_pid: 28184,
      next_prio: 120,
    });
    expect(f('sched_switch', 'rcu_tasks_trace:29 [120] W ==> node:12088 [120]')).toMatchObject({ prev_state: 'I' });
    expect(f('sched_switch', 'a:1 [120] S|D ==> b:2 [99]')).toMatchObject({ prev_state: 'S|D', next_prio: 99 });
  });
  it('sched_wakeup / waking, both forms', () => {
    expect(f('sched_waking', 'comm=npm list @tauri pid=28184 prio=120 target_cpu=003')).toEqual({
      comm: 'npm list @tauri',
      pid: 28184,
      prio: 120,
      target_cpu: 3,
    });
    expect(f('sched_wakeup', 'comm=kswapd0 pid=52 prio=120 success=1 target_cpu=001')).toEqual({
      comm: 'kswapd0',
      pid: 52,
      prio: 120,
      success: 1,
      target_cpu: 1,
    });
    expect(f('sched_wakeup', 'memfd:sealed-91:5268 [120] CPU:001')).toEqual({
      comm: 'memfd:sealed-91',
      pid: 5268,
      prio: 120,
      target_cpu: 1,
    });
    expect(f('sched_wakeup_new', 'bash:99 [120] success=1 CPU:000')).toEqual({
      comm: 'bash',
      pid: 99,
      prio: 120,
      success: 1,
      target_cpu: 0,
    });
    expect(f('sched_wakeup', '1234:5 [120] CPU:001')).toMatchObject({ comm: '1234' });
  });
  it('sched_migrate_task, fork, exit', () => {
    expect(f('sched_migrate_task', 'comm=kworker/u8:0 pid=12 prio=120 orig_cpu=0 dest_cpu=1')).toEqual({
      comm: 'kworker/u8:0',
      pid: 12,
      prio: 120,
      orig_cpu: 0,
      dest_cpu: 1,
    });
    expect(f('sched_process_fork', 'comm=bash pid=998 child_comm=bash child_pid=999')).toEqual({
      parent_comm: 'bash',
      parent_pid: 998,
      child_comm: 'bash',
      child_pid: 999,
    });
    expect(f('sched_process_exit', 'comm=dirname pid=12296 prio=120 group_dead=true')).toEqual({
      comm: 'dirname',
      pid: 12296,
      prio: 120,
      group_dead: 1,
    });
  });
  it('unparseable typed text -> null', () => {
    expect(f('sched_switch', 'garbage')).toBeNull();
    expect(f('sched_wakeup', 'x')).toBeNull();
  });
});

describe('shrink_slab', () => {
  it('4.x start', () => {
    expect(
      f(
        'mm_shrink_slab_start',
        'super_cache_scan+0x0/0x1b0 00000000a1b2c3d4: nid: 0 objects to shrink 552 gfp_flags GFP_KERNEL pgs_scanned 45 lru_pgs 198175 cache items 9197 delta 4 total_scan 556',
      ),
    ).toEqual({
      shr: '0xa1b2c3d4',
      shrink: 'super_cache_scan',
      nid: 0,
      nr_objects_to_shrink: 552,
      gfp_flags: 'GFP_KERNEL',
      pgs_scanned: 45,
      lru_pgs: 198175,
      cache_items: 9197,
      delta: 4,
      total_scan: 556,
    });
  });
  it('6.x start (tracefs, hashed pointer)', () => {
    expect(
      f(
        'mm_shrink_slab_start',
        'super_cache_scan+0x0/0x210 00000000dbab40df: nid: 0 objects to shrink 0 gfp_flags GFP_KERNEL cache items 1234 delta 2 total_scan 2 priority 12',
      ),
    ).toEqual({
      shr: '0xdbab40df',
      shrink: 'super_cache_scan',
      nid: 0,
      nr_objects_to_shrink: 0,
      gfp_flags: 'GFP_KERNEL',
      cache_items: 1234,
      delta: 2,
      total_scan: 2,
      priority: 12,
    });
  });
  it('trace-cmd report start, with and without +0x0, module suffix', () => {
    expect(
      f(
        'mm_shrink_slab_start',
        'vmap_node_shrink_scan+0x0 0xffff88810004a280: nid: 0 objects to shrink 560 gfp_flags GFP_KERNEL cache items 2075 delta 0 total_scan 0 priority 12',
      ),
    ).toMatchObject({ shr: '0xffff88810004a280', shrink: 'vmap_node_shrink_scan', priority: 12 });
    expect(
      f(
        'mm_shrink_slab_start',
        'super_cache_scan 0xFFFF888101D2C000: nid: 1 objects to shrink 1 gfp_flags GFP_KERNEL cache items 2 delta -3 total_scan 4 priority 1',
      ),
    ).toMatchObject({ shr: '0xffff888101d2c000', shrink: 'super_cache_scan', nid: 1, delta: -3 });
    expect(
      f(
        'mm_shrink_slab_start',
        'xfs_buftarg_shrink_scan+0x0/0x50 [xfs] 000000001f2e3d4c: nid: 0 objects to shrink 0 gfp_flags GFP_KERNEL cache items 1 delta 1 total_scan 1 priority 12',
      ),
    ).toMatchObject({ shrink: 'xfs_buftarg_shrink_scan', shr: '0x1f2e3d4c' });
  });
  it('3.x start (no nid)', () => {
    expect(
      f(
        'mm_shrink_slab_start',
        'super_cache_scan+0x0/0x1b0 ffff88003690b400: objects to shrink 12 gfp_flags GFP_KERNEL pgs_scanned 32 lru_pgs 3425 cache items 1082 delta 20 total_scan 32',
      ),
    ).toEqual({
      shr: '0xffff88003690b400',
      shrink: 'super_cache_scan',
      nr_objects_to_shrink: 12,
      gfp_flags: 'GFP_KERNEL',
      pgs_scanned: 32,
      lru_pgs: 3425,
      cache_items: 1082,
      delta: 20,
      total_scan: 32,
    });
  });
  it('end', () => {
    expect(
      f(
        'mm_shrink_slab_end',
        'super_cache_scan+0x0/0x1b0 00000000a1b2c3d4: nid: 0 unused scan count 552 new scan count 556 total_scan 4 last shrinker return val 0',
      ),
    ).toEqual({
      shr: '0xa1b2c3d4',
      shrink: 'super_cache_scan',
      nid: 0,
      unused_scan: 552,
      new_scan: 556,
      total_scan: 4,
      retval: 0,
    });
    expect(f('mm_shrink_slab_end', 'nonsense here')).toBeNull();
  });
});

describe('vmscan', () => {
  it('writepage 4.x / write_folio tracefs / write_folio report', () => {
    expect(f('mm_vmscan_writepage', 'page=ffffea000xxx pfn=12345 flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC')).toEqual({
      pfn: 12345,
      reclaim_flags: 'RECLAIM_WB_FILE|RECLAIM_WB_ASYNC',
    });
    expect(
      f('mm_vmscan_write_folio', 'page=000000003506623e pfn=0x347077 flags=RECLAIM_WB_ANON|RECLAIM_WB_ASYNC'),
    ).toEqual({ pfn: 0x347077, reclaim_flags: 'RECLAIM_WB_ANON|RECLAIM_WB_ASYNC' });
    expect(f('mm_vmscan_write_folio', 'page=0x347077 pfn=0x347077 flags=RECLAIM_WB_ANON|RECLAIM_WB_ASYNC')).toEqual({
      pfn: 0x347077,
      reclaim_flags: 'RECLAIM_WB_ANON|RECLAIM_WB_ASYNC',
    });
  });
  it('lru_shrink_inactive 4.x and 6.x', () => {
    expect(
      f(
        'mm_vmscan_lru_shrink_inactive',
        'nid=0 zid=2 nr_scanned=32 nr_reclaimed=0 priority=8 flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC',
      ),
    ).toEqual({
      nid: 0,
      zid: 2,
      nr_scanned: 32,
      nr_reclaimed: 0,
      priority: 8,
      reclaim_flags: 'RECLAIM_WB_FILE|RECLAIM_WB_ASYNC',
    });
    expect(
      f(
        'mm_vmscan_lru_shrink_inactive',
        'nid=0 nr_scanned=32 nr_reclaimed=30 nr_dirty=1 nr_writeback=2 nr_congested=3 nr_immediate=4 nr_activate_anon=5 nr_activate_file=6 nr_ref_keep=7 nr_unmap_fail=8 priority=12 flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC',
      ),
    ).toEqual({
      nid: 0,
      nr_scanned: 32,
      nr_reclaimed: 30,
      nr_dirty: 1,
      nr_writeback: 2,
      nr_congested: 3,
      nr_immediate: 4,
      nr_activate0: 5,
      nr_activate1: 6,
      nr_ref_keep: 7,
      nr_unmap_fail: 8,
      priority: 12,
      reclaim_flags: 'RECLAIM_WB_FILE|RECLAIM_WB_ASYNC',
    });
  });
  it('kswapd_wake, direct reclaim, throttled, lru_isolate', () => {
    expect(f('mm_vmscan_kswapd_wake', 'nid=0 order=0')).toEqual({ nid: 0, order: 0 });
    expect(f('mm_vmscan_kswapd_wake', 'nid=0 zid=2 order=0')).toEqual({ nid: 0, zid: 2, order: 0 });
    expect(f('mm_vmscan_direct_reclaim_begin', 'order=0 gfp_flags=GFP_KERNEL|__GFP_ZERO')).toEqual({
      order: 0,
      gfp_flags: 'GFP_KERNEL|__GFP_ZERO',
    });
    expect(f('mm_vmscan_direct_reclaim_begin', 'order=0 may_writepage=1 gfp_flags=GFP_KERNEL classzone_idx=2')).toEqual(
      { order: 0, may_writepage: 1, gfp_flags: 'GFP_KERNEL', classzone_idx: 2 },
    );
    expect(
      f('mm_vmscan_throttled', 'nid=0 usec_timeout=100000 usect_delayed=0 reason=VMSCAN_THROTTLE_WRITEBACK'),
    ).toEqual({ nid: 0, usec_timeout: 100000, usec_delayed: 0, reason: 'VMSCAN_THROTTLE_WRITEBACK' });
    expect(
      f(
        'mm_vmscan_lru_isolate',
        'isolate_mode=0 classzone=3 order=0 nr_requested=32 nr_scanned=32 nr_skipped=0 nr_taken=32 lru=inactive_file',
      ),
    ).toEqual({
      isolate_mode: 0,
      highest_zoneidx: 3,
      order: 0,
      nr_requested: 32,
      nr_scanned: 32,
      nr_skipped: 0,
      nr_taken: 32,
      lru: 'inactive_file',
    });
    expect(
      f(
        'mm_vmscan_lru_isolate',
        'isolate_mode=0 classzone_idx=3 order=0 nr_requested=32 nr_scanned=32 nr_skipped=0 nr_taken=32 file=1',
      ),
    ).toEqual({
      isolate_mode: 0,
      classzone_idx: 3,
      order: 0,
      nr_requested: 32,
      nr_scanned: 32,
      nr_skipped: 0,
      nr_taken: 32,
      file: 1,
    });
  });
});

describe('workqueue', () => {
  it('queue_work, execute_start/end, activate_work', () => {
    expect(
      f(
        'workqueue_queue_work',
        'work struct=0000000012345678 function=vmstat_update workqueue=mm_percpu_wq req_cpu=1 cpu=1',
      ),
    ).toEqual({ work: '0x12345678', function: 'vmstat_update', workqueue: 'mm_percpu_wq', req_cpu: 1, cpu: 1 });
    expect(f('workqueue_execute_start', 'work struct 0000000012345678: function vmstat_update')).toEqual({
      work: '0x12345678',
      function: 'vmstat_update',
    });
    expect(f('workqueue_execute_end', 'work struct 0xffff88810a2b3c40: function vmstat_update+0x0/0x60')).toEqual({
      work: '0xffff88810a2b3c40',
      function: 'vmstat_update',
    });
    expect(f('workqueue_activate_work', 'work struct 0000000012345678')).toEqual({ work: '0x12345678' });
    expect(f('workqueue_activate_work', 'work struct 0000000012345678 function=vmstat_update')).toEqual({
      work: '0x12345678',
      function: 'vmstat_update',
    });
  });
});

describe('writeback (format-file names)', () => {
  it('bdi prefix and renames', () => {
    expect(f('writeback_dirty_folio', 'bdi 7:0: ino=12 index=0')).toEqual({ name: '7:0', ino: 12, index: 0 });
    expect(
      f(
        'writeback_start',
        'bdi 254:0: sb_dev 0:0 nr_pages=406411 sync_mode=0 kupdate=1 range_cyclic=1 background=0 reason=periodic cgroup_ino=1',
      ),
    ).toEqual({
      name: '254:0',
      sb_dev: 0,
      nr_pages: 406411,
      sync_mode: 0,
      for_kupdate: 1,
      range_cyclic: 1,
      for_background: 0,
      reason: 'periodic',
      cgroup_ino: 1,
    });
    expect(f('track_foreign_dirty', 'bdi 254:0[9]: ino=1 memcg_id=1 cgroup_ino=1 page_cgroup_ino=3203')).toMatchObject({
      name: '254:0',
      bdi_id: 9,
      ino: 1,
    });
    expect(f('global_dirty_state', 'dirty=120 writeback=0 bg_thresh=5 thresh=6 limit=7 dirtied=8 written=9')).toEqual({
      nr_dirty: 120,
      nr_writeback: 0,
      background_thresh: 5,
      dirty_thresh: 6,
      dirty_limit: 7,
      nr_dirtied: 8,
      nr_written: 9,
    });
    expect(f('sb_mark_inode_writeback', 'dev 254,0 ino 9978320 dirtied 4295093019 state 0x70 mode 0100644')).toEqual({
      dev: 266338304,
      ino: 9978320,
      dirtied_when: 4295093019,
      state: '0x70',
      mode: 0o100644,
    });
    // no state flag set: the kernel prints nothing between state and mode
    expect(f('sb_clear_inode_writeback', 'dev 254,0 ino 10215905 dirtied 4306117232 state  mode 0100644')).toEqual({
      dev: 266338304,
      ino: 10215905,
      dirtied_when: 4306117232,
      state: '',
      mode: 0o100644,
    });
  });
});

describe('generic', () => {
  it('key=value with numbers, hex kept as text, values with spaces', () => {
    expect(f('some_event', 'a=1 b=-2 c=0x1f d=foo bar e=9007199254740993')).toEqual({
      a: 1,
      b: -2,
      c: '0x1f',
      d: 'foo bar',
      e: 9007199254740993n,
    });
  });
  it('a pointer-width zero-padded value stays text even with no hex letter; shorter padding is a decimal', () => {
    // kmalloc on 6.x: a hashed %p that happens to be all digits must not become the decimal 10000000
    expect(
      f(
        'kmalloc',
        'call_site=kmem_cache_alloc+0x1c/0x30 ptr=0000000010000000 bytes_req=64 bytes_alloc=64 gfp_flags=GFP_KERNEL node=-1',
      ),
    ).toEqual({
      // (the call site without the kernel's /size: printed_value.test.ts)
      call_site: 'kmem_cache_alloc+0x1c',
      ptr: '0000000010000000',
      bytes_req: 64,
      bytes_alloc: 64,
      gfp_flags: 'GFP_KERNEL',
      node: -1,
    });
    expect(f('kmalloc', 'call_site=x ptr=00000000a1b2c3d4 bytes_req=8')).toMatchObject({ ptr: '00000000a1b2c3d4' });
    expect(f('some_event', 'flags=00000040 mask=00001234 cpu=003 n=0 m=00')).toEqual({
      flags: '00000040',
      mask: '00001234',
      cpu: 3,
      n: 0,
      m: 0,
    });
    // the same event twice: the second is read on the remembered key sequence's fast path
    expect(f('some_event', 'flags=00000041 mask=00001235 cpu=004 n=1 m=01')).toEqual({
      flags: '00000041',
      mask: '00001235',
      cpu: 4,
      n: 1,
      m: 1,
    });
  });
  it('no pairs -> {}', () => {
    expect(f('xfs_ilock', 'dev 7:0 ino 0x83 flags ILOCK_SHARED')).toEqual({});
  });
});

describe('ftrace print and stacks (fields/ftrace.ts)', () => {
  it('print: ip and the message as written, colons and leading spaces kept', () => {
    expect(f('print', 'tracing_mark_write: a: b')).toEqual({ ip: 'tracing_mark_write', buf: 'a: b' });
    expect(f('print', 'tracing_mark_write:   indented')).toEqual({ ip: 'tracing_mark_write', buf: '  indented' });
    // no `symbol: ` in front (an older printer): the whole text is the message
    expect(f('print', 'just a message: here')).toEqual({ buf: 'just a message: here' });
  });
  it('bprint and bputs (trace_printk, trace_puts in trace-cmd report): ip and message, as print', () => {
    expect(f('bprint', 'shrink_slab: shrink super_cache_scan nr=552 prio=12')).toEqual({
      ip: 'shrink_slab',
      buf: 'shrink super_cache_scan nr=552 prio=12',
    });
    expect(f('bputs', 'shrink_slab: reclaim: direct reclaim starts')).toEqual({
      ip: 'shrink_slab',
      buf: 'reclaim: direct reclaim starts',
    });
  });
  it('stacks: the frames of either printer read as symbols, unresolved addresses as 0x...', () => {
    expect(stackFields('<stack trace >\n=> shrink_node (ffffffff8139c42c)\n=> ffffffff81000e06')).toEqual({
      caller: 'shrink_node\n0xffffffff81000e06',
      size: 2,
    });
    expect(stackFields('\n => shrink_node\n => kswapd')).toEqual({ caller: 'shrink_node\nkswapd', size: 2 });
    expect(stackFields('<user stack trace>\n => <00007f12a4b3c4d5>')).toEqual({ caller: '0x7f12a4b3c4d5', size: 1 });
    expect(stackFields('')).toEqual({ caller: '', size: 0 });
  });
});

describe('syscalls (fields/syscalls.ts)', () => {
  it('arguments as unsigned integers, hex or decimal; a name printed instead stays text', () => {
    expect(f('sys_enter_openat', 'dfd: 0xffffff9c, filename: 0x7fa5689f3140, flags: 0x00080000, mode: 0')).toEqual({
      dfd: 4294967196,
      filename: 0x7fa5689f3140,
      flags: 0x80000,
      mode: 0,
    });
    expect(f('sys_enter_x', 'a: 0xffffffffffffffff, b: SOME_FLAG')).toEqual({
      a: 18446744073709551615n,
      b: 'SOME_FLAG',
    });
    expect(f('sys_enter_getpid', '')).toEqual({});
    // futex prints key=value of its own
    expect(f('sys_enter_futex', 'op=FUTEX_WAKE|FUTEX_PRIVATE_FLAG uaddr=0x7fa5689a3a4c val=2147483647')).toMatchObject({
      op: 'FUTEX_WAKE|FUTEX_PRIVATE_FLAG',
      val: 2147483647,
    });
  });
  it('the return value as a signed long', () => {
    expect(f('sys_exit_openat', '0x3')).toEqual({ ret: 3 });
    expect(f('sys_exit_openat', '0xfffffffffffffffe')).toEqual({ ret: -2 });
    expect(f('sys_exit_read', '0x8000000000000000')).toEqual({ ret: -9223372036854775808n });
    expect(f('sys_exit_openat', 'garbage')).toBeNull();
  });
});

describe('block (fields/block.ts): positional print formats, in the fields trace.dat gives', () => {
  // Lines from fixtures/corpus/many_systems (trace-cmd report of Linux 6.18); 254,0 is MKDEV(254, 0) = 254 << 20.
  it('requests: dev, sector, sizes, the ioprio class as printed, rwbs, comm or error, cmd', () => {
    expect(f('block_rq_issue', '254,0 WSM 4096 () 319291408 + 8 0x2,0,4 [kworker/u8:2]')).toEqual({
      dev: 266338304,
      sector: 319291408,
      nr_sector: 8,
      bytes: 4096,
      ioprio: '0x2',
      rwbs: 'WSM',
      comm: 'kworker/u8:2',
      cmd: '',
    });
    expect(f('block_rq_complete', '254,0 RA () 65994752 + 8192 0x2,0,4 [0]')).toEqual({
      dev: 266338304,
      sector: 65994752,
      nr_sector: 8192,
      error: 0,
      ioprio: '0x2',
      rwbs: 'RA',
      cmd: '',
    });
    // An older kernel without the ioprio triple; a comm with spaces and brackets; a sector past 2^53.
    expect(f('block_rq_insert', '8,16 W 512 (cmd) 18446744073709551615 + 1 [my [worker]]')).toEqual({
      dev: 8 * 1048576 + 16,
      sector: 18446744073709551615n,
      nr_sector: 1,
      bytes: 512,
      rwbs: 'W',
      comm: 'my [worker]',
      cmd: 'cmd',
    });
  });
  it('bios, splits, buffers, plugs', () => {
    expect(f('block_bio_queue', '254,0 WSM 319291408 + 8 [kworker/u8:2]')).toEqual({
      dev: 266338304,
      sector: 319291408,
      nr_sector: 8,
      rwbs: 'WSM',
      comm: 'kworker/u8:2',
    });
    expect(f('block_split', '254,0 W 2048 / 2304 [kworker/1:0]')).toEqual({
      dev: 266338304,
      sector: 2048,
      new_sector: 2304,
      rwbs: 'W',
      comm: 'kworker/1:0',
    });
    expect(f('block_dirty_buffer', '254,0 sector=39911426 size=4096')).toEqual({
      dev: 266338304,
      sector: 39911426,
      size: 4096,
    });
    expect(f('block_plug', '[dbench]')).toEqual({ comm: 'dbench' });
    expect(f('block_unplug', '[dbench] 1')).toEqual({ nr_rq: 1, comm: 'dbench' });
  });
  it('text of another shape: the generic key=value reading', () => {
    expect(f('block_rq_issue', 'dev=8,0 sector=1')).toEqual({ dev: '8,0', sector: 1 });
  });
});
