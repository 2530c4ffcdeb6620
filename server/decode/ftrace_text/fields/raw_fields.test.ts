import { describe, expect, it } from 'vitest';
import { prevStateOf, rawFieldText } from './raw_fields.ts';

describe('raw fields', () => {
  it("prev_state numbers read as the kernel's print format names them (4.14+)", () => {
    // include/trace/events/sched.h: bits S D T t X Z P I, none R, 0x100 (TASK_REPORT_MAX) +
    expect([0, 0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x40, 0x80].map(prevStateOf)).toEqual([
      'R',
      'S',
      'D',
      'T',
      't',
      'X',
      'Z',
      'P',
      'I',
    ]);
    expect(prevStateOf(0x100)).toBe('R+');
    expect(prevStateOf(0x101)).toBe('S+');
    expect(prevStateOf(0x3)).toBe('S|D');
  });

  it("strips libtraceevent's [FAILED TO PARSE] and reads options/fields values", () => {
    expect(rawFieldText('[FAILED TO PARSE] nid=0 nr_scanned=32')).toBe('nid=0 nr_scanned=32');
    expect(rawFieldText('prev_comm=bash prev_pid=0x45b6 (17846) prev_state=0x1 (1)')).toBe(
      'prev_comm=bash prev_pid=17846 prev_state=1',
    );
    // pointers and symbols keep their first form: their decimal is a negative address
    expect(
      rawFieldText('work=0xffff88810256b640 (-131387305314752) function=blk_mq_run_work_fn+0x0/0x80 (-2119168896)'),
    ).toBe('work=0xffff88810256b640 function=blk_mq_run_work_fn+0x0/0x80');
    // text that only looks alike is left alone
    expect(rawFieldText('msg=see (1) comm=a (b)')).toBe('msg=see (1) comm=a (b)');
  });
});
