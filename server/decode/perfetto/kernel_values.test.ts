/**
 * kernel_values.ts's tables against the kernel's own print fmts: the format
 * files of a real 6.18 trace.dat (fixtures/perfetto_pair.trace-cmd.dat, the
 * machine the Perfetto fixtures were recorded on), rendered by the trace.dat
 * decoder's print fmt evaluator, for every single bit and the values the
 * recordings hold.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzePrintFmt } from '../trace_dat/print_fmt.ts';
import { parseEventFormat } from '../trace_dat/event_format.ts';
import { FileSource } from '../trace_dat/file_source.ts';
import { readTraceDatHeader } from '../trace_dat/read_file_header.ts';
import { gfpTableFits, printedField } from './kernel_values.ts';

const FILE = join(import.meta.dirname, '../../../fixtures/perfetto_pair.trace-cmd.dat');

async function renderers(file = FILE): Promise<Map<string, (raw: bigint) => string | undefined>> {
  const src = await FileSource.open(file);
  try {
    const info = await readTraceDatHeader(src);
    const out = new Map<string, (raw: bigint) => string | undefined>();
    for (const f of info.formats) {
      const ev = parseEventFormat(f.text, f.system);
      for (const [field, r] of analyzePrintFmt(ev.printFmt).printedText) out.set(`${ev.name}.${field}`, r);
    }
    return out;
  } finally {
    await src.close();
  }
}

const bits = (n: number) => Array.from({ length: n }, (_, i) => 1n << BigInt(i));

describe('printed flags and enumerations match the 6.18 kernel print fmts', () => {
  const cases: [string, string, bigint[]][] = [
    [
      'mm_vmscan_wakeup_kswapd',
      'gfp_flags',
      [...bits(26), 0n, 0xcc0n, 0x100ccan, 0x1c24can, 0x400dc0n, 0x140dcan, 0x2800n],
    ],
    ['mm_vmscan_lru_shrink_inactive', 'reclaim_flags', [...bits(6), 0n, 0x9n, 0xan, 0x11n]],
    ['sched_switch', 'prev_state', [0n, 0x100n, ...bits(8), 0x81n, 0x102n, 0x3n]],
    ['mm_vmscan_lru_isolate', 'lru', [0n, 1n, 2n, 3n, 4n, 5n]],
    ['writeback_start', 'reason', [0n, 1n, 2n, 3n, 4n, 5n, 6n, 7n, 9n]],
  ];
  it.each(cases)('%s.%s', async (event, field, values) => {
    const kernel = (await renderers()).get(`${event}.${field}`);
    expect(kernel).toBeDefined();
    const ours = printedField(event, field, true)!;
    for (const v of values) {
      expect({ v: v.toString(16), text: ours.print(v) }).toEqual({ v: v.toString(16), text: kernel!(v) });
      // The export's direction: the printed text gives the number back.
      expect(ours.print(ours.parse(ours.print(v))!)).toBe(ours.print(v));
    }
  });

  it("irq_handler_exit.ret as the kernel prints it (the corpus's many_systems recording has the irq events)", async () => {
    const kernel = (await renderers(join(import.meta.dirname, '../../../fixtures/corpus/many_systems.v7.dat'))).get(
      'irq_handler_exit.ret',
    );
    expect(kernel).toBeDefined();
    const ours = printedField('irq_handler_exit', 'ret', true)!;
    // IRQ_NONE, IRQ_HANDLED, IRQ_WAKE_THREAD
    for (const v of [0n, 1n, 2n]) expect(ours.print(v)).toBe(kernel!(v));
    expect(ours.parse('handled')).toBe(1n);
    expect(ours.parse('unhandled')).toBe(0n);
    expect(ours.parse('1')).toBeNull();
  });

  it('GFP names are used for 6.3+ kernels only (6.3 renumbered the bits)', () => {
    expect(gfpTableFits('6.18.44-fc-v657')).toBe(true);
    expect(gfpTableFits('6.3.0')).toBe(true);
    expect(gfpTableFits('6.1.90-android')).toBe(false);
    expect(gfpTableFits('5.15.0')).toBe(false);
    expect(gfpTableFits(null)).toBe(true);
  });
});
