import { describe, expect, it } from 'vitest';
import { newEventLine, parseFlagsToken, parseLatencyLine, parseLostLine, parseNormalLine } from './parse_event_line.ts';

function normal(line: string) {
  const ev = newEventLine();
  expect(parseNormalLine(line, 'kernel', ev, false)).toBe(true);
  return { ...ev };
}

describe('parseNormalLine (tracefs / trace-cmd report)', () => {
  it('tracefs line with 5-char flags and 6 decimals', () => {
    const ev = normal(
      '          <idle>-0       [001] d..2.  1234.567890: sched_switch: prev_comm=swapper/1 prev_pid=0',
    );
    expect(ev).toMatchObject({
      comm: '<idle>',
      pid: 0,
      tgid: null,
      cpu: 1,
      flags: 0x1,
      preemptCount: 2,
      secs: 1234,
      nsec: 567890000,
      name: 'sched_switch',
      args: 'prev_comm=swapper/1 prev_pid=0',
    });
  });
  it('4-char flags (old kernels), dNs., ....', () => {
    expect(normal('   bash-12  [000] d..2  5.000001: x: a=1')).toMatchObject({ flags: 0x1, preemptCount: 2 });
    expect(normal('   bash-12  [000] dNs.  5.000001: x: a=1')).toMatchObject({
      flags: 0x1 | 0x4 | 0x20 | 0x10,
      preemptCount: 0,
    });
    expect(normal('   bash-12  [000] ....  5.000001: x: a=1')).toMatchObject({ flags: 0, preemptCount: 0 });
  });
  it('every flag character', () => {
    const f = (tok: string) => {
      const ev = newEventLine();
      expect(parseFlagsToken(tok, 0, tok.length, 'kernel', ev)).toBe(true);
      return [ev.flags, ev.preemptCount];
    };
    expect(f('X...')).toEqual([0x2, 0]);
    expect(f('D...')).toEqual([0x81, 0]);
    expect(f('b...')).toEqual([0x80, 0]);
    expect(f('.n..')).toEqual([0x4, 0]);
    expect(f('.p..')).toEqual([0x20, 0]);
    expect(f('.N..')).toEqual([0x24, 0]);
    expect(f('..h.')).toEqual([0x8, 0]);
    expect(f('..s.')).toEqual([0x10, 0]);
    expect(f('..H.')).toEqual([0x18, 0]);
    expect(f('..z.')).toEqual([0x40, 0]);
    expect(f('..Z.')).toEqual([0x48, 0]);
    expect(f('...f.')).toEqual([0, 0xf]);
    expect(f('...21')).toEqual([0, 0x12]);
    const ev = newEventLine();
    expect(parseFlagsToken('q...', 0, 4, 'kernel', ev)).toBe(false);
  });
  it('record-tgid column, numeric and dashes', () => {
    expect(normal('     Web Content-1234    (   1200) [127] d..2. 81234.123456789: sched_switch: a=1')).toMatchObject({
      comm: 'Web Content',
      pid: 1234,
      tgid: 1200,
      cpu: 127,
      secs: 81234,
      nsec: 123456789,
    });
    expect(normal('           <...>-5678    (-------) [003] dNh2. 81234.200000000: sched_waking: a=1')).toMatchObject({
      comm: null,
      pid: 5678,
      tgid: null,
      cpu: 3,
      flags: 0x1 | 0x24 | 0x8,
      preemptCount: 2,
    });
  });
  it('task names with spaces, dashes, digits, slashes, colons: pid is the last -digits', () => {
    expect(normal(' npm list @tauri-28184   [000] ..... 1.000000: x: y')).toMatchObject({
      comm: 'npm list @tauri',
      pid: 28184,
    });
    expect(normal('  kworker/u161:6-718     [000] ..... 1.000000: x: y')).toMatchObject({
      comm: 'kworker/u161:6',
      pid: 718,
    });
    expect(normal('   foo-bar-2-99-77   [000] ..... 1.000000: x: y')).toMatchObject({ comm: 'foo-bar-2-99', pid: 77 });
  });
  it('trace-cmd report: no flags column, padded event name', () => {
    const ev = normal(
      '         kswapd0-45    [001]   805.303554: mm_shrink_slab_end:   vmap_node_shrink_scan+0x0 0xffff88810004a280: nid: 0',
    );
    expect(ev).toMatchObject({
      comm: 'kswapd0',
      pid: 45,
      cpu: 1,
      flags: null,
      preemptCount: null,
      secs: 805,
      nsec: 303554000,
      name: 'mm_shrink_slab_end',
      args: 'vmap_node_shrink_scan+0x0 0xffff88810004a280: nid: 0',
    });
  });
  it('timestamps become exact integers, no float rounding', () => {
    expect(normal(' a-1 [000] ..... 9007199.254740993: x: y')).toMatchObject({ secs: 9007199, nsec: 254740993 });
    expect(normal(' a-1 [000] ..... 0.000001: x: y')).toMatchObject({ secs: 0, nsec: 1000 });
  });
  it('stack trace and function tracer lines', () => {
    expect(normal(' a-1 [000] ..... 1.000000: <stack trace>')).toMatchObject({ name: 'kernel_stack', args: '' });
    expect(normal(' a-1 [000] ..... 1.000000: do_sys_open <-__x64_sys_openat')).toMatchObject({
      name: 'function',
      args: 'do_sys_open <-__x64_sys_openat',
    });
  });
  it('instance prefix when enabled', () => {
    const ev = newEventLine();
    expect(parseNormalLine('  foo:             bash-12    [000]  1.000000: x: y', 'kernel', ev, true)).toBe(true);
    expect(ev).toMatchObject({ instance: 'foo', comm: 'bash', pid: 12 });
  });
  it('rejects garbage', () => {
    const ev = newEventLine();
    for (const l of [
      'hello world',
      '[001]',
      'x-1 [001] zzzz 1.0: a: b',
      'x-1 [001] 1.0 a: b',
      '@@@ %%% 12345 [garbage]',
    ]) {
      expect(parseNormalLine(l, 'kernel', ev, false)).toBe(false);
    }
  });
});

describe('parseLatencyLine (trace-cmd report -l)', () => {
  it('comm cut to 8 chars, CPU joined to flags', () => {
    const ev = newEventLine();
    expect(
      parseLatencyLine('kswapd0-52      1d.s3.  1234.567890: mm_vmscan_kswapd_wake: nid=0 order=0', 'kernel', ev),
    ).toBe(true);
    expect(ev).toMatchObject({
      comm: 'kswapd0',
      pid: 52,
      cpu: 1,
      flags: 0x11,
      preemptCount: 3,
      secs: 1234,
      nsec: 567890000,
      name: 'mm_vmscan_kswapd_wake',
      args: 'nid=0 order=0',
    });
    expect(parseLatencyLine('npm list-28184 127....  1.000001: x: y', 'kernel', ev)).toBe(true);
    expect(ev).toMatchObject({ comm: 'npm list', pid: 28184, cpu: 127, flags: 0 });
  });
});

describe('parseLostLine', () => {
  it('kernel and trace-cmd notices', () => {
    expect(parseLostLine('CPU:3 [LOST 1234 EVENTS]')).toEqual({ cpu: 3, count: 1234 });
    expect(parseLostLine('CPU:2 [37 EVENTS DROPPED]')).toEqual({ cpu: 2, count: 37 });
    expect(parseLostLine('CPU:2 [EVENTS DROPPED]')).toEqual({ cpu: 2, count: null });
    expect(parseLostLine('##### CPU 127 buffer started ####')).toEqual({ cpu: 127, count: null });
    expect(parseLostLine('# tracer: nop')).toBeNull();
  });
});

describe('parseNormalLine: events the kernel prints without their name', () => {
  it('syscalls: a call is sys_enter_NAME with the text inside the parentheses, an arrow sys_exit_NAME', () => {
    expect(normal('  cat-19557   [000] ..... 44796.84: sys_openat(dfd: 0xffffff9c, mode: 0)')).toMatchObject({
      name: 'sys_enter_openat',
      args: 'dfd: 0xffffff9c, mode: 0',
    });
    expect(normal('  cat-19557   [000] ..... 44796.84: sys_getpid()')).toMatchObject({
      name: 'sys_enter_getpid',
      args: '',
    });
    expect(normal('  cat-19557   [000] ..... 44796.84: sys_openat -> 0xfffffffffffffffe')).toMatchObject({
      name: 'sys_exit_openat',
      args: '0xfffffffffffffffe',
    });
    // raw_syscalls keep their names, and a '(' in another name stays part of it
    expect(normal('  cat-19557   [000] ..... 44796.84: sys_enter: NR 33 (b, 1)')).toMatchObject({
      name: 'sys_enter',
      args: 'NR 33 (b, 1)',
    });
    expect(normal('  cat-19557   [000] ..... 44796.84: probe(x): a=1')).toMatchObject({
      name: 'probe(x)',
      args: 'a=1',
    });
  });
  it('a trace_marker write is ftrace print, its text starting at tracing_mark_write', () => {
    expect(normal('  sh-1   [000] ...1. 5.000001: tracing_mark_write: hello: world')).toMatchObject({
      name: 'print',
      args: 'tracing_mark_write: hello: world',
    });
  });
});
