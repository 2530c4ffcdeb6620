/**
 * Registry: event name -> field parser, plus the event's system. Events not
 * listed here get the generic key=value parser (fields = {} when the text has
 * no pairs); their system is guessed from the name prefix when unambiguous.
 */
import type { EventFields } from '../../decoded_event.ts';
import { asciiBytes, type ByteKey } from './byte_keys.ts';
import { parseGeneric, parseGenericRange, RANGE_PARSERS } from './generic.ts';
import { flat } from './intern.ts';
import { sameChars } from './text_scan.ts';
import {
  parseSchedMigrateTask,
  parseSchedProcessExit,
  parseSchedProcessFork,
  parseSchedSwitch,
  parseSchedWakeup,
} from './sched.ts';
import { parsePrint } from './ftrace.ts';
import { parseShrinkSlabEnd, parseShrinkSlabStart } from './shrink_slab.ts';
import { parseSyscallEnter, parseSyscallExit } from './syscalls.ts';
import type { FieldParser, RangeParser } from './types.ts';
import {
  parseKswapdSleep,
  parseKswapdWake,
  parseLruIsolate,
  parseLruShrinkActive,
  parseLruShrinkInactive,
  parseReclaimBegin,
  parseReclaimEnd,
  parseReclaimPages,
  parseThrottled,
  parseWakeupKswapd,
  parseWriteFolio,
} from './vmscan.ts';
import { parseWorkqueue } from './workqueue.ts';
import {
  parseBlockBio,
  parseBlockBuffer,
  parseBlockPlug,
  parseBlockRq,
  parseBlockRqComplete,
  parseBlockSplit,
  parseBlockUnplug,
} from './block.ts';
import type { KvSpec } from './kv_spec.ts';
import {
  BDI_KV_SPECS,
  parseBalanceDirtyPages,
  parseGlobalDirtyState,
  parseWbcWritepage,
  parseWriteback,
  parseWritebackInode,
  parseWritebackPagesWritten,
  parseWritebackQueueIo,
  parseWritebackSingleInode,
  parseWritebackWork,
} from './writeback.ts';

export type { FieldParser } from './types.ts';

/** Events with a dedicated parser (their text shape is known). */
export const FIELD_PARSERS: Readonly<Record<string, FieldParser>> = {
  sched_switch: parseSchedSwitch,
  sched_wakeup: parseSchedWakeup,
  sched_wakeup_new: parseSchedWakeup,
  sched_waking: parseSchedWakeup,
  sched_migrate_task: parseSchedMigrateTask,
  sched_process_fork: parseSchedProcessFork,
  sched_process_exit: parseSchedProcessExit,

  print: parsePrint,
  bprint: parsePrint,
  bputs: parsePrint,

  mm_vmscan_kswapd_sleep: parseKswapdSleep,
  mm_vmscan_kswapd_wake: parseKswapdWake,
  mm_vmscan_wakeup_kswapd: parseWakeupKswapd,
  mm_vmscan_direct_reclaim_begin: parseReclaimBegin,
  mm_vmscan_memcg_reclaim_begin: parseReclaimBegin,
  mm_vmscan_memcg_softlimit_reclaim_begin: parseReclaimBegin,
  mm_vmscan_node_reclaim_begin: parseReclaimBegin,
  mm_vmscan_direct_reclaim_end: parseReclaimEnd,
  mm_vmscan_memcg_reclaim_end: parseReclaimEnd,
  mm_vmscan_memcg_softlimit_reclaim_end: parseReclaimEnd,
  mm_vmscan_node_reclaim_end: parseReclaimEnd,
  mm_vmscan_lru_shrink_inactive: parseLruShrinkInactive,
  mm_vmscan_lru_shrink_active: parseLruShrinkActive,
  mm_vmscan_lru_isolate: parseLruIsolate,
  mm_vmscan_writepage: parseWriteFolio,
  mm_vmscan_write_folio: parseWriteFolio,
  mm_vmscan_throttled: parseThrottled,
  mm_vmscan_reclaim_pages: parseReclaimPages,
  mm_shrink_slab_start: parseShrinkSlabStart,
  mm_shrink_slab_end: parseShrinkSlabEnd,

  workqueue_queue_work: parseWorkqueue,
  workqueue_activate_work: parseWorkqueue,
  workqueue_execute_start: parseWorkqueue,
  workqueue_execute_end: parseWorkqueue,

  writeback_dirty_page: parseWriteback,
  writeback_dirty_folio: parseWriteback,
  writeback_queue: parseWritebackWork,
  writeback_exec: parseWritebackWork,
  writeback_start: parseWritebackWork,
  writeback_written: parseWritebackWork,
  writeback_wait: parseWritebackWork,
  writeback_single_inode: parseWritebackSingleInode,
  writeback_single_inode_start: parseWritebackSingleInode,
  writeback_queue_io: parseWritebackQueueIo,
  wbc_writepage: parseWbcWritepage,
  balance_dirty_pages: parseBalanceDirtyPages,
  bdi_dirty_ratelimit: parseBalanceDirtyPages,
  global_dirty_state: parseGlobalDirtyState,
  writeback_dirty_inode_enqueue: parseWritebackInode,
  writeback_sb_inodes_requeue: parseWritebackInode,
  sb_mark_inode_writeback: parseWritebackInode,
  sb_clear_inode_writeback: parseWritebackInode,
  writeback_pages_written: parseWritebackPagesWritten,
};

/**
 * Events whose print format is not key=value, read into the fields in the
 * form trace.dat gives them (as printed, readsAsPrinted): these do not make
 * an event typed. Text of another shape falls back to the generic parser.
 */
export const PRINTED_PARSERS: Readonly<Record<string, FieldParser>> = {
  block_rq_insert: parseBlockRq,
  block_rq_issue: parseBlockRq,
  block_rq_merge: parseBlockRq,
  block_io_start: parseBlockRq,
  block_io_done: parseBlockRq,
  block_rq_complete: parseBlockRqComplete,
  block_rq_requeue: parseBlockRqComplete,
  block_rq_error: parseBlockRqComplete,
  block_bio_queue: parseBlockBio,
  block_bio_backmerge: parseBlockBio,
  block_bio_frontmerge: parseBlockBio,
  block_getrq: parseBlockBio,
  block_split: parseBlockSplit,
  block_dirty_buffer: parseBlockBuffer,
  block_touch_buffer: parseBlockBuffer,
  block_plug: parseBlockPlug,
  block_unplug: parseBlockUnplug,
};

/** Name prefix -> system, for events the text does not qualify. */
const SYSTEM_PREFIXES: ReadonlyArray<readonly [string, string]> = [
  ['sys_enter_', 'syscalls'],
  ['sys_exit_', 'syscalls'],
  ['sched_', 'sched'],
  ['mm_vmscan_', 'vmscan'],
  ['mm_shrink_slab_', 'vmscan'],
  ['workqueue_', 'workqueue'],
  ['writeback_', 'writeback'],
  ['balance_dirty_pages', 'writeback'],
  ['global_dirty_state', 'writeback'],
  ['bdi_dirty_ratelimit', 'writeback'],
  ['wbc_writepage', 'writeback'],
  ['track_foreign_dirty', 'writeback'],
  ['flush_foreign', 'writeback'],
  ['sb_mark_inode_writeback', 'writeback'],
  ['sb_clear_inode_writeback', 'writeback'],
  ['folio_wait_writeback', 'writeback'],
  ['inode_foreign_history', 'writeback'],
  ['inode_switch_wbs', 'writeback'],
  ['mm_page_alloc', 'kmem'],
  ['mm_page_free', 'kmem'],
  ['kmalloc', 'kmem'],
  ['kmem_cache_', 'kmem'],
  ['kfree', 'kmem'],
  ['xfs_', 'xfs'],
  ['ext4_', 'ext4'],
  ['irq_handler_', 'irq'],
  ['softirq_', 'irq'],
  ['block_', 'block'],
  ['timer_', 'timer'],
  ['hrtimer_', 'timer'],
  ['damon_', 'damon'],
  ['mm_compaction_', 'compaction'],
  ['oom_score_adj_update', 'oom'],
  ['mark_victim', 'oom'],
  ['cpu_idle', 'power'],
  ['cpu_frequency', 'power'],
];

const systemCache = new Map<string, string | null>();

/** The system an event belongs to, when known from its name. */
export function systemOf(name: string): string | null {
  const hit = systemCache.get(name);
  if (hit !== undefined) return hit;
  let sys: string | null = null;
  if (
    name === 'kernel_stack' ||
    name === 'user_stack' ||
    name === 'function' ||
    name === 'print' ||
    name === 'bprint' ||
    name === 'bputs'
  )
    sys = 'ftrace';
  else {
    for (const [p, s] of SYSTEM_PREFIXES) {
      if (name.startsWith(p)) {
        sys = s;
        break;
      }
    }
  }
  systemCache.set(name, sys);
  return sys;
}

/** An event's dedicated parser: by its name, or one for a family of names (syscalls). */
function fieldParserOf(name: string): FieldParser | undefined {
  const p = FIELD_PARSERS[name];
  if (p !== undefined) return p;
  if (name.startsWith('sys_enter_')) return parseSyscallEnter;
  if (name.startsWith('sys_exit_')) return parseSyscallExit;
  return undefined;
}

/** Whether the event has a dedicated (typed) parser. */
export function hasTypedParser(name: string): boolean {
  return fieldParserOf(name) !== undefined;
}

/**
 * Whether the text decoders read this event's fields with the generic
 * key=value parser, as printed (fields/values.ts printedValue), rather
 * than with a parser of its own that gives typed values (typed tables'
 * events, writeback's `bdi X:` lines, syscalls). The trace.dat decoder
 * gives exactly these events their fields in printed form, so that one
 * recording's args read alike from every source.
 */
export function readsAsPrinted(name: string, system: string | null): boolean {
  return fieldParserOf(name) === undefined && (system ?? systemOf(name)) !== 'writeback';
}

/**
 * Whether the event's text is read by the generic key=value parser alone
 * (parseGenericRange: no parser of its own, not a block or writeback
 * event), so that fields/untyped_kv.ts reads it as that parser does.
 */
export function readsGenericKv(name: string): boolean {
  return fieldParserOf(name) === undefined && PRINTED_PARSERS[name] === undefined && systemOf(name) !== 'writeback';
}

/**
 * The key=value spec of the writeback parser that reads the event's
 * `bdi NAME: k=v ...` text (writebackBdiRange: writeback events without a
 * parser of their own), for fields/untyped_kv.ts; null for other events.
 */
export function writebackBdiSpec(name: string): KvSpec | null {
  if (fieldParserOf(name) !== undefined || PRINTED_PARSERS[name] !== undefined || systemOf(name) !== 'writeback')
    return null;
  return BDI_KV_SPECS.get(parseWriteback) ?? null;
}

/** Fields of one event: dedicated parser if registered, else generic. */
export function parseEventFields(name: string, args: string): EventFields | null {
  const p = fieldParserOf(name);
  if (p) return p(args);
  const printed = PRINTED_PARSERS[name];
  if (printed !== undefined) return printed(args) ?? parseGeneric(args);
  // other writeback events share the `bdi X:` prefix
  if (args.startsWith('bdi ') && systemOf(name) === 'writeback') return parseWriteback(args) ?? parseGeneric(args);
  return parseGeneric(args);
}

// ---------------------------------------------------------------------------
// Event names as the decoder meets them: one shared record per distinct name
// ---------------------------------------------------------------------------

/** Everything the decoder needs per event name, resolved once. */
export interface EventNameInfo {
  /** The name; the same string instance for every event of that name. */
  readonly name: string;
  readonly system: string | null;
  /** parseEventFields(name, args) on args = t.slice(s, e). */
  readonly parse: RangeParser;
  /** Hash of the name's characters (nameHash). */
  readonly hash: number;
  /** The name as the line prints it: `name` itself, but for an alias (PRINTED_ALIASES). */
  readonly printed: string;
  /** `printed` as bytes, for comparing a line's bytes with it (parseTailBytes). */
  readonly bytes: ByteKey;
  /** The printed name is the start of the event's own text (an alias): the arguments begin with it. */
  readonly argsFromName: boolean;
}

/**
 * Events the kernel's text prints without their name: the word before the
 * colon is the first of their arguments. A trace_marker write is ftrace's
 * print event, `%ps: %s` of ip and message: `tracing_mark_write: message`.
 */
const PRINTED_ALIASES: ReadonlyMap<string, string> = new Map([['tracing_mark_write', 'print']]);

/** Running hash of an event name's characters: h = nameHashStep(h, c), starting at 0. */
export function nameHashStep(h: number, c: number): number {
  return (Math.imul(h, 31) + c) | 0;
}

function hashOf(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = nameHashStep(h, s.charCodeAt(i));
  return h;
}

const parseWritebackRange = RANGE_PARSERS.get(parseWriteback)!;

function writebackBdiRange(t: string, s: number, e: number, args: string, b: Uint8Array | null): EventFields | null {
  if (args.startsWith('bdi ')) return parseWritebackRange(t, s, e, args, b) ?? parseGenericRange(t, s, e, args, b);
  return parseGenericRange(t, s, e, args, b);
}

function rangeParserFor(name: string): RangeParser {
  return afterFailedToParse(printedRangeParser(name));
}

function printedRangeParser(name: string): RangeParser {
  const p = fieldParserOf(name);
  if (p) {
    const r = RANGE_PARSERS.get(p);
    if (r !== undefined) return r;
    return (_t, _s, _e, args) => p(args);
  }
  if (systemOf(name) === 'writeback') return writebackBdiRange;
  const printed = PRINTED_PARSERS[name];
  if (printed !== undefined) return (t, s, e, args, b) => printed(args) ?? parseGenericRange(t, s, e, args, b);
  return parseGenericRange;
}

const FAILED_TO_PARSE = '[FAILED TO PARSE]';

/**
 * libtraceevent prints `[FAILED TO PARSE]` and then the raw fields when it
 * cannot evaluate an event's print fmt (an older trace-cmd reading a newer
 * kernel's formats): when the parser fails on such a text, it reads what
 * follows the marker (raw_fields.ts). The raw text keeps the marker.
 */
function afterFailedToParse(p: RangeParser): RangeParser {
  return (t, s, e, args, b) => {
    const f = p(t, s, e, args, b);
    if (f !== null || !t.startsWith(FAILED_TO_PARSE, s)) return f;
    let r = s + FAILED_TO_PARSE.length;
    while (r < e && t.charCodeAt(r) === 32) r++;
    return p(t, r, e, args.slice(r - s), b);
  };
}

const NAME_BUCKETS = 1024;
/** Distinct names remembered; beyond that (garbage input) each lookup builds a fresh record. */
const MAX_NAMES = 8192;
const nameBuckets: EventNameInfo[][] = Array.from({ length: NAME_BUCKETS }, () => []);
let nameCount = 0;

function newNameInfo(printed: string, hash: number): EventNameInfo {
  const alias = PRINTED_ALIASES.get(printed);
  const name = alias ?? printed;
  return {
    name,
    system: systemOf(name),
    parse: rangeParserFor(name),
    hash,
    printed,
    bytes: asciiBytes(printed),
    argsFromName: alias !== undefined,
  };
}

/** The record of the event name t[s, e) whose nameHash is `hash`. */
export function eventNameAt(t: string, s: number, e: number, hash: number): EventNameInfo {
  const bucket = nameBuckets[hash & (NAME_BUCKETS - 1)]!;
  const len = e - s;
  for (let i = 0; i < bucket.length; i++) {
    const info = bucket[i]!;
    if (info.hash === hash && info.printed.length === len && sameChars(t, s, info.printed)) return info;
  }
  const info = newNameInfo(flat(t.slice(s, e)), hash);
  if (nameCount < MAX_NAMES) {
    bucket.push(info);
    nameCount++;
  }
  return info;
}

/** The record of an event name given as a string. */
export function eventNameInfo(name: string): EventNameInfo {
  return eventNameAt(name, 0, name.length, hashOf(name));
}
