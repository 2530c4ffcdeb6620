// A load that runs out of DuckDB memory is built again at a higher cap
// (ingest_file.ts retryingLoadCap): the load's floor (withLoadFloor) is a
// measured guess, and a trace must not be lost to it. The store's cap is
// forced to 256KB through STALLSCOPE_STORE_MEMORY (read at each ingest) so the
// first build fails as a trace of many wide event kinds does at 40MB. (1MB
// was enough while the store worker created the schema inside the load's
// transaction; on a copy of the schema template the load completed at 1MB.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openDuckDb } from '../engine/engine.ts';
import { ingestFile } from './ingest_file.ts';
import { isLoadOutOfMemory } from './ingest_memory.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const dirs: string[] = [];
const savedCap = process.env.STALLSCOPE_STORE_MEMORY;
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  if (savedCap === undefined) delete process.env.STALLSCOPE_STORE_MEMORY;
  else process.env.STALLSCOPE_STORE_MEMORY = savedCap;
});

describe('which failures a higher load cap mends', () => {
  it("the load's DuckDB allocations, on the store worker or in an append; not derive's", () => {
    // The messages as the ingests of this session printed them.
    expect(
      isLoadOutOfMemory(
        new Error(
          'store worker: Failed to append: could not allocate block of size 256.0 KiB (39.9 MiB/40.0 MiB used)',
        ),
      ),
    ).toBe(true);
    expect(
      isLoadOutOfMemory(
        new Error(
          'store worker: Out of Memory Error: could not allocate block of size 256.0 KiB (2.8 MiB/2.8 MiB used)',
        ),
      ),
    ).toBe(true);
    expect(
      isLoadOutOfMemory(
        new Error('Failed to append: could not allocate block of size 64.0 KiB (38.1 MiB/38.1 MiB used)'),
      ),
    ).toBe(true);
    expect(
      isLoadOutOfMemory(
        new Error('Out of Memory Error: could not allocate block of size 256.0 KiB (64.0 MiB/64.0 MiB used)'),
      ),
    ).toBe(false);
    expect(isLoadOutOfMemory(new Error('store worker: stopped without an error'))).toBe(false);
  });
});

describe('a load that runs out of memory', () => {
  it(
    'is built again at the higher cap, with every event of trace-cmd report in the model',
    { timeout: 120_000 },
    async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-load-retry-'));
      dirs.push(dataDir);
      const counts = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'fsync_timers.counts.json'), 'utf8')) as {
        events_by_name: Record<string, number>;
        events_total: number;
      };
      const warnings: string[] = [];
      const onWarning = (w: Error & { code?: string }) => {
        if (w.code === 'STALLSCOPE_LOAD_RETRY') warnings.push(w.message);
      };
      process.on('warning', onWarning);
      process.env.STALLSCOPE_STORE_MEMORY = '256KB';
      const phases: string[] = [];
      let result;
      try {
        result = await ingestFile(path.join(FIXTURES, 'fsync_timers.v7.dat'), {
          dataDir,
          onProgress: (p) => phases.push(p.phase),
        });
        // 'warning' is emitted on the next tick
        await new Promise((r) => setImmediate(r));
      } finally {
        process.off('warning', onWarning);
      }
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/could not allocate block of size .*; building again at 96MB$/);
      expect(phases.at(-1)).toBe('done');
      expect(result.summary.eventsTotal).toBe(counts.events_total);
      const engine = await openDuckDb(result.dbPath, { readOnly: true });
      try {
        const rows = await engine.query<{ name: string; n: bigint }>(
          'SELECT name, count(*) AS n FROM ftrace_event GROUP BY name',
        );
        expect(Object.fromEntries(rows.map((r) => [r.name, Number(r.n)]))).toEqual(counts.events_by_name);
      } finally {
        engine.close();
      }
      // nothing of the failed build is left in the work dir
      expect(fs.readdirSync(path.join(dataDir, 'tmp')).filter((f) => f.startsWith('ingest-'))).toEqual([]);
    },
  );
});
