/**
 * WorkqueueColumnWriter (workqueue events' text straight into their typed
 * columns, on the field worker) must give exactly the rows the
 * fields-object path gives (parseWorkqueue, then the table's field writer),
 * and leave to that path whatever it is not sure of. Checked on the
 * workqueue events of the text fixtures, plus mutations that push it off
 * its fast path (pointer spellings, symbols with offsets or modules, quoted
 * or odd workqueue names, signed or long CPUs, extra spaces, truncations).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuckDb, type Engine } from '../../../engine/engine.ts';
import { ModelStore, type ModelLayout } from '../../../model/model_store.ts';
import { workqueueTextWriter } from '../raw_text_fields.ts';
import { comparableChunks as comparable } from '../../../../tests/support/decode/ftrace_text/fields/test_kv_events.ts';
import { writeBothWays } from '../../../../tests/support/decode/ftrace_text/fields/write_both_ways.ts';

const FIX = join(import.meta.dirname, '../../../../fixtures');
const FILES = [
  'fsync_xfs.report.txt',
  'memcg_reclaim.report.txt',
  'multi_instance.report.txt',
  'raw_fields.tracefs.txt',
];

let engine: Engine;
let layout: ModelLayout;
beforeAll(async () => {
  engine = await openDuckDb(':memory:');
  layout = (await ModelStore.create(engine)).layout;
});
afterAll(() => engine?.close());

/** The workqueue events of a fixture as [name, argument text]. */
function recorded(file: string): [string, string][] {
  const out: [string, string][] = [];
  for (const line of readFileSync(join(FIX, file), 'latin1').split('\n')) {
    const m = / (workqueue_[a-z_]+): (.*)$/.exec(line);
    if (m) out.push([m[1]!, m[2]!]);
  }
  return out;
}

/** Each text, and spellings of it the writer must leave to the parser or read the same. */
function mutations(args: string): string[] {
  const out = [args, `${args}  `, `  ${args}`, `${args}\t`, args.slice(0, -1), args.slice(0, 14)];
  const rep = (a: RegExp, b: string | ((m: string) => string)) => {
    const m = typeof b === 'string' ? args.replace(a, b) : args.replace(a, b);
    if (m !== args) out.push(m);
  };
  rep(/0x([0-9a-f])/, '0X$1');
  rep(/0x([0-9a-f]+)/, (s: string) => s.toUpperCase());
  rep(/0x([0-9a-f]+)/, '$1');
  rep(/0x([0-9a-f]+)/, '0x0000$1');
  rep(/0x([0-9a-f]+)/, '0x1$1$1');
  // 16 and 17 significant digits: the most the writer keeps as a value, and one more
  rep(/0x([0-9a-f]+)/, '0xfedcba9876543210');
  rep(/0x([0-9a-f]+)/, '0x1fedcba9876543210');
  rep(/0x([0-9a-f]+)/, '0x2fedcba9876543210');
  rep(/0x([0-9a-f]+)/, '0x0');
  rep(/0x([0-9a-f]+)/, '0xg$1');
  rep(/0x([0-9a-f]+):/, '0x$1');
  rep(/function[ =]([a-z_0-9.]+)/, (m: string) => `${m}+0x10/0x40`);
  rep(/function[ =]([a-z_0-9.]+)/, (m: string) => `${m} [xfs]`);
  rep(/function([ =])[a-z_0-9.]+/, 'function$10xffffffff81a01234');
  rep(/function /, 'function  ');
  rep(/function /, 'function =');
  rep(/workqueue=[^ ]+/, 'workqueue="kblockd"');
  rep(/workqueue=[^ ]+/, 'workqueue=a=b');
  rep(/workqueue=[^ ]+/, 'workqueue=xfs-log/dm-0');
  rep(/ workqueue=/, '  workqueue=');
  rep(/req_cpu=\d+/, 'req_cpu=-1');
  rep(/req_cpu=\d+/, 'req_cpu=0256');
  rep(/req_cpu=\d+/, 'req_cpu=12345678901');
  rep(/ cpu=\d+/, ' cpu=3 extra=1');
  rep(/ cpu=\d+/, '');
  rep(/ cpu=\d+/, ' cpu=x');
  rep(/ req_cpu=\d+ cpu=\d+/, '');
  rep(/ function=.*$/, '');
  return out;
}

/** Rows of the events written both ways, in one block as on the field worker. */
function writeBoth(events: [string, string][]) {
  return writeBothWays(layout, events, {
    writerFor: workqueueTextWriter,
    writerRequired: true,
    sharedBlock: true,
    parserGetsBytes: false,
  });
}

describe('WorkqueueColumnWriter writes the fields-object path rows', () => {
  for (const f of FILES) {
    it(f, () => {
      const events = recorded(f).flatMap(([name, args]) => mutations(args).map((a): [string, string] => [name, a]));
      expect(events.length).toBeGreaterThan(0);
      const r = writeBoth(events);
      expect(comparable(r.chunks.direct)).toEqual(comparable(r.chunks.object));
      expect(r.dicts.direct).toEqual(r.dicts.object);
      // It takes the plain lines, and not all the mutations.
      expect(r.taken).toBeGreaterThan(0);
      expect(r.taken).toBeLessThan(r.rows);
    });
  }

  it("the kernels' spellings: 6.x queue_work, activate_work with and without function, execute_start/end", () => {
    const events: [string, string][] = [
      [
        'workqueue_queue_work',
        'work struct=0xffff88822664c2b0 function=xlog_ioend_work workqueue=xfs-log/loop0 req_cpu=256 cpu=0',
      ],
      [
        'workqueue_queue_work',
        'work struct=0000000012345678 function=vmstat_update workqueue=mm_percpu_wq req_cpu=1 cpu=1',
      ],
      ['workqueue_activate_work', 'work struct 0xffff88822664c2b0 function=xlog_ioend_work '],
      ['workqueue_activate_work', 'work struct 0000000012345678'],
      ['workqueue_execute_start', 'work struct 0xffff88822664c2b0: function xlog_ioend_work'],
      ['workqueue_execute_end', 'work struct 0xffff88822664c2b0: function xlog_ioend_work'],
      ['workqueue_execute_start', 'work struct 0xffff88822664c2b0: function xfs_end_io.cold'],
    ];
    const r = writeBoth(events);
    expect(comparable(r.chunks.direct)).toEqual(comparable(r.chunks.object));
    expect(r.dicts.direct).toEqual(r.dicts.object);
    expect(r.taken).toBe(events.length);
    // The pointer as normalizePointer prints it, whichever spelling came.
    expect(r.dicts.direct.flat().flat()).toContain('0x12345678');
  });
});
