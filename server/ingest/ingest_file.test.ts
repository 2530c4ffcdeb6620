// ingestFile's contentSha256 option: the server hashes an upload while it
// writes it and hands the hash over, so the ingest does not read the file
// again just to hash it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ingestFile, type IngestPhase } from './ingest_file.ts';

const FIXTURE = path.resolve(__dirname, '../../fixtures/handmade/kernel4x_kswapd_escalation.txt');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-ingest-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('ingestFile contentSha256', () => {
  it('a given hash is the trace id, and the file is not read to hash it', async () => {
    const sha = createHash('sha256').update(fs.readFileSync(FIXTURE)).digest('hex');
    const hashed: number[] = [];
    const phases = new Set<IngestPhase>();
    const r = await ingestFile(FIXTURE, {
      dataDir,
      contentSha256: sha,
      onProgress: (p) => {
        phases.add(p.phase);
        if (p.phase === 'hashing') hashed.push(p.bytesDone);
      },
    });
    expect(r.id).toBe(sha);
    expect(r.summary.eventsTotal).toBe(19); // fixtures/handmade/README.md
    // Only the initial 0-byte report: no pass over the file.
    expect(hashed.filter((n) => n > 0)).toEqual([]);
    expect(phases.has('done')).toBe(true);
  });

  it('a malformed hash is refused before anything is written', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-ingest-bad-'));
    await expect(ingestFile(FIXTURE, { dataDir: dir, contentSha256: '../../etc' })).rejects.toThrow(/contentSha256 must be 64 lowercase hex/);
    expect(fs.existsSync(path.join(dir, 'traces'))).toBe(false);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
