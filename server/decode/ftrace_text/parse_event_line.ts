/**
 * The grammar of one ftrace text line, scanned by hand (no per-line regex on
 * the hot path).
 *
 * Event lines, all producers:
 *
 *   tracefs `trace` / `trace_pipe` (kernel trace_print_context):
 *     `<comm>-<pid> [(<tgid>|-------)] [<cpu>] [<flags>] <secs>.<frac>: <name>: <args>`
 *     comm right-aligned in 16 columns, may contain spaces, dashes, digits,
 *     slashes, colons; the pid is the LAST `-digits` before the tgid/cpu
 *     column. flags: 4 (`d..2`, older kernels) or 5 (`d..2.`) characters.
 *   trace-cmd report: same shape (`%16s-%-5d [%03d]`), optional flags,
 *     event names padded after the colon, optionally a `name: ` prefix per
 *     line when the file has several buffers (instances).
 *   trace-cmd report -l (latency format): `%8.8s-%-5d %3d<flags> <ts>: ...`,
 *     comm cut to 8 characters, CPU digits joined to the flags.
 *
 * Timestamps become exact integers (seconds, nanoseconds): never floats.
 */
import { TRACE_FLAGS as F } from '../decoded_event.ts';
import { eventNameAt, eventNameInfo, nameHashStep, type EventNameInfo } from './fields/index.ts';
import { newMutableByteKey, sameBytes, setByteKey } from './fields/byte_keys.ts';
import { flat, latin1, RangeMemo } from './fields/intern.ts';

/**
 * How the flags column is to be read: the kernel's reading, the only one any producer needs
 * (a 'libtraceevent' reading of N was never selected and is gone; the parameter stays so the
 * parse functions' signatures did not change in the tidy-up).
 */
export type FlagStyle = 'kernel';

/** A parsed event line. Reused between lines by the decoder (no per-line allocation). */
export interface EventLine {
  comm: string | null;
  pid: number;
  tgid: number | null;
  cpu: number;
  flags: number | null;
  preemptCount: number | null;
  /** Whole seconds of the timestamp. */
  secs: number;
  /** Nanoseconds within the second. */
  nsec: number;
  name: string;
  /** The shared record of `name` (system, field parser). */
  nameInfo: EventNameInfo | null;
  /**
   * Argument text, padding after `name:` removed: args ===
   * argsText.slice(argsStart, argsEnd) (argsText: the line). A line read on
   * bytes (parseNormalLineBytes) has no strings: argsText is null, args empty,
   * and the text is argsBytes[argsStart, argsEnd); eventArgs() makes the string.
   */
  args: string;
  argsText: string | null;
  argsStart: number;
  argsEnd: number;
  /** The bytes the arguments are in, for a line read on bytes; else null. */
  argsBytes: Uint8Array | null;
  /** Buffer (instance) prefix printed by trace-cmd report for multi-buffer files, else null. */
  instance: string | null;
  /**
   * The timestamp was the kernel's latency format's (`options/latency-format`,
   * the latency tracers' output): whole microseconds since the trace began,
   * `19016us!:`. Set by the string parser; read for the first event only.
   */
  tsInUs: boolean;
}

export function newEventLine(): EventLine {
  return {
    comm: null,
    pid: 0,
    tgid: null,
    cpu: 0,
    flags: null,
    preemptCount: null,
    secs: 0,
    nsec: 0,
    name: '',
    nameInfo: null,
    args: '',
    argsText: '',
    argsStart: 0,
    argsEnd: 0,
    argsBytes: null,
    instance: null,
    tsInUs: false,
  };
}

const SP = 32;
const C0 = 48;
const C9 = 57;

function isDigit(c: number): boolean {
  return c >= C0 && c <= C9;
}

function hexVal(c: number): number {
  if (c >= C0 && c <= C9) return c - C0;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** 10^(9-k) for k fractional digits. */
const FRAC_SCALE = [1e9, 1e8, 1e7, 1e6, 1e5, 1e4, 1e3, 1e2, 1e1, 1];
/** The kernel latency format's marks after `<n>us` for the gap to the next event: >1 s, >100 ms, >10 ms, >1 ms, >100 µs, >10 µs, else blank. */
const LATENCY_MARKS = '$@*#!+ ';

// ---------------------------------------------------------------------------
// Flags column
// ---------------------------------------------------------------------------

/**
 * irqs-off column (kernel trace_print_lat_fmt): D = irqs off + BH off,
 * d = irqs off, b = BH off, X = irqs-off not supported (old kernels).
 */
function irqsOffBits(c: number): number {
  switch (c) {
    case 46:
      return 0; // .
    case 100:
      return F.IRQS_OFF; // d
    case 68:
      return F.IRQS_OFF | F.BH_OFF; // D
    case 98:
      return F.BH_OFF; // b
    case 88:
      return F.IRQS_NOSUPPORT; // X
    default:
      return -1;
  }
}

/**
 * need-resched column. Kernel: N = TIF_NEED_RESCHED + PREEMPT_NEED_RESCHED,
 * n = TIF only, p = PREEMPT only; 6.13+ lazy variants L/l/b/B where the lazy
 * bit reuses 0x02 (formerly IRQS_NOSUPPORT).
 */
function needReschedBits(c: number, _style: FlagStyle): number {
  switch (c) {
    case 46:
      return 0; // .
    case 78:
      return F.NEED_RESCHED | F.PREEMPT_RESCHED; // N
    case 110:
      return F.NEED_RESCHED; // n
    case 112:
      return F.PREEMPT_RESCHED; // p
    case 76:
      return 0x02 | F.PREEMPT_RESCHED; // L: lazy + preempt
    case 108:
      return 0x02; // l: lazy
    case 98:
      return F.NEED_RESCHED | 0x02; // b: need + lazy
    case 66:
      return F.NEED_RESCHED | 0x02 | F.PREEMPT_RESCHED; // B
    default:
      return -1;
  }
}

/** hardirq/softirq column: Z nmi+hardirq, z nmi, H hard+soft, h, s; b = BH off on 5.18-5.19 kernels. */
function hardSoftBits(c: number): number {
  switch (c) {
    case 46:
      return 0; // .
    case 104:
      return F.HARDIRQ; // h
    case 115:
      return F.SOFTIRQ; // s
    case 72:
      return F.HARDIRQ | F.SOFTIRQ; // H
    case 122:
      return F.NMI; // z
    case 90:
      return F.NMI | F.HARDIRQ; // Z
    case 98:
      return F.BH_OFF; // b
    default:
      return -1;
  }
}

/**
 * Parses a flags token `line[start, end)` (3 flag characters, then the
 * preempt depth digit and optionally the migrate-disable digit, `.` = 0)
 * into out.flags / out.preemptCount. Returns false if it is not a flags token.
 */
export function parseFlagsToken(line: string, start: number, end: number, style: FlagStyle, out: EventLine): boolean {
  const n = end - start;
  if (n < 4 || n > 6) return false;
  const a = irqsOffBits(line.charCodeAt(start));
  const b = needReschedBits(line.charCodeAt(start + 1), style);
  const c = hardSoftBits(line.charCodeAt(start + 2));
  if (a < 0 || b < 0 || c < 0) return false;
  const d = line.charCodeAt(start + 3);
  const depth = d === 46 ? 0 : hexVal(d);
  if (depth < 0) return false;
  let migrate = 0;
  if (n >= 5) {
    const m = line.charCodeAt(start + 4);
    migrate = m === 46 ? 0 : hexVal(m);
    if (migrate < 0) return false;
  }
  // a 6th character (old RT kernels' lock depth) carries nothing we store
  out.flags = a | b | c;
  out.preemptCount = depth | (migrate << 4);
  return true;
}

// ---------------------------------------------------------------------------
// Timestamp, name, args (shared tail of every format)
// ---------------------------------------------------------------------------

/**
 * Parses `<secs>[.<frac>]: <name>: <args>` starting at `p` (at the first
 * timestamp digit). Returns false if the tail does not have that shape.
 */
function parseTail(line: string, p: number, out: EventLine, n: number): boolean {
  let tsInUs = false;
  let secs = 0;
  const s0 = p;
  let c = 0;
  while (p < n && isDigit((c = line.charCodeAt(p)))) {
    secs = secs * 10 + (c - C0);
    p++;
  }
  const intDigits = p - s0;
  if (intDigits === 0) return false;
  let nsec = 0;
  if (p < n && c === 46) {
    // '.'
    p++;
    const f0 = p;
    let frac = 0;
    while (p < n && isDigit((c = line.charCodeAt(p)))) {
      if (p - f0 < 9) frac = frac * 10 + (c - C0);
      p++;
    }
    const k = p - f0;
    if (k === 0) return false;
    nsec = frac * FRAC_SCALE[Math.min(k, 9)]!;
    if (intDigits > 15) return false; // seconds beyond any real uptime: not a timestamp
  } else if (
    p + 3 < n &&
    c === 117 &&
    line.charCodeAt(p + 1) === 115 &&
    LATENCY_MARKS.includes(line[p + 2]!) &&
    line.charCodeAt(p + 3) === 58
  ) {
    // `19016us!:`: the kernel's latency format, µs since the trace began,
    // then a mark for the gap to the next event (trace_find_mark)
    if (intDigits > 15) return false;
    nsec = (secs % 1e6) * 1000;
    secs = Math.floor(secs / 1e6);
    p += 3;
    tsInUs = true;
  } else {
    // no fraction: a raw clock value (counter / x86-tsc clocks), taken as ns
    if (intDigits > 15) {
      const v = BigInt(line.slice(s0, p));
      secs = Number(v / 1_000_000_000n);
      nsec = Number(v % 1_000_000_000n);
    } else {
      nsec = secs % 1e9;
      secs = Math.floor(secs / 1e9);
    }
  }
  if (p >= n || line.charCodeAt(p) !== 58) return false; // ':'
  p++;
  if (p < n && line.charCodeAt(p) !== SP) return false;
  while (p < n && line.charCodeAt(p) === SP) p++;
  p = skipTsDiff(line, p, n);
  out.secs = secs;
  out.nsec = nsec;
  out.tsInUs = tsInUs;
  return parseNamed(line, p, out, n);
}

/**
 * Parses `<name>: <args>` (or a printer without a name: function tracer,
 * stack traces, syscalls) starting at `p`, the first character after the
 * timestamp's colon and its blanks.
 */
function parseNamed(line: string, p: number, out: EventLine, n: number): boolean {
  let c = 0;
  // event name: up to ':' (no spaces)
  const nameStart = p;
  const colon = line.indexOf(':', p);
  if (colon > p && colon < n) {
    const known = namesByText.get(line, p, colon);
    if (known !== undefined) return setNamed(line, known.argsFromName ? p : colon + 1, n, known, out);
  }
  let h = 0;
  while (p < n) {
    c = line.charCodeAt(p);
    if (c === 58 || c === SP || c === 40) break;
    h = nameHashStep(h, c);
    p++;
  }
  if (p < n && c !== 58 && p > nameStart + 4 && line.startsWith('sys_', nameStart)) {
    // The kernel prints syscall events as calls, without the event's name:
    // `sys_openat(dfd: 0xffffff9c, ...)` is sys_enter_openat and
    // `sys_openat -> 0x3` is sys_exit_openat (fields/syscalls.ts).
    const call = line.slice(nameStart + 4, p);
    if (c === 40 && line.charCodeAt(n - 1) === 41)
      return setArgs(line, p + 1, n - 1, eventNameInfo('sys_enter_' + call), out);
    if (c === SP && line.startsWith(' -> ', p)) return setArgs(line, p + 4, n, eventNameInfo('sys_exit_' + call), out);
  }
  // Not a syscall: a '(' is part of the name, as before.
  for (; p < n; p++) {
    c = line.charCodeAt(p);
    if (c === 58 || c === SP) break;
    h = nameHashStep(h, c);
  }
  if (p < n && c === 58 && p > nameStart) {
    const info = eventNameAt(line, nameStart, p, h);
    namesByText.set(line, nameStart, p, info.printed, info);
    return setNamed(line, info.argsFromName ? nameStart : p + 1, n, info, out);
  }
  // No `name:`. Two kernel printers do this: the function tracer
  // (`func <-parent`) and stack traces (`<stack trace>`).
  const rest = line.slice(nameStart, n).trim();
  if (rest.startsWith('<stack trace>')) return setSpecial(out, 'kernel_stack', '');
  if (rest.startsWith('<user stack trace>')) return setSpecial(out, 'user_stack', '');
  if (rest.indexOf(' <-') > 0) return setSpecial(out, 'function', rest);
  return false;
}

/**
 * `trace-cmd report --ts-diff` prints, between the timestamp and the event
 * name, the nanoseconds since the previous event: `5200.905061: (+96775)
 * sched_waking: ...` (the first event has blanks there). Returns where the
 * name starts: past that `(+digits)` token and its blanks if one is at p,
 * else p. The delta is not kept: the timestamps give it.
 */
function skipTsDiff(line: string, p: number, n: number): number {
  if (line.charCodeAt(p) !== 40 || line.charCodeAt(p + 1) !== 43) return p; // '(+'
  let q = p + 2;
  while (q < n && isDigit(line.charCodeAt(q))) q++;
  if (q === p + 2 || q >= n || line.charCodeAt(q) !== 41) return p; // ')'
  q++;
  while (q < n && line.charCodeAt(q) === SP) q++;
  return q;
}

/** Event names by their text, looked up in place (names hold no ':' or ' '). */
const namesByText = new RangeMemo<EventNameInfo>(10, 4);

/** Name found, args exactly line[s, e). */
function setArgs(line: string, s: number, e: number, info: EventNameInfo, out: EventLine): true {
  out.nameInfo = info;
  out.name = info.name;
  out.args = line.slice(s, e);
  out.argsText = line;
  out.argsStart = s;
  out.argsEnd = e;
  out.argsBytes = null;
  return true;
}

/** Name found, args after the padding from p to n. */
function setNamed(line: string, p: number, n: number, info: EventNameInfo, out: EventLine): true {
  out.nameInfo = info;
  out.name = info.name;
  while (p < n && line.charCodeAt(p) === SP) p++;
  let e = n;
  while (e > p && line.charCodeAt(e - 1) === SP) e--;
  out.args = p === 0 && e === line.length ? line : line.slice(p, e);
  out.argsText = line;
  out.argsStart = p;
  out.argsEnd = e;
  out.argsBytes = null;
  return true;
}

function setSpecial(out: EventLine, name: string, args: string): true {
  const info = eventNameInfo(name);
  out.nameInfo = info;
  out.name = info.name;
  out.args = args;
  out.argsText = args;
  out.argsStart = 0;
  out.argsEnd = args.length;
  out.argsBytes = null;
  return true;
}

// ---------------------------------------------------------------------------
// Head: `comm-pid [(tgid)]`, scanned backwards from the CPU column
// ---------------------------------------------------------------------------

/** Task names by their padded text (`   kswapd0`): no scan, no copy per line. */
const commsByText = new RangeMemo<string>(10, 4);

/**
 * Parses `comm-pid` in line[from, end] (inclusive end, trailing spaces
 * already skipped). Returns false if there is no `-digits` at the end.
 */
function parseCommPid(line: string, from: number, end: number, out: EventLine): boolean {
  let e = end;
  let pid = 0;
  let mult = 1;
  while (e >= from) {
    const c = line.charCodeAt(e);
    if (!isDigit(c)) break;
    pid += (c - C0) * mult;
    mult *= 10;
    e--;
  }
  if (e === end || e < from || line.charCodeAt(e) !== 45) return false; // '-'
  let comm: string | undefined = e > from ? commsByText.get(line, from, e) : undefined;
  if (comm === undefined) {
    let s = from;
    while (s < e && line.charCodeAt(s) === SP) s++;
    comm = line.slice(s, e);
    if (e > from) {
      comm = flat(comm);
      commsByText.set(line, from, e, flat(line.slice(from, e)), comm);
    }
  }
  out.comm = comm === '<...>' ? null : comm;
  out.pid = pid;
  return true;
}

/**
 * Normal (non-latency) line: anchored at the first `[digits]` column.
 * `style` says how to read a flags column if there is one. The line is
 * `line[start, end)` (default: all of it).
 */
export function parseNormalLine(
  line: string,
  style: FlagStyle,
  out: EventLine,
  allowInstancePrefix: boolean,
  start = 0,
  end = line.length,
): boolean {
  const n = end;
  let b = indexOfBracket(line, start, n);
  let cpu = 0;
  let j = 0;
  for (;;) {
    if (b < 0) return false;
    j = b + 1;
    cpu = 0;
    let c = 0;
    while (j < n && isDigit((c = line.charCodeAt(j)))) {
      cpu = cpu * 10 + (c - C0);
      j++;
    }
    if (j > b + 1 && j < n && c === 93 && b > start && line.charCodeAt(b - 1) === SP) break; // ']'
    b = indexOfBracket(line, b + 1, n);
  }
  out.cpu = cpu;
  // --- head, backwards from '['
  let e = b - 1;
  while (e >= start && line.charCodeAt(e) === SP) e--;
  out.tgid = null;
  if (e >= start && line.charCodeAt(e) === 41) {
    // ')' : record-tgid column
    const o = line.lastIndexOf('(', e);
    if (o < start) return false;
    let t = 0;
    let digits = 0;
    for (let k = o + 1; k < e; k++) {
      const c = line.charCodeAt(k);
      if (isDigit(c)) {
        t = t * 10 + (c - C0);
        digits++;
      } else if (c !== SP && c !== 45) return false;
    }
    out.tgid = digits > 0 ? t : null;
    e = o - 1;
    while (e >= start && line.charCodeAt(e) === SP) e--;
  }
  let from = start;
  out.instance = null;
  if (allowInstancePrefix) {
    // `   name: <comm>-<pid>`: trace-cmd report's per-buffer prefix
    let s = start;
    while (s < e && line.charCodeAt(s) === SP) s++;
    const colon = line.indexOf(': ', s);
    if (colon > s && colon < e) {
      const pfx = line.slice(s, colon);
      if (pfx.indexOf(' ') < 0) {
        out.instance = pfx;
        from = colon + 2;
      }
    }
  }
  if (!parseCommPid(line, from, e, out)) return false;
  // --- after ']': optional flags, then timestamp
  let p = j + 1;
  while (p < n && line.charCodeAt(p) === SP) p++;
  if (p >= n) return false;
  out.flags = null;
  out.preemptCount = null;
  if (!isDigit(line.charCodeAt(p))) {
    let q = p;
    while (q < n && line.charCodeAt(q) !== SP) q++;
    if (!parseFlagsToken(line, p, q, style, out)) return false;
    p = q;
    while (p < n && line.charCodeAt(p) === SP) p++;
  }
  return parseTail(line, p, out, n);
}

/** First '[' in line[from, end), or -1. */
function indexOfBracket(line: string, from: number, end: number): number {
  const b = line.indexOf('[', from);
  return b < end ? b : -1;
}

/**
 * Latency-format line (`trace-cmd report -l`): `%8.8s-%-5d %3d<flags> <ts>: ...`.
 * The comm is at most 8 characters (cut by the printer), right-aligned.
 */
export function parseLatencyLine(
  line: string,
  style: FlagStyle,
  out: EventLine,
  start = 0,
  end = line.length,
): boolean {
  const n = end;
  // Find `-<pid> +<cpu><flag char>`: the first '-' followed by digits,
  // spaces, digits and a non-digit, non-space character.
  let d = indexOfDash(line, start, n);
  while (d >= 0) {
    let p = d + 1;
    let pid = 0;
    while (p < n && isDigit(line.charCodeAt(p))) {
      pid = pid * 10 + (line.charCodeAt(p) - C0);
      p++;
    }
    if (p > d + 1 && p < n && line.charCodeAt(p) === SP) {
      while (p < n && line.charCodeAt(p) === SP) p++;
      let cpu = 0;
      const c0 = p;
      while (p < n && isDigit(line.charCodeAt(p))) {
        cpu = cpu * 10 + (line.charCodeAt(p) - C0);
        p++;
      }
      if (p > c0 && p < n && line.charCodeAt(p) !== SP) {
        let q = p;
        while (q < n && line.charCodeAt(q) !== SP) q++;
        if (parseFlagsToken(line, p, q, style, out)) {
          let s = start;
          while (s < d && line.charCodeAt(s) === SP) s++;
          const comm = line.slice(s, d);
          out.comm = comm === '<...>' ? null : comm;
          out.pid = pid;
          out.cpu = cpu;
          out.tgid = null;
          out.instance = null;
          while (q < n && line.charCodeAt(q) === SP) q++;
          return parseTail(line, q, out, n);
        }
      }
    }
    d = indexOfDash(line, d + 1, n);
  }
  return false;
}

/**
 * The kernel's verbose latency format (options/latency-format and
 * options/verbose): `comm pid cpu flags preempt idx [ts] abs (+rel): name: args`,
 *
 *     `            bash   17846   1 1 00000002 00000000 [5df5bd46] 19.149ms (+0.335ms): sched_switch: ...`
 *
 * with the task name right-aligned in 16 columns, the record's flags as the
 * decimal of its TRACE_FLAG_* bits (common_flags as stored), the preempt
 * depth in hex, and the timestamp as hex microseconds of the trace clock
 * (kernel/trace/trace_output.c, trace_print_lat_context).
 */
const VERBOSE_HEAD =
  /^ *(.*?) +(\d+) +(\d+) +(\d+) +([0-9a-f]{8}) +[0-9a-f]{8,16} +\[([0-9a-f]{1,16})\] +\d+\.\d{3}ms +\(\+\d+\.\d{3}ms\): +/;

export function parseVerboseLatencyLine(line: string, out: EventLine, start = 0, end = line.length): boolean {
  const head = line.slice(start, Math.min(end, start + 160));
  const m = VERBOSE_HEAD.exec(head);
  if (m === null || m[1] === '') return false;
  const us = parseInt(m[6]!, 16);
  const flags = Number(m[4]);
  if (!Number.isSafeInteger(us) || flags > 0xff) return false;
  out.comm = m[1] === '<...>' ? null : m[1]!;
  out.pid = Number(m[2]);
  out.cpu = Number(m[3]);
  out.tgid = null;
  out.instance = null;
  out.flags = flags;
  out.preemptCount = parseInt(m[5]!, 16) & 0xf;
  out.secs = Math.floor(us / 1e6);
  out.nsec = (us % 1e6) * 1000;
  out.tsInUs = false;
  return parseNamed(line, start + m[0].length, out, end);
}

/** First '-' in line[from, end), or -1. */
function indexOfDash(line: string, from: number, end: number): number {
  for (let i = from; i < end; i++) if (line.charCodeAt(i) === 45) return i;
  return -1;
}

// ---------------------------------------------------------------------------
// The common case on bytes: a plain ASCII line of a normal (non-latency,
// single-buffer) file, read without making a string of it. Reading a
// Uint8Array is several times faster than charCodeAt, and no string of the
// block or line is made: strings are made only for task and event names not
// seen before (then remembered). Whenever these functions are unsure they
// return false and the caller reads the line with the string functions
// above, the definition (byte_path.test.ts checks they agree).
// ---------------------------------------------------------------------------

/** parseFlagsToken on bytes. */
function parseFlagsTokenBytes(b: Uint8Array, start: number, end: number, style: FlagStyle, out: EventLine): boolean {
  const n = end - start;
  if (n < 4 || n > 6) return false;
  const x = irqsOffBits(b[start]!);
  const y = needReschedBits(b[start + 1]!, style);
  const z = hardSoftBits(b[start + 2]!);
  if (x < 0 || y < 0 || z < 0) return false;
  const d = b[start + 3]!;
  const depth = d === 46 ? 0 : hexVal(d);
  if (depth < 0) return false;
  let migrate = 0;
  if (n >= 5) {
    const m = b[start + 4]!;
    migrate = m === 46 ? 0 : hexVal(m);
    if (migrate < 0) return false;
  }
  out.flags = x | y | z;
  out.preemptCount = depth | (migrate << 4);
  return true;
}

/**
 * The last two event names parseTailBytes found: a task's events come in runs
 * (isolate, shrink_inactive, isolate, ...), so a line's name is usually one
 * of them, and comparing its bytes with a name is cheaper than scanning for
 * the colon and hashing. The scan and the lookup stay the definition: a name
 * holds no ':' or ' ', so `name:` at p is exactly what the scan would find.
 */
let lastNameBytes: EventNameInfo | null = null;
let nameBeforeBytes: EventNameInfo | null = null;

function sameNameAt(b: Uint8Array, p: number, n: number, info: EventNameInfo): boolean {
  const at = p + info.bytes.n;
  return at < n && b[at] === 58 && sameBytes(b, p, info.bytes);
}

/**
 * parseTail on bytes, for `<secs>.<frac>: <known name>:` and, as parseTail
 * reads it, a raw clock value `<ns>: <known name>:` of at most 15 digits
 * (counter / x86-tsc / mono clocks) only.
 */
function parseTailBytes(b: Uint8Array, p: number, out: EventLine, n: number): boolean {
  let secs = 0;
  const s0 = p;
  let c = 0;
  while (p < n && (c = b[p]!) >= C0 && c <= C9) {
    secs = secs * 10 + (c - C0);
    p++;
  }
  const intDigits = p - s0;
  if (intDigits === 0 || p >= n || intDigits > 15) return false;
  let nsec: number;
  if (c === 46) {
    // '.' and the fraction
    p++;
    const f0 = p;
    let frac = 0;
    while (p < n && (c = b[p]!) >= C0 && c <= C9) {
      if (p - f0 < 9) frac = frac * 10 + (c - C0);
      p++;
    }
    const k = p - f0;
    if (k === 0) return false;
    if (p >= n || c !== 58) return false; // ':'
    nsec = frac * FRAC_SCALE[k < 9 ? k : 9]!;
  } else if (c === 58) {
    // no fraction: a raw clock value, taken as ns (parseTail)
    nsec = secs % 1e9;
    secs = Math.floor(secs / 1e9);
  } else return false;
  p++;
  if (p < n && b[p] !== SP) return false;
  while (p < n && b[p] === SP) p++;
  p = skipTsDiffBytes(b, p, n);
  out.secs = secs;
  out.nsec = nsec;
  out.tsInUs = false;
  // event name: up to ':' (a space first: not a name)
  let known: EventNameInfo | undefined;
  let colon: number;
  const last = lastNameBytes;
  const before = nameBeforeBytes;
  if (last !== null && sameNameAt(b, p, n, last)) {
    known = last;
    colon = p + last.bytes.n;
  } else if (before !== null && sameNameAt(b, p, n, before)) {
    known = before;
    colon = p + before.bytes.n;
    nameBeforeBytes = last;
    lastNameBytes = before;
  } else {
    colon = p;
    while (colon < n && (c = b[colon]!) !== 58 && c !== SP) colon++;
    if (colon === p || colon >= n || c !== 58) return false;
    known = namesByText.getBytes(b, p, colon);
    if (known === undefined) return false;
    nameBeforeBytes = last;
    lastNameBytes = known;
  }
  // arguments: after the padding, trailing spaces dropped
  let a = colon + 1;
  if (known.argsFromName) a = p;
  else while (a < n && b[a] === SP) a++;
  let e = n;
  while (e > a && b[e - 1] === SP) e--;
  out.nameInfo = known;
  out.name = known.name;
  out.args = '';
  out.argsText = null;
  out.argsStart = a;
  out.argsEnd = e;
  out.argsBytes = b;
  return true;
}

/** skipTsDiff on bytes. */
function skipTsDiffBytes(b: Uint8Array, p: number, n: number): number {
  if (b[p] !== 40 || b[p + 1] !== 43) return p; // '(+'
  let q = p + 2;
  while (q < n && b[q]! >= C0 && b[q]! <= C9) q++;
  if (q === p + 2 || q >= n || b[q] !== 41) return p; // ')'
  q++;
  while (q < n && b[q] === SP) q++;
  return q;
}

/** parseCommPid on bytes. */
function parseCommPidBytes(b: Uint8Array, from: number, end: number, out: EventLine): boolean {
  let e = end;
  let pid = 0;
  let mult = 1;
  let c = 0;
  while (e >= from && (c = b[e]!) >= C0 && c <= C9) {
    pid += (c - C0) * mult;
    mult *= 10;
    e--;
  }
  if (e === end || e <= from || c !== 45) return false; // '-', after a name
  out.comm = commOfPadded(b, from, e);
  out.pid = pid;
  return true;
}

/** The task name whose padded text is b[from, e) (ASCII, e > from), null for `<...>`. */
export function commOfPadded(b: Uint8Array, from: number, e: number): string | null {
  let comm = commsByText.getBytes(b, from, e);
  if (comm === undefined) {
    // A name not seen yet (as padded): remembered as parseCommPid does.
    let s = from;
    while (s < e && b[s] === SP) s++;
    comm = latin1(b, s, e);
    const padded = latin1(b, from, e);
    commsByText.set(padded, 0, padded.length, padded, comm);
  }
  return comm === '<...>' ? null : comm;
}

/** The record of the event name b[s, e) if a line read it before (parseTailBytes's lookup), else undefined. */
export function knownNameBytes(b: Uint8Array, s: number, e: number): EventNameInfo | undefined {
  return namesByText.getBytes(b, s, e);
}

/**
 * parseNormalLine on the bytes b[start, end) of a plain ASCII line of a
 * single-buffer file. True: `out` holds what parseNormalLine would give,
 * except that the arguments are not a string but b[argsStart, argsEnd)
 * (argsText null; see eventArgs). False: not sure, use parseNormalLine.
 */
export function parseNormalLineBytes(
  b: Uint8Array,
  style: FlagStyle,
  out: EventLine,
  start: number,
  end: number,
): boolean {
  const n = end;
  let j: number;
  const hn = lastHead.n;
  if (hn > 0 && start + hn <= n && sameBytes(b, start, lastHead)) {
    // The same head as the line before: the same reading.
    j = start + hn - 1;
    out.cpu = headCpu;
    out.tgid = headTgid;
    out.instance = null;
    out.comm = headComm;
    out.pid = headPid;
  } else {
    j = parseHeadBytes(b, out, start, n);
    if (j < 0) return false;
    rememberHead(b, start, j, out);
  }
  // --- after ']': optional flags, then timestamp
  let p = j + 1;
  while (p < n && b[p] === SP) p++;
  if (p >= n) return false;
  out.flags = null;
  out.preemptCount = null;
  const c = b[p]!;
  if (c < C0 || c > C9) {
    let q = p;
    while (q < n && b[q] !== SP) q++;
    if (!parseFlagsTokenBytes(b, p, q, style, out)) return false;
    p = q;
    while (p < n && b[p] === SP) p++;
  }
  return parseTailBytes(b, p, out, n);
}

/**
 * The last line's head, `comm-pid [(tgid)] [cpu]` up to and including ']',
 * as bytes, and what it read as. A task usually logs several events in a
 * row (88% of lines in the bench's tracefs and report files repeat the head
 * of the line before), and comparing ~30 bytes as words is cheaper than
 * finding the CPU column, reading the pid backwards and looking up the comm.
 * The reading of a head depends on its bytes alone, so equal bytes give the
 * same reading.
 */
const lastHead = newMutableByteKey(128);
let headCpu = 0;
let headTgid: number | null = null;
let headComm: string | null = null;
let headPid = 0;

function rememberHead(b: Uint8Array, s: number, j: number, out: EventLine): void {
  setByteKey(lastHead, b, s, j - s + 1);
  headCpu = out.cpu;
  headTgid = out.tgid;
  headComm = out.comm;
  headPid = out.pid;
}

/**
 * Reads a head, b[start, ...]: `comm-pid [(tgid)] [cpu]`. Sets out.cpu,
 * tgid, instance, comm and pid; returns the index of the CPU column's ']',
 * or -1 if there is none.
 */
function parseHeadBytes(b: Uint8Array, out: EventLine, start: number, n: number): number {
  // the first `[digits]` preceded by a space
  let br = start;
  let cpu = 0;
  let j = 0;
  for (;;) {
    while (br < n && b[br] !== 91) br++;
    if (br >= n) return -1;
    j = br + 1;
    cpu = 0;
    let c = 0;
    while (j < n && (c = b[j]!) >= C0 && c <= C9) {
      cpu = cpu * 10 + (c - C0);
      j++;
    }
    if (j > br + 1 && j < n && c === 93 && br > start && b[br - 1] === SP) break; // ']'
    br++;
  }
  // --- head, backwards from '['
  let e = br - 1;
  while (e >= start && b[e] === SP) e--;
  out.cpu = cpu;
  out.tgid = null;
  if (e >= start && b[e] === 41) {
    // ')' : record-tgid column
    let o = e - 1;
    while (o >= start && b[o] !== 40) o--;
    if (o < start) return -1;
    let t = 0;
    let digits = 0;
    for (let k = o + 1; k < e; k++) {
      const c = b[k]!;
      if (c >= C0 && c <= C9) {
        t = t * 10 + (c - C0);
        digits++;
      } else if (c !== SP && c !== 45) return -1;
    }
    out.tgid = digits > 0 ? t : null;
    e = o - 1;
    while (e >= start && b[e] === SP) e--;
  }
  out.instance = null;
  if (!parseCommPidBytes(b, start, e, out)) return -1;
  return j;
}

/** The argument text of a parsed line, as a string (made here for lines framed on bytes). */
export function eventArgs(ev: EventLine): string {
  if (ev.argsText === null) {
    ev.argsText = ev.args = latin1(ev.argsBytes!, ev.argsStart, ev.argsEnd);
    ev.argsStart = 0;
    ev.argsEnd = ev.args.length;
    ev.argsBytes = null;
  }
  return ev.args;
}

// ---------------------------------------------------------------------------
// Non-event lines
// ---------------------------------------------------------------------------

export interface LostNotice {
  cpu: number;
  count: number | null;
}

/**
 * `CPU:3 [LOST 1234 EVENTS]` (kernel), `CPU:3 [1234 EVENTS DROPPED]` /
 * `CPU:3 [EVENTS DROPPED]` (trace-cmd), `##### CPU 3 buffer started ####`
 * (kernel: older events of that CPU were overwritten, count unknown).
 */
export function parseLostLine(line: string): LostNotice | null {
  const t = line.trim();
  if (t.startsWith('CPU:')) {
    let p = 4;
    let cpu = 0;
    const s = p;
    while (p < t.length && isDigit(t.charCodeAt(p))) cpu = cpu * 10 + (t.charCodeAt(p++) - C0);
    if (p === s) return null;
    const rest = t.slice(p).trim();
    let m = /^\[LOST (\d+) EVENTS\]$/.exec(rest);
    if (m) return { cpu, count: Number(m[1]) };
    m = /^\[(\d+) EVENTS DROPPED\]$/.exec(rest);
    if (m) return { cpu, count: Number(m[1]) };
    if (rest === '[EVENTS DROPPED]' || rest === '[LOST EVENTS]') return { cpu, count: null };
    return null;
  }
  if (t.startsWith('#####')) {
    const m = /^#+ CPU (\d+) buffer started #+$/.exec(t);
    if (m) return { cpu: Number(m[1]), count: null };
  }
  return null;
}
