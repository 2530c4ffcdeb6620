// A load aborted at any moment of its start-up (database opening, schema
// being created) ends, and its thread with it. Closing DuckDB's connection
// under the schema's running query deadlocked one of libuv's threads, so
// the aborted thread, the ingest that terminated it and the process's exit
// hung (store_worker.ts, closeEngine). The moment is swept across the
// start-up: the deadlock needed the abort inside a query.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreWorkerClient } from './store_worker_client.ts';
import { storeWorkers } from './worker_pool.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-abort-'));
afterAll(async () => {
  await storeWorkers.closeIdle();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('store thread aborted during its start-up', () => {
  it('ends within seconds wherever the abort lands', async () => {
    const outcomes: string[] = [];
    for (let delayMs = 0; delayMs <= 570; delayMs += 30) {
      const at = path.join(dir, String(delayMs));
      fs.mkdirSync(at);
      const store = await StoreWorkerClient.start({
        dbPath: path.join(at, 'trace.duckdb'),
        memoryLimit: '1GB',
        tempDirectory: path.join(at, 'spill'),
      });
      await new Promise((r) => setTimeout(r, delayMs));
      const outcome = await Promise.race([
        store.close().then(() => 'ended'),
        new Promise<string>((r) =>
          setTimeout(() => r(`still running 10 s after an abort at ${delayMs} ms`), 10_000).unref(),
        ),
      ]);
      outcomes.push(outcome);
      if (outcome !== 'ended') break; // a stuck thread cannot be ended: stop here
    }
    expect(outcomes.filter((o) => o !== 'ended')).toEqual([]);
    expect(outcomes).toHaveLength(20);
    expect(storeWorkers.threads.live).toBe(0);
  }, 60_000);
});
