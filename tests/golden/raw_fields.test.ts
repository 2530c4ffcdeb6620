// Events printed by their fields instead of their print format
// (server/decode/ftrace_text/fields/raw_fields.ts):
//
// - `trace-cmd report -R` of the reclaim_kswapd recording, made here by the
//   trace-cmd the tests run with: against the trace.dat itself, every typed
//   row holds the same values, but for the fields whose print format names
//   a number (flags, enumerations), which raw text leaves a number;
// - libtraceevent's `[FAILED TO PARSE]` and the raw fields after it, what
//   trace-cmd prints for an event whose print fmt it cannot evaluate (an
//   older trace-cmd reading a newer kernel's formats): made from the -R text
//   (libtraceevent prints the same fields after the marker), it must read as
//   the -R text does;
// - the kernel's options/fields (fixtures/README.md, raw_fields): one tracefs
//   buffer read in the default layout and with options/fields on, every
//   integer printed as `0x45b6 (17846)`.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuckDb, type Engine } from '../../server/engine/engine.ts';
import { ingestFile, type IngestResult } from '../../server/ingest/ingest_file.ts';
import { runDetectors } from '../../server/findings/run_detectors.ts';
import { TYPED_TABLES } from '../../server/model/typed_tables.ts';
import { differingRows, FIXTURES, fixtureCounts, workerBuildDifferences } from './attached_models.ts';

/** Typed columns whose print format turns a number into names: raw text keeps the number. */
const NAMED_NUMBERS = ['gfp_flags', 'reclaim_flags', 'lru', 'reason'];

const reclaimCounts = fixtureCounts('reclaim_kswapd.counts.json');
const fieldsCounts = fixtureCounts('raw_fields.counts.json');

let dataDir: string;
let engine: Engine;
const results: Record<string, IngestResult> = {};
/** The file each alias was built from. */
const files: Record<string, string> = {};

async function attach(alias: string, file: string): Promise<void> {
  const r = await ingestFile(file, { dataDir });
  results[alias] = r;
  files[alias] = file;
  await engine.exec(`ATTACH '${r.dbPath}' AS ${alias} (READ_ONLY)`);
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-raw-fields-'));
  engine = await openDuckDb(':memory:');
  const dat = path.join(FIXTURES, 'reclaim_kswapd.v7.dat');
  const raw = execFileSync('trace-cmd', ['report', '-R', dat], { encoding: 'latin1', maxBuffer: 1 << 28 });
  const rawFile = path.join(dataDir, 'reclaim_kswapd.report-R.txt');
  fs.writeFileSync(rawFile, raw, 'latin1');
  // Each event's text as libtraceevent prints an event it failed to parse.
  const failedFile = path.join(dataDir, 'reclaim_kswapd.failed-to-parse.txt');
  fs.writeFileSync(failedFile, raw.replace(/^(.*?\[\d+\] +\d+\.\d+: \S+:) +/gm, '$1 [FAILED TO PARSE] '), 'latin1');
  await attach('dat', dat);
  await attach('report', path.join(FIXTURES, 'reclaim_kswapd.report.txt'));
  await attach('rawText', rawFile);
  await attach('failed', failedFile);
  await attach('tracefs', path.join(FIXTURES, 'raw_fields.tracefs.txt'));
  await attach('fieldsMode', path.join(FIXTURES, 'raw_fields.fields.txt'));
}, 180_000);

afterAll(() => {
  engine?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Columns of `table` in model `a` whose values differ from model `b`'s for the same event id (ts compared to the µs). */
async function differingColumns(a: string, b: string, table: string): Promise<string[]> {
  const cols = (await engine.query<{ column_name: string }>(`SELECT column_name FROM (DESCRIBE ${a}.${table})`)).map(
    (r) => r.column_name,
  );
  const out: string[] = [];
  for (const c of cols) {
    const differs =
      c === 'ts'
        ? 'CAST(round(x.ts / 1000) AS BIGINT) <> CAST(round(y.ts / 1000) AS BIGINT)'
        : `x."${c}" IS DISTINCT FROM y."${c}"`;
    const [{ n }] = await engine.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM ${a}.${table} x JOIN ${b}.${table} y USING (id) WHERE ${differs}`,
    );
    if (n > 0n) out.push(c);
  }
  return out;
}

async function rowCount(alias: string, table: string): Promise<bigint> {
  const [{ n }] = await engine.query<{ n: bigint }>(`SELECT count(*) AS n FROM ${alias}.${table}`);
  return n;
}

describe('trace-cmd report -R: raw fields read into the typed tables', () => {
  it('every event, none unparsed', () => {
    for (const alias of ['rawText', 'failed']) {
      const s = results[alias]!.summary;
      expect({ alias, byName: s.eventsByName }).toEqual({ alias, byName: reclaimCounts.events_by_name });
      expect({ alias, unparsed: s.unparsedEvents, skipped: s.skippedInputs }).toEqual({
        alias,
        unparsed: 0,
        skipped: 0,
      });
    }
  });

  it('the trace.dat values, but for numbers the print format names', async () => {
    const named: Record<string, string[]> = {};
    for (const table of TYPED_TABLES) {
      expect({ table, rows: await rowCount('rawText', table) }).toEqual({ table, rows: await rowCount('dat', table) });
      const cols = await differingColumns('dat', 'rawText', table);
      if (cols.length > 0) named[table] = cols;
    }
    // Only named numbers differ, e.g. gfp_flags `0x140dca` for GFP_HIGHUSER_MOVABLE|__GFP_ZERO|__GFP_COMP.
    expect(
      Object.values(named)
        .flat()
        .every((c) => NAMED_NUMBERS.includes(c)),
    ).toBe(true);
    expect(named).toEqual({
      mm_shrink_slab_start: ['gfp_flags'],
      mm_vmscan_direct_reclaim_begin: ['gfp_flags'],
      mm_vmscan_wakeup_kswapd: ['gfp_flags'],
      mm_vmscan_lru_isolate: ['lru'],
      mm_vmscan_lru_shrink_active: ['reclaim_flags'],
      mm_vmscan_lru_shrink_inactive: ['reclaim_flags'],
      writeback_work: ['reason'],
    });
    const [row] = await engine.query<{ shrink: string; shr: string; gfp_flags: string }>(
      `SELECT shrink, shr, gfp_flags FROM rawText.mm_shrink_slab_start ORDER BY id LIMIT 1`,
    );
    expect(row).toEqual({ shrink: 'super_cache_scan', shr: '0xffff8881003d7f80', gfp_flags: '0x140dca' });
  });

  it('prev_state from its number: the same states as the trace.dat, preempted tasks `R+`', async () => {
    const [{ n }] = await engine.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM dat.sched_switch x JOIN rawText.sched_switch y USING (id) WHERE x.prev_state <> y.prev_state`,
    );
    expect(n).toBe(0n);
    const states = await engine.query<{ prev_state: string }>(
      'SELECT DISTINCT prev_state FROM rawText.sched_switch ORDER BY 1',
    );
    expect(states.map((r) => r.prev_state)).toEqual(['D', 'I', 'R', 'R+', 'S', 'X', 'Z']);
    expect(
      await differingRows(
        engine,
        '(SELECT * EXCLUDE (ts, dur) FROM dat.sched_slice)',
        '(SELECT * EXCLUDE (ts, dur) FROM rawText.sched_slice)',
      ),
    ).toBe(0n);
  });

  it('[FAILED TO PARSE] text reads as the raw fields after it', async () => {
    for (const table of [...TYPED_TABLES, 'thread', 'sched_slice', 'thread_state', 'args']) {
      expect({ table, differing: await differingRows(engine, `failed.${table}`, `rawText.${table}`) }).toEqual({
        table,
        differing: 0n,
      });
    }
    // The marker stays in the text kept for the event.
    const [{ raw }] = await engine.query<{ raw: string }>(
      `SELECT raw FROM failed.ftrace_event WHERE raw IS NOT NULL ORDER BY id LIMIT 1`,
    );
    expect(raw.startsWith('[FAILED TO PARSE] ')).toBe(true);
  });
});

describe("the kernel's options/fields layout", () => {
  it('every event, none unparsed, and says its layout', () => {
    for (const alias of ['tracefs', 'fieldsMode']) {
      const s = results[alias]!.summary;
      expect({ alias, byName: s.eventsByName }).toEqual({ alias, byName: fieldsCounts.events_by_name });
      expect({ alias, unparsed: s.unparsedEvents, skipped: s.skippedInputs }).toEqual({
        alias,
        unparsed: 0,
        skipped: 0,
      });
    }
    expect(results.fieldsMode!.summary.meta.text_layout).toBe('fields');
  });

  it('the default layout of the same buffer, but for hashed pointers and named numbers', async () => {
    const differing: Record<string, string[]> = {};
    for (const table of TYPED_TABLES) {
      expect({ table, rows: await rowCount('fieldsMode', table) }).toEqual({
        table,
        rows: await rowCount('tracefs', table),
      });
      const cols = await differingColumns('tracefs', 'fieldsMode', table);
      if (cols.length > 0) differing[table] = cols;
    }
    expect(differing).toEqual({
      // %p prints a hashed pointer; fields print the address
      workqueue_queue_work: ['work'],
      workqueue_activate_work: ['work'],
      workqueue_execute_start: ['work'],
      workqueue_execute_end: ['work'],
      // state is named flags (I_SYNC); age is computed when printing, not a field
      writeback_single_inode: ['state', 'age'],
    });
    for (const table of ['sched_slice', 'thread_state', 'thread']) {
      expect({ table, differing: await differingRows(engine, `tracefs.${table}`, `fieldsMode.${table}`) }).toEqual({
        table,
        differing: 0n,
      });
    }
  });

  it('untyped events: the same args, as numbers where the default layout names them', async () => {
    const rows = await engine.query<{ key: string; named: string; raw: string }>(
      `SELECT x.key, coalesce(CAST(x.int_value AS VARCHAR), x.string_value) AS named, coalesce(CAST(y.int_value AS VARCHAR), y.string_value) AS raw
         FROM tracefs.args x JOIN fieldsMode.args y USING (arg_set_id, key)
        WHERE coalesce(CAST(x.int_value AS VARCHAR), x.string_value) IS DISTINCT FROM coalesce(CAST(y.int_value AS VARCHAR), y.string_value)`,
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(['state', 'flags']).toContain(r.key);
      expect(r.raw).toMatch(/^\d+$/);
      expect(r.named).not.toMatch(/^\d+$/);
    }
    const [{ n }] = await engine.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM ((SELECT arg_set_id, key FROM tracefs.args EXCEPT ALL SELECT arg_set_id, key FROM fieldsMode.args)
         UNION ALL (SELECT arg_set_id, key FROM fieldsMode.args EXCEPT ALL SELECT arg_set_id, key FROM tracefs.args))`,
    );
    expect(n).toBe(0n);
  });
});

// Large files are read on the field and store worker threads (raw records
// framed on the main thread, their text parsed on the field worker): every
// raw-field form must build the same model there.
describe('raw fields on the worker threads', () => {
  it.each(['rawText', 'failed', 'fieldsMode'])(
    '%s built with the store and field workers equals the one-thread build',
    async (alias) => {
      const tables = [...TYPED_TABLES, 'thread', 'thread_state', 'sched_slice', 'ftrace_event', 'args'];
      expect(await workerBuildDifferences(engine, alias, files[alias]!, tables)).toEqual(
        tables.map((table) => ({ table, differing: 0n })),
      );
    },
  );
});

// Raw text leaves reclaim_flags a number (9 for RECLAIM_WB_ANON|RECLAIM_WB_ASYNC):
// the detectors read it either way (ss_reclaim_wb in queries/detectors/lib/macros.sql).
describe('detectors on raw fields', () => {
  it("swap_writeback: the -R report gives the printed report's findings", async () => {
    const rawFile = path.join(dataDir, 'swap_writeback.report-R.txt');
    fs.writeFileSync(
      rawFile,
      execFileSync('trace-cmd', ['report', '-R', path.join(FIXTURES, 'swap_writeback.v7.dat')], { maxBuffer: 1 << 28 }),
    );
    expect(fs.readFileSync(rawFile, 'latin1')).toMatch(/mm_vmscan_write_folio: +pfn=0x[0-9a-f]+ reclaim_flags=9$/m);
    const findingsOf = async (file: string) => {
      const r = await ingestFile(file, { dataDir });
      const e = await openDuckDb(r.dbPath, { readOnly: true });
      try {
        // gfp_flags stays a number in raw text (`0x100cca` for GFP_HIGHUSER_MOVABLE): compared without it.
        return (await runDetectors(e)).findings.map((f) => {
          const { gfp_flags: gfp, ...values } = f.values as Record<string, unknown>;
          return {
            detector: f.detector,
            severity: f.severity,
            title: gfp === undefined ? f.title : f.title.replace(String(gfp), '<gfp_flags>'),
            values,
          };
        });
      } finally {
        e.close();
      }
    };
    const printed = await findingsOf(path.join(FIXTURES, 'swap_writeback.report.txt'));
    const raw = await findingsOf(rawFile);
    const writeback = printed.filter((f) => f.detector === 'reclaim_writeback');
    expect(writeback.length).toBeGreaterThan(0);
    expect(writeback[0]!.values).toMatchObject({ anon_pages: 3873n, async_pages: 3873n });
    expect(raw).toEqual(printed);
  });
});
