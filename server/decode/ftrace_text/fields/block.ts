/**
 * The block layer's events (include/trace/events/block.h), whose print
 * formats are positional, not key=value:
 *
 *   block_rq_issue:    254,0 WSM 4096 () 319291408 + 8 0x2,0,4 [kworker/u8:2]
 *   block_rq_complete: 254,0 RA () 65994752 + 8192 0x2,0,4 [0]
 *   block_bio_queue:   254,0 WSM 319291408 + 8 [kworker/u8:2]
 *   block_split:       254,0 W 2048 / 2304 [kworker/1:0]
 *   block_plug:        [dbench]            block_unplug: [dbench] 1
 *   block_dirty_buffer: 254,0 sector=39911426 size=4096
 *
 * Read into the fields trace.dat gives these events (the format's field
 * names and order, values as printed: event_decoder.ts asPrinted): `dev` the
 * device number (MKDEV(major, minor) = major << 20 | minor, printed as
 * `major,minor`), `cmd` the text between the parentheses, `ioprio` the class
 * as printed (the first of `class,hint,level`), `comm` or `error` between
 * the brackets. These parsers do not make an event typed
 * (index.ts readsAsPrinted): only the generic parser could not read them.
 * Text of another shape (another kernel's format) returns null and the
 * generic parser reads it.
 */
import type { EventFields } from '../../decoded_event.ts';

/** A printed unsigned decimal: a number, or a bigint past 2^53. */
function num(s: string): number | bigint {
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : BigInt(s);
}

/** MKDEV(major, minor), as the kernel's dev_t (MINORBITS = 20). */
function dev(major: string, minor: string): number {
  return Number(major) * 1048576 + Number(minor);
}

// requests: dev rwbs [bytes] (cmd) sector + nr_sector [ioprio class,hint,level] [comm or error]
const RQ = /^(\d+),(\d+) (\S*) (?:(\d+) )?\((.*)\) (\d+) \+ (\d+)(?: ([^ ,]+),\d+,\d+)? \[(.*)\]$/;
const BIO = /^(\d+),(\d+) (\S*) (\d+) \+ (\d+) \[(.*)\]$/;
const SPLIT = /^(\d+),(\d+) (\S*) (\d+) \/ (\d+) \[(.*)\]$/;
const BUFFER = /^(\d+),(\d+) sector=(\d+) size=(\d+)$/;
const PLUG = /^\[(.*)\]$/;
const UNPLUG = /^\[(.*)\] (\d+)$/;

/** block_rq_insert, _issue, _merge, block_io_start, _done: with bytes and comm. */
export function parseBlockRq(args: string): EventFields | null {
  const m = RQ.exec(args);
  if (m === null || m[4] === undefined) return null;
  const f: EventFields = { dev: dev(m[1]!, m[2]!), sector: num(m[6]!), nr_sector: num(m[7]!), bytes: num(m[4]) };
  if (m[8] !== undefined) f.ioprio = m[8];
  f.rwbs = m[3]!;
  f.comm = m[9]!;
  f.cmd = m[5]!;
  return f;
}

/** block_rq_complete, _requeue, _error: without bytes, the error number in brackets. */
export function parseBlockRqComplete(args: string): EventFields | null {
  const m = RQ.exec(args);
  if (m === null || m[4] !== undefined || !/^-?\d+$/.test(m[9]!)) return null;
  const f: EventFields = { dev: dev(m[1]!, m[2]!), sector: num(m[6]!), nr_sector: num(m[7]!), error: Number(m[9]) };
  if (m[8] !== undefined) f.ioprio = m[8];
  f.rwbs = m[3]!;
  f.cmd = m[5]!;
  return f;
}

/** block_bio_queue, _backmerge, _frontmerge, block_getrq: a bio and its submitter. */
export function parseBlockBio(args: string): EventFields | null {
  const m = BIO.exec(args);
  if (m === null) return null;
  return { dev: dev(m[1]!, m[2]!), sector: num(m[4]!), nr_sector: num(m[5]!), rwbs: m[3]!, comm: m[6]! };
}

export function parseBlockSplit(args: string): EventFields | null {
  const m = SPLIT.exec(args);
  if (m === null) return null;
  return { dev: dev(m[1]!, m[2]!), sector: num(m[4]!), new_sector: num(m[5]!), rwbs: m[3]!, comm: m[6]! };
}

/** block_dirty_buffer, block_touch_buffer. */
export function parseBlockBuffer(args: string): EventFields | null {
  const m = BUFFER.exec(args);
  if (m === null) return null;
  return { dev: dev(m[1]!, m[2]!), sector: num(m[3]!), size: num(m[4]!) };
}

export function parseBlockPlug(args: string): EventFields | null {
  const m = PLUG.exec(args);
  return m === null ? null : { comm: m[1]! };
}

export function parseBlockUnplug(args: string): EventFields | null {
  const m = UNPLUG.exec(args);
  return m === null ? null : { nr_rq: Number(m[2]), comm: m[1]! };
}
