// The trace library under load and failure: concurrent ingests, the same
// content twice, garbage, a crash mid-ingest (stale work dir), a restart.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dataDirPaths } from '../../server/ingest/data_dir.ts';
import { TraceLibrary } from '../../server/ingest/library.ts';

const HANDMADE = path.resolve(__dirname, '../../fixtures/handmade');
const KERNEL4X = path.join(HANDMADE, 'kernel4x_kswapd_escalation.txt');
const KERNEL3X = path.join(HANDMADE, 'kernel3x_writepage.txt');

let dataDir: string;
let library: TraceLibrary | null = null;

beforeEach(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-lib-'));
});
afterEach(async () => {
  await library?.close();
  library = null;
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('TraceLibrary', () => {
  it('ingests two different files at once; both end up ready', async () => {
    library = await TraceLibrary.open(dataDir);
    const [a, b] = await Promise.all([library.ingest(KERNEL4X), library.ingest(KERNEL3X)]);
    expect(a.status).toBe('ready');
    expect(b.status).toBe('ready');
    expect(a.id).not.toBe(b.id);
    const ids = (await library.list())
      .filter((r) => r.status === 'ready')
      .map((r) => r.id)
      .sort();
    expect(ids).toEqual([a.id, b.id].sort());
  });

  it('lists a trace once while its detectors run (the model is in place, the job not done)', async () => {
    library = await TraceLibrary.open(dataDir);
    const seen: { ids: string[]; statuses: string[] }[] = [];
    const job = library.startIngest(KERNEL4X, { name: 'kernel4x.txt' });
    const listing: Promise<void>[] = [];
    job.listeners.add((p) => {
      if (p.phase !== 'detecting' || listing.length > 0) return;
      listing.push(
        library!.list().then((rs) => {
          seen.push({ ids: rs.map((r) => r.id), statuses: rs.map((r) => r.status) });
        }),
      );
    });
    const record = await job.done;
    await Promise.all(listing);
    expect(seen).toHaveLength(1);
    // the job alone: its trace directory exists by now, and used to be listed beside it as ready
    expect(seen[0]!.statuses).toEqual(['ingesting']);
    expect(seen[0]!.ids).not.toContain(record.id);
    expect((await library.list()).map((r) => [r.id, r.status])).toEqual([[record.id, 'ready']]);
  });

  it('the same content several times at once gives one trace', async () => {
    // The copies that finish last find the first one's trace in place, also
    // when it lands between their check and their rename (that race once
    // failed the ingest with ENOTEMPTY).
    library = await TraceLibrary.open(dataDir);
    const copies = [1, 2].map((i) => path.join(dataDir, `renamed-copy-${i}.txt`));
    for (const c of copies) fs.copyFileSync(KERNEL4X, c);
    const results = await Promise.all([KERNEL4X, ...copies].map((f) => library!.ingest(f)));
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect((await library.list()).filter((r) => r.status === 'ready')).toHaveLength(1);
    expect(fs.readdirSync(dataDirPaths(dataDir).traces)).toEqual([results[0]!.id]);
  });

  it('a non-trace fails with a message naming the file, and leaves nothing that looks complete', async () => {
    library = await TraceLibrary.open(dataDir);
    const bad = path.join(HANDMADE, 'bad_binary_not_trace.bin');
    await expect(library.ingest(bad)).rejects.toThrow(/bad_binary_not_trace\.bin.*not a trace/);
    const list = await library.list();
    expect(list.filter((r) => r.status === 'ready')).toHaveLength(0);
    expect(list.find((r) => r.status === 'failed')?.error).toMatch(/not a trace/);
    expect(fs.readdirSync(dataDirPaths(dataDir).traces)).toEqual([]);
    expect(fs.readdirSync(dataDirPaths(dataDir).tmp)).toEqual([]);
  });

  it('after a crash mid-ingest, reopening removes the half-built trace and keeps the finished ones', async () => {
    library = await TraceLibrary.open(dataDir);
    const done = await library.ingest(KERNEL3X);
    await library.close();
    // What a killed ingest leaves: a work dir owned by a pid that is gone.
    const dead = path.join(dataDirPaths(dataDir).tmp, `abcdef012345-999999-XYZ`);
    fs.mkdirSync(dead, { recursive: true });
    fs.writeFileSync(path.join(dead, 'trace.duckdb'), 'partial');
    library = await TraceLibrary.open(dataDir);
    expect(fs.existsSync(dead)).toBe(false);
    const list = await library.list();
    expect(list.map((r) => [r.id, r.status])).toEqual([[done.id, 'ready']]);
    // Still queryable after the "restart".
    const engine = await library.openEngine(done.id);
    const [{ n }] = await engine.query<{ n: bigint }>('SELECT count(*) AS n FROM ftrace_event');
    expect(Number(n)).toBe(done.eventsTotal);
  });
});
