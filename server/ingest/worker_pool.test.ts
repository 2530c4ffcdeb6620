// The ingest's threads are kept between ingests (worker_pool.ts): the next
// ingest in the process takes them, a failed ingest's threads are not
// reused, and idle ones never keep a process alive. Real threads, real
// traces; whether a reused thread builds the same model as a new one is
// checked on every fixture by tests/golden/*_agree*.test.ts, which ingest
// many traces one after the other in one process.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuckDb } from '../engine/engine.ts';
import { ingestFile } from './ingest_file.ts';
import { fieldWorkers, prestartIngestThreads, storeWorkers } from './worker_pool.ts';

const ROOT = path.resolve(__dirname, '../..');
const TRACE_DAT = path.join(ROOT, 'fixtures/reclaim_kswapd.v7.dat');
const TEXT = path.join(ROOT, 'fixtures/tracefs_tgid.txt');

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-pool-'));
});
afterAll(async () => {
  await storeWorkers.closeIdle();
  await fieldWorkers.closeIdle();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Rows and a digest of the rows, for tables both threads write (the field thread: typed fields). */
async function tableDigests(dbPath: string): Promise<Record<string, string>> {
  const e = await openDuckDb(dbPath, { readOnly: true });
  try {
    const out: Record<string, string> = {};
    for (const t of [
      'ftrace_event',
      'sched_switch',
      'mm_vmscan_lru_shrink_inactive',
      'mm_shrink_slab_start',
      'thread',
      'thread_state',
    ]) {
      const [{ n, h }] = await e.query<{ n: bigint; h: string }>(
        `SELECT count(*) AS n, bit_xor(hash(r))::VARCHAR AS h FROM ${t} r`,
      );
      out[t] = `${n} rows, ${h}`;
    }
    return out;
  } finally {
    e.close();
  }
}

describe('ingest threads kept between ingests', () => {
  it('the next ingest takes the threads the last one used, and builds the same model', async () => {
    await prestartIngestThreads();
    const before = { store: storeWorkers.threads, field: fieldWorkers.threads };
    expect(before.store.idle).toBe(1);
    expect(before.field.idle).toBe(1);

    const first = await ingestFile(TRACE_DAT, { dataDir: path.join(dir, 'a'), worker: true });
    const text = await ingestFile(TEXT, { dataDir: path.join(dir, 'b'), worker: true });
    const again = await ingestFile(TRACE_DAT, { dataDir: path.join(dir, 'c'), worker: true });

    // Three ingests on the two prestarted threads: none started since.
    expect(storeWorkers.threads).toEqual({ started: before.store.started, live: 1, idle: 1 });
    expect(fieldWorkers.threads).toEqual({ started: before.field.started, live: 1, idle: 1 });
    expect(text.summary.eventsTotal).toBeGreaterThan(0);
    // The same trace after another one: nothing of the text trace carried over.
    expect(again.summary.eventsByName).toEqual(first.summary.eventsByName);
    const digests = await tableDigests(first.dbPath);
    expect(digests.sched_switch).not.toMatch(/^0 rows/);
    expect(await tableDigests(again.dbPath)).toEqual(digests);
  });

  it("a failed ingest's store thread is terminated, and the next ingest starts a new one", async () => {
    const garbage = path.join(dir, 'garbage.bin');
    fs.writeFileSync(garbage, Buffer.alloc(64 << 10, 0xa5));
    await ingestFile(TRACE_DAT, { dataDir: path.join(dir, 'd'), worker: true });
    const started = storeWorkers.threads.started;
    expect(storeWorkers.threads.idle).toBe(1);

    await expect(ingestFile(garbage, { dataDir: path.join(dir, 'e'), worker: true })).rejects.toThrow(/garbage\.bin/);
    // It took the idle thread, which ended with the failed load.
    expect(storeWorkers.threads).toMatchObject({ started, idle: 0 });

    const ok = await ingestFile(TRACE_DAT, { dataDir: path.join(dir, 'f'), worker: true });
    expect(ok.summary.eventsTotal).toBeGreaterThan(0);
    expect(storeWorkers.threads).toEqual({ started: started + 1, live: 1, idle: 1 });
  });

  it('an upload of a trace already in the library (its id given) leaves the kept store thread alone', async () => {
    const dataDir = path.join(dir, 'dup');
    const first = await ingestFile(TRACE_DAT, { dataDir, worker: true });
    const before = storeWorkers.threads;
    expect(before.idle).toBe(1);
    const again = await ingestFile(TRACE_DAT, { dataDir, worker: true, contentSha256: first.summary.id });
    expect(again.summary.id).toBe(first.summary.id);
    expect(again.reused).toBe(true);
    expect(storeWorkers.threads).toEqual(before);
  });

  it('prestart resolves once both threads have loaded, in a process with nothing else to wait for', () => {
    const pool = path.join(ROOT, 'server/ingest/worker_pool.ts');
    const script = path.join(dir, 'prestart.mts');
    fs.writeFileSync(
      script,
      `import { prestartIngestThreads } from ${JSON.stringify(pool)};\nawait prestartIngestThreads();\nconsole.log('booted');\n`,
    );
    const r = spawnSync(process.execPath, ['--import', 'tsx', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.error).toBeUndefined();
    // Exit 13 (a top-level await never settled) if the booting threads did not keep the process waiting.
    expect({ status: r.status, out: r.stdout.trim() }).toEqual({ status: 0, out: 'booted' });
  });

  it('idle threads do not keep a process alive: the CLI exits after its ingest', () => {
    const cli = path.join(ROOT, 'server/cli.ts');
    const env = { ...process.env, STALLSCOPE_STORE_WORKER: '1' };
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', cli, 'ingest', TRACE_DAT, '--data-dir', path.join(dir, 'cli'), '--force'],
      {
        cwd: ROOT,
        env,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(r.error).toBeUndefined(); // a timeout (a thread kept the process alive) is an error here
    expect(r.status).toBe(0);
  });
});
