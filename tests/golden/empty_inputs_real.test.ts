/**
 * Built-in detector statements whose tables are all empty are not run
 * (server/findings/empty_inputs.ts): exact only because each of them returns
 * no rows then. Checked on the corpus's kmem recording (fixtures/corpus),
 * which enabled the vmscan tracepoints (trace.dat's event list) but never
 * reclaimed: its counts file, written from `trace-cmd report` when it was
 * recorded, has no vmscan, writeback or block event. Every detector still
 * reports as run ('ok', nothing found), and the whole result (findings,
 * summaries, metrics, samples, overview) equals running every statement.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openDuckDb } from '../../server/engine/engine.ts';
import { type RunResult, runDetectors } from '../../server/findings/run_detectors.ts';
import { ingestFile } from '../../server/ingest/ingest_file.ts';
import { comparableRun } from '../support/findings/run_result_json.ts';

const CORPUS = fileURLToPath(new URL('../../fixtures/corpus/', import.meta.url));
const counts = JSON.parse(fs.readFileSync(path.join(CORPUS, 'kmem.counts.json'), 'utf8')) as {
  events_by_name: Record<string, number>;
};

describe('detector statements with nothing to read (kmem: vmscan enabled, never fired)', () => {
  let dir: string;
  let engine: Engine;
  let skipping: RunResult;
  let running: RunResult;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-empty-inputs-'));
    const { dbPath } = await ingestFile(path.join(CORPUS, 'kmem.v7.dat'), { dataDir: dir });
    engine = await openDuckDb(dbPath, { readOnly: true });
    skipping = await runDetectors(engine, { samples: true });
    running = await runDetectors(engine, { samples: true, runEmpty: true });
  }, 120_000);

  afterAll(() => {
    engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the recording has no reclaim, writeback or block events, and sched_migrate_task ones', () => {
    const names = Object.keys(counts.events_by_name);
    expect(names.filter((n) => /^(mm_vmscan_|mm_shrink_slab|writeback_|balance_dirty|block_)/.test(n))).toEqual([]);
    expect(counts.events_by_name.sched_migrate_task).toBeGreaterThan(0);
  });

  it('skipping gives the same findings, summaries, metrics, samples and overview as running every statement', () => {
    expect(comparableRun(skipping)).toBe(comparableRun(running));
  });

  it('the detectors over absent events ran (status ok, nothing found) without their statements', () => {
    const ok = skipping.detectors.filter((d) => d.status === 'ok').map((d) => d.id);
    expect(ok).toEqual(expect.arrayContaining(['direct_reclaim_stall', 'shrinker_blocking', 'kswapd_escalation']));
    for (const id of ['direct_reclaim_stall', 'shrinker_blocking', 'kswapd_escalation', 'reclaim_throttled']) {
      expect(skipping.findings.filter((f) => f.detector === id)).toEqual([]);
      expect(skipping.summaries[id]).toEqual([]);
    }
    // migration_pingpong has sched_migrate_task events: it ran and found bursts
    expect(skipping.findings.some((f) => f.detector === 'migration_pingpong')).toBe(true);
  });
});
