// A library that an older stallscope filled: its models and findings carry
// that version's decoding and detectors. The library says which traces are
// outdated, rebuilds one when its file comes again, and recomputes findings
// made by other detectors.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtinDetectorsStamp } from '../../server/findings/detector_registry.ts';
import { TraceLibrary } from '../../server/ingest/library.ts';
import { makeUnversioned } from '../support/ingest/test_older_model.ts';
import { MODEL_VERSION } from '../../server/model/model_version.ts';

const KERNEL4X = path.resolve(__dirname, '../../fixtures/handmade/kernel4x_kswapd_escalation.txt');

let dataDir: string;
let library: TraceLibrary | null = null;

beforeEach(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-upgrade-'));
});
afterEach(async () => {
  await library?.close();
  library = null;
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const traceDir = (id: string) => path.join(dataDir, 'traces', id);

async function modelVersionIn(lib: TraceLibrary, id: string): Promise<string | null> {
  const rows = await (
    await lib.openEngine(id)
  ).query<{ value: string }>(`SELECT value FROM trace_info WHERE key = 'model_version'`);
  return rows[0]?.value ?? null;
}

describe('a library from an older stallscope', () => {
  it('marks an unversioned trace outdated; its file again rebuilds it, and the open engine is replaced', async () => {
    library = await TraceLibrary.open(dataDir);
    const { id } = await library.ingest(KERNEL4X);
    await library.close();
    await makeUnversioned(traceDir(id));

    library = await TraceLibrary.open(dataDir);
    expect(await library.get(id)).toMatchObject({ modelVersion: 0, outdated: true });
    expect(await modelVersionIn(library, id)).toBeNull(); // the old model, open and answering

    const replaced: string[] = [];
    library.onTraceReplaced((t) => replaced.push(t));
    const rebuilt = await library.ingest(KERNEL4X);
    expect(rebuilt).toMatchObject({ id, modelVersion: MODEL_VERSION, outdated: false });
    expect(replaced).toEqual([id]);
    expect(await modelVersionIn(library, id)).toBe(String(MODEL_VERSION));

    // Current now: the same file is reused, nothing is replaced.
    await library.ingest(KERNEL4X);
    expect(replaced).toEqual([id]);
  });

  it('recomputes findings another set of detectors made, and keeps those of the current ones', async () => {
    library = await TraceLibrary.open(dataDir);
    const { id } = await library.ingest(KERNEL4X);
    const findingsFile = path.join(traceDir(id), 'findings.json');
    const computed = JSON.parse(fs.readFileSync(findingsFile, 'utf8'));
    expect(computed.detectors).toBe(await builtinDetectorsStamp());
    expect(computed.findings.length).toBeGreaterThan(0); // kswapd escalation: fixtures/handmade/README.md

    // Same detectors: the cache is what is served (emptied here to tell it apart).
    fs.writeFileSync(findingsFile, JSON.stringify({ ...computed, findings: [] }));
    expect((await library.findings(id)).findings).toEqual([]);

    // Made by other detectors (an upgrade changed them): computed again.
    fs.writeFileSync(findingsFile, JSON.stringify({ ...computed, detectors: 'an older stallscope', findings: [] }));
    const again = await library.findings(id);
    expect(again.findings.length).toBe(computed.findings.length);
    expect(JSON.parse(fs.readFileSync(findingsFile, 'utf8')).detectors).toBe(computed.detectors);
  });
});
