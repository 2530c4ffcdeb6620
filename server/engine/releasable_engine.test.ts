// A releasable read engine (engine.ts openReleasable) gives its database back
// while idle and opens it again on its next call: the file is closed (no
// descriptor of this process on it) once released, calls after that answer
// as before, a release while a call runs does nothing, and close() ends it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdWhile, openDuckDb, openReleasable, sessionOf } from './engine.ts';

let dir: string;
let dbPath: string;
const ROWS = 100_000;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-releasable-'));
  dbPath = path.join(dir, 'db.duckdb');
  const w = await openDuckDb(dbPath, { threads: 1 });
  await w.exec(`CREATE TABLE t AS SELECT i FROM range(1, ${ROWS + 1}) r(i)`);
  w.close();
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Descriptors this process holds on the database file. */
function openDescriptors(): number {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) === dbPath) n++;
    } catch {
      // closed since it was listed
    }
  }
  return n;
}

// 1 + 2 + ... + n
const SUM = (BigInt(ROWS) * BigInt(ROWS + 1)) / 2n;
const sumOf = async (e: { query<T>(sql: string): Promise<T[]> }) =>
  (await e.query<{ s: bigint }>('SELECT sum(i)::BIGINT AS s FROM t'))[0]!.s;

describe('releasable engine', () => {
  it.runIf(process.platform === 'linux')(
    'closes the file when released and opens it again on the next call',
    async () => {
      const engine = await openReleasable(dbPath, { readOnly: true, threads: 1 });
      const side = await engine.beside();
      expect(await sumOf(engine)).toBe(SUM);
      expect(openDescriptors()).toBeGreaterThan(0);
      expect(engine.releaseIfIdle()).toBe(true);
      expect(openDescriptors()).toBe(0);
      // a lane made before the release answers from the reopened database
      expect(await sumOf(side)).toBe(SUM);
      expect(openDescriptors()).toBeGreaterThan(0);
      expect(await sumOf(engine)).toBe(SUM);
      expect(engine.releaseIfIdle()).toBe(true);
      expect(engine.releaseIfIdle()).toBe(false); // nothing open
      expect(openDescriptors()).toBe(0);
      engine.close();
      await expect(engine.query('SELECT 1')).rejects.toThrow();
    },
  );

  it('a release while a call runs does nothing: the call ends with its answer', async () => {
    const engine = await openReleasable(dbPath, { readOnly: true, threads: 1 });
    // ~0.1-0.3 s of work on this VM, so the release lands inside it
    const counting = engine.query<{ n: bigint }>('SELECT count(*) AS n FROM range(20000000) r(i) WHERE i % 7 = 3');
    expect(engine.releaseIfIdle()).toBe(false);
    // integers below 2e7 that are 3 mod 7: 3, 10, ..., 19999998
    expect((await counting)[0]!.n).toBe(2857143n);
    expect(engine.releaseIfIdle()).toBe(true);
    // a call waiting for the database to open again is not closed under either
    const again = sumOf(engine);
    expect(engine.releaseIfIdle()).toBe(false);
    expect(await again).toBe(SUM);
    engine.close();
  });

  it('close() with a call running closes once it ended', async () => {
    const engine = await openReleasable(dbPath, { readOnly: true, threads: 1 });
    const counting = engine.query<{ n: bigint }>('SELECT count(*) AS n FROM range(20000000) r(i) WHERE i % 7 = 3');
    engine.close();
    expect((await counting)[0]!.n).toBe(2857143n);
    await expect(engine.query('SELECT 1')).rejects.toThrow();
  });

  it("a hold keeps the database open between statements; a release ends the connection's TEMP objects and its session", async () => {
    const engine = await openReleasable(dbPath, { readOnly: true, threads: 1 });
    const side = await engine.beside();
    const before = [sessionOf(engine), sessionOf(side)];
    const inside = await holdWhile(engine, async () => {
      await engine.exec('CREATE TEMP MACRO twice(x) AS 2 * x');
      const released = engine.releaseIfIdle();
      const [r] = await engine.query<{ v: number }>('SELECT twice(21) AS v');
      return { released, v: r!.v };
    });
    expect(inside).toEqual({ released: false, v: 42 });
    expect(sessionOf(engine)).toBe(before[0]);
    expect(sessionOf(side)).toBe(before[1]);
    expect(engine.releaseIfIdle()).toBe(true);
    expect(sessionOf(engine)).not.toBe(before[0]);
    expect(sessionOf(side)).not.toBe(before[1]);
    // the macro was the closed connection's
    await expect(engine.query('SELECT twice(21)')).rejects.toThrow(/twice/);
    engine.close();
  });
});
