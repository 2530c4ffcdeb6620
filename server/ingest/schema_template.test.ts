/**
 * schema_template.ts: a load on a copy of the committed schema template
 * holds what a load that creates the schema holds, relation by relation, on
 * real recordings (a tracebox file and a trace.dat), in this thread and on
 * the store worker, and the template is an empty model with the block size
 * it is kept for.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeFile } from '../decode/decode_file.ts';
import { type Engine, openDuckDb } from '../engine/engine.ts';
import { ModelBuilder } from '../model/model_builder.ts';
import { ModelStore } from '../model/model_store.ts';
import { copySchemaTemplate, makeSchemaTemplate } from './schema_template.ts';
import { StoreWorkerClient } from './store_worker_client.ts';
import { storeWorkers } from './worker_pool.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BLOCK = 65536; // the small files' block size (ingest_memory.ts ingestBlockSize)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-schema-template-'));

afterAll(async () => {
  await storeWorkers.closeIdle();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Every relation of the main schema: its rows (a count and an order-independent sum of row hashes). */
async function contents(engine: Engine): Promise<Record<string, string>> {
  const names = await engine.query<{ name: string }>(
    `SELECT table_name AS name FROM duckdb_tables() WHERE schema_name = 'main' AND NOT temporary
     UNION SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal ORDER BY 1`,
  );
  const out: Record<string, string> = {};
  for (const { name } of names) {
    const [r] = await engine.query<{ n: bigint; h: bigint | null }>(
      `SELECT count(*) AS n, sum(hash(t)::HUGEINT) AS h FROM "${name}" t`,
    );
    out[name] = `${r!.n} ${r!.h}`;
  }
  return out;
}

/** Loads `fixture` into a new database: on a copy of the template, or creating the schema. */
async function load(fixture: string, onTemplate: boolean, layoutFrom?: ModelStore['layout'], tag = '') {
  const db = path.join(dir, `${path.basename(fixture)}${tag}.${onTemplate ? 'template' : 'fresh'}.duckdb`);
  if (onTemplate) expect(await copySchemaTemplate(db, BLOCK)).toBe(true);
  const engine = await openDuckDb(db, { threads: 1, blockSize: BLOCK });
  const store = onTemplate
    ? await ModelStore.beginLoadOnSchema(engine, layoutFrom!)
    : await ModelStore.beginLoad(engine);
  const builder = new ModelBuilder(store.layout, (table, data) => store.append(table, data));
  await decodeFile(path.join(ROOT, fixture), builder, { label: fixture, scratchDir: dir });
  const summary = await store.commitLoad(builder.finish());
  return { engine, store, summary };
}

describe('schema template', () => {
  it('is the empty model, with the block size it is kept for; none for another', async () => {
    await makeSchemaTemplate(BLOCK);
    const db = path.join(dir, 'copy.duckdb');
    expect(await copySchemaTemplate(db, BLOCK)).toBe(true);
    const engine = await openDuckDb(db, { readOnly: true });
    try {
      const [{ block_size }] = await engine.query<{ block_size: bigint }>(
        'SELECT block_size FROM pragma_database_size()',
      );
      expect(Number(block_size)).toBe(BLOCK);
      // Its tables are empty (its views read the typed tables a load replaces: ModelStore.finish makes them again).
      const tables = await engine.query<{ name: string }>(
        "SELECT table_name AS name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY 1",
      );
      expect(tables.length).toBeGreaterThan(40);
      for (const { name } of tables) {
        const [{ n }] = await engine.query<{ n: bigint }>(`SELECT count(*) AS n FROM "${name}"`);
        expect([name, Number(n)]).toEqual([name, 0]);
      }
      const [{ n }] = await engine.query<{ n: bigint }>(
        "SELECT count(*) AS n FROM duckdb_tables() WHERE table_name LIKE '\\_stage\\_%' ESCAPE '\\'",
      );
      expect(Number(n)).toBeGreaterThan(20);
    } finally {
      engine.close();
    }
    const other = path.join(dir, 'other.duckdb');
    expect(await copySchemaTemplate(other, 16384)).toBe(false);
    expect(fs.existsSync(other)).toBe(false);
  });

  for (const [fixture, events] of [
    // trace_processor_shell `select count(*) from ftrace_event`: 4,601
    ['fixtures/perfetto_block.pftrace', 4_601],
    // `trace-cmd report -i fixtures/memcg_oom.v7.dat | awk '/\[[0-9]+\] +[0-9]+\.[0-9]+:/ {n++} END {print n}'`
    ['fixtures/memcg_oom.v7.dat', 3_958],
  ] as const) {
    it(`a load of ${path.basename(fixture)} on it holds what a load creating the schema holds`, async () => {
      const fresh = await load(fixture, false);
      const expected = await contents(fresh.engine);
      fresh.engine.close();
      expect(fresh.summary.eventsTotal).toBe(events);
      expect(expected.ftrace_event).toMatch(new RegExp(`^${events} `));
      const copy = await load(fixture, true, fresh.store.layout);
      try {
        expect(copy.summary.eventsTotal).toBe(events);
        expect(await contents(copy.engine)).toEqual(expected);
      } finally {
        copy.engine.close();
      }
    }, 120_000);
  }

  it('a load of memcg_oom.v7.dat on it by the store worker holds what a load creating the schema holds', async () => {
    const fixture = 'fixtures/memcg_oom.v7.dat';
    const fresh = await load(fixture, false, undefined, '.for-worker');
    const expected = await contents(fresh.engine);
    fresh.engine.close();
    const db = path.join(dir, 'worker.template.duckdb');
    expect(await copySchemaTemplate(db, BLOCK)).toBe(true);
    const store = await StoreWorkerClient.start(
      { dbPath: db, memoryLimit: '256MB', tempDirectory: path.join(dir, 'spill'), blockSize: BLOCK },
      fresh.store.layout,
      true,
    );
    let summary;
    try {
      const builder = new ModelBuilder(fresh.store.layout, (t, d) => store.append(t, d), null, store.chunkMemory);
      await decodeFile(path.join(ROOT, fixture), builder, { label: fixture, scratchDir: dir });
      summary = await store.finish(builder.finish());
    } finally {
      await store.close();
    }
    // `trace-cmd report | awk` as above: 3,958 events
    expect(summary.eventsTotal).toBe(3_958);
    const engine = await openDuckDb(db, { readOnly: true });
    try {
      expect(await contents(engine)).toEqual(expected);
    } finally {
      engine.close();
    }
  }, 120_000);
});
