// ModelStore's load on a real recording: the COMMIT writes the events into
// the database file itself, so no WAL is left for a later checkpoint to copy
// a second time (ModelStore.commitLoad).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeFile } from '../decode/decode_file.ts';
import { openDuckDb } from '../engine/engine.ts';
import { ModelBuilder } from './model_builder.ts';
import { ModelStore } from './model_store.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURE = path.join(ROOT, 'fixtures/build_balance.v7.dat');
// `trace-cmd report -i fixtures/build_balance.v7.dat | awk '/\[[0-9]+\] +[0-9]+\.[0-9]+:/ {n++} END {print n}'`
const EVENTS = 91_215;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('ModelStore load', () => {
  it('commits a real recording straight into the file: no WAL after the COMMIT, every event there', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-store-'));
    dirs.push(dir);
    const db = path.join(dir, 'trace.duckdb');
    // One thread and a low cap, as on the store worker (ingest_memory.ts STORE_MEMORY_LIMIT).
    const engine = await openDuckDb(db, { threads: 1, memoryLimit: '64MB' });
    try {
      const store = await ModelStore.beginLoad(engine);
      const builder = new ModelBuilder(store.layout, (table, data) => store.append(table, data));
      await decodeFile(FIXTURE, builder, { label: 'build_balance.v7.dat', scratchDir: dir });
      const summary = await store.commitLoad(builder.finish());
      expect(summary.eventsTotal).toBe(EVENTS);
      // Before the COMMIT checkpointed, this load left a WAL of several MB for the close to copy.
      const wal = `${db}.wal`;
      expect(fs.existsSync(wal) ? fs.statSync(wal).size : 0).toBe(0);
      const [{ n }] = await engine.query<{ n: bigint }>('SELECT count(*) AS n FROM ftrace_event');
      expect(Number(n)).toBe(EVENTS);
    } finally {
      engine.close();
    }
  });
});
