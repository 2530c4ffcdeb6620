/**
 * Expected values for the query features, computed from `trace-cmd report -t -N`
 * (trace-cmd's own decoding, ns timestamps, every event printed by the
 * kernel's own print format: no plugins) with a few lines of parsing, and
 * nothing of stallscope: event lines, their key=value fields, and the
 * scheduling states of one thread by the rules queries/schema.sql states for
 * thread_state (switched out: prev_state; woken while blocked: R; switched
 * in: Running).
 */
import { execFileSync } from 'node:child_process';

export interface ReportEvent {
  comm: string;
  tid: number;
  cpu: number;
  /** Absolute ns. */
  ts: bigint;
  name: string;
  args: string;
  /** key=value fields. */
  fields: Record<string, string>;
  /** Line order in the report. */
  order: number;
}

const LINE = /^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+(\w+):\s*(.*)$/;

export function reportEvents(datFile: string): ReportEvent[] {
  const text = execFileSync('trace-cmd', ['report', '-t', '-N', datFile], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const out: ReportEvent[] = [];
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const name = m[6]!;
    const args = m[7]!;
    out.push({
      comm: m[1]!.trim(),
      tid: Number(m[2]),
      cpu: Number(m[3]),
      ts: BigInt(m[4]!) * 1_000_000_000n + BigInt(m[5]!),
      name,
      args,
      fields: fieldsOf(args),
      order: out.length,
    });
  }
  return out;
}

function fieldsOf(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of args.matchAll(/(\w+)=(\S*)/g)) out[kv[1]!] = kv[2]!;
  return out;
}

/** Time (ns) thread `tid` spent in each state within [a0, a1); `end` closes the last state (the trace's last event). */
export function threadStateTimes(
  events: ReportEvent[],
  tid: number,
  a0: bigint,
  a1: bigint,
  end: bigint,
): Map<string, bigint> {
  const hasWaking = events.some((e) => e.name === 'sched_waking');
  type Moment = { ts: bigint; kind: number; order: number; state: string };
  const moments: Moment[] = [];
  for (const e of events) {
    if (e.name === 'sched_switch') {
      if (Number(e.fields.prev_pid) === tid)
        moments.push({ ts: e.ts, kind: 0, order: e.order, state: e.fields.prev_state! });
      if (Number(e.fields.next_pid) === tid) moments.push({ ts: e.ts, kind: 2, order: e.order, state: 'Running' });
    } else if (
      (e.name === 'sched_waking' || (e.name === 'sched_wakeup' && !hasWaking) || e.name === 'sched_wakeup_new') &&
      Number(e.fields.pid) === tid
    ) {
      moments.push({ ts: e.ts, kind: 1, order: e.order, state: 'R' });
    }
  }
  moments.sort((x, y) => (x.ts < y.ts ? -1 : x.ts > y.ts ? 1 : x.kind - y.kind || x.order - y.order));
  // A wakeup counts only right after a switch-out into a blocked (not R...) state.
  const kept = moments.filter(
    (m, i) => m.kind !== 1 || (i > 0 && moments[i - 1]!.kind === 0 && !moments[i - 1]!.state.startsWith('R')),
  );
  const out = new Map<string, bigint>();
  kept.forEach((m, i) => {
    const stop = i + 1 < kept.length ? kept[i + 1]!.ts : end;
    const lo = m.ts > a0 ? m.ts : a0;
    const hi = stop < a1 ? stop : a1;
    if (hi > lo) out.set(m.state, (out.get(m.state) ?? 0n) + (hi - lo));
  });
  return out;
}

/** Shrinker calls (mm_shrink_slab_start .. the same task's next mm_shrink_slab_end): [start, end] ns, task tid. */
export function shrinkerCalls(events: ReportEvent[]): Array<{ tid: number; start: bigint; end: bigint; sym: string }> {
  const open = new Map<number, ReportEvent>();
  const out: Array<{ tid: number; start: bigint; end: bigint; sym: string }> = [];
  for (const e of events) {
    if (e.name === 'mm_shrink_slab_start') open.set(e.tid, e);
    else if (e.name === 'mm_shrink_slab_end') {
      const s = open.get(e.tid);
      if (s) {
        out.push({ tid: e.tid, start: s.ts, end: e.ts, sym: s.args.split(' ')[0]!.replace(/\+0x.*$/, '') });
        open.delete(e.tid);
      }
    }
  }
  return out;
}
