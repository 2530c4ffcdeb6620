// An engine opened with a memory_limit (the library's read engines,
// ingest/library.ts READ_ENGINE_MEMORY_LIMIT) runs within it, and a statement
// that cannot run within it (an aggregate that cannot spill) runs again
// without it rather than fail: on a released and reopened database the cap
// holds again.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isOutOfMemory, openDuckDb, openReleasable, withUncapRetry } from './engine.ts';

let dir: string;
let dbPath: string;
const ROWS = 4_000_000;
const CAP = '8MB';

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-memcap-'));
  dbPath = path.join(dir, 'db.duckdb');
  const w = await openDuckDb(dbPath, { threads: 1 });
  await w.exec(`CREATE TABLE t AS SELECT i FROM range(1, ${ROWS + 1}) r(i)`);
  w.close();
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// 1 + 2 + ... + n
const SUM = (BigInt(ROWS) * BigInt(ROWS + 1)) / 2n;
// The list of all 4M values (32 MB) is built in memory: it cannot spill, so it fails under an 8MB cap.
const LIST_SUM = 'SELECT list_sum(list(i))::BIGINT AS s FROM t';
const limitOf = async (e: { query<T>(sql: string): Promise<T[]> }) =>
  (await e.query<{ b: string }>(`SELECT current_setting('memory_limit') AS b`))[0]!.b;

describe('memory-capped engine', () => {
  it('the statement fails under the cap without the retry (what the retry is for)', async () => {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(dbPath, { access_mode: 'READ_ONLY', memory_limit: CAP, threads: '1' });
    const c = await instance.connect();
    const error = await c.runAndReadAll(LIST_SUM).then(
      () => null,
      (e: unknown) => e,
    );
    c.closeSync();
    instance.closeSync();
    expect(isOutOfMemory(error)).toBe(true);
  });

  it('runs a statement that needs more than the cap again without it, on every lane, and the cap holds again once reopened', async () => {
    const tempDirectory = path.join(dir, 'spill');
    const engine = await openReleasable(dbPath, {
      readOnly: true,
      threads: 1,
      memoryLimit: CAP,
      liftCapOnOutOfMemory: true,
      tempDirectory,
    });
    const side = await engine.beside();
    const capped = await limitOf(engine);
    expect(capped).toMatch(/MiB$/);
    // within the cap: answered with the cap in place
    expect((await engine.query<{ n: bigint }>('SELECT count(*) AS n FROM t'))[0]!.n).toBe(BigInt(ROWS));
    expect(await limitOf(side)).toBe(capped);
    // over it: on the lane, through query; then on the engine's connection, as the detectors call it
    expect((await side.query<{ s: bigint }>(LIST_SUM))[0]!.s).toBe(SUM);
    expect(await limitOf(engine)).not.toBe(capped);
    expect((await engine.queryColumns(LIST_SUM)).s).toEqual([SUM]);
    expect(engine.releaseIfIdle()).toBe(true);
    expect(await limitOf(engine)).toBe(capped);
    const reader = await withUncapRetry(engine, () => engine.connection.runAndReadAll(LIST_SUM));
    expect(reader.getRowObjectsJS()[0]!.s).toBe(SUM);
    engine.close();
  });

  it("an engine that did not ask for the lift (the ingest's) passes the error on, and other errors too", async () => {
    const engine = await openDuckDb(dbPath, { readOnly: true, threads: 1, memoryLimit: CAP });
    const error = await engine.query(LIST_SUM).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isOutOfMemory(error)).toBe(true);
    await expect(engine.query('SELECT * FROM no_such_table')).rejects.toThrow(/no_such_table/);
    engine.close();
  });
});
