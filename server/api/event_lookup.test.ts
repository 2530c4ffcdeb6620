// The trace line an event is shown with, as `trace-cmd report` (3.1) prints
// it: `%16s-%-5d [%03d] %5d.%06d: %-20s: args` (server/notes/report_line.ts;
// tests/golden/report_lines.test.ts compares whole fixtures with trace-cmd).
import { describe, expect, it } from 'vitest';
import { reportLine, type EventInfo } from './event_lookup.ts';

function event(name: string, fields: Record<string, unknown>): EventInfo {
  return {
    id: 1,
    ts_ns: '44029415350000',
    ts: 0,
    cpu: 1,
    utid: 3,
    tid: 14128,
    comm: 'markers.sh',
    name,
    system: 'ftrace',
    fields,
    table: 'args',
    line: '',
  };
}
const AT = 44029415350000n;

describe('reportLine', () => {
  it('print: the marker message after its ip', () => {
    expect(reportLine(event('print', { ip: 'tracing_mark_write', buf: 'phase=test' }), AT, null)).toBe(
      '      markers.sh-14128 [001] 44029.415350: print:                tracing_mark_write: phase=test',
    );
  });
  it('kernel_stack: one frame per line, as trace-cmd prints them', () => {
    expect(reportLine(event('kernel_stack', { caller: 'shrink_node\nkswapd', size: 2 }), AT, null)).toBe(
      '      markers.sh-14128 [001] 44029.415350: kernel_stack:         <stack trace >\n=> shrink_node\n=> kswapd',
    );
  });
  it('text events keep the line they were read from', () => {
    expect(reportLine(event('print', { buf: 'x' }), AT, 'tracing_mark_write: x')).toMatch(
      /: print: {16}tracing_mark_write: x$/,
    );
  });
  it('rounds the timestamp to the microsecond as trace-cmd does; the idle task is <idle>', () => {
    const idle = {
      ...event('sched_switch', {
        prev_comm: 'swapper/0',
        prev_pid: 0,
        prev_prio: 120,
        prev_state: 'R+',
        next_comm: 'kswapd0',
        next_pid: 45,
        next_prio: 120,
      }),
      tid: 0,
      comm: 'swapper/0',
    };
    expect(reportLine(idle, 5201066520500n, null)).toBe(
      '          <idle>-0     [001]  5201.066521: sched_switch:         swapper/0:0 [120] R ==> kswapd0:45 [120]',
    );
  });
});
