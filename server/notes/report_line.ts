/**
 * Event lines exactly as `trace-cmd report` (3.x, libtraceevent and its
 * plugins) prints them for a trace.dat, so an excerpt pasted into a review
 * reads like the trace-cmd output the reader knows and can grep for:
 *
 *          kswapd0-45    [000]  5201.066521: mm_shrink_slab_start: super_cache_scan+0x0 0xffff8881003d7f80: nid: 0 objects to shrink ...
 *       kworker/0:0-14563 [000]  5200.904964: sched_switch:         kworker/0:0:14563 [120] W ==> node:10211 [120]
 *
 * `%16s-%-5d [%03d] %5d.%06d: %-20s: ` then the event's arguments: the
 * timestamp rounded to the microsecond, the name padded, and the arguments
 * as its print format (or a trace-cmd plugin) renders them: symbols with
 * their `+0x0` offset, `page=` before `pfn=`, sched_switch's
 * `comm:pid [prio] S ==> comm:pid [prio]` with the plugin's state letters,
 * devices as `major:minor`.
 *
 * The model keeps each event's fields (typed tables, args), not its printed
 * line; this renders them back. Every event of the typed tables is rendered
 * byte-identical for the kernels stallscope's fixtures come from (6.x), except
 * where the model does not keep a field trace-cmd prints (sched_process_exit's
 * group_dead, writeback_work's sb_dev, writeback_single_inode's age):
 * tests/golden/report_lines.test.ts compares against `trace-cmd report`.
 * Events without a typed table print their fields as `name=value`, which is
 * what most print formats do.
 */
import { EVENT_TABLE } from '../model/typed_tables.ts';

export interface LineEvent {
  comm: string | null;
  tid: number | null;
  utid: number | null;
  cpu: number;
  name: string;
  /** Typed table row without the common columns, or args ({} when none). */
  fields: Record<string, unknown>;
}

/** `comm-pid [cpu] sec.usec: name: ` as trace-cmd prints it (no arguments). */
export function reportPrefix(e: Pick<LineEvent, 'comm' | 'tid' | 'utid' | 'cpu' | 'name'>, absTs: bigint): string {
  const us = (absTs + 500n) / 1000n; // trace-cmd rounds to the microsecond
  const sec = us / 1_000_000n;
  const usec = us % 1_000_000n;
  // the idle task is `<idle>` in trace-cmd's output, whatever its swapper/N name
  const comm = e.tid === 0 ? '<idle>' : (e.comm ?? '<...>');
  const pid = String(e.tid ?? e.utid ?? '?');
  return `${comm.padStart(16)}-${pid.padEnd(5)} [${String(e.cpu).padStart(3, '0')}] ${String(sec).padStart(5)}.${usec.toString().padStart(6, '0')}: ${`${e.name}:`.padEnd(21)} `;
}

/** The whole line; `raw` is the argument text the model kept for an event it could not split into fields. */
export function reportLine(e: LineEvent, absTs: bigint, raw: string | null = null): string {
  return `${reportPrefix(e, absTs)}${raw ?? formatArgs(e.name, e.fields)}`;
}

type Fields = Record<string, unknown>;
const has = (f: Fields, k: string) => f[k] !== undefined && f[k] !== null;
const str = (f: Fields, k: string) => (has(f, k) ? String(f[k]) : '');
const hex = (f: Fields, k: string) => {
  const v = f[k];
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return /^0x/i.test(v) ? v : /^\d+$/.test(v) ? `0x${BigInt(v).toString(16)}` : v;
  return `0x${BigInt(v as number | bigint).toString(16)}`;
};
const pad3 = (f: Fields, k: string) => (has(f, k) ? String(f[k]).padStart(3, '0') : '');
/** A %pS function symbol: trace-cmd prints the offset, +0x0 for a function's own address. */
const symS = (f: Fields, k: string) => {
  const s = str(f, k);
  return s === '' || /\+0x[0-9a-f]+$/i.test(s) || /^0x/i.test(s) ? s : `${s}+0x0`;
};
/** A device printed as major:minor (writeback's bdi name already is). */
const dev = (f: Fields, k: string) => {
  const v = f[k];
  if (typeof v === 'number' || typeof v === 'bigint' || (typeof v === 'string' && /^\d+$/.test(v))) {
    const n = BigInt(v as number);
    return `${n >> 20n}:${n & 0xfffffn}`;
  }
  return str(f, k);
};

/**
 * sched_switch prev_state as trace-cmd's sched_switch plugin writes it: its
 * own letters by bit (S D T t Z X x W for 0x1..0x80), R when no bit is set
 * (also for a preempted task, the kernel's "R+"). The model keeps the
 * kernel's letters (S D T t X Z P I; X and Z are the other way round there).
 */
export function pluginState(kernelState: string): string {
  const map: Record<string, string> = { S: 'S', D: 'D', T: 'T', t: 't', X: 'Z', Z: 'X', P: 'x', I: 'W' };
  const out = kernelState
    .replace(/\+$/, '')
    .split('|')
    .map((c) => map[c])
    .filter((c): c is string => c !== undefined);
  return out.length ? out.join('|') : 'R';
}

const KV = (f: Fields, keys: string[]) =>
  keys
    .filter((k) => has(f, k))
    .map((k) => `${k}=${str(f, k)}`)
    .join(' ');

const FORMATS: Record<string, (f: Fields, name: string) => string> = {
  mm_vmscan_kswapd_sleep: (f) => `nid=${str(f, 'nid')}`,
  // 5.x+ record zid but do not print it
  mm_vmscan_kswapd_wake: (f) => `nid=${str(f, 'nid')} order=${str(f, 'order')}`,
  mm_vmscan_wakeup_kswapd: (f) => `nid=${str(f, 'nid')} order=${str(f, 'order')} gfp_flags=${str(f, 'gfp_flags')}`,
  mm_vmscan_direct_reclaim_begin: (f, name) =>
    (name.startsWith('mm_vmscan_node_') ? `nid=${str(f, 'nid')} ` : '') +
    `order=${str(f, 'order')} gfp_flags=${str(f, 'gfp_flags')}`,
  mm_vmscan_direct_reclaim_end: (f) => `nr_reclaimed=${str(f, 'nr_reclaimed')}`,
  mm_vmscan_lru_shrink_inactive: (f) =>
    (has(f, 'zid') ? `nid=${str(f, 'nid')} zid=${str(f, 'zid')} ` : `nid=${str(f, 'nid')} `) +
    KV(f, [
      'nr_scanned',
      'nr_reclaimed',
      'nr_dirty',
      'nr_writeback',
      'nr_congested',
      'nr_immediate',
      'nr_activate_anon',
      'nr_activate_file',
      'nr_ref_keep',
      'nr_unmap_fail',
      'priority',
    ]) +
    ` flags=${str(f, 'reclaim_flags')}`,
  mm_vmscan_lru_shrink_active: (f) =>
    KV(f, ['nid', 'nr_taken', 'nr_active', 'nr_deactivated', 'nr_referenced', 'priority']) +
    ` flags=${str(f, 'reclaim_flags')}`,
  mm_vmscan_lru_isolate: (f) =>
    (has(f, 'isolate_mode') ? `isolate_mode=${str(f, 'isolate_mode')} ` : '') +
    `classzone=${str(f, 'highest_zoneidx')} ` +
    KV(f, ['order', 'nr_requested', 'nr_scanned', 'nr_skipped', 'nr_taken', 'lru']),
  mm_shrink_slab_start: (f) =>
    `${symS(f, 'shrink')} ${str(f, 'shr')}: nid: ${str(f, 'nid')} objects to shrink ${str(f, 'nr_objects_to_shrink')} gfp_flags ${str(f, 'gfp_flags')}` +
    (has(f, 'pgs_scanned') ? ` pgs_scanned ${str(f, 'pgs_scanned')} lru_pgs ${str(f, 'lru_pgs')}` : '') +
    ` cache items ${str(f, 'cache_items')} delta ${str(f, 'delta')} total_scan ${str(f, 'total_scan')}` +
    (has(f, 'priority') ? ` priority ${str(f, 'priority')}` : ''),
  mm_shrink_slab_end: (f) =>
    `${symS(f, 'shrink')} ${str(f, 'shr')}: nid: ${str(f, 'nid')} unused scan count ${str(f, 'unused_scan')} new scan count ${str(f, 'new_scan')} total_scan ${str(f, 'total_scan')} last shrinker return val ${str(f, 'retval')}`,
  mm_vmscan_write_folio: (f) => `page=${hex(f, 'pfn')} pfn=${hex(f, 'pfn')} flags=${str(f, 'reclaim_flags')}`,
  mm_vmscan_throttled: (f) =>
    `nid=${str(f, 'nid')} usec_timeout=${str(f, 'usec_timeout')} usect_delayed=${str(f, 'usec_delayed')} reason=${throttleReason(f.reason)}`,
  sched_switch: (f) =>
    `${str(f, 'prev_comm')}:${str(f, 'prev_pid')} [${str(f, 'prev_prio')}] ${pluginState(str(f, 'prev_state'))} ==> ${str(f, 'next_comm')}:${str(f, 'next_pid')} [${str(f, 'next_prio')}]`,
  sched_waking: (f) =>
    `comm=${str(f, 'comm')} pid=${str(f, 'pid')} prio=${str(f, 'prio')} target_cpu=${pad3(f, 'target_cpu')}`,
  sched_wakeup: (f) => `${str(f, 'comm')}:${str(f, 'pid')} [${str(f, 'prio')}] CPU:${pad3(f, 'target_cpu')}`,
  sched_wakeup_new: (f) => `${str(f, 'comm')}:${str(f, 'pid')} [${str(f, 'prio')}] CPU:${pad3(f, 'target_cpu')}`,
  sched_migrate_task: (f) => KV(f, ['comm', 'pid', 'prio', 'orig_cpu', 'dest_cpu']),
  sched_process_fork: (f) =>
    `comm=${str(f, 'parent_comm')} pid=${str(f, 'parent_pid')} child_comm=${str(f, 'child_comm')} child_pid=${str(f, 'child_pid')}`,
  sched_process_exit: (f) => KV(f, ['comm', 'pid', 'prio']),
  sched_process_wait: (f) => KV(f, ['comm', 'pid', 'prio']),
  sched_stat_runtime: (f) =>
    has(f, 'vruntime')
      ? `comm=${str(f, 'comm')} pid=${str(f, 'pid')} runtime=${str(f, 'runtime')} [ns] vruntime=${str(f, 'vruntime')} [ns]`
      : `comm=${str(f, 'comm')} pid=${str(f, 'pid')} runtime=${str(f, 'runtime')} [ns]`,
  sched_process_exec: (f) => KV(f, ['filename', 'pid', 'old_pid']),
  workqueue_queue_work: (f) =>
    `work struct=${str(f, 'work')} function=${str(f, 'function')} workqueue=${str(f, 'workqueue')} req_cpu=${str(f, 'req_cpu')} cpu=${str(f, 'cpu_target')}`,
  workqueue_activate_work: (f) => `work struct ${str(f, 'work')} function=${str(f, 'function')} `,
  workqueue_execute_start: (f) => `work struct ${str(f, 'work')}: function ${str(f, 'function')}`,
  workqueue_execute_end: (f) => `work struct ${str(f, 'work')}: function ${str(f, 'function')}`,
  writeback_dirty_folio: (f) => `bdi ${dev(f, 'bdi')}: ino=${str(f, 'ino')} index=${str(f, 'index')}`,
  writeback_work: (f) =>
    `bdi ${dev(f, 'bdi')}: ` +
    KV(f, ['nr_pages', 'sync_mode', 'kupdate', 'range_cyclic', 'background', 'reason', 'cgroup_ino']),
  writeback_single_inode: (f) =>
    `bdi ${dev(f, 'bdi')}: ` +
    KV(f, ['ino', 'state', 'dirtied_when', 'age', 'index', 'to_write', 'wrote', 'cgroup_ino']),
  global_dirty_state: (f) =>
    `dirty=${str(f, 'dirty')} writeback=${str(f, 'writeback')} bg_thresh=${str(f, 'background_thresh')} thresh=${str(f, 'dirty_thresh')} limit=${str(f, 'dirty_limit')} dirtied=${str(f, 'nr_dirtied')} written=${str(f, 'nr_written')}`,
  // Events kept in args whose print format is not name=value:
  mm_vmscan_reclaim_pages: (f) =>
    Object.entries(f)
      .filter(([, x]) => x !== null && x !== undefined)
      .map(
        ([k, x]) => `${k === 'nr_activate0' ? 'nr_activate_anon' : k === 'nr_activate1' ? 'nr_activate_file' : k}=${x}`,
      )
      .join(' '),
  writeback_pages_written: (f) => str(f, 'pages'),
  writeback_queue_io: (f) =>
    `bdi ${dev(f, 'name')}: ` +
    Object.entries(f)
      .filter(([k, x]) => k !== 'name' && x !== null && x !== undefined)
      .map(([k, x]) => `${k === 'moved' ? 'enqueue' : k}=${x}`)
      .join(' '),
  track_foreign_dirty: (f) =>
    `bdi ${dev(f, 'name')}[${str(f, 'bdi_id')}]: ` +
    Object.entries(f)
      .filter(([k, x]) => k !== 'name' && k !== 'bdi_id' && x !== null && x !== undefined)
      .map(([k, x]) => `${k}=${x}`)
      .join(' '),
  writeback_dirty_inode_enqueue: inodeDev,
  wbc_writepage: (f) =>
    `bdi ${str(f, 'name')}: towrt=${str(f, 'nr_to_write')} skip=${str(f, 'pages_skipped')} mode=${str(f, 'sync_mode')} kupd=${str(f, 'for_kupdate')} ` +
    `bgrd=${str(f, 'for_background')} cyclic=${str(f, 'range_cyclic')} start=${hex(f, 'range_start')} end=${hex(f, 'range_end')} cgroup_ino=${str(f, 'cgroup_ino')}`,
  // block_rq template: `7,2 W 1310720 () 524480 + 2560 [kworker/u8:0]` (6.10+ prints the I/O priority
  // before the comm, which the model does not keep in one form across sources: left out)
  block_rq_insert: (f) =>
    `${blockDev(f)} ${str(f, 'rwbs')} ${str(f, 'bytes')} (${str(f, 'cmd')}) ${str(f, 'sector')} + ${str(f, 'nr_sector')} [${str(f, 'comm')}]`,
  block_rq_issue: (f) =>
    `${blockDev(f)} ${str(f, 'rwbs')} ${str(f, 'bytes')} (${str(f, 'cmd')}) ${str(f, 'sector')} + ${str(f, 'nr_sector')} [${str(f, 'comm')}]`,
  block_rq_complete: (f) =>
    `${blockDev(f)} ${str(f, 'rwbs')} (${str(f, 'cmd')}) ${str(f, 'sector')} + ${str(f, 'nr_sector')} [${has(f, 'error') ? str(f, 'error') : str(f, 'errors')}]`,
  // the kmem plugin prints the call site first
  kmalloc: kmem,
  kmem_cache_alloc: kmem,
  kfree: kmem,
  kmem_cache_free: kmem,
  mm_page_alloc: (f) =>
    `page=${hex(f, 'pfn')} pfn=${hex(f, 'pfn')} order=${str(f, 'order')} migratetype=${str(f, 'migratetype')} gfp_flags=${str(f, 'gfp_flags')}`,
  mm_page_free: (f) => `page=${hex(f, 'pfn')} pfn=${hex(f, 'pfn')} order=${str(f, 'order')}`,
  softirq_raise: softirq,
  softirq_entry: softirq,
  softirq_exit: softirq,
  csd_function_entry: (f) => `func=${str(f, 'func')}, csd=${str(f, 'csd')}`,
  csd_function_exit: (f) => `func=${str(f, 'func')}, csd=${str(f, 'csd')}`,
  sb_mark_inode_writeback: inodeDev,
  sb_clear_inode_writeback: inodeDev,
  print: (f) => (f.ip === undefined ? str(f, 'buf') : `${str(f, 'ip')}: ${str(f, 'buf')}`),
  kernel_stack: (f) =>
    [
      '<stack trace >',
      ...str(f, 'caller')
        .split('\n')
        .filter((x) => x !== '')
        .map((x) => `=> ${x}`),
    ].join('\n'),
  user_stack: (f) =>
    [
      '<user stack trace >',
      ...str(f, 'caller')
        .split('\n')
        .filter((x) => x !== '')
        .map((x) => `=> ${x}`),
    ].join('\n'),
};

/** mm_vmscan_throttled's reason as its __print_flags names it (a trace.dat may keep the number). */
function throttleReason(v: unknown): string {
  const text = v === null || v === undefined ? '' : String(v);
  if (!/^(0x[0-9a-f]+|\d+)$/i.test(text)) return text;
  const n = Number(text);
  const names = [
    'VMSCAN_THROTTLE_WRITEBACK',
    'VMSCAN_THROTTLE_ISOLATED',
    'VMSCAN_THROTTLE_NOPROGRESS',
    'VMSCAN_THROTTLE_CONGESTED',
  ];
  const out = names.filter((_, i) => n & (1 << i));
  return out.length ? out.join('|') : text;
}

/** kmalloc / kfree / kmem_cache_*: `(call_site) call_site=... ptr=...`, a NULL pointer as `(nil)`. */
function kmem(f: Fields): string {
  const parts = Object.entries(f)
    .filter(([, x]) => x !== null && x !== undefined)
    .map(([k, x]) => `${k}=${k === 'ptr' && (x === '0x0' || x === 0) ? '(nil)' : x}`);
  return `(${str(f, 'call_site')}) ${parts.join(' ')}`;
}

/** The kernel's softirq names by vector (softirq_to_name), as softirq events print them. */
export const SOFTIRQS = ['HI', 'TIMER', 'NET_TX', 'NET_RX', 'BLOCK', 'IRQ_POLL', 'TASKLET', 'SCHED', 'HRTIMER', 'RCU'];
function softirq(f: Fields): string {
  const v = Number(f.vec);
  return `vec=${str(f, 'vec')} [action=${SOFTIRQS[v] ?? v}]`;
}

/** sys_enter_NAME: `arg: 0x%08lx, ...`; sys_exit_NAME: `0x%lx` (the syscalls' own print format). */
function syscallArgs(name: string, f: Fields): string | null {
  const h = (v: unknown, width: number) => {
    if (v === null || v === undefined) return '';
    let n = BigInt(v as number);
    if (n < 0n) n += 1n << 64n;
    return `0x${n.toString(16).padStart(width, '0')}`;
  };
  if (name.startsWith('sys_enter_')) {
    return Object.entries(f)
      .filter(([k, x]) => k !== '__syscall_nr' && x !== null && x !== undefined)
      .map(([k, x]) => `${k}: ${h(x, 8)}`)
      .join(', ');
  }
  if (name.startsWith('sys_exit_')) return h(f.ret, 0);
  return null;
}

/** writeback's inode events with a `name` (the bdi) first: `bdi 254:0: ino=... state=...`. */
const BDI_NAMED =
  /^(writeback_(mark_inode_dirty|dirty_inode(_start)?|write_inode(_start)?|wait_on_inode|sb_inodes_requeue)|folio_wait_writeback|wbc_writepage)$/;

/** writeback_inode_template: `dev 254,0 ino 9986023 dirtied 4296186634 state 0x20052 mode 0100644`. */
/** A block event's dev_t as the kernel prints it: 'major,minor'. */
function blockDev(f: Fields): string {
  const d = f.dev;
  if (typeof d === 'number' || typeof d === 'bigint' || (typeof d === 'string' && /^\d+$/.test(d))) {
    const n = BigInt(d as number);
    return `${n >> 20n},${n & 0xfffffn}`;
  }
  return str(f, 'dev');
}

function inodeDev(f: Fields): string {
  const d = f.dev;
  let devText = str(f, 'dev');
  if (typeof d === 'number' || typeof d === 'bigint' || (typeof d === 'string' && /^\d+$/.test(d))) {
    const n = BigInt(d as number);
    devText = `${n >> 20n},${n & 0xfffffn}`;
  }
  const mode = f.mode;
  const modeText =
    typeof mode === 'number' || typeof mode === 'bigint' ? `0${BigInt(mode).toString(8)}` : str(f, 'mode');
  return `dev ${devText} ino ${str(f, 'ino')} dirtied ${str(f, 'dirtied_when')} state ${str(f, 'state')} mode ${modeText}`;
}

/**
 * How formatArgs lays out an event name's arguments: `format`, a format of
 * its own (FORMATS, or the syscalls'); `bdi`, `bdi NAME: ` then the other
 * fields as name=value (when the event has a `name` field, else as `kv`);
 * `kv`, every field as name=value, space-separated, in field order.
 * (server/decode/ftrace_text/kept_raw.ts compares texts against the last two
 * without building the string.)
 */
export function argsLayout(name: string): 'format' | 'bdi' | 'kv' {
  // Events that share a typed table (memcg/node reclaim, older writeback names) print in its format.
  if (FORMATS[name] ?? FORMATS[EVENT_TABLE[name] ?? '']) return 'format';
  if (/^sys_(enter|exit)_/.test(name) && name !== 'sys_enter_futex') return 'format';
  return BDI_NAMED.test(name) ? 'bdi' : 'kv';
}

/** The argument text of an event from its fields. */
export function formatArgs(name: string, f: Fields): string {
  // Events that share a typed table (memcg/node reclaim, older writeback names) print in its format.
  const fmt = FORMATS[name] ?? FORMATS[EVENT_TABLE[name] ?? ''];
  if (fmt) return fmt(f, name);
  const sys = /^sys_(enter|exit)_/.test(name) && name !== 'sys_enter_futex' ? syscallArgs(name, f) : null;
  if (sys !== null) return sys;
  if (BDI_NAMED.test(name) && has(f, 'name')) {
    return (
      `bdi ${str(f, 'name')}: ` +
      Object.entries(f)
        .filter(([k, x]) => k !== 'name' && x !== null && x !== undefined)
        .map(([k, x]) => `${k}=${x}`)
        .join(' ')
    );
  }
  return Object.entries(f)
    .filter(([, x]) => x !== null && x !== undefined)
    .map(([k, x]) => `${k}=${x}`)
    .join(' ');
}
