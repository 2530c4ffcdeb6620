/**
 * `-- @rows_from rel` (server/findings/empty_inputs.ts): a built-in statement
 * whose rows all come from `rel` is not run when `rel` is empty, though it
 * reads other relations that are not. Checked on the corpus's reclaim
 * recording (fixtures/corpus): its counts file, written from `trace-cmd
 * report` when it was recorded, has no balance_dirty_pages and no
 * mm_vmscan_write_folio / mm_vmscan_writepage events, but flusher runs
 * (writeback_start) and LRU scans (mm_vmscan_lru_shrink_inactive), which
 * dirty_throttled and reclaim_writeback also read. Skipping must give the
 * whole result of running every statement.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openDuckDb } from '../../server/engine/engine.ts';
import { DETECTOR_MACROS_FILE, loadDetectors } from '../../server/findings/detector_registry.ts';
import { EmptyInputs, rowsFromRelations, tableMacroWords } from '../../server/findings/empty_inputs.ts';
import { type RunResult, runDetectors } from '../../server/findings/run_detectors.ts';
import { ingestFile } from '../../server/ingest/ingest_file.ts';
import { comparableRun } from '../support/findings/run_result_json.ts';

const CORPUS = fileURLToPath(new URL('../../fixtures/corpus/', import.meta.url));
const counts = JSON.parse(fs.readFileSync(path.join(CORPUS, 'reclaim.counts.json'), 'utf8')) as {
  events_by_name: Record<string, number>;
};

const withoutRowsFrom = (sql: string) => sql.replace(/^[ \t]*--[ \t]*@rows_from\b[^\n]*$/gm, '--');

describe('rowsFromRelations', () => {
  it('reads the names of every @rows_from comment line, up to a trailing -- comment', () => {
    expect(rowsFromRelations('-- @rows_from Balance_Dirty_Pages -- why\nSELECT 1')).toEqual(['balance_dirty_pages']);
    expect(rowsFromRelations('-- @rows_from a b\n  -- @rows_from c\nSELECT 1')).toEqual(['a', 'b', 'c']);
    expect(rowsFromRelations('-- @rows_fromage x\nSELECT 1')).toBeNull();
    expect(rowsFromRelations("SELECT '@rows_from x'")).toBeNull();
  });
});

describe('statements with @rows_from over an empty relation (reclaim: no dirty throttling, no reclaim writeback)', () => {
  let dir: string;
  let engine: Engine;
  let skipping: RunResult;
  let running: RunResult;
  let inputs: EmptyInputs;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-rows-from-'));
    const { dbPath } = await ingestFile(path.join(CORPUS, 'reclaim.v7.dat'), { dataDir: dir });
    engine = await openDuckDb(dbPath, { readOnly: true });
    skipping = await runDetectors(engine, { samples: true });
    running = await runDetectors(engine, { samples: true, runEmpty: true });
    inputs = new EmptyInputs(engine, tableMacroWords(fs.readFileSync(DETECTOR_MACROS_FILE, 'utf8')));
  }, 120_000);

  afterAll(() => {
    engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the recording has flusher runs and LRU scans, but no balance_dirty_pages and no reclaim writes', () => {
    const n = counts.events_by_name;
    expect(n.balance_dirty_pages ?? 0).toBe(0);
    expect((n.mm_vmscan_write_folio ?? 0) + (n.mm_vmscan_writepage ?? 0)).toBe(0);
    expect(n.writeback_start).toBeGreaterThan(0);
    expect(n.mm_vmscan_lru_shrink_inactive).toBeGreaterThan(0);
  });

  it('the annotated statements have nothing to read, and would run without the annotation', async () => {
    const defs = new Map((await loadDetectors([])).map((d) => [d.id, d]));
    const annotated = [defs.get('dirty_throttled')!.sql, defs.get('dirty_throttled')!.metricsSql!];
    annotated.push(defs.get('reclaim_writeback')!.sql);
    for (const sql of annotated) {
      expect(rowsFromRelations(sql)).not.toBeNull();
      expect(await inputs.nothingToRead(sql)).toBe(true);
      expect(await inputs.nothingToRead(withoutRowsFrom(sql))).toBe(false);
    }
  });

  it('a @rows_from relation the statement does not read is an error', async () => {
    await expect(inputs.nothingToRead('-- @rows_from sched_switch\nSELECT * FROM sched_waking')).rejects.toThrow(
      /sched_switch/,
    );
  });

  it('skipping gives the same findings, summaries, metrics, samples and overview as running every statement', () => {
    expect(comparableRun(skipping)).toBe(comparableRun(running));
    for (const id of ['dirty_throttled', 'reclaim_writeback']) {
      expect(skipping.detectors.find((d) => d.id === id)?.status).toBe('ok');
      expect(skipping.findings.filter((f) => f.detector === id)).toEqual([]);
    }
  });
});
