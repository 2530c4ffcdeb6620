/**
 * derive_guards.ts: a derive file's `-- @if-rows` blocks, and what skipping
 * them leaves on a real recording. fixtures/perfetto_block.pftrace holds
 * sched_switch and block events only (trace_processor_shell, `select name,
 * count(*) from ftrace_event group by name`: block_rq_issue 924,
 * block_rq_complete 788, block_rq_insert 564, block_bio_queue 669,
 * sched_switch 1656): no shrinker, reclaim, workqueue or vmscan event, so
 * derive_slices' slice and counter-track blocks have nothing to read, while
 * its flows (sched_slice; none, with no waking or migration) and
 * derive_block's requests do.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openDuckDb } from '../engine/engine.ts';
import { ingestFile } from '../ingest/ingest_file.ts';
import { guardedBlocks, sqlWithoutEmptyBlocks } from './derive_guards.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FILE = path.join(ROOT, 'fixtures/perfetto_block.pftrace');
const MODEL = path.join(ROOT, 'queries/model');
const read = (f: string) => fs.readFileSync(path.join(MODEL, f), 'utf8');

describe('guardedBlocks', () => {
  it('cuts a file at its markers, the text outside the blocks kept in order', () => {
    const blocks = guardedBlocks(
      'DELETE FROM a;\n-- @if-rows x, y_2\nINSERT INTO a SELECT * FROM x;\n-- @end-if\nDROP TABLE t;\n',
      'f.sql',
    );
    expect(blocks).toEqual([
      { needs: null, sql: 'DELETE FROM a;\n' },
      { needs: ['x', 'y_2'], sql: 'INSERT INTO a SELECT * FROM x;\n' },
      { needs: null, sql: 'DROP TABLE t;\n\n' },
    ]);
  });

  it('refuses nested, unclosed and stray markers and names that are not identifiers', () => {
    expect(() => guardedBlocks('-- @if-rows a\n-- @if-rows b\n-- @end-if\n', 'f.sql')).toThrow(/inside another/);
    expect(() => guardedBlocks('-- @if-rows a\nSELECT 1;\n', 'f.sql')).toThrow(/without @end-if/);
    expect(() => guardedBlocks('SELECT 1;\n-- @end-if\n', 'f.sql')).toThrow(/without @if-rows/);
    expect(() => guardedBlocks('-- @if-rows a; DROP TABLE b\n-- @end-if\n', 'f.sql')).toThrow(/not a table name/);
  });

  it("the model's derive files are well formed", () => {
    for (const f of fs.readdirSync(MODEL).filter((n) => n.endsWith('.sql')))
      expect(() => guardedBlocks(read(f), f)).not.toThrow();
  });
});

describe('derive with empty blocks skipped, on perfetto_block.pftrace', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-derive-guards-'));
  let engine: Engine;

  beforeAll(async () => {
    const { dbPath } = await ingestFile(FILE, { dataDir });
    engine = await openDuckDb(dbPath, {});
  }, 120_000);

  afterAll(() => {
    engine?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('skips the slice and counter-track blocks, keeps the flows and the block requests', async () => {
    const slices = await sqlWithoutEmptyBlocks(engine, read('derive_slices.sql'), 'derive_slices.sql');
    expect(slices).not.toMatch(/INSERT INTO slice/);
    expect(slices).not.toMatch(/CREATE OR REPLACE TEMP TABLE _ss_kswapd/);
    expect(slices).toMatch(/INSERT INTO _flow/);
    expect(slices).toMatch(/DELETE FROM slice/);
    const block = await sqlWithoutEmptyBlocks(engine, read('derive_block.sql'), 'derive_block.sql');
    expect(block).toMatch(/INSERT INTO block_request/);
    const [req] = await engine.query<{ n: bigint }>('SELECT count(*) AS n FROM block_request');
    expect(Number(req!.n)).toBe(924); // one per block_rq_issue (trace_processor's count above)
  });

  it('leaves the tables the whole files derive: re-running them unguarded changes no row', async () => {
    const derived = ['slice', '_flow', 'counter_track', 'counter_source', 'block_request'];
    const snapshot = async () =>
      Object.fromEntries(
        await Promise.all(
          derived.map(async (t) => [
            t,
            (await engine.query(`SELECT * FROM ${t} ORDER BY ALL`)).map((r) =>
              JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
            ),
          ]),
        ),
      );
    const guarded = await snapshot();
    await engine.exec('BEGIN TRANSACTION');
    try {
      for (const f of ['derive_slices.sql', 'derive_block.sql']) await engine.exec(read(f));
      expect(await snapshot()).toEqual(guarded);
    } finally {
      await engine.exec('ROLLBACK');
    }
    // No waking and no migration in the file: its flows are none either way.
    expect(guarded._flow).toEqual([]);
    expect(guarded.block_request!.length).toBe(924);
  });
});
