// The models of a few fixtures, one per decoder and era, as digests
// (server/model/model_digest.ts): what model_version.test.ts compares with
// the digests recorded under the current MODEL_VERSION.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDuckDb } from '../../server/engine/engine.ts';
import { ingestFile } from '../../server/ingest/ingest_file.ts';
import { modelDigest } from '../../server/model/model_digest.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.resolve(HERE, '../../fixtures');

/** Where the digests are kept (written by `npm run model-digest`). */
export const DIGEST_FILE = path.resolve(HERE, 'model_digests.json');

/** One fixture per decoder (trace.dat v6 and v7, report, tracefs text) plus old kernels' text and untyped args. */
export const DIGEST_FIXTURES = [
  'reclaim_kswapd.v6.dat',
  'fsync_xfs.v7.dat',
  'printed_args.v7.dat',
  'memcg_reclaim.report.txt',
  'ftrace_specials.tracefs.txt',
  'handmade/kernel3x_writepage.txt',
  'handmade/kernel4x_kswapd_escalation.txt',
];

export interface DigestFile {
  modelVersion: number;
  /** Fixture (relative to fixtures/) -> relation -> "N rows, sum-of-md5". */
  models: Record<string, Record<string, string>>;
}

export async function fixtureDigests(): Promise<DigestFile['models']> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-digest-'));
  try {
    const models: DigestFile['models'] = {};
    for (const f of DIGEST_FIXTURES) {
      const r = await ingestFile(path.join(FIXTURES, f), { dataDir });
      const engine = await openDuckDb(r.dbPath, { readOnly: true });
      try {
        models[f] = await modelDigest(engine);
      } finally {
        engine.close();
      }
    }
    return models;
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export function readDigestFile(): DigestFile | null {
  try {
    return JSON.parse(fs.readFileSync(DIGEST_FILE, 'utf8')) as DigestFile;
  } catch {
    return null;
  }
}

/** Relations whose digest differs between two sets, as "fixture: relation". */
export function changedRelations(a: DigestFile['models'], b: DigestFile['models']): string[] {
  const out: string[] = [];
  for (const f of new Set([...Object.keys(a), ...Object.keys(b)])) {
    for (const rel of new Set([...Object.keys(a[f] ?? {}), ...Object.keys(b[f] ?? {})])) {
      if (a[f]?.[rel] !== b[f]?.[rel]) out.push(`${f}: ${rel}`);
    }
  }
  return out;
}
