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

  it('reads a dictionary too large for a literal from _view_words: the same strings trace-cmd prints', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-store-'));
    dirs.push(dir);
    const engine = await openDuckDb(path.join(dir, 'trace.duckdb'));
    try {
      const store = await ModelStore.beginLoad(engine);
      const builder = new ModelBuilder(store.layout, (table, data) => store.append(table, data));
      await decodeFile(path.join(ROOT, 'fixtures/fsync_xfs.v7.dat'), builder, {
        label: 'fsync_xfs.v7.dat',
        scratchDir: dir,
      });
      await store.commitLoad(builder.finish());
      // The same recording as trace-cmd report printed it: every workqueue_execute_start, in order.
      const report = fs.readFileSync(path.join(ROOT, 'fixtures/fsync_xfs.report.txt'), 'utf8');
      const printed = [...report.matchAll(/workqueue_execute_start: work struct (0x[0-9a-f]+): function (\S+)/g)].map(
        (m) => `${m[1]} ${m[2]}`,
      );
      expect(printed.length).toBe(894);
      // More work pointers than a view holds as a literal (model_store.ts LITERAL_DICT_MAX = 64).
      expect(new Set(printed.map((p) => p.split(' ')[0])).size).toBe(73);
      const [{ sql }] = await engine.query<{ sql: string }>(
        "SELECT sql FROM duckdb_views() WHERE view_name = 'workqueue_execute_start'",
      );
      expect(sql).toContain('_view_words');
      const rows = await engine.query<{ work: string; function: string }>(
        'SELECT work, function FROM workqueue_execute_start ORDER BY id',
      );
      expect(rows.map((r) => `${r.work} ${r.function}`)).toEqual(printed);
    } finally {
      engine.close();
    }
  });
});
