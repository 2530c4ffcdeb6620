// ftrace's own events, recorded for real (fixtures/recording/record_ftrace_specials.sh):
// trace_marker messages (ftrace print) and kernel stack traces after every
// sched_switch and sched_waking (trace-cmd record -T; the kernel's
// options/stacktrace for the tracefs text). Neither has key=value text, and
// in trace.dat neither record matches its format's declared sizes: print's
// `char buf[]` is declared with size 0, kernel_stack's `caller[8]` holds as
// many frames as the stack had.
//
// The trace.dat and its report text are one recording; the tracefs text is a
// second run of the same workload. Counts come from awk over the text
// (ftrace_specials*.counts.json), the messages from the workload script.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import type { IngestResult } from '../../server/ingest/ingest_file.ts';
import {
  attachModels,
  FIXTURES,
  fixtureCounts,
  workerBuildDifferences,
  type AttachedModels,
} from './attached_models.ts';

const FILES = {
  dat: 'ftrace_specials.v7.dat',
  report: 'ftrace_specials.report.txt',
  tracefs: 'ftrace_specials.tracefs.txt',
} as const;
type Key = keyof typeof FILES;
const COUNTS: Record<Key, string> = {
  dat: 'ftrace_specials.counts.json',
  report: 'ftrace_specials.counts.json',
  tracefs: 'ftrace_specials.tracefs.counts.json',
};

/** What fixtures/recording/record_ftrace_specials.sh writes to trace_marker, in order (the kernel's newline dropped). */
const MARKERS = [
  ...Array.from({ length: 20 }, (_, i) => `stallscope marker ${i + 1} phase=test`),
  'colon: inside: the message',
  '  two leading spaces',
  'utf8 naïve ☃',
  'B|4242|begin of a slice',
  'E|4242',
  'trailing newline',
];

let models: AttachedModels<Key>;
let results: Record<Key, IngestResult>;
let engine: Engine;

beforeAll(async () => {
  models = await attachModels(FILES, 'specials');
  ({ engine, results } = models);
}, 120_000);

afterAll(() => models?.close());

/** The string arg `key` of each event named `name`, in file order. */
async function argOf(db: string, name: string, key: string): Promise<{ id: bigint; v: string | null }[]> {
  return engine.query<{ id: bigint; v: string | null }>(
    `SELECT e.id, a.string_value AS v FROM ${db}.ftrace_event e
       LEFT JOIN ${db}.args a ON a.arg_set_id = e.arg_set_id AND a.key = '${key}'
     WHERE e.name = '${name}' ORDER BY e.id`,
  );
}

describe('ftrace print and kernel_stack events', () => {
  for (const key of Object.keys(FILES) as Key[]) {
    it(`${FILES[key]}: counts per event name equal awk's, nothing skipped`, () => {
      const expected = fixtureCounts(COUNTS[key]);
      const s = results[key].summary;
      expect(s.eventsByName).toEqual(expected.events_by_name);
      expect(s.eventsTotal).toBe(expected.events_total);
      // Before: trace.dat stacks of fewer than 8 frames were reported as records cut short.
      expect(s.skippedInputs).toBe(0);
      expect(s.unparsedEvents).toBe(0);
    });

    it(`${FILES[key]}: every trace_marker message reads as written`, async () => {
      // Before: trace.dat gave an empty buf, the kernel's text an event named tracing_mark_write.
      const bufs = await argOf(key, 'print', 'buf');
      expect(bufs.map((r) => r.v)).toEqual(MARKERS);
      const ips = await argOf(key, 'print', 'ip');
      expect(new Set(ips.map((r) => r.v))).toEqual(new Set(['tracing_mark_write']));
    });
  }

  it('trace.dat and its report text give every stack the same frames', async () => {
    // Before: trace.dat kept the 8 frames the format declares and no symbols; the text kept frames only as raw text.
    const [{ n }] = await engine.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM (
         (SELECT e.id, a.key, a.string_value, a.int_value FROM dat.ftrace_event e JOIN dat.args a USING (arg_set_id) WHERE e.name = 'kernel_stack'
          EXCEPT ALL
          SELECT e.id, a.key, a.string_value, a.int_value FROM report.ftrace_event e JOIN report.args a USING (arg_set_id) WHERE e.name = 'kernel_stack')
         UNION ALL
         (SELECT e.id, a.key, a.string_value, a.int_value FROM report.ftrace_event e JOIN report.args a USING (arg_set_id) WHERE e.name = 'kernel_stack'
          EXCEPT ALL
          SELECT e.id, a.key, a.string_value, a.int_value FROM dat.ftrace_event e JOIN dat.args a USING (arg_set_id) WHERE e.name = 'kernel_stack'))`,
    );
    expect(n).toBe(0n);
    const [shape] = await engine.query<{ stacks: bigint; short: bigint; long: bigint; unresolved: bigint }>(
      `SELECT count(*) AS stacks, count(*) FILTER (WHERE int_value < 8) AS short, count(*) FILTER (WHERE int_value > 8) AS long,
              (SELECT count(*) FROM dat.args WHERE key = 'caller' AND string_value LIKE '%0x%') AS unresolved
       FROM dat.args WHERE key = 'size'`,
    );
    // The recording has stacks on both sides of the declared 8, all resolved by the file's kallsyms.
    expect(shape.stacks).toBe(262n);
    expect(shape.short).toBeGreaterThan(0n);
    expect(shape.long).toBeGreaterThan(0n);
    expect(shape.unresolved).toBe(0n);
  });

  it('the kernel text: each stack holds the frames printed under it', async () => {
    const text = fs.readFileSync(path.join(FIXTURES, FILES.tracefs), 'utf8');
    const frameLines = text
      .split('\n')
      .filter((l) => l.startsWith(' => '))
      .map((l) => l.slice(4));
    const stacks = await argOf('tracefs', 'kernel_stack', 'caller');
    expect(stacks.flatMap((r) => r.v!.split('\n'))).toEqual(frameLines);
    expect(stacks[0]!.v!.split('\n')[0]).toBe('trace_event_raw_event_sched_switch');
  });

  // Large files are parsed on the field worker (continuation lines and the
  // print alias travel in record batches): it must read them alike.
  it.each([['dat'], ['report'], ['tracefs']] as const)(
    '%s built with the store and field workers equals the one-thread build',
    async (alias) => {
      for (const d of await workerBuildDifferences(engine, alias, FILES[alias], ['ftrace_event', 'args']))
        expect(d).toEqual({ table: d.table, differing: 0n });
    },
  );
});
