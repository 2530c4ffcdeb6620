/**
 * The library's read engines (the detectors and, beside them, an upload's
 * first view) run under READ_ENGINE_MEMORY_LIMIT, spilling under the data
 * directory's tmp/ in a directory named with this process's pid (so
 * removeStaleWork deletes it if the process dies), not DuckDB's default of
 * 80% of the machine's memory.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_ENGINE_MEMORY_LIMIT, TraceLibrary } from './library.ts';

const K4X = path.resolve(__dirname, '../../fixtures/handmade/kernel4x_kswapd_escalation.txt');

let dataDir: string;
let library: TraceLibrary;
let id: string;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-readcap-'));
  library = await TraceLibrary.open(dataDir);
  id = (await library.ingest(K4X)).id;
}, 60_000);

afterAll(async () => {
  await library?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('read engine memory cap', () => {
  it('runs with the cap and a spill directory of its own under tmp/', async () => {
    const engine = await library.openEngine(id);
    const [s] = await engine.query<{ limit: string; temp: string }>(
      `SELECT current_setting('memory_limit') AS limit, current_setting('temp_directory') AS temp`,
    );
    // '64MB' is 64,000,000 bytes: DuckDB shows it in MiB
    const m = /^(\d+)MB$/.exec(READ_ENGINE_MEMORY_LIMIT);
    expect(m).not.toBeNull();
    expect(s!.limit).toBe(`${((Number(m![1]) * 1e6) / 1048576).toFixed(1)} MiB`);
    expect(path.dirname(s!.temp)).toBe(path.join(dataDir, 'tmp'));
    expect(path.basename(s!.temp)).toMatch(new RegExp(`^read-${process.pid}-[0-9a-z]+$`));
    // the detectors ran on it: the trace's findings are there
    expect((await library.findings(id)).findings.length).toBeGreaterThan(0);
  });
});
