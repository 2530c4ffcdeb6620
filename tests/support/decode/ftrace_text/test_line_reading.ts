/** For tests: what a parse of one event line read, as plain data to compare. */
import { eventArgs, type EventLine } from '../../../../server/decode/ftrace_text/parse_event_line.ts';

export function lineReading(ev: EventLine) {
  return {
    comm: ev.comm,
    pid: ev.pid,
    tgid: ev.tgid,
    cpu: ev.cpu,
    flags: ev.flags,
    preemptCount: ev.preemptCount,
    secs: ev.secs,
    nsec: ev.nsec,
    name: ev.name,
    args: eventArgs(ev),
    instance: ev.instance,
  };
}
