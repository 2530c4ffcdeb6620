/**
 * For tests: makes an ingested trace look as a stallscope before model
 * versions left it (no `modelVersion` in info.json, no `model_version` in
 * trace_info), so upgrades can be tested on real models.
 */
import fs from 'node:fs';
import path from 'node:path';
import { openDuckDb } from '../../../server/engine/engine.ts';

export async function makeUnversioned(traceDir: string): Promise<void> {
  const engine = await openDuckDb(path.join(traceDir, 'trace.duckdb'));
  try {
    await engine.exec(`DELETE FROM trace_info WHERE key = 'model_version'`);
  } finally {
    engine.close();
  }
  const infoFile = path.join(traceDir, 'info.json');
  const { modelVersion: _, ...info } = JSON.parse(fs.readFileSync(infoFile, 'utf8'));
  fs.writeFileSync(infoFile, JSON.stringify(info));
}
