/**
 * A record of the native framer (frame_lines.c) read into an EventLine, as
 * parseNormalLineBytes would fill it for the same line: the framer gives the
 * numbers and positions, this adds what needs JavaScript's tables (the task
 * name's string, the event name's record).
 */
import type { EventNameInfo } from '../fields/index.ts';
import { commOfPadded, knownNameBytes, type EventLine } from '../parse_event_line.ts';
import {
  KIND_NEW_HEAD,
  R_ARGS_END,
  R_ARGS_START,
  R_COLON,
  R_COMM_END,
  R_CPU,
  R_FLAGS,
  R_KIND,
  R_NAME_ID,
  R_NAME_START,
  R_NSEC,
  R_PID,
  R_PREEMPT,
  R_SECS,
  R_START,
  R_TGID,
} from './native_framer.ts';

/**
 * The head the framer gave last (a record with KIND_NEW_HEAD): the framer
 * marks a line whose head has the same bytes as that one's, and equal bytes
 * read the same. Module state, as the framer's own memory of it is.
 */
let headCpu = 0;
let headPid = 0;
let headTgid: number | null = null;
let headComm: string | null = null;

/** Event name records by the framer's name id (ids are the framer's, for the whole process). */
const namesById: (EventNameInfo | undefined)[] = [];

/**
 * Fills `out` from the FAST record at rec[o...] of a line of `block`. False:
 * read the line in JavaScript instead (an event name no line has introduced
 * yet).
 */
export function readFramedLine(block: Uint8Array, rec: Int32Array, o: number, out: EventLine): boolean {
  // The head first: the framer remembers it whatever becomes of this line.
  if ((rec[o + R_KIND]! & KIND_NEW_HEAD) !== 0) {
    headCpu = rec[o + R_CPU]!;
    headPid = rec[o + R_PID]!;
    const tgid = rec[o + R_TGID]!;
    headTgid = tgid < 0 ? null : tgid;
    headComm = commOfPadded(block, rec[o + R_START]!, rec[o + R_COMM_END]!);
  }
  const id = rec[o + R_NAME_ID]!;
  let info = namesById[id];
  if (info === undefined) {
    // Known once a line has named it (parseTail registers names).
    info = knownNameBytes(block, rec[o + R_NAME_START]!, rec[o + R_COLON]!);
    if (info === undefined) return false;
    namesById[id] = info;
  }
  out.cpu = headCpu;
  out.pid = headPid;
  out.tgid = headTgid;
  out.comm = headComm;
  out.instance = null;
  const flags = rec[o + R_FLAGS]!;
  if (flags < 0) {
    out.flags = null;
    out.preemptCount = null;
  } else {
    out.flags = flags;
    out.preemptCount = rec[o + R_PREEMPT]!;
  }
  out.secs = rec[o + R_SECS]!;
  out.tsInUs = false;
  out.nsec = rec[o + R_NSEC]!;
  out.nameInfo = info;
  out.name = info.name;
  out.args = '';
  out.argsText = null;
  const argsStart = rec[o + R_ARGS_START]!;
  const argsEnd = rec[o + R_ARGS_END]!;
  if (info.argsFromName) {
    // The text from the name on (parseTailBytes); only blanks after the colon: it ends at the colon.
    out.argsStart = rec[o + R_NAME_START]!;
    out.argsEnd = argsStart === argsEnd ? rec[o + R_COLON]! + 1 : argsEnd;
  } else {
    out.argsStart = argsStart;
    out.argsEnd = argsEnd;
  }
  out.argsBytes = block;
  return true;
}
