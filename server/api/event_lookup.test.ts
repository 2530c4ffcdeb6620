// The trace line a trace.dat event is shown with (it has no printed text of
// its own): ftrace's print and stack events read as the kernel prints them.
import { describe, expect, it } from 'vitest';
import { reportLine, type EventInfo } from './event_lookup.ts';

function event(name: string, fields: Record<string, unknown>): EventInfo {
  return { id: 1, ts_ns: '44029415350000', ts: 0, cpu: 1, utid: 3, tid: 14128, comm: 'markers.sh', name, system: 'ftrace', fields, table: 'args', line: '' };
}
const AT = 44029415350000n;

describe('reportLine', () => {
  it('print: the marker message after its ip', () => {
    expect(reportLine(event('print', { ip: 'tracing_mark_write', buf: 'phase=test' }), AT, null)).toBe(
      'markers.sh-14128 [001] 44029.415350: print: tracing_mark_write: phase=test',
    );
  });
  it('kernel_stack: one frame per line', () => {
    expect(reportLine(event('kernel_stack', { caller: 'shrink_node\nkswapd', size: 2 }), AT, null)).toBe(
      'markers.sh-14128 [001] 44029.415350: kernel_stack: <stack trace>\n => shrink_node\n => kswapd',
    );
  });
  it('text events keep the line they were read from', () => {
    expect(reportLine(event('print', { buf: 'x' }), AT, 'tracing_mark_write: x')).toMatch(/: print: tracing_mark_write: x$/);
  });
});
