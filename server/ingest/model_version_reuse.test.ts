// A trace ingested by an older stallscope (another model version in its
// info.json) is rebuilt when its file comes again, not reused: its model
// would keep the older decoding.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDuckDb } from '../engine/engine.ts';
import { MODEL_VERSION } from '../model/model_version.ts';
import { ingestFile } from './ingest_file.ts';
import { makeUnversioned } from '../../tests/support/ingest/test_older_model.ts';

const FIXTURE = path.resolve(__dirname, '../../fixtures/handmade/kernel4x_kswapd_escalation.txt');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-model-version-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

async function traceInfoVersion(dbPath: string): Promise<string | null> {
  const engine = await openDuckDb(dbPath, { readOnly: true });
  try {
    const rows = await engine.query<{ value: string }>(`SELECT value FROM trace_info WHERE key = 'model_version'`);
    return rows[0]?.value ?? null;
  } finally {
    engine.close();
  }
}

describe('reuse across model versions', () => {
  it('stamps the model version in info.json and trace_info', async () => {
    const r = await ingestFile(FIXTURE, { dataDir });
    expect(r.summary.modelVersion).toBe(MODEL_VERSION);
    expect(await traceInfoVersion(r.dbPath)).toBe(String(MODEL_VERSION));
  });

  it('rebuilds a trace an older stallscope built, says so, then reuses the rebuilt one', async () => {
    const first = await ingestFile(FIXTURE, { dataDir });
    await makeUnversioned(path.dirname(first.dbPath));

    const rebuilt = await ingestFile(FIXTURE, { dataDir });
    expect(rebuilt).toMatchObject({ id: first.id, reused: false, replacedModelVersion: 0 });
    expect(rebuilt.summary.modelVersion).toBe(MODEL_VERSION);
    expect(await traceInfoVersion(rebuilt.dbPath)).toBe(String(MODEL_VERSION));
    expect(fs.readdirSync(path.join(dataDir, 'traces'))).toEqual([first.id]);

    const again = await ingestFile(FIXTURE, { dataDir });
    expect(again.reused).toBe(true);
    expect(again.replacedModelVersion).toBeUndefined();
  });

  it('a trace from a newer stallscope is rebuilt too: its model is not one this code knows', async () => {
    const first = await ingestFile(FIXTURE, { dataDir });
    const infoFile = path.join(path.dirname(first.dbPath), 'info.json');
    const info = JSON.parse(fs.readFileSync(infoFile, 'utf8'));
    fs.writeFileSync(infoFile, JSON.stringify({ ...info, modelVersion: MODEL_VERSION + 1 }));
    const rebuilt = await ingestFile(FIXTURE, { dataDir });
    expect(rebuilt).toMatchObject({ reused: false, replacedModelVersion: MODEL_VERSION + 1 });
  });
});
