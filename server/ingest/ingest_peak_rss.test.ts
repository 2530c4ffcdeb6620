/**
 * The ingest's memory bound, measured on a real process: `stallscope ingest`
 * of the corpus's 1M-event recordings (trace.dat, and one as `trace-cmd
 * report` text) in a child, whose peak RSS (all threads: decode, field and
 * store workers, DuckDB) must stay under PEAK_BOUND_MB. What keeps it
 * bounded, by construction (ingest/ingest_memory.ts states the budget part
 * by part): DuckDB's caps (40MB on the store thread while loading, 128MB
 * while deriving), its allocator returning freed pages
 * (engine/allocator_env.ts), the workers' capped young generations, bounded
 * chunks in flight between the threads, and derive queries that do not pivot
 * `args` (model/derive_event_views.ts).
 *
 * The bound is issue 29's target (350 MB) plus a margin for a loaded
 * machine, not the target itself: measured 326-337 MB on many_systems.v7 and
 * 310-312 MB on sched_wq.v7 at load 15-20 (issue-29m note, session 3), so
 * 365 MB leaves ~30 MB for the run-to-run swing (the garbage ArrayBuffers of
 * the decoding threads, collected when their part ends:
 * ingest_memory.ts collectGarbage). It was 400 MB, and 450 MB before that;
 * many_systems.v7 peaked at 345-375 MB before each thread collected its
 * garbage (this fails at 375), at 391-396 MB before the store's 64MB cap and
 * at 561-567 MB before derive_block's views. The >= 10M-event files of the
 * bench corpus are measured by the bench, not here: a test cannot generate
 * them in CI's time.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PEAK_BOUND_MB = 365;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-peak-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** `stallscope ingest FILE` in a child process: its exit code, peak RSS and output. */
function ingestInChild(file: string): Promise<{ code: number | null; peakMB: number; out: string }> {
  const data = fs.mkdtempSync(path.join(dir, 'data-'));
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        path.join(ROOT, 'server/decode/test_peak_rss.mjs'),
        path.join(ROOT, 'bin/stallscope.mjs'),
        'ingest',
        file,
        '--data-dir',
        data,
      ],
      { cwd: ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const kb = Number(/PEAK_RSS_KB=(\d+)/.exec(out)?.[1] ?? NaN);
      fs.rmSync(data, { recursive: true, force: true });
      resolve({ code, peakMB: Math.round(kb / 1024), out });
    });
  });
}

describe('ingest peak RSS', () => {
  // The heaviest of the corpus's small recordings: many event systems (the block
  // model's derive) and the scheduler/workqueue one (most rows through the store).
  for (const name of ['many_systems', 'sched_wq']) {
    it(`${name}.v7.dat (1M events): ingested with peak RSS under ${PEAK_BOUND_MB} MB`, async () => {
      const r = await ingestInChild(path.join(ROOT, 'fixtures/corpus', `${name}.v7.dat`));
      expect(r.code, r.out.slice(-800)).toBe(0);
      expect(r.out).toMatch(/ingested: .* 1,000,00\d events/);
      expect(Number.isFinite(r.peakMB), r.out.slice(-800)).toBe(true);
      expect(r.peakMB, r.out.slice(-800)).toBeLessThan(PEAK_BOUND_MB);
    }, 180_000);
  }

  // The text path: another decoder (ftrace_text) feeding the same store.
  it(`many_systems as trace-cmd report text (1M events): ingested with peak RSS under ${PEAK_BOUND_MB} MB`, async () => {
    const text = path.join(dir, 'many_systems.report.txt');
    execFileSync(
      'sh',
      ['-c', 'trace-cmd report -i "$1" > "$2"', 'sh', path.join(ROOT, 'fixtures/corpus/many_systems.v7.dat'), text],
      {
        stdio: 'ignore',
      },
    );
    const r = await ingestInChild(text);
    expect(r.code, r.out.slice(-800)).toBe(0);
    expect(r.out).toMatch(/ingested: .* 1,000,00\d events/);
    expect(Number.isFinite(r.peakMB), r.out.slice(-800)).toBe(true);
    expect(r.peakMB, r.out.slice(-800)).toBeLessThan(PEAK_BOUND_MB);
  }, 240_000);
});
