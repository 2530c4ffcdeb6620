// The kernel's latency format (tracefs `options/latency-format`, and what
// the latency tracers irqsoff/wakeup print): task names cut to 8
// characters, the CPU joined to the flags, and instead of the trace clock
// the microseconds since the trace began, with a mark for the gap to the
// next event (`19016us!:`).
//
// One buffer read twice (fixtures/README.md, latency_format): once in the
// default layout, once with latency-format on. Both must give the same
// events with the same fields; the timestamps differ by one constant (the
// clock at the trace's start), at the latency format's microsecond.
//
// With options/verbose as well, the kernel prints the task name whole, the
// record's flags and preempt depth as numbers and the trace clock in hex
// microseconds: a second buffer (latency_verbose) read in the default
// layout and in that one must give the same model, times included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import { TYPED_TABLES } from '../../server/model/typed_tables.ts';
import type { IngestResult } from '../../server/ingest/ingest_file.ts';
import {
  attachModels,
  differingRows,
  fixtureCounts,
  workerBuildDifferences,
  type AttachedModels,
} from './attached_models.ts';

const FILES = { tracefs: 'latency_format.tracefs.txt', latency: 'latency_format.latency.txt' } as const;
type Key = keyof typeof FILES;
const counts = fixtureCounts('latency_format.counts.json');

let models: AttachedModels<Key>;
let results: Record<Key, IngestResult>;
let engine: Engine;

beforeAll(async () => {
  models = await attachModels(FILES, 'latency');
  ({ engine, results } = models);
}, 120_000);

afterAll(() => models?.close());

/**
 * Events (file order) whose text, CPU or thread differ between the two, or
 * whose ts is not the first event's offset away. Within 1 µs: the latency
 * format prints floor((ts - start) / 1000) µs, the default layout
 * floor(ts / 1000), so the difference of the two is the offset or 1 µs
 * more.
 */
async function differingEvents(): Promise<bigint> {
  const [{ n }] = await engine.query<{ n: bigint }>(
    `WITH offset_ns AS (
       SELECT (SELECT ts FROM latency.ftrace_event ORDER BY id LIMIT 1)
            - (SELECT CAST(floor(ts / 1000) * 1000 AS BIGINT) FROM tracefs.ftrace_event ORDER BY id LIMIT 1) AS d
     )
     SELECT count(*) AS n
     FROM tracefs.ftrace_event a JOIN latency.ftrace_event b USING (id)
     JOIN tracefs.thread ta ON ta.utid = a.utid JOIN latency.thread tb ON tb.utid = b.utid
     WHERE a.name <> b.name OR a.cpu <> b.cpu OR ta.tid <> tb.tid
        OR a.raw IS DISTINCT FROM b.raw OR a.common_flags IS DISTINCT FROM b.common_flags
        OR a.preempt_count IS DISTINCT FROM b.preempt_count
        OR abs(CAST(floor(a.ts / 1000) * 1000 AS BIGINT) + (SELECT d FROM offset_ns) - b.ts) > 1000`,
  );
  return n;
}

describe('the kernel latency format reads like the default layout of the same buffer', () => {
  it('every event, counted as awk counts the default text', () => {
    for (const key of Object.keys(FILES) as Key[]) {
      const s = results[key].summary;
      expect({ key, byName: s.eventsByName }).toEqual({ key, byName: counts.events_by_name });
      expect(s.eventsTotal).toBe(counts.events_total);
      expect(s.cpus).toBe(counts.cpus);
      expect(s.skippedInputs).toBe(0);
      expect(s.unparsedEvents).toBe(0);
    }
  });

  it('says its timestamps are microseconds since the trace began', () => {
    expect(results.latency.summary.meta.text_layout).toBe('kernel_latency');
    expect(results.latency.summary.meta.timestamps).toMatch(/^microseconds since the trace began/);
    expect(results.tracefs.summary.meta.text_layout).toBeUndefined();
    // The first event: `bash-18621 0..... 23661us+: sched_process_fork` in the latency text.
    expect(results.latency.summary.firstTsNs).toBe('23661000');
  });

  it('the same events: names, CPUs, threads, flags, text; times one offset apart', async () => {
    const [{ n }] = await engine.query<{ n: bigint }>('SELECT count(*) AS n FROM latency.ftrace_event');
    expect(n).toBe(BigInt(counts.events_total));
    expect(await differingEvents()).toBe(0n);
  });

  it('the same typed rows, but for ts', async () => {
    for (const table of TYPED_TABLES) {
      const [{ n }] = await engine.query<{ n: bigint }>(
        `SELECT count(*) AS n FROM ((SELECT * EXCLUDE (ts) FROM tracefs.${table} EXCEPT ALL SELECT * EXCLUDE (ts) FROM latency.${table})
           UNION ALL (SELECT * EXCLUDE (ts) FROM latency.${table} EXCEPT ALL SELECT * EXCLUDE (ts) FROM tracefs.${table}))`,
      );
      expect({ table, differing: n }).toEqual({ table, differing: 0n });
    }
    const [{ n }] = await engine.query<{ n: bigint }>('SELECT count(*) AS n FROM latency.sched_switch');
    expect(n).toBe(BigInt(counts.events_by_name.sched_switch!));
  });

  it('the scheduler model: the same slices and thread states, shifted', async () => {
    const differing = (table: string) =>
      engine.query<{ state: string | null }>(
        `(SELECT * EXCLUDE (ts, dur) FROM tracefs.${table} EXCEPT ALL SELECT * EXCLUDE (ts, dur) FROM latency.${table})
         UNION ALL (SELECT * EXCLUDE (ts, dur) FROM latency.${table} EXCEPT ALL SELECT * EXCLUDE (ts, dur) FROM tracefs.${table})`,
      );
    expect(await differing('sched_slice')).toEqual([]);
    // A wakeup and a switch of its thread in the same microsecond in one
    // layout and not the other (the 1 µs above) order differently, and a
    // wakeup counts only after a blocking switch-out: here one wakeup row
    // of the 342 differs, and only wakeup rows may.
    const states = await differing('thread_state');
    expect(states.length).toBeLessThanOrEqual(2);
    expect(states.every((r) => r.state === 'R')).toBe(true);
    const [{ n }] = await engine.query<{ n: bigint }>('SELECT count(*) AS n FROM latency.thread_state');
    expect(n).toBeGreaterThan(300n);
  });

  it('built with the store and field workers (as large files are), the same model', async () => {
    const tables = [...TYPED_TABLES, 'thread', 'thread_state', 'sched_slice', 'ftrace_event', 'args'];
    expect(await workerBuildDifferences(engine, 'latency', FILES.latency, tables)).toEqual(
      tables.map((table) => ({ table, differing: 0n })),
    );
  });
});

describe('the kernel verbose latency format reads like the default layout of the same buffer', () => {
  const VERBOSE = { tracefs: 'latency_verbose.tracefs.txt', verboseText: 'latency_verbose.verbose.txt' } as const;
  const verboseCounts = fixtureCounts('latency_verbose.counts.json');
  let v: AttachedModels<keyof typeof VERBOSE>;
  beforeAll(async () => {
    v = await attachModels(VERBOSE, 'latency-verbose');
  }, 120_000);
  afterAll(() => v?.close());

  it('every event, none unparsed, and says its layout', () => {
    for (const key of ['tracefs', 'verboseText'] as const) {
      const s = v.results[key].summary;
      expect({ key, byName: s.eventsByName }).toEqual({ key, byName: verboseCounts.events_by_name });
      expect({ key, unparsed: s.unparsedEvents, skipped: s.skippedInputs }).toEqual({ key, unparsed: 0, skipped: 0 });
    }
    expect(v.results.verboseText.summary.meta.text_layout).toBe('kernel_latency_verbose');
    // the trace clock, not the time since the trace began
    expect(v.results.verboseText.summary.firstTsNs).toBe(v.results.tracefs.summary.firstTsNs);
  });

  it('the same model: events with their flags, preempt depth and time, typed rows, threads, scheduler', async () => {
    for (const table of [...TYPED_TABLES, 'thread', 'sched_slice', 'thread_state', 'args']) {
      expect({ table, differing: await differingRows(v.engine, `tracefs.${table}`, `verboseText.${table}`) }).toEqual({
        table,
        differing: 0n,
      });
    }
    // only the line numbers differ (the headers have other lengths)
    const events = (db: string) => `(SELECT * EXCLUDE (source_where) FROM ${db}.ftrace_event)`;
    expect(await differingRows(v.engine, events('tracefs'), events('verboseText'))).toBe(0n);
    const [{ n }] = await v.engine.query<{ n: bigint }>(
      'SELECT count(*) AS n FROM verboseText.ftrace_event WHERE common_flags <> 0',
    );
    expect(n).toBeGreaterThan(100n);
  });

  it('built with the store and field workers, the same model', async () => {
    const tables = [...TYPED_TABLES, 'thread', 'thread_state', 'sched_slice', 'ftrace_event', 'args'];
    expect(await workerBuildDifferences(v.engine, 'verboseText', VERBOSE.verboseText, tables)).toEqual(
      tables.map((table) => ({ table, differing: 0n })),
    );
  });
});
