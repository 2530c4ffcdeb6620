// The bench corpus's recordings (fixtures/corpus: reclaim, sched_wq, kmem,
// many_systems; 0.35-1M events each, real, of different event mixes), each
// read from the four forms a user drops in: the trace.dat v7 (zstd) trace-cmd
// recorded, its v6 conversion, its `trace-cmd report` text and the kernel's
// tracefs text of it (made from `report -N`, report_to_tracefs.ts). Whatever
// the form, the model must hold the same events with the same field values:
// typed tables, and the fields of events without one (`args`, stored per
// event shape since model version 6, server/model/untyped_rows.ts).
//
// Files this size take the ingest's worker threads (estimatedEvents >=
// STORE_WORKER_MIN_EVENTS), so these tests also cover the three-thread
// path on every format. Expected counts come from awk over trace-cmd report
// (MIX.counts.json, fixtures/recording/record_corpus.sh).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookupEvents } from '../../server/api/event_lookup.ts';
import type { OpenTrace } from '../../server/api/trace_engines.ts';
import { openDuckDb, type Engine } from '../../server/engine/engine.ts';
import { ingestFile, type IngestResult } from '../../server/ingest/ingest_file.ts';
import { TYPED_TABLES, typedTableFor } from '../../server/model/typed_tables.ts';
import { tracefsTextOf } from './report_to_tracefs.ts';

const CORPUS = path.resolve(__dirname, '../../fixtures/corpus');
const MIXES = fs
  .readdirSync(CORPUS)
  .filter((f) => f.endsWith('.v7.dat'))
  .map((f) => f.replace(/\.v7\.dat$/, ''))
  .sort();

type Form = 'v7' | 'v6' | 'report' | 'tracefs';
const TEXT: Form[] = ['report', 'tracefs'];

/**
 * Fields of events without a typed table that only one side prints, by the
 * text form (keys are compared where both sides have them): values the
 * print format computes (timer_start cpu= idx=, itimer_state it_value=
 * it_interval=, kmalloc accounted= from gfp_flags, mm_page_alloc page= from
 * pfn; from fields the text does not print or prints otherwise), fields the print
 * format leaves out (timer_start now, itimer_state's four), and what
 * trace-cmd's hrtimer plugin leaves out of the report (hrtimer_start mode,
 * was_armed).
 */
const ONLY_IN_DAT: Record<string, string[]> = {
  report: [
    'hrtimer_start.mode',
    'hrtimer_start.was_armed',
    'itimer_state.interval_nsec',
    'itimer_state.interval_sec',
    'itimer_state.value_nsec',
    'itimer_state.value_sec',
    'timer_start.now',
  ],
  tracefs: [
    'itimer_state.interval_nsec',
    'itimer_state.interval_sec',
    'itimer_state.value_nsec',
    'itimer_state.value_sec',
    'timer_start.now',
  ],
};
const ONLY_IN_TEXT = [
  'itimer_state.it_interval',
  'itimer_state.it_value',
  'kmalloc.accounted',
  'mm_page_alloc.page',
  'timer_start.cpu',
  'timer_start.idx',
];
/** Fields both print but whose text cannot give trace.dat's value, with why. */
const UNRECOVERABLE: Record<string, string> = {
  // trace-cmd prints `flags=D|P|I` where the kernel prints `flags=` for the
  // same bits (tests/golden/printed_args.test.ts): its evaluation of
  // `__print_flags(REC->flags & (...))` differs; trace.dat gives the kernel's.
  'timer_start.flags': 'trace-cmd prints other flags than the kernel',
};

describe.each(MIXES)('bench corpus %s: trace.dat v7, v6, report and tracefs text give one model', (mix) => {
  const counts = JSON.parse(fs.readFileSync(path.join(CORPUS, `${mix}.counts.json`), 'utf8')) as {
    events_by_name: Record<string, number>;
    events_total: number;
  };
  let dir: string;
  let engine: Engine;
  const results = {} as Record<Form, IngestResult>;
  const textFiles = {} as Record<Form, string>;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), `stallscope-corpus-${mix}-`));
    const v7 = path.join(CORPUS, `${mix}.v7.dat`);
    const files: Record<Form, string> = {
      v7,
      v6: path.join(dir, `${mix}.v6.dat`),
      report: path.join(dir, `${mix}.report.txt`),
      tracefs: path.join(dir, `${mix}.tracefs.txt`),
    };
    execFileSync('trace-cmd', ['convert', '--file-version', '6', '--compression', 'none', '-i', v7, '-o', files.v6], {
      stdio: 'ignore',
    });
    execFileSync('sh', ['-c', 'trace-cmd report -i "$1" > "$2"', 'sh', v7, files.report], { stdio: 'ignore' });
    expect(await tracefsTextOf(v7, files.tracefs)).toBe(counts.events_total);
    Object.assign(textFiles, files);
    engine = await openDuckDb(':memory:');
    for (const form of Object.keys(files) as Form[]) {
      results[form] = await ingestFile(files[form], { dataDir: path.join(dir, 'data') });
      await engine.exec(`ATTACH '${results[form].dbPath}' AS ${form} (READ_ONLY)`);
    }
  }, 900_000);

  afterAll(() => {
    engine?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Rows in one relation and not the other, either way (as multisets). */
  async function differing(a: string, b: string): Promise<bigint> {
    const [{ n }] = await engine.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM ((${a} EXCEPT ALL ${b}) UNION ALL (${b} EXCEPT ALL ${a}))`,
    );
    return n;
  }

  it.each(['v7', 'v6', 'report', 'tracefs'] as Form[])(
    "%s: counts per event name equal trace-cmd report's, every event parsed",
    (form) => {
      const s = results[form].summary;
      expect(s.eventsByName).toEqual(counts.events_by_name);
      expect(s.eventsTotal).toBe(counts.events_total);
      expect(s.skippedInputs).toBe(0);
      expect(s.unparsedEvents).toBe(0);
    },
  );

  it('v6 and v7 give identical rows in every table, to the nanosecond', async () => {
    for (const table of [...TYPED_TABLES, 'ftrace_event', 'args', 'thread', 'sched_slice', 'thread_state', 'slice']) {
      // source_where: the record's byte offset, which the two layouts place differently.
      const cols = table === 'ftrace_event' ? '* EXCLUDE (source_where)' : '*';
      expect({
        table,
        differing: await differing(`SELECT ${cols} FROM v7.${table}`, `SELECT ${cols} FROM v6.${table}`),
      }).toEqual({ table, differing: 0n });
    }
  });

  it.each(TEXT)('%s: every event at the same position, CPU and microsecond, named alike', async (form) => {
    const cols = (db: string, us: boolean) =>
      `SELECT id, name, cpu, ${us ? 'CAST(round(ts / 1000) * 1000 AS BIGINT)' : 'ts'} AS ts FROM ${db}.ftrace_event`;
    expect(await differing(cols('v7', true), cols(form, false))).toBe(0n);
  });

  it.each(TEXT)(
    "%s: typed tables hold the same field values as trace.dat (at the text's microsecond)",
    async (form) => {
      for (const table of TYPED_TABLES) {
        // Columns both have for every row (the binary has fields the text does not print, e.g. kswapd_wake.zid).
        const columns = (
          await engine.query<{ column_name: string }>(
            `SELECT column_name FROM (DESCRIBE ${form}.${table}) WHERE column_name NOT IN ('id', 'utid')`,
          )
        ).map((c) => c.column_name);
        const countsOf = async (db: string) =>
          (
            await engine.query<Record<string, bigint>>(
              `SELECT count(*) AS "#total", ${columns.map((c) => `count("${c}") AS "${c}"`).join(', ')} FROM ${db}.${table}`,
            )
          )[0]!;
        const [t, d] = [await countsOf(form), await countsOf('v7')];
        const both = columns.filter((c) => t[c] === t['#total'] && d[c] === t['#total']);
        const fromDat = both
          .map((c) =>
            c === 'ts'
              ? 'CAST(round(ts / 1000) * 1000 AS BIGINT) AS ts'
              : // trace-cmd's sched_switch plugin prints a preempted task as R, the kernel as R+.
                c === 'prev_state' && form === 'report'
                ? `replace(prev_state, '+', '') AS prev_state`
                : `"${c}"`,
          )
          .join(', ');
        const n = await differing(
          `SELECT ${fromDat} FROM v7.${table}`,
          `SELECT ${both.map((c) => `"${c}"`).join(', ')} FROM ${form}.${table}`,
        );
        expect({ table, differing: n }).toEqual({ table, differing: 0n });
      }
    },
  );

  it.each(TEXT)('%s: events without a typed table have the same fields, with the same values', async (form) => {
    const argsOf = (db: string) =>
      `SELECT e.id, e.name, a.arg_index, a.key, coalesce(a.string_value, a.int_value::VARCHAR) AS v, a.value_type FROM ${db}.ftrace_event e JOIN ${db}.args a USING (arg_set_id)`;
    // Keys one side has and the other not, per event name: only the ones the print format explains.
    const oneSided = await engine.query<{ side: string; field: string }>(
      `WITH d AS (SELECT DISTINCT name || '.' || key AS field FROM (${argsOf('v7')})),
            t AS (SELECT DISTINCT name || '.' || key AS field FROM (${argsOf(form)}))
       SELECT 'dat' AS side, field FROM (SELECT field FROM d EXCEPT SELECT field FROM t)
       UNION ALL SELECT 'text', field FROM (SELECT field FROM t EXCEPT SELECT field FROM d)
       ORDER BY ALL`,
    );
    const present = new Set(oneSided.map((r) => r.field));
    expect(
      oneSided
        .filter((r) => r.side === 'dat')
        .map((r) => r.field)
        .filter((f) => !ONLY_IN_DAT[form]!.includes(f)),
    ).toEqual([]);
    expect(
      oneSided
        .filter((r) => r.side === 'text')
        .map((r) => r.field)
        .filter((f) => !ONLY_IN_TEXT.includes(f)),
    ).toEqual([]);
    // Where both have a field: the same value and type, event by event (the order of fields may differ:
    // trace.dat gives the format's, dedicated text parsers the printed one).
    const skip = [...present].map((f) => `'${f}'`).join(', ') || "''";
    const shared = (db: string) =>
      `SELECT id, name, key, v, value_type FROM (${argsOf(db)}) WHERE name || '.' || key NOT IN (${skip})`;
    const values = await engine.query<{ field: string; n: bigint; dat: string; text: string }>(
      `WITH d AS (${shared('v7')}), t AS (${shared(form)})
       SELECT coalesce(d.name, t.name) || '.' || coalesce(d.key, t.key) AS field, count(*) AS n,
              any_value(d.v || ' (' || d.value_type || ')') AS dat, any_value(t.v || ' (' || t.value_type || ')') AS text
       FROM d FULL JOIN t ON d.id = t.id AND d.key = t.key
       WHERE d.v IS DISTINCT FROM t.v OR d.value_type IS DISTINCT FROM t.value_type
       GROUP BY ALL ORDER BY ALL`,
    );
    expect(values.filter((d) => !(d.field in UNRECOVERABLE))).toEqual([]);
    // The same events have fields (arg_set_id) from both sources, and there were some to compare.
    const withArgs = async (db: string) =>
      (await engine.query<{ n: bigint }>(`SELECT count(arg_set_id) AS n FROM ${db}.ftrace_event`))[0]!.n;
    expect(await withArgs(form)).toBe(await withArgs('v7'));
    expect(await withArgs('v7')).toBeGreaterThan(0n);
  });
  /**
   * The excerpt of an event without a typed table prints its argument text
   * as the file does, byte for byte: whether the model kept the text
   * (`ftrace_event.raw`) or renders it from the fields it parsed
   * (server/decode/ftrace_text/kept_raw.ts). Expected: the file's own line,
   * found by the event's source_where (its line number) and cut at the
   * event name as trace-cmd report (`name:` padded to 21, then a space) and
   * the kernel (`name: `) print it. Up to SAMPLE events per name, spread
   * over the file, and every one of a rarer name.
   */
  it.each(TEXT)('%s: excerpts of events without a typed table print the line as the file has it', async (form) => {
    const SAMPLE = 1500;
    const lines = fs.readFileSync(textFiles[form], 'latin1').split('\n');
    await engine.exec(`USE ${form}`);
    try {
      const tables = new Set(
        (
          await engine.query<{ n: string }>(
            `SELECT table_name AS n FROM duckdb_tables() WHERE database_name = '${form}'
             UNION SELECT view_name FROM duckdb_views() WHERE database_name = '${form}'`,
          )
        ).map((r) => r.n),
      );
      const [b] = await engine.query<{ a: bigint; z: bigint }>('SELECT min(ts) AS a, max(ts) AS z FROM ftrace_event');
      const tr: OpenTrace = {
        meta: { base: b!.a, last: b!.z, maxDur: { sched_slice: 0n, thread_state: 0n, slice: 0n }, tables },
        query: (sql, p) => engine.query(sql, p),
      };
      const names = (await engine.query<{ name: string }>('SELECT DISTINCT name FROM ftrace_event'))
        .map((r) => r.name)
        .filter((n) => typedTableFor(n) === null);
      expect(names.length).toBeGreaterThan(0);
      const picked = await engine.query<{ id: bigint; where: bigint }>(
        `SELECT id, source_where AS "where" FROM (
           SELECT id, source_where, row_number() OVER (PARTITION BY name ORDER BY id) AS k, count(*) OVER (PARTITION BY name) AS n
           FROM ftrace_event WHERE name IN (${names.map((n) => `'${n}'`).join(', ')}))
         WHERE n <= ${SAMPLE} OR k % (n // ${SAMPLE} + 1) = 0 ORDER BY id`,
      );
      const lineOf = new Map(picked.map((p) => [p.id, Number(p.where)]));
      const differ: string[] = [];
      let same = 0;
      const ids = picked.map((p) => p.id);
      for (let i = 0; i < ids.length; i += 5000) {
        for (const e of await lookupEvents(tr, ids.slice(i, i + 5000))) {
          const original = lines[lineOf.get(BigInt(e.id))! - 1]!;
          const at = original.indexOf(`: ${e.name}:`);
          const want = form === 'report' ? original.slice(at + 2) : original.slice(at + 2 + e.name.length + 2); // the kernel: `name: args`
          const gotAt = e.line.indexOf(`: ${e.name}:`);
          const got =
            form === 'report' ? e.line.slice(gotAt + 2) : e.line.slice(gotAt + 2 + Math.max(21, e.name.length + 1) + 1);
          if (at >= 0 && got === want) same++;
          else differ.push(`${e.name} line ${lineOf.get(BigInt(e.id))}\n  got  ${got}\n  want ${want}`);
        }
      }
      expect(differ.slice(0, 5)).toEqual([]);
      expect(same).toBe(ids.length);
      // The point of the rule: texts that print back are not stored twice (many_systems still keeps its block
      // and timer events' texts: their formats print what the model does not keep, e.g. block's I/O priority).
      const [kept] = await engine.query<{ untyped: bigint; raw: bigint }>(
        `SELECT count(*) AS untyped, count(raw) AS raw FROM ftrace_event WHERE name IN (${names.map((n) => `'${n}'`).join(', ')})`,
      );
      expect(kept!.raw).toBeLessThan(kept!.untyped);
    } finally {
      await engine.exec('USE memory');
    }
  });
});
