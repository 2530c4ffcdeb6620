// How the text decoders read a printed value that is not a plain decimal
// (values.ts printedValue): the form the trace.dat decoder gives the same
// field (event_decoder.ts asPrinted), fixed by tests/golden/printed_args.test.ts.
import { describe, expect, it } from 'vitest';
import { kvObject } from './key_values.ts';
import { printedValue } from './values.ts';

describe('printedValue', () => {
  it('%pS: the kernel adds /size, trace-cmd does not; both read func+0xoffset', () => {
    expect(printedValue('ext4_find_extent+0x30c/0x350')).toBe('ext4_find_extent+0x30c');
    expect(printedValue('alloc_bprm+0x45')).toBe('alloc_bprm+0x45');
    expect(printedValue('getname_flags.part.0+0x24/0x1d0')).toBe('getname_flags.part.0+0x24');
    // trace-cmd's hrtimer plugin prints %ps as func/0x0
    expect(printedValue('tick_nohz_handler/0x0')).toBe('tick_nohz_handler');
    // not a symbol: a path stays as printed
    expect(printedValue('/dev/0x1')).toBe('/dev/0x1');
  });

  it('a NULL pointer as trace-cmd prints it reads as the other pointers do', () => {
    expect(printedValue('(nil)')).toBe('0x0');
  });

  it('a number with its name beside it reads as the number', () => {
    expect(printedValue('7 [action=SCHED]')).toBe(7);
    expect(printedValue('4306014073 [timeout=25]')).toBe(4306014073);
    expect(printedValue('flush on task switch (0)')).toBe(0);
    expect(printedValue('x [not a number]')).toBe('x [not a number]');
  });

  it('a comma after a value separates fields, it is not part of it', () => {
    expect(printedValue('nohz_csd_func,')).toBe('nohz_csd_func');
    expect(printedValue('2,')).toBe(2);
    expect(printedValue(',')).toBe(',');
  });

  it('applies to the values of events read generically', () => {
    expect(kvObject('vec=7 [action=SCHED]')).toEqual({ vec: 7 });
    expect(kvObject('cpu=1 func=nohz_csd_func, csd=(nil)')).toEqual({ cpu: 1, func: 'nohz_csd_func', csd: '0x0' });
    expect(kvObject('call_site=ext4_find_extent+0x30c/0x350 ptr=00000000d925265c bytes_req=96')).toEqual({
      call_site: 'ext4_find_extent+0x30c',
      ptr: '00000000d925265c',
      bytes_req: 96,
    });
  });
});
