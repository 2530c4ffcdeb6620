/**
 * "Not traced" only when the trace says what was enabled (coverage.ts). The
 * memcg_reclaim fixture was recorded with vmscan enabled, but no task wrote a
 * page from reclaim or was throttled: its trace.dat lists the formats of
 * mm_vmscan_write_folio and mm_vmscan_throttled (`trace-cmd dump --events`)
 * and has none of their events, and its report text has no line of them.
 * On the trace.dat those detectors run and find nothing; on the text they
 * are "not seen", with a hint that does not claim the user left them off.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openDuckDb } from '../engine/engine.ts';
import { ingestFile } from '../ingest/ingest_file.ts';
import { detectorCoverage } from './coverage.ts';
import { runDetectors, type RunResult } from './run_detectors.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'stallscope-coverage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function analyze(file: string): Promise<RunResult> {
  const { dbPath } = await ingestFile(join(FIXTURES, file), { dataDir: join(dir, file) });
  const engine = await openDuckDb(dbPath, { readOnly: true });
  try {
    return await runDetectors(engine, {});
  } finally {
    engine.close();
  }
}

const UNFIRED = ['mm_vmscan_write_folio', 'mm_vmscan_throttled'];

describe('enabled and never fired: trace.dat runs the detector, text says "not seen"', () => {
  it('checks the fixture first: both events enabled in the trace.dat, none in either form', () => {
    const formats = execFileSync('trace-cmd', ['dump', '--events', join(FIXTURES, 'memcg_reclaim.v7.dat')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 1 << 26,
    });
    const text = readFileSync(join(FIXTURES, 'memcg_reclaim.report.txt'), 'utf8');
    for (const e of UNFIRED) {
      expect(formats).toMatch(new RegExp(`^\\s*name: ${e}$`, 'm'));
      expect(text.includes(` ${e}:`)).toBe(false);
    }
  });

  it('trace.dat: reclaim_writeback and reclaim_throttled ran, found nothing, and say so', async () => {
    const r = await analyze('memcg_reclaim.v7.dat');
    for (const id of ['reclaim_writeback', 'reclaim_throttled']) {
      const d = r.detectors.find((x) => x.id === id)!;
      expect([d.status, d.enabled_listed, d.counts]).toEqual(['ok', true, { critical: 0, warn: 0, info: 0 }]);
    }
    expect(r.overview.lines.find((l) => l.detector === 'reclaim_writeback')!.status).toBe('quiet');
    // oom:mark_victim was not enabled: that one is "not traced", with what to enable.
    const oom = r.overview.lines.find((l) => l.detector === 'oom_kill')!;
    expect([oom.status, oom.text]).toEqual(['not_traced', 'OOM kills: not traced: enable oom:mark_victim']);
  }, 120_000);

  it('report text: the same detectors are "not seen", enable-if-off, never "not traced"', async () => {
    const r = await analyze('memcg_reclaim.report.txt');
    const d = r.detectors.find((x) => x.id === 'reclaim_writeback')!;
    expect([d.status, d.enabled_listed]).toEqual(['not_traced', false]);
    const line = r.overview.lines.find((l) => l.detector === 'reclaim_writeback')!;
    expect(line.text).toBe(
      'Writeback from reclaim: not seen: enable vmscan:mm_vmscan_write_folio if it was off (this trace shows only events that fired)',
    );
    expect(r.overview.lines.some((l) => l.text.includes('not traced'))).toBe(false);
  }, 120_000);
});

describe('an enabled list with whole systems and refused events (a Perfetto config)', () => {
  const det = { requires: [['vmscan:mm_vmscan_write_folio', 'vmscan:mm_vmscan_writepage']] };
  const traced = (systems: string[], failed: string[] = [], names: string[] = []) => ({
    names: new Set(names),
    systems: new Set(systems),
    failed: new Set(failed),
    enabledListed: true,
  });
  it('a system enabled whole covers its events; another system does not', () => {
    expect(detectorCoverage(det, traced(['vmscan'])).status).toBe('traced');
    expect(detectorCoverage(det, traced(['*'])).status).toBe('traced');
    expect(detectorCoverage(det, traced(['writeback'])).status).toBe('not_traced');
  });
  it('an event the recorder refused does not count, under its system or by name', () => {
    const both = ['mm_vmscan_write_folio', 'mm_vmscan_writepage'];
    expect(detectorCoverage(det, traced(['vmscan'], both)).status).toBe('not_traced');
    expect(detectorCoverage(det, traced([], both, both)).status).toBe('not_traced');
    expect(detectorCoverage(det, traced(['vmscan'], ['mm_vmscan_writepage'])).status).toBe('traced');
  });
});
