/**
 * The printed form of ftrace fields the kernel prints symbolically, for
 * Perfetto traces: Perfetto records every field as the number the ring
 * buffer holds (gfp_flags=0xcc0, prev_state=1), while stallscope's value
 * convention (EVENT_FIELD_CONVENTIONS in decoded_event.ts) is the text the
 * kernel's print fmt makes of it (`GFP_KERNEL`, `S`), which the trace.dat
 * decoder computes from the format files a trace.dat carries. A Perfetto
 * trace carries no format files, so the tables are here, written from the
 * print fmts of Linux 6.18 (include/trace/events/mmflags.h, vmscan.h,
 * sched.h, writeback.h); kernel_values.test.ts checks them against the
 * format files of a real 6.18 trace.dat.
 *
 * The export (server/export/perfetto/) uses the inverse direction: the
 * number a printed value stands for.
 */

/** `{ value, name }` entries in the order the kernel's __print_flags lists them. */
type FlagTable = readonly (readonly [number, string])[];

/** GFP flags as 6.3+ kernels print them (6.3 dropped __GFP_ATOMIC and renumbered the bits above it). */
export const GFP_FLAGS: FlagTable = [
  [0x1c24ca, 'GFP_TRANSHUGE'],
  [0x1c20ca, 'GFP_TRANSHUGE_LIGHT'],
  [0x100cca, 'GFP_HIGHUSER_MOVABLE'],
  [0x100cc2, 'GFP_HIGHUSER'],
  [0x100cc0, 'GFP_USER'],
  [0x400cc0, 'GFP_KERNEL_ACCOUNT'],
  [0xcc0, 'GFP_KERNEL'],
  [0xc40, 'GFP_NOFS'],
  [0x820, 'GFP_ATOMIC'],
  [0xc00, 'GFP_NOIO'],
  [0x2800, 'GFP_NOWAIT'],
  [0x1, 'GFP_DMA'],
  [0x4, 'GFP_DMA32'],
  [0xc00, '__GFP_RECLAIM'],
  [0x1, '__GFP_DMA'],
  [0x2, '__GFP_HIGHMEM'],
  [0x4, '__GFP_DMA32'],
  [0x8, '__GFP_MOVABLE'],
  [0x10, '__GFP_RECLAIMABLE'],
  [0x20, '__GFP_HIGH'],
  [0x40, '__GFP_IO'],
  [0x80, '__GFP_FS'],
  [0x100, '__GFP_ZERO'],
  [0x400, '__GFP_DIRECT_RECLAIM'],
  [0x800, '__GFP_KSWAPD_RECLAIM'],
  [0x1000, '__GFP_WRITE'],
  [0x2000, '__GFP_NOWARN'],
  [0x4000, '__GFP_RETRY_MAYFAIL'],
  [0x8000, '__GFP_NOFAIL'],
  [0x10000, '__GFP_NORETRY'],
  [0x20000, '__GFP_MEMALLOC'],
  [0x40000, '__GFP_COMP'],
  [0x80000, '__GFP_NOMEMALLOC'],
  [0x100000, '__GFP_HARDWALL'],
  [0x200000, '__GFP_THISNODE'],
  [0x400000, '__GFP_ACCOUNT'],
  [0x800000, '__GFP_ZEROTAGS'],
  [0x1000000, '__GFP_NO_OBJ_EXT'],
];

/** reclaim_flags (vmscan.h show_reclaim_flags). */
export const RECLAIM_FLAGS: FlagTable = [
  [0x1, 'RECLAIM_WB_ANON'],
  [0x2, 'RECLAIM_WB_FILE'],
  [0x10, 'RECLAIM_WB_MIXED'],
  [0x4, 'RECLAIM_WB_SYNC'],
  [0x8, 'RECLAIM_WB_ASYNC'],
];

/** mm_vmscan_throttled reason: 1 << enum vmscan_throttle_state. */
export const THROTTLE_REASONS: FlagTable = [
  [0x1, 'VMSCAN_THROTTLE_WRITEBACK'],
  [0x2, 'VMSCAN_THROTTLE_ISOLATED'],
  [0x4, 'VMSCAN_THROTTLE_NOPROGRESS'],
  [0x8, 'VMSCAN_THROTTLE_CONGESTED'],
];

/** sched_switch prev_state letters (TASK_REPORT bits, 4.14+ kernels); 0x100 (TASK_REPORT_MAX) prints `+`. */
export const TASK_STATES: FlagTable = [
  [0x1, 'S'],
  [0x2, 'D'],
  [0x4, 'T'],
  [0x8, 't'],
  [0x10, 'X'],
  [0x20, 'Z'],
  [0x40, 'P'],
  [0x80, 'I'],
];
const TASK_REPORT_MAX = 0x100;

/** enum lru_list (mm_vmscan_lru_isolate lru). */
export const LRU_LISTS: FlagTable = [
  [0, 'inactive_anon'],
  [1, 'active_anon'],
  [2, 'inactive_file'],
  [3, 'active_file'],
  [4, 'unevictable'],
];

/** enum wb_reason (writeback events' reason). */
export const WB_REASONS: FlagTable = [
  [0, 'background'],
  [1, 'vmscan'],
  [2, 'sync'],
  [3, 'periodic'],
  [4, 'laptop_timer'],
  [5, 'fs_free_space'],
  [6, 'forker_thread'],
  [7, 'foreign_flush'],
];

/** __print_flags as libtraceevent prints it: matched names joined by `|`, leftover bits as 0x... */
export function printFlags(table: FlagTable, value: number | bigint, none: string): string {
  let v = BigInt(value);
  if (v === 0n) return none;
  let out = '';
  for (const [bits, name] of table) {
    const b = BigInt(bits);
    if (b !== 0n && (v & b) === b) {
      out += (out ? '|' : '') + name;
      v &= ~b;
    }
  }
  if (v !== 0n) out += (out ? '|' : '') + '0x' + v.toString(16);
  return out;
}

/** __print_symbolic: the entry's name, or the value as 0x... */
export function printSymbolic(table: FlagTable, value: number | bigint): string {
  for (const [v, name] of table) if (BigInt(v) === BigInt(value)) return name;
  return '0x' + BigInt.asUintN(64, BigInt(value)).toString(16);
}

/** sched_switch prev_state as the kernel prints it (`S`, `D|K`, `R`, `R+`). */
export function printTaskState(raw: number | bigint): string {
  const v = Number(BigInt.asUintN(32, BigInt(raw)));
  const low = v & (TASK_REPORT_MAX - 1);
  const base = low ? printFlags(TASK_STATES, low, 'R') : 'R';
  return v & TASK_REPORT_MAX ? base + '+' : base;
}

/** The number behind a printed flags value (`GFP_KERNEL|__GFP_ZERO`, `0x400|RECLAIM_WB_ASYNC`), or null. */
export function parseFlags(table: FlagTable, text: string, none: string): bigint | null {
  if (text === none) return 0n;
  let v = 0n;
  for (const part of text.split('|')) {
    const hit = table.find(([, name]) => name === part);
    if (hit) v |= BigInt(hit[0]);
    else if (/^0x[0-9a-f]+$/i.test(part)) v |= BigInt(part);
    else return null;
  }
  return v;
}

export function parseSymbolic(table: FlagTable, text: string): bigint | null {
  const hit = table.find(([, name]) => name === text);
  if (hit) return BigInt(hit[0]);
  return /^0x[0-9a-f]+$/i.test(text) ? BigInt(text) : null;
}

export function parseTaskState(text: string): bigint | null {
  const plus = text.endsWith('+');
  const base = plus ? text.slice(0, -1) : text;
  const v = base === 'R' ? 0n : parseFlags(TASK_STATES, base, 'R');
  if (v === null) return null;
  return plus ? v | BigInt(TASK_REPORT_MAX) : v;
}

/** How one field's number becomes its printed text, and back. */
export interface PrintedField {
  print(raw: number | bigint): string;
  parse(text: string): bigint | null;
}

const gfp: PrintedField = {
  print: (v) => printFlags(GFP_FLAGS, v, 'none'),
  parse: (t) => parseFlags(GFP_FLAGS, t, 'none'),
};
const reclaim: PrintedField = {
  print: (v) => printFlags(RECLAIM_FLAGS, v, 'RECLAIM_WB_NONE'),
  parse: (t) => parseFlags(RECLAIM_FLAGS, t, 'RECLAIM_WB_NONE'),
};
const throttle: PrintedField = {
  print: (v) => printFlags(THROTTLE_REASONS, v, 'VMSCAN_THROTTLE_NONE'),
  parse: (t) => parseFlags(THROTTLE_REASONS, t, 'VMSCAN_THROTTLE_NONE'),
};
const taskState: PrintedField = { print: printTaskState, parse: parseTaskState };
const lru: PrintedField = { print: (v) => printSymbolic(LRU_LISTS, v), parse: (t) => parseSymbolic(LRU_LISTS, t) };
const wbReason: PrintedField = {
  print: (v) => printSymbolic(WB_REASONS, v),
  parse: (t) => parseSymbolic(WB_REASONS, t),
};

/**
 * irq_handler_exit's `ret`, printed `__entry->ret ? "handled" : "unhandled"`
 * (include/trace/events/irq.h): trace.dat and text give the word, Perfetto
 * the int. As a number in the model the export could not write the typed
 * IrqHandlerExitFtraceEvent (an int32 there), trace_processor then never
 * closed the IRQ slices its entries opened (512 deep on many_systems.v7).
 */
const irqReturn: PrintedField = {
  print: (v) => (BigInt(v) !== 0n ? 'handled' : 'unhandled'),
  parse: (t) => (t === 'handled' ? 1n : t === 'unhandled' ? 0n : null),
};

/** Writeback events that print `reason` through __print_symbolic(wb_reason). */
const WB_REASON_EVENTS = new Set([
  'writeback_queue',
  'writeback_exec',
  'writeback_start',
  'writeback_written',
  'writeback_wait',
  'writeback_queue_io',
]);

/**
 * The printed-field rule for one event's field, or null when the field is
 * printed as the number it is. `gfpKnown`: the kernel's GFP bits are the
 * 6.3+ ones (else gfp_flags stay numbers, printed 0x...).
 */
export function printedField(event: string, field: string, gfpKnown: boolean): PrintedField | null {
  switch (field) {
    case 'gfp_flags':
      return gfpKnown ? gfp : null;
    case 'reclaim_flags':
      return reclaim;
    case 'prev_state':
      return event === 'sched_switch' ? taskState : null;
    case 'lru':
      return event === 'mm_vmscan_lru_isolate' ? lru : null;
    case 'ret':
      return event === 'irq_handler_exit' ? irqReturn : null;
    case 'reason':
      if (event === 'mm_vmscan_throttled') return throttle;
      return WB_REASON_EVENTS.has(event) ? wbReason : null;
    default:
      return null;
  }
}

/**
 * Whether a kernel release (`6.18.44-fc`) numbers GFP bits as GFP_FLAGS
 * does: 6.3 and later. Unknown releases are assumed current.
 */
export function gfpTableFits(release: string | null): boolean {
  const m = release ? /^(\d+)\.(\d+)/.exec(release) : null;
  if (!m) return true;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  return major > 6 || (major === 6 && minor >= 3);
}

/**
 * Device numbers. The kernel's events hold a dev_t as the kernel stores it,
 * major << 20 | minor (MINORBITS 20): what trace.dat and tracefs give, and
 * what the model keeps (detectors print it as 'major,minor'). Perfetto's
 * recorder hands dev_t fields over in userspace's encoding, glibc's
 * makedev(): /dev/vda, 254:0, is 65024 in a tracebox recording of
 * block_rq_issue, where trace.dat has 266338304.
 */
export function isDevField(event: string, field: string): boolean {
  return event.startsWith('block_') && (field === 'dev' || field === 'old_dev');
}

/** glibc makedev() encoding -> the kernel's. */
export function kernelDevFromUserspace(v: number | bigint): number | bigint {
  const d = BigInt(v);
  const major = ((d >> 8n) & 0xfffn) | ((d >> 32n) & ~0xfffn);
  const minor = (d & 0xffn) | ((d >> 12n) & ~0xffn);
  const k = (major << 20n) | minor;
  return k <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(k) : k;
}

/** The kernel's encoding -> glibc makedev()'s (the inverse of kernelDevFromUserspace). */
export function userspaceDevFromKernel(v: number | bigint): number | bigint {
  const d = BigInt(v);
  const major = d >> 20n;
  const minor = d & 0xfffffn;
  const u = ((major & 0xfffn) << 8n) | ((major & ~0xfffn) << 32n) | (minor & 0xffn) | ((minor & ~0xffn) << 12n);
  return u <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(u) : u;
}
