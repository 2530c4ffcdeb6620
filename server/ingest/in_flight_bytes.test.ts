// What the main thread has in flight to the field worker stays within
// IN_FLIGHT_BUDGET_BYTES however far its consumers lag: a real `-e all`
// recording (219 event names) decoded on this thread, its fields on a real
// field worker, its rows appended by a real store worker that opens its
// database only after decoding started (as an ingest with a cached layout
// does), so the queues fill at once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeFile } from '../decode/decode_file.ts';
import { ModelBuilder } from '../model/model_builder.ts';
import { batchTransferBytes, type RecordBatchData } from '../model/record_batch.ts';
import { FieldWorkerClient } from './field_worker_client.ts';
import { IN_FLIGHT_BUDGET_BYTES } from './ingest_memory.ts';
import { RecycledBuffers, sendBuffersBack } from './recycled_buffers.ts';
import { StoreWorkerClient } from './store_worker_client.ts';

const FIXTURE = path.resolve(import.meta.dirname, '../../fixtures/all_events_small.v7.dat');

const dirs: string[] = [];
const clients: { close(): unknown }[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function scratch(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-in-flight-'));
  dirs.push(dir);
  return dir;
}

async function startStore(dir: string, layout: Awaited<ReturnType<StoreWorkerClient['ready']>> | null) {
  const store = await StoreWorkerClient.start(
    { dbPath: path.join(dir, 'trace.duckdb'), memoryLimit: '256MB', tempDirectory: path.join(dir, 'spill') },
    layout,
  );
  clients.push(store);
  return store;
}

describe('bytes in flight between the ingest threads', () => {
  it("the main thread's record batches: taken and not yet back stays within the budget and one batch", async () => {
    // The layout, from a first store (an ingest takes it from its cache).
    const layout = await (await startStore(scratch(), null)).ready();
    const dir = scratch();
    const store = await startStore(dir, layout);
    const fields = await FieldWorkerClient.prepare(layout, store);
    clients.push(fields);
    // The batches as handed over, measured here (not by the budget's own count).
    let largestBatch = 0;
    let batches = 0;
    const target = {
      batchMemory: fields.batchMemory,
      start: fields.start.bind(fields),
      batch: (b: RecordBatchData) => {
        largestBatch = Math.max(largestBatch, batchTransferBytes(b));
        batches++;
        fields.batch(b);
      },
    };
    const builder = new ModelBuilder(layout, (table, data) => store.append(table, data), target, store.chunkMemory);
    await decodeFile(FIXTURE, builder, { label: 'all_events_small.v7.dat', scratchDir: dir });
    const result = builder.finish();
    await fields.finish();
    const summary = await store.finish(result);

    const expected = JSON.parse(fs.readFileSync(FIXTURE.replace(/\.v7\.dat$/, '.counts.json'), 'utf8')) as {
      events_by_name: Record<string, number>;
    };
    const total = Object.values(expected.events_by_name).reduce((a, n) => a + n, 0);
    expect(summary.eventsTotal).toBe(total);
    // Enough batches that the old bound (8 of them, ~13 MB) could fill.
    expect(batches).toBeGreaterThan(10);
    const pool = fields.batchMemory as RecycledBuffers;
    expect(pool.peakOutBytes).toBeGreaterThan(0);
    // In flight at most the budget, plus the batch being filled on this thread.
    expect(pool.peakOutBytes).toBeLessThanOrEqual(IN_FLIGHT_BUDGET_BYTES + largestBatch);
  });
});

describe('RecycledBuffers past its idle cap', () => {
  it('frees the least recently taken size first, and keeps the sizes in use', () => {
    const { port1, port2 } = new MessageChannel();
    const MB = 1 << 20;
    const A = MB;
    const B = MB + 65536;
    const pool = new RecycledBuffers(port1, 3 * MB);
    clients.push(pool, port2);
    const a1 = pool.take(A);
    const a2 = pool.take(A);
    const b1 = pool.take(B);
    pool.take(B);
    // A was taken last before B. Back: 2 x A + B, past the 3 MB cap by B - MB.
    sendBuffersBack(port2, [a1, a2, b1]);
    pool.take(4096); // reads the port
    expect(pool.freedBytes).toBe(A);
    // B's buffer was kept (it came back after the cap was reached), and one of A's.
    const reused = pool.reused;
    pool.take(B);
    pool.take(A);
    expect(pool.reused - reused).toBe(2);
    expect(pool.allocated).toBe(5);
  });
});
