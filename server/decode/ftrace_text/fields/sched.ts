/**
 * Scheduler events (include/trace/events/sched.h), in both producers' forms:
 *
 * sched_switch
 *   kernel: `prev_comm=foo prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=bar next_pid=2 next_prio=120`
 *   trace-cmd report (sched_switch plugin): `foo:1 [120] S ==> bar:2 [120]`
 * sched_wakeup / sched_wakeup_new / sched_waking
 *   kernel: `comm=x pid=1 prio=120 target_cpu=001` (old kernels: `success=1` before target_cpu)
 *   trace-cmd report (plugin, wakeup and wakeup_new): `x:1 [120] CPU:001`, older `x:1 [120] success=1 CPU:001`
 * Task names may contain spaces and colons: the pid is after the LAST colon
 * before ` [`, and key=value values run until the next known key.
 */
import type { EventFields } from '../../decoded_event.ts';
import { ranged } from './generic.ts';
import { internAt } from './intern.ts';
import { kvRange } from './key_values.ts';
import { kvRangeBytes } from './key_values_bytes.ts';
import { KvSpec } from './kv_spec.ts';
import { indexOfChar, trimEnd, trimStart } from './text_scan.ts';
import { parseDecimal, parseDecimalRange } from './values.ts';
import { orRawFields, prevStateOf } from './raw_fields.ts';
import type { FieldParser } from './types.ts';

function int(s: string): number | null {
  const v = parseDecimal(s.trim());
  return typeof v === 'number' ? v : null;
}

/** `comm:pid` -> [comm, pid], pid after the last ':'. */
function commColonPid(s: string): [string, number] | null {
  const c = s.lastIndexOf(':');
  if (c < 0) return null;
  const pid = int(s.slice(c + 1));
  if (pid === null) return null;
  return [s.slice(0, c).trim(), pid];
}

/** int(t.slice(s, e)) when sure; NaN means "not sure, take the slow path". */
function intFast(t: string, s: number, e: number): number {
  const a = trimStart(t, s, e);
  if (a < 0) return NaN;
  const b = trimEnd(t, a, e);
  if (b < 0) return NaN;
  const v = parseDecimalRange(t, a, b);
  return typeof v === 'number' ? v : NaN;
}

/** Value between `key=` and the start of `nextKey=` (or end). */
function between(text: string, key: string, nextKey: string | null, from = 0): [string, number] | null {
  const k = text.indexOf(key, from);
  if (k < 0) return null;
  const vs = k + key.length;
  if (nextKey === null) return [text.slice(vs).trim(), text.length];
  const nk = text.lastIndexOf(nextKey);
  if (nk < vs) return null;
  return [text.slice(vs, nk), nk];
}

/**
 * parseSwitchKernel(t.slice(s, e)) on the range; null when the text is not
 * the plain shape (the caller then takes the slow path, which decides).
 */
function switchKernelFast(t: string, s: number, e: number, b: Uint8Array | null): EventFields | null {
  // prev = [s, arrow), next = [arrow + 5, e)
  const arrow = t.indexOf(' ==> next_comm=', s);
  if (arrow < 0 || arrow + 15 > e) return null;
  const pp = t.lastIndexOf(' prev_pid=', arrow - 10);
  if (pp < s + 10) return null;
  const ppr = t.lastIndexOf(' prev_prio=', arrow - 11);
  if (ppr < pp + 10) return null;
  const ps = t.lastIndexOf(' prev_state=', arrow - 12);
  if (ps < ppr + 11) return null;
  const ns = arrow + 5;
  const np = t.lastIndexOf(' next_pid=', e - 10);
  if (np < ns + 10) return null;
  const npr = t.lastIndexOf(' next_prio=', e - 11);
  if (npr < np + 10) return null;
  const prevPid = intFast(t, pp + 10, ppr);
  const prevPrio = intFast(t, ppr + 11, ps);
  const nextPid = intFast(t, np + 10, npr);
  const nextPrio = intFast(t, npr + 11, e);
  if (prevPid !== prevPid || prevPrio !== prevPrio || nextPid !== nextPid || nextPrio !== nextPrio) return null;
  const st = trimStart(t, ps + 12, arrow);
  if (st < 0) return null;
  const se = trimEnd(t, st, arrow);
  if (se < 0) return null;
  return {
    prev_comm: internAt(b, t, s + 10, pp),
    prev_pid: prevPid,
    prev_prio: prevPrio,
    prev_state: internAt(b, t, st, se),
    next_comm: internAt(b, t, ns + 10, np),
    next_pid: nextPid,
    next_prio: nextPrio,
  };
}

function parseSwitchKernel(t: string): EventFields | null {
  const arrow = t.indexOf(' ==> next_comm=');
  if (arrow < 0) return null;
  const prev = t.slice(0, arrow);
  const next = t.slice(arrow + 5);
  const pc = between(prev, 'prev_comm=', ' prev_pid=');
  if (!pc) return null;
  const pp = between(prev, ' prev_pid=', ' prev_prio=', pc[1]);
  const ppr = pp && between(prev, ' prev_prio=', ' prev_state=', pp[1]);
  const ps = ppr && between(prev, ' prev_state=', null, ppr[1]);
  const nc = between(next, 'next_comm=', ' next_pid=');
  const np = nc && between(next, ' next_pid=', ' next_prio=', nc[1]);
  const npr = np && between(next, ' next_prio=', null, np[1]);
  if (!pp || !ppr || !ps || !nc || !np || !npr) return null;
  const prevPid = int(pp[0]);
  const prevPrio = int(ppr[0]);
  const nextPid = int(np[0]);
  const nextPrio = int(npr[0]);
  if (prevPid === null || prevPrio === null || nextPid === null || nextPrio === null) return null;
  return {
    prev_comm: pc[0],
    prev_pid: prevPid,
    prev_prio: prevPrio,
    prev_state: ps[0],
    next_comm: nc[0],
    next_pid: nextPid,
    next_prio: nextPrio,
  };
}

/**
 * trace-cmd's sched_switch plugin (libtraceevent 1.7) names prev_state bits
 * with the pre-4.14 table "SDTtZXxW"; kernels since 4.14 print bit 4..7 as
 * X, Z, P, I. Translate to what the kernel (and the trace.dat decoder, which
 * evaluates the kernel's print fmt) prints. Lost in report text: the `+`
 * (preempted) suffix, which the plugin prints as plain `R`.
 */
const REPORT_STATE: Readonly<Record<string, string>> = { Z: 'X', X: 'Z', x: 'P', W: 'I' };

export function reportPrevState(s: string): string {
  let out = '';
  for (const ch of s) out += REPORT_STATE[ch] ?? ch;
  return out;
}

/** prev_state letters the report prints that need no translation (plain ASCII, not in REPORT_STATE). */
function plainState(t: string, s: number, e: number): boolean {
  for (let i = s; i < e; i++) {
    const c = t.charCodeAt(i);
    if (c >= 128 || c === 90 || c === 88 || c === 120 || c === 87) return false;
  }
  return true;
}

/** `comm:pid` in t[s, e): sets commS/commE/pid of `cp`; false when unsure. */
interface CommPid {
  s: number;
  e: number;
  pid: number;
}
const cpA: CommPid = { s: 0, e: 0, pid: 0 };
const cpBytes: CommPid = { s: 0, e: 0, pid: 0 };
function commPidFast(t: string, s: number, e: number, out: CommPid): boolean {
  const c = t.lastIndexOf(':', e - 1);
  if (c < s) return false;
  const pid = intFast(t, c + 1, e);
  if (pid !== pid) return false;
  const a = trimStart(t, s, c);
  if (a < 0) return false;
  const b = trimEnd(t, a, c);
  if (b < 0) return false;
  out.s = a;
  out.e = b;
  out.pid = pid;
  return true;
}

/** parseSwitchReport(t.slice(s, e)) on the range; null when unsure. */
function switchReportFast(t: string, s: number, e: number, b: Uint8Array | null): EventFields | null {
  const arrow = t.lastIndexOf(' ==> ', e - 5);
  if (arrow < s) return null;
  // prev = [s, arrow): `comm:pid [prio] STATE`
  const pb = t.lastIndexOf(' [', arrow - 2);
  if (pb < s) return null;
  const pbe = indexOfChar(t, 93, pb, arrow);
  if (pbe < 0) return null;
  const prevPrio = intFast(t, pb + 2, pbe);
  if (prevPrio !== prevPrio) return null;
  const st = trimStart(t, pbe + 1, arrow);
  if (st < 0) return null;
  const se = trimEnd(t, st, arrow);
  if (se < 0 || se === st || !plainState(t, st, se)) return null;
  if (!commPidFast(t, s, pb, cpA)) return null;
  // next = [ns, ne): `comm:pid [prio]`
  const ns = trimStart(t, arrow + 5, e);
  if (ns < 0) return null;
  const ne = trimEnd(t, ns, e);
  if (ne < 0) return null;
  const nb = t.lastIndexOf(' [', ne - 2);
  if (nb < ns) return null;
  const nbe = indexOfChar(t, 93, nb, ne);
  if (nbe < 0) return null;
  const nextPrio = intFast(t, nb + 2, nbe);
  if (nextPrio !== nextPrio) return null;
  if (!commPidFast(t, ns, nb, cpBytes)) return null;
  return {
    prev_comm: internAt(b, t, cpA.s, cpA.e),
    prev_pid: cpA.pid,
    prev_prio: prevPrio,
    prev_state: internAt(b, t, st, se),
    next_comm: internAt(b, t, cpBytes.s, cpBytes.e),
    next_pid: cpBytes.pid,
    next_prio: nextPrio,
  };
}

function parseSwitchReport(t: string): EventFields | null {
  const arrow = t.lastIndexOf(' ==> ');
  if (arrow < 0) return null;
  const prev = t.slice(0, arrow);
  const next = t.slice(arrow + 5).trim();
  // prev: `comm:pid [prio] STATE`
  const pb = prev.lastIndexOf(' [');
  if (pb < 0) return null;
  const pbe = prev.indexOf(']', pb);
  if (pbe < 0) return null;
  const prevPrio = int(prev.slice(pb + 2, pbe));
  const prevState = prev.slice(pbe + 1).trim();
  const pcp = commColonPid(prev.slice(0, pb));
  // next: `comm:pid [prio]`
  const nb = next.lastIndexOf(' [');
  if (nb < 0) return null;
  const nbe = next.indexOf(']', nb);
  if (nbe < 0) return null;
  const nextPrio = int(next.slice(nb + 2, nbe));
  const ncp = commColonPid(next.slice(0, nb));
  if (!pcp || !ncp || prevPrio === null || nextPrio === null || prevState === '') return null;
  return {
    prev_comm: pcp[0],
    prev_pid: pcp[1],
    prev_prio: prevPrio,
    prev_state: reportPrevState(prevState),
    next_comm: ncp[0],
    next_pid: ncp[1],
    next_prio: nextPrio,
  };
}

const RAW_SWITCH_SPEC = new KvSpec({}, new Set(['prev_comm', 'next_comm']));

/** Raw fields (raw_fields.ts): no `==>`, prev_state a number. */
function switchFromRaw(f: EventFields): EventFields | null {
  const { prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid, next_prio } = f;
  if (
    typeof prev_pid !== 'number' ||
    typeof prev_prio !== 'number' ||
    typeof next_pid !== 'number' ||
    typeof next_prio !== 'number'
  )
    return null;
  if (typeof prev_comm !== 'string' || typeof next_comm !== 'string') return null;
  const state = typeof prev_state === 'number' ? prevStateOf(prev_state) : prev_state;
  if (typeof state !== 'string') return null;
  return { prev_comm, prev_pid, prev_prio, prev_state: state, next_comm, next_pid, next_prio };
}

export const parseSchedSwitch: FieldParser = ranged(
  orRawFields(
    (t, s, e, args, b) =>
      t.startsWith('prev_comm=', s)
        ? (switchKernelFast(t, s, e, b) ?? parseSwitchKernel(args))
        : (switchReportFast(t, s, e, b) ?? parseSwitchReport(args)),
    RAW_SWITCH_SPEC,
    ['prev_comm', 'prev_pid', 'prev_prio', 'prev_state', 'next_comm', 'next_pid', 'next_prio'],
    switchFromRaw,
  ),
);

const COMM_SPEC = new KvSpec({}, new Set(['comm']));

function parseWakeupKernel(t: string, s: number, e: number, b: Uint8Array | null): EventFields | null {
  const out = kvRangeBytes(b, t, s, e, COMM_SPEC);
  if (out === null) return null;
  if (typeof out.pid !== 'number' || typeof out.prio !== 'number' || typeof out.target_cpu !== 'number') return null;
  if (typeof out.comm !== 'string') return null;
  return out;
}

/** parseWakeupReport(t.slice(s, e)) on the range; null when unsure. */
function wakeupReportFast(t: string, s: number, e: number, bytes: Uint8Array | null): EventFields | null {
  const b = t.lastIndexOf(' [', e - 2);
  if (b < s) return null;
  const be = indexOfChar(t, 93, b, e);
  if (be < 0) return null;
  if (!commPidFast(t, s, b, cpA)) return null;
  const prio = intFast(t, b + 2, be);
  if (prio !== prio) return null;
  // rest: ` CPU:001` (the usual) or `success=1 CPU:001`
  let p = be + 1;
  while (p < e && t.charCodeAt(p) === 32) p++;
  let success = 0;
  let target = 0;
  let hasSuccess = false;
  let hasTarget = false;
  while (p < e) {
    let q = p;
    while (q < e && t.charCodeAt(q) !== 32) q++;
    if (t.startsWith('CPU:', p) && q - p > 4) {
      const v = intFast(t, p + 4, q);
      // a repeated token: unusual, the slow path decides
      if (v !== v || hasTarget) return null;
      target = v;
      hasTarget = true;
    } else if (t.startsWith('success=', p) && q - p > 8) {
      const v = intFast(t, p + 8, q);
      // after CPU: the key order differs: slow path
      if (v !== v || hasSuccess || hasTarget) return null;
      success = v;
      hasSuccess = true;
    } else return null;
    p = q;
    while (p < e && t.charCodeAt(p) === 32) p++;
  }
  const comm = internAt(bytes, t, cpA.s, cpA.e);
  const pid = cpA.pid;
  if (!hasSuccess) return hasTarget ? { comm, pid, prio, target_cpu: target } : { comm, pid, prio };
  return hasTarget ? { comm, pid, prio, success, target_cpu: target } : { comm, pid, prio, success };
}

function parseWakeupReport(t: string): EventFields | null {
  // `comm:pid [prio] [success=1] CPU:001`
  const b = t.lastIndexOf(' [');
  if (b < 0) return null;
  const be = t.indexOf(']', b);
  if (be < 0) return null;
  const cp = commColonPid(t.slice(0, b));
  const prio = int(t.slice(b + 2, be));
  if (!cp || prio === null) return null;
  const out: EventFields = { comm: cp[0], pid: cp[1], prio };
  const rest = t.slice(be + 1).trim();
  for (const tok of rest.split(' ')) {
    if (tok === '') continue;
    if (tok.startsWith('success=')) {
      const v = int(tok.slice(8));
      if (v === null) return null;
      out.success = v;
    } else if (tok.startsWith('CPU:')) {
      const v = int(tok.slice(4));
      if (v === null) return null;
      out.target_cpu = v;
    } else return null;
  }
  return out;
}

/** sched_wakeup, sched_wakeup_new, sched_waking. */
export const parseSchedWakeup: FieldParser = ranged(
  orRawFields(
    (t, s, e, args, b) =>
      t.startsWith('comm=', s)
        ? parseWakeupKernel(t, s, e, b)
        : (wakeupReportFast(t, s, e, b) ?? parseWakeupReport(args)),
    COMM_SPEC,
    ['comm', 'pid', 'prio'],
    (f) => (typeof f.comm === 'string' && typeof f.pid === 'number' && typeof f.prio === 'number' ? f : null),
  ),
);

/** `comm=x pid=1 prio=120 orig_cpu=0 dest_cpu=1`. */
function migrateTask(out: EventFields | null): EventFields | null {
  if (out === null) return null;
  if (
    typeof out.pid !== 'number' ||
    typeof out.prio !== 'number' ||
    typeof out.orig_cpu !== 'number' ||
    typeof out.dest_cpu !== 'number'
  )
    return null;
  return typeof out.comm === 'string' ? out : null;
}

export const parseSchedMigrateTask: FieldParser = ranged(
  orRawFields(
    (t, s, e, _args, b) => migrateTask(kvRangeBytes(b, t, s, e, COMM_SPEC)),
    COMM_SPEC,
    ['comm', 'pid'],
    migrateTask,
  ),
);

/** Printed `comm=`/`pid=` are the parent's fields in the format file. */
const FORK_SPEC = new KvSpec({ comm: 'parent_comm', pid: 'parent_pid' }, new Set(['parent_comm', 'child_comm']));

/** `comm=bash pid=1 child_comm=bash child_pid=2`. */
function processFork(out: EventFields | null): EventFields | null {
  if (out === null) return null;
  if (typeof out.parent_pid !== 'number' || typeof out.child_pid !== 'number') return null;
  return out;
}

export const parseSchedProcessFork: FieldParser = ranged(
  orRawFields(
    (t, s, e) => processFork(kvRange(t, s, e, FORK_SPEC)),
    FORK_SPEC,
    ['parent_pid', 'child_pid'],
    processFork,
  ),
);

/** `comm=x pid=1 prio=120` (newer kernels: ` group_dead=true`, a bool field: 1/0). */
function processExit(out: EventFields | null): EventFields | null {
  if (out === null) return null;
  if (typeof out.pid !== 'number' || typeof out.comm !== 'string') return null;
  if (out.group_dead === 'true') out.group_dead = 1;
  else if (out.group_dead === 'false') out.group_dead = 0;
  return out;
}

export const parseSchedProcessExit: FieldParser = ranged(
  orRawFields((t, s, e) => processExit(kvRange(t, s, e, COMM_SPEC)), COMM_SPEC, ['comm', 'pid'], processExit),
);
