// Fields of events without a typed table, recorded for real
// (fixtures/recording/record_printed_args.sh): kmem, softirq, timer, ipi,
// csd, page fault, signal and task events, whose print formats show values
// in other forms than their binary records hold: symbols with offsets
// (call_site=alloc_bprm+0x45, the kernel adds /0x1b0), hex numbers
// (pfn=0x158e8a), NULL pointers ((nil)), booleans (accounted=false), a
// number with its name (vec=7 [action=SCHED]), separators (func=f, csd=...).
// The trace.dat and its report are one recording: every field of every event
// must read the same from both. The kernel's text is a second run: its
// fields must read in the same forms.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import type { IngestResult } from '../../server/ingest/ingest_file.ts';
import { attachModels, fixtureCounts, workerBuildDifferences, type AttachedModels } from './attached_models.ts';

const FILES = {
  dat: 'printed_args.v7.dat',
  report: 'printed_args.report.txt',
  tracefs: 'printed_args.tracefs.txt',
} as const;
type Key = keyof typeof FILES;
const COUNTS: Record<Key, string> = {
  dat: 'printed_args.counts.json',
  report: 'printed_args.counts.json',
  tracefs: 'printed_args.tracefs.counts.json',
};

/**
 * Fields whose report text cannot give the binary value, with why: these
 * are the only ones allowed to differ between trace.dat and its report.
 */
const UNRECOVERABLE: Record<string, string> = {
  // Hex printed without 0x (`%lx`): the text cannot tell it from decimal, so
  // `sa_flags=4000000` reads as 4000000 (or `561585e1a7c0` as text), while
  // trace.dat has the value (0x4000000 = 67108864).
  'signal_deliver.sa_flags': '%lx without 0x',
  'signal_deliver.sa_handler': '%lx without 0x',
  'task_newtask.clone_flags': '%lx without 0x',
  // trace-cmd prints `flags=D|P|I` where the kernel's own text (the
  // tracefs fixture) prints `flags=` for the same bits: its evaluation of
  // `__print_flags(REC->flags & (...))` differs; trace.dat gives the kernel's.
  'timer_start.flags': 'trace-cmd prints other flags than the kernel',
};

let models: AttachedModels<Key>;
let results: Record<Key, IngestResult>;
let engine: Engine;

beforeAll(async () => {
  models = await attachModels(FILES, 'printed-args');
  ({ engine, results } = models);
}, 120_000);

afterAll(() => models?.close());

/** Every args row of `db`: event id and name, key, value as text, value type. */
const argsOf = (db: string) =>
  `SELECT e.id, e.name, a.key, coalesce(a.string_value, a.int_value::VARCHAR) AS v, a.value_type
   FROM ${db}.ftrace_event e JOIN ${db}.args a USING (arg_set_id)`;

describe('fields of events without a typed table', () => {
  for (const key of Object.keys(FILES) as Key[]) {
    it(`${FILES[key]}: counts per event name equal awk's, every event parsed`, () => {
      const expected = fixtureCounts(COUNTS[key]);
      const s = results[key].summary;
      expect(s.eventsByName).toEqual(expected.events_by_name);
      expect(s.skippedInputs).toBe(0);
      expect(s.unparsedEvents).toBe(0);
    });
  }

  // Keys only one side has are not compared: the text prints values no field
  // holds (mm_page_alloc page=, kmalloc accounted=, timer_start cpu= idx=,
  // all computed from other fields), and trace.dat has fields the text does
  // not print (timer_start now; hrtimer_start mode and was_armed, which
  // trace-cmd's hrtimer plugin leaves out).
  it('trace.dat and its report give every field both have the same value', async () => {
    const differing = await engine.query<{
      name: string;
      key: string;
      n: bigint;
      dat: string | null;
      report: string | null;
    }>(
      `WITH d AS (${argsOf('dat')}), r AS (${argsOf('report')})
       SELECT coalesce(d.name, r.name) AS name, coalesce(d.key, r.key) AS key, count(*) AS n,
              any_value(d.v || ' (' || d.value_type || ')') AS dat, any_value(r.v || ' (' || r.value_type || ')') AS report
       FROM d JOIN r ON d.id = r.id AND d.key = r.key
       WHERE d.v IS DISTINCT FROM r.v OR d.value_type IS DISTINCT FROM r.value_type
       GROUP BY ALL ORDER BY name, key`,
    );
    const unexplained = differing.filter((d) => !(`${d.name}.${d.key}` in UNRECOVERABLE));
    expect(unexplained).toEqual([]);
    // And the comparison had something to compare: every event has fields.
    const [{ events, with_args }] = await engine.query<{ events: bigint; with_args: bigint }>(
      `SELECT count(*) AS events, count(arg_set_id) AS with_args FROM dat.ftrace_event`,
    );
    expect(with_args).toBe(events);
  });

  it('the forms chosen: symbols with their offset, hex as printed, NULL as 0x0, booleans as words, a number without its name', async () => {
    const rows = await engine.query<{ db: string; name: string; key: string; v: string; value_type: string }>(
      `SELECT * FROM (
         ${(['dat', 'report', 'tracefs'] as const).map((db) => `SELECT '${db}' AS db, name, key, v, value_type FROM (${argsOf(db)})`).join(' UNION ALL ')})
       ORDER BY db, name, key, v`,
    );
    const values = (db: string, name: string, key: string) =>
      rows.filter((r) => r.db === db && r.name === name && r.key === key);
    for (const db of ['dat', 'report', 'tracefs']) {
      // kmalloc's call site: `function+0xoffset`, never without the offset, never with the kernel's /size.
      const sites = values(db, 'kmalloc', 'call_site');
      expect(sites.length, `${db} kmalloc call sites`).toBeGreaterThan(0);
      for (const s of sites) expect(s.v, `${db} kmalloc call_site`).toMatch(/^[A-Za-z_][\w.]*\+0x[0-9a-f]+$/);
      // mm_page_alloc's pfn, printed 0x-hex: text, as printed.
      const pfns = values(db, 'mm_page_alloc', 'pfn');
      expect(pfns.length).toBeGreaterThan(0);
      for (const p of pfns) expect([p.v, p.value_type]).toEqual([expect.stringMatching(/^0x[0-9a-f]+$/), 'string']);
      // kmem_cache_alloc's accounted: the word the kernel prints.
      expect(new Set(values(db, 'kmem_cache_alloc', 'accounted').map((r) => r.v))).toEqual(new Set(['true', 'false']));
      // softirq_entry's vec: the number (its name is the print format's table, the same on every machine).
      for (const v of values(db, 'softirq_entry', 'vec'))
        expect([v.value_type, Number(v.v)]).toEqual(['int', expect.any(Number)]);
      // csd_function_entry's func: the symbol alone, without the comma that follows it in the text.
      for (const f of values(db, 'csd_function_entry', 'func')) expect(f.v).toMatch(/^[A-Za-z_][\w.]*$/);
    }
    // A NULL pointer reads 0x0 in both sources of one recording (the report prints `(nil)`).
    const nulls = (db: string) => values(db, 'kfree', 'ptr').filter((r) => r.v === '0x0').length;
    expect(nulls('report')).toBe(nulls('dat'));
    expect(values('report', 'kfree', 'ptr').some((r) => r.v === '(nil)')).toBe(false);
  });

  it('the kernel text gives each field the same type as trace.dat', async () => {
    const differing = await engine.query<{ name: string; key: string; dat: string; tracefs: string }>(
      `WITH d AS (SELECT name, key, string_agg(DISTINCT value_type, ',' ORDER BY value_type) AS t FROM (${argsOf('dat')}) GROUP BY ALL),
            k AS (SELECT name, key, string_agg(DISTINCT value_type, ',' ORDER BY value_type) AS t FROM (${argsOf('tracefs')}) GROUP BY ALL)
       SELECT d.name, d.key, d.t AS dat, k.t AS tracefs FROM d JOIN k USING (name, key)
       WHERE d.t <> k.t ORDER BY ALL`,
    );
    expect(differing.filter((d) => !(`${d.name}.${d.key}` in UNRECOVERABLE))).toEqual([]);
  });

  // Large files decode these events' fields on the field worker, into the
  // worker's own shape tables (server/model/untyped_rows.ts).
  it.each([['dat'], ['report'], ['tracefs']] as const)(
    '%s built with the store and field workers equals the one-thread build',
    async (alias) => {
      for (const d of await workerBuildDifferences(engine, alias, FILES[alias], ['ftrace_event', 'args']))
        expect(d).toEqual({ table: d.table, differing: 0n });
    },
  );
});
