/**
 * The Perfetto export, checked two ways:
 * - the events read per table (`_event_source`) and through the ftrace_event
 *   and args views (a model from before version 14) give the same bytes;
 * - round trip: a trace.dat fixture, exported and imported again, gives the
 *   same events (id, time, CPU, task, name, system) and the same fields
 *   (every typed table row, every args row); Perfetto has no place for
 *   common_flags / preempt_count, so those are not compared;
 * - Perfetto's own trace_processor_shell loads the export without import
 *   errors, with the model's count per event name and thread names, and
 *   the findings as slices on their tracks with their values as args.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Engine, openDuckDb } from '../../engine/engine.ts';
import type { Finding } from '../../findings/finding.ts';
import { runDetectors } from '../../findings/run_detectors.ts';
import { ingestFile } from '../../ingest/ingest_file.ts';
import { queryTraceProcessor } from '../../../tests/support/decode/perfetto/test_trace_processor.ts';
import { exportPerfetto, type PerfettoExportResult } from './export_perfetto.ts';

const FIXTURES = join(import.meta.dirname, '../../../fixtures');
const dir = mkdtempSync(join(tmpdir(), 'stallscope-perfetto-export-'));
const engines: Engine[] = [];
/** Each ingested engine's database file. */
const dbPaths = new Map<Engine, string>();
afterAll(() => {
  for (const e of engines) e.close();
  rmSync(dir, { recursive: true, force: true });
});

async function ingest(file: string): Promise<Engine> {
  const { dbPath } = await ingestFile(file, { dataDir: join(dir, 'data') });
  const engine = await openDuckDb(dbPath, { readOnly: true });
  engines.push(engine);
  dbPaths.set(engine, dbPath);
  return engine;
}

const show = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));

async function rows(e: Engine, sql: string): Promise<string[]> {
  return (await e.query(sql)).map(show);
}

describe.each([
  'reclaim_kswapd.v7.dat',
  'printed_args.v7.dat',
  'fsync_xfs.v7.dat',
  'writeback_flood.v7.dat',
  'fsync_timers.v7.dat',
])('%s exported to Perfetto', (name) => {
  let source: Engine;
  let findings: Finding[];
  let out: PerfettoExportResult;
  const file = join(dir, name.replace(/\.dat$/, '.pftrace'));
  const note = {
    id: 'n'.repeat(22),
    text: 'kswapd stuck here, see the **shrinker**',
    author: 'tester',
    anchor: { t0: 1000, t1: 2_000_000 },
  };

  it('writes a trace', async () => {
    source = await ingest(join(FIXTURES, name));
    ({ findings } = await runDetectors(source, {}));
    const pieces: Uint8Array[] = [];
    out = await exportPerfetto({
      query: (sql) => source.query(sql),
      queryColumns: (sql) => source.queryColumns(sql),
      findings,
      notes: [note],
      write: (b) => void pieces.push(b),
    });
    writeFileSync(file, Buffer.concat(pieces));
    expect(out.bytes).toBe(pieces.reduce((n, b) => n + b.length, 0));
    const [{ n }] = await source.query<{ n: bigint }>('SELECT count(*) AS n FROM ftrace_event');
    expect(out.events).toBe(Number(n));
    expect(out.typed + out.generic).toBe(out.events);
  });

  it('writes the same bytes from a model without _event_source (before model version 14), read through the views', async () => {
    const copy = join(dir, name.replace(/\.dat$/, '.v13.duckdb'));
    copyFileSync(dbPaths.get(source)!, copy);
    const rw = await openDuckDb(copy);
    await rw.exec('DROP TABLE _event_source; CHECKPOINT');
    rw.close();
    const older = await openDuckDb(copy, { readOnly: true });
    engines.push(older);
    const pieces: Uint8Array[] = [];
    await exportPerfetto({
      query: (sql) => older.query(sql),
      queryColumns: (sql) => older.queryColumns(sql),
      findings,
      notes: [note],
      write: (b) => void pieces.push(b),
    });
    expect(Buffer.concat(pieces).equals(readFileSync(file))).toBe(true);
  });

  it('imports again with the same events and fields', async () => {
    const again = await ingest(file);
    const tables = (
      await source.query<{ t: string }>(
        "SELECT substr(table_name, 8) AS t FROM information_schema.tables WHERE starts_with(table_name, '_stage_') ORDER BY 1",
      )
    ).map((r) => r.t);
    expect(tables.length).toBeGreaterThan(10);
    const events =
      'SELECT e.id, e.ts, e.cpu, t.tid, e.name, e.system FROM ftrace_event e JOIN thread t USING (utid) ORDER BY e.id';
    expect(await rows(again, events)).toEqual(await rows(source, events));
    for (const t of tables) {
      const sql = `SELECT x.* EXCLUDE (utid), th.tid FROM "${t}" x JOIN thread th USING (utid) ORDER BY x.id`;
      expect({ t, rows: await rows(again, sql) }).toEqual({ t, rows: await rows(source, sql) });
    }
    const args = 'SELECT arg_set_id, key, int_value, string_value FROM args ORDER BY arg_set_id, arg_index';
    expect(await rows(again, args)).toEqual(await rows(source, args));
  });

  it('loads in trace_processor: no import errors, same counts and thread names, findings as slices with their values', async () => {
    const [counts, stats, threads, slices, args, flows] = queryTraceProcessor(file, [
      'select name, count(*) as n from ftrace_event group by name order by name',
      "select name, sum(value) as value from stats where value > 0 and severity in ('error', 'data_loss') group by name",
      'select tid, name from thread where tid is not null and tid != 0 order by utid',
      "select s.id, s.ts, s.dur, s.name, t.name as track, s.arg_set_id from slice s join track t on s.track_id = t.id where t.name like 'stallscope: %' order by s.ts, s.id",
      "select a.arg_set_id, a.key, a.display_value from args a where a.arg_set_id in (select s.arg_set_id from slice s join track t on s.track_id = t.id where t.name like 'stallscope: %')",
      'select count(*) as n from flow',
    ]);
    const ours = await source.query<{ name: string; n: bigint }>(
      'SELECT name, count(*) AS n FROM ftrace_event GROUP BY name ORDER BY name',
    );
    expect(Object.fromEntries(counts!.map((r) => [r.name, Number(r.n)]))).toEqual(
      Object.fromEntries(ours.map((r) => [r.name, Number(r.n)])),
    );

    // The only error trace_processor may report is one the data holds: a
    // sched_switch whose prev_pid is not the task the previous switch on its
    // CPU switched in (the kernel's records; counted here from the source).
    const [{ n: mismatched }] = await source.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM (SELECT prev_pid, LAG(next_pid) OVER (PARTITION BY cpu ORDER BY ts, id) AS last FROM sched_switch) WHERE last IS NOT NULL AND last <> prev_pid`,
    );
    const errors = Object.fromEntries(stats!.map((r) => [r.name, Number(r.value)]));
    expect(errors).toEqual(Number(mismatched) > 0 ? { mismatched_sched_switch_tids: Number(mismatched) } : {});

    // Thread names: the export's ProcessTree gives each thread its name. trace_processor starts
    // a new thread (utid) at a fork it sees and names it from later events, so a tid's last
    // row there may carry a later name of the same task: one of the names the model saw for it.
    const tpNames = new Map(threads!.map((r) => [Number(r.tid), r.name]));
    const named = await source.query<{ tid: number; name: string; names: string[] }>(
      'SELECT t.tid, t.name, list(DISTINCT h.name) AS names FROM thread t LEFT JOIN thread_name_history h USING (utid) WHERE t.tid <> 0 AND t.name IS NOT NULL GROUP BY ALL',
    );
    let exact = 0;
    for (const t of named) {
      const tp = tpNames.get(t.tid);
      if (tp === t.name) exact++;
      else expect([t.name, ...t.names], `thread ${t.tid}`).toContain(tp);
    }
    expect(exact).toBeGreaterThan(named.length * 0.9);

    // Findings: one slice each on "stallscope: <detector>", at its time, named by its title.
    const findingSlices = slices!.filter((s) => s.track !== 'stallscope: notes');
    expect(findingSlices.length).toBe(findings.length);
    const argsOf = new Map<number, Map<string, unknown>>();
    for (const a of args!) {
      const id = Number(a.arg_set_id);
      if (!argsOf.has(id)) argsOf.set(id, new Map());
      argsOf.get(id)!.set(String(a.key), a.display_value);
    }
    for (const f of findings) {
      const s = findingSlices.find(
        (x) => x.track === `stallscope: ${f.detector}` && BigInt(x.ts as number) === f.ts_ns && x.name === f.title,
      );
      expect(s, `${f.detector} ${f.title}`).toBeDefined();
      expect(BigInt(Number(s!.dur) === 0 ? 0 : (s!.dur as number))).toBe(f.dur_ns);
      const a = argsOf.get(Number(s!.arg_set_id))!;
      expect(a.get('debug.severity')).toBe(f.severity);
      for (const [k, v] of Object.entries(f.values)) {
        if (v === null || typeof v === 'object') continue;
        const shown = a.get(`debug.${k}`);
        if (typeof v === 'number' && !Number.isInteger(v)) expect(Number(shown)).toBeCloseTo(v, 6);
        else expect(String(shown)).toBe(String(v));
      }
    }
    expect(Number(flows![0]!.n)).toBe(out.flows);
    if (findings.length > 0) expect(out.flows).toBeGreaterThan(0);

    const notes = slices!.filter((s) => s.track === 'stallscope: notes');
    expect(notes.map((s) => s.name)).toEqual([note.text]);
    expect(argsOf.get(Number(notes[0]!.arg_set_id))!.get('debug.text')).toBe(note.text);
  });
});
