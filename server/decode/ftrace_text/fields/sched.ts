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
import { KvSpec, kvObject, parseDecimal } from './generic.ts';
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

export const parseSchedSwitch: FieldParser = (t) =>
  t.startsWith('prev_comm=') ? parseSwitchKernel(t) : parseSwitchReport(t);

const COMM_SPEC = new KvSpec({}, new Set(['comm']));
const WAKEUP_INTS = ['pid', 'prio', 'target_cpu'] as const;

function parseWakeupKernel(t: string): EventFields | null {
  const out = kvObject(t, COMM_SPEC);
  if (out === null) return null;
  for (const k of WAKEUP_INTS) if (typeof out[k] !== 'number') return null;
  if (typeof out.comm !== 'string') return null;
  return out;
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
export const parseSchedWakeup: FieldParser = (t) =>
  t.startsWith('comm=') ? parseWakeupKernel(t) : parseWakeupReport(t);

/** `comm=x pid=1 prio=120 orig_cpu=0 dest_cpu=1`. */
export const parseSchedMigrateTask: FieldParser = (t) => {
  const out = kvObject(t, COMM_SPEC);
  if (out === null) return null;
  for (const k of ['pid', 'prio', 'orig_cpu', 'dest_cpu']) if (typeof out[k] !== 'number') return null;
  return typeof out.comm === 'string' ? out : null;
};

/** Printed `comm=`/`pid=` are the parent's fields in the format file. */
const FORK_SPEC = new KvSpec({ comm: 'parent_comm', pid: 'parent_pid' }, new Set(['parent_comm', 'child_comm']));

/** `comm=bash pid=1 child_comm=bash child_pid=2`. */
export const parseSchedProcessFork: FieldParser = (t) => {
  const out = kvObject(t, FORK_SPEC);
  if (out === null) return null;
  if (typeof out.parent_pid !== 'number' || typeof out.child_pid !== 'number') return null;
  return out;
};

/** `comm=x pid=1 prio=120` (newer kernels: ` group_dead=true`, a bool field: 1/0). */
export const parseSchedProcessExit: FieldParser = (t) => {
  const out = kvObject(t, COMM_SPEC);
  if (out === null) return null;
  if (typeof out.pid !== 'number' || typeof out.comm !== 'string') return null;
  if (out.group_dead === 'true') out.group_dead = 1;
  else if (out.group_dead === 'false') out.group_dead = 0;
  return out;
};
