// Syscall events, recorded for real (fixtures/recording/record_syscalls.sh):
// openat, close, getpid and futex, entry and exit. trace-cmd report prints
// `sys_enter_openat: dfd: 0xffffff9c, ...`, the kernel's own text prints the
// call (`sys_openat(dfd: 0xffffff9c, ...)`, `sys_openat -> 0x3`) with no
// event name at all. The trace.dat and its report are one recording, the
// kernel text a second run of the same workload. Counts come from awk.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import type { IngestResult } from '../../server/ingest/ingest_file.ts';
import { attachModels, fixtureCounts, workerBuildDifferences, type AttachedModels } from './attached_models.ts';

const FILES = { dat: 'syscalls.v7.dat', report: 'syscalls.report.txt', tracefs: 'syscalls.tracefs.txt' } as const;
type Key = keyof typeof FILES;
const COUNTS: Record<Key, string> = {
  dat: 'syscalls.counts.json',
  report: 'syscalls.counts.json',
  tracefs: 'syscalls.tracefs.counts.json',
};

let models: AttachedModels<Key>;
let results: Record<Key, IngestResult>;
let engine: Engine;

beforeAll(async () => {
  models = await attachModels(FILES, 'syscalls');
  ({ engine, results } = models);
}, 120_000);

afterAll(() => models?.close());

/** The args of events named `name` in `db`: id, key, value as text. */
const argsOf = (db: string, where: string) =>
  `SELECT e.id, a.key, coalesce(a.string_value, a.int_value::VARCHAR) AS v, a.value_type
   FROM ${db}.ftrace_event e JOIN ${db}.args a USING (arg_set_id) WHERE ${where}`;

describe('syscall events', () => {
  for (const key of Object.keys(FILES) as Key[]) {
    it(`${FILES[key]}: counts per event name equal awk's, every event parsed`, () => {
      const expected = fixtureCounts(COUNTS[key]);
      const s = results[key].summary;
      // Before: the kernel's text made events named `sys_openat(dfd` and skipped every exit line.
      expect(s.eventsByName).toEqual(expected.events_by_name);
      expect(s.eventsTotal).toBe(expected.events_total);
      expect(s.skippedInputs).toBe(0);
      expect(s.unparsedEvents).toBe(0);
    });

    it(`${FILES[key]}: arguments and return values are integers, errors negative`, async () => {
      const [r] = await engine.query<{
        enoent: bigint;
        open_args: bigint;
        getpid_args: bigint;
        getpid_is_tid: boolean;
      }>(
        `SELECT
           (SELECT count(*) FROM (${argsOf(key, "e.name = 'sys_exit_openat'")}) WHERE key = 'ret' AND v = '-2' AND value_type = 'int') AS enoent,
           (SELECT count(DISTINCT key) FROM (${argsOf(key, "e.name = 'sys_enter_openat'")}) WHERE key IN ('dfd', 'filename', 'flags', 'mode') AND value_type = 'int') AS open_args,
           (SELECT count(*) FROM (${argsOf(key, "e.name = 'sys_enter_getpid'")}) WHERE key <> '__syscall_nr') AS getpid_args,
           -- getpid returns the caller's pid: single-threaded callers, so its tid
           (SELECT bool_and(CAST(a.v AS BIGINT) = t.tid) FROM (${argsOf(key, "e.name = 'sys_exit_getpid'")}) a
              JOIN ${key}.ftrace_event e USING (id) JOIN ${key}.thread t USING (utid) WHERE a.key = 'ret') AS getpid_is_tid`,
      );
      // The workload opens /nonexistent/stallscope three times.
      expect(r.enoent).toBeGreaterThanOrEqual(3n);
      expect(r.open_args).toBe(4n);
      expect(r.getpid_args).toBe(0n);
      expect(r.getpid_is_tid).toBe(true);
    });
  }

  it('trace.dat and its report text give the same arguments', async () => {
    // futex has a print format of its own (op=FUTEX_WAKE|FUTEX_PRIVATE_FLAG ...): its text keeps the names the
    // kernel prints, trace.dat the numbers. The text has no __syscall_nr (it is not printed).
    const common = "e.name LIKE 'sys_e%' AND e.name NOT LIKE '%futex' AND a.key <> '__syscall_nr'";
    const [{ differing, compared }] = await engine.query<{ differing: bigint; compared: bigint }>(
      `SELECT count(*) FILTER (WHERE d.v IS DISTINCT FROM r.v) AS differing, count(*) AS compared
       FROM (${argsOf('dat', common)}) d FULL JOIN (${argsOf('report', common)}) r USING (id, key)`,
    );
    expect(compared).toBeGreaterThan(20_000n);
    expect(differing).toBe(0n);
  });

  it.each([['dat'], ['report'], ['tracefs']] as const)(
    '%s built with the store and field workers equals the one-thread build',
    async (alias) => {
      for (const d of await workerBuildDifferences(engine, alias, FILES[alias], ['ftrace_event', 'args']))
        expect(d).toEqual({ table: d.table, differing: 0n });
    },
  );
});
