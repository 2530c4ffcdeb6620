// The field worker's failures reach the ingest as its own error, whichever
// side notices first: the main thread blocked handing it batches, or the
// end of the load. Real threads, a real store worker.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RecordBatchWriter } from '../model/record_batch.ts';
import { FieldWorkerClient } from './field_worker_client.ts';
import { StoreWorkerClient } from './store_worker_client.ts';
import { WorkerStalled } from './wait_for_counter.ts';

const dirs: string[] = [];
const clients: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function startStore(): Promise<StoreWorkerClient> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-field-'));
  dirs.push(dir);
  const store = await StoreWorkerClient.start({
    dbPath: path.join(dir, 'trace.duckdb'),
    memoryLimit: '256MB',
    tempDirectory: path.join(dir, 'spill'),
  });
  clients.push(store);
  return store;
}

describe('field worker failures', () => {
  it("a format it cannot compile: the main thread, blocked on batches, gets the worker's own error", async () => {
    const store = await startStore();
    const fields = await FieldWorkerClient.prepare(await store.ready(), store);
    clients.push(fields);
    // Main parsed this format; the worker is handed text it cannot parse.
    fields.start(
      {
        format: 'trace_dat',
        littleEndian: true,
        longSize: 8,
        formats: [{ id: 7, name: 'mm_vmscan_kswapd_sleep', system: 'vmscan', text: 'not a format' }],
        kallsyms: null,
        printk: null,
      },
      0n,
      ['mm_vmscan_kswapd_sleep'],
    );
    const page = new Uint8Array(64);
    let stalled: unknown = null;
    const batches = new RecordBatchWriter((b) => fields.batch(b));
    try {
      // More batches than may wait in the worker's queue: the main thread must block, then see the failure.
      for (let i = 0; i < 8192 * 20; i++) {
        batches.page(page, 0, 64);
        batches.add(7, i, i, 0, 0, 0, i, 0, 16);
      }
    } catch (err) {
      stalled = err;
    }
    expect(stalled).toBeInstanceOf(WorkerStalled);
    expect(fields.failed()).toBe(true);
    expect(store.failed()).toBe(false);
    await expect(fields.rethrowFailure()).rejects.toThrow(/^field worker: .*format/i);
  });

  it('no raw records offered: nothing starts and finish() returns at once', async () => {
    const store = await startStore();
    const fields = await FieldWorkerClient.prepare(await store.ready(), store);
    clients.push(fields);
    expect(fields.started).toBe(false);
    await fields.finish();
  });
});
