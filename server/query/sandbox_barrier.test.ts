/**
 * The query sandbox on a real model (fixture reclaim_kswapd): every
 * statement that would read or write outside the trace's database is
 * refused, and no file is created or read, both
 *   - through the whole path (statement check, then DuckDB), and
 *   - with the statement check skipped (`unchecked`), so DuckDB's own
 *     configuration is all that stands: the barrier must hold for statements
 *     the check would not recognise.
 *
 * "No file read" is tested with a FIFO named like the target: opening a FIFO
 * for reading blocks until a writer comes, and a non-blocking open for
 * writing succeeds only while a reader has it open. The test keeps trying
 * that writer open while each statement runs: if DuckDB ever opened the
 * file, the test sees it (and its write lets DuckDB go on).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFile } from '../ingest/ingest_file.ts';
import { QueryError, QuerySandbox } from './sandbox.ts';

const FIXTURE = path.resolve(__dirname, '../../fixtures/reclaim_kswapd.v7.dat');
const SECRET = 'canary-3f9c1e-never-read';

let dataDir: string;
let canary: string;
let dbPath: string;
let sandbox: QuerySandbox;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-sandbox-'));
  canary = path.join(dataDir, 'canary');
  fs.mkdirSync(canary);
  fs.writeFileSync(path.join(canary, 'secret.csv'), `a,b\n${SECRET},1\n`);
  fs.writeFileSync(path.join(canary, 'secret.txt'), SECRET);
  execFileSync('mkfifo', [path.join(canary, 'fifo.csv')]);
  execFileSync('mkfifo', [path.join(canary, 'fifo.parquet')]);
  ({ dbPath } = await ingestFile(FIXTURE, { dataDir }));
  sandbox = await QuerySandbox.open(dbPath, { threads: 1, memoryLimit: '256MB' });
}, 120_000);

afterAll(() => {
  sandbox?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      out.push(path.relative(dir, p));
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** Runs `sql` while watching the FIFOs for a reader; returns the error and whether a FIFO was opened. */
async function attempt(
  sql: string,
  unchecked: boolean,
): Promise<{ error: QueryError | null; rows: string; fifoOpened: boolean }> {
  let fifoOpened = false;
  const fifos = ['fifo.csv', 'fifo.parquet'].map((f) => path.join(canary, f));
  const timer = setInterval(() => {
    for (const f of fifos) {
      try {
        const fd = fs.openSync(f, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
        fifoOpened = true;
        try {
          fs.writeSync(fd, 'x,y\n1,2\n');
        } catch {
          /* reader gone */
        }
        fs.closeSync(fd);
      } catch {
        // ENXIO: nobody has it open for reading
      }
    }
  }, 1);
  try {
    const r = await sandbox.run(sql, { unchecked, timeoutMs: 20_000 });
    return { error: null, rows: JSON.stringify(r.cols), fifoOpened };
  } catch (e) {
    if (!(e instanceof QueryError)) throw e;
    return { error: e, rows: '', fifoOpened };
  } finally {
    clearInterval(timer);
  }
}

/** Statements that must never reach a file: `${C}` is the canary directory. */
const ESCAPES: string[] = [
  `COPY thread TO '\${C}/out.csv'`,
  `copy (SELECT * FROM ftrace_event) TO '\${C}/out.parquet' (FORMAT parquet)`,
  `COPY thread FROM '\${C}/secret.csv'`,
  `EXPORT DATABASE '\${C}/exported'`,
  `IMPORT DATABASE '\${C}'`,
  `ATTACH '\${C}/new.duckdb' AS other`,
  `ATTACH '\${C}/secret.csv' AS other (TYPE sqlite)`,
  `INSTALL httpfs`,
  `LOAD httpfs`,
  `LOAD '\${C}/evil.duckdb_extension'`,
  `SELECT * FROM read_csv('\${C}/secret.csv')`,
  `select * from READ_CSV_AUTO('\${C}/fifo.csv')`,
  `SELECT * FROM read_parquet('\${C}/fifo.parquet')`,
  `SELECT content FROM read_text('\${C}/secret.txt')`,
  `SELECT content FROM read_blob('\${C}/fifo.csv')`,
  `SELECT * FROM read_json_auto('\${C}/fifo.csv')`,
  `SELECT * FROM glob('\${C}/*')`,
  `SELECT * FROM sniff_csv('\${C}/fifo.csv')`,
  `SELECT * FROM '\${C}/fifo.csv'`,
  `SELECT * FROM "\${C}/secret.csv"`,
  `SELECT * FROM 'https://example.com/data.csv'`,
  `SELECT * FROM read_csv('http://127.0.0.1:9/x.csv')`,
  // Forms the statement check is not written for: only DuckDB stands here.
  `SELECT * FROM thread WHERE name IN (SELECT a FROM read_csv('\${C}/fifo.csv'))`,
  `WITH x AS (SELECT * FROM read_text('\${C}/secret.txt')) SELECT * FROM x`,
  `SELECT * FROM query('SELECT * FROM read_text(''\${C}/secret.txt'')')`,
  `SELECT * FROM query_table('\${C}/fifo.csv')`,
  `CREATE TEMP MACRO m() AS TABLE SELECT * FROM read_csv('\${C}/fifo.csv'); SELECT * FROM m()`,
  `SELECT 1; /* then */ copy thread to '\${C}/joined.csv'`,
  `SET enable_external_access = true; SELECT * FROM read_text('\${C}/secret.txt')`,
  `SET allowed_directories = ['\${C}']; SELECT * FROM read_text('\${C}/secret.txt')`,
  `RESET enable_external_access`,
  `SET memory_limit = '64GB'`,
  `SET GLOBAL threads = 64`,
  `PRAGMA memory_limit = '64GB'`,
  `SET temp_directory = '\${C}/spill'`,
  `PRAGMA enable_profiling = 'json'; PRAGMA profiling_output = '\${C}/profile.json'; SELECT 1`,
  `SET autoinstall_known_extensions = true`,
  `CALL read_csv('\${C}/fifo.csv')`,
  `CREATE TABLE stolen AS SELECT 1`,
];

describe('the query sandbox holds', () => {
  for (const template of ESCAPES) {
    for (const unchecked of [false, true]) {
      it(`${unchecked ? '[DuckDB alone] ' : ''}${template}`, async () => {
        const sql = template.split('${C}').join(canary);
        const before = listing(dataDir);
        const { error, rows, fifoOpened } = await attempt(sql, unchecked);
        expect(fifoOpened, 'a file was opened for reading').toBe(false);
        expect(listing(dataDir), 'a file was created or removed').toEqual(before);
        expect(rows).not.toContain(SECRET);
        expect(error, 'the statement ran').not.toBeNull();
        expect(error!.message).not.toContain(SECRET);
        if (!unchecked) {
          expect(error!.kind).toBe('refused');
          expect(error!.position).not.toBeNull();
        }
      });
    }
  }

  it('keeps the settings that make it a sandbox', async () => {
    const r = await sandbox.run(
      `SELECT name, value FROM duckdb_settings() WHERE name IN ('enable_external_access', 'lock_configuration', 'access_mode', 'autoload_known_extensions', 'autoinstall_known_extensions', 'temp_directory') ORDER BY name`,
    );
    const settings = Object.fromEntries(r.cols[0]!.map((n, i) => [n, r.cols[1]![i]]));
    expect(settings).toEqual({
      access_mode: 'read_only',
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      enable_external_access: 'false',
      lock_configuration: 'true',
      temp_directory: '',
    });
  });

  it('runs queries, TEMP objects for one run only', async () => {
    const r = await sandbox.run(`CREATE TEMP MACRO twice(x) AS x * 2; SELECT twice(count(*)) AS n FROM sched_switch`);
    const awk = fs.readFileSync(path.resolve(__dirname, '../../fixtures/reclaim_kswapd.counts.json'), 'utf8');
    expect(r.cols[0]![0]).toBe(
      2 * (JSON.parse(awk) as { events_by_name: Record<string, number> }).events_by_name.sched_switch!,
    );
    // A new run is a new connection: the macro is gone.
    await expect(sandbox.run('SELECT twice(1)')).rejects.toThrow(/twice/);
  });

  it('cancels a query past its time limit, and the sandbox goes on', async () => {
    const t0 = performance.now();
    const e = await sandbox
      .run('SELECT count(*) FROM range(10000000000) a, range(10) b', { timeoutMs: 300 })
      .catch((x: unknown) => x);
    const took = performance.now() - t0;
    expect(e).toBeInstanceOf(QueryError);
    expect((e as QueryError).kind).toBe('timeout');
    expect((e as QueryError).message).toMatch(/time limit of 300 ms/);
    expect(took).toBeLessThan(5000);
    expect((await sandbox.run('SELECT 42 AS x')).cols[0]![0]).toBe(42);
  });

  it('cancels on abort (the cancel button)', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const e = await sandbox
      .run('SELECT count(*) FROM range(10000000000)', { signal: ac.signal, timeoutMs: 60_000 })
      .catch((x: unknown) => x);
    expect((e as QueryError).kind).toBe('cancelled');
  });

  it('stops a query at its memory cap instead of spilling to disk', async () => {
    const before = listing(dataDir);
    const e = await sandbox
      .run("SELECT list(repeat('x', 1000) || i) FROM range(2000000) t(i)", { timeoutMs: 60_000 })
      .catch((x: unknown) => x);
    expect((e as QueryError).kind).toBe('memory');
    expect(listing(dataDir)).toEqual(before);
  });

  it('reports DuckDB errors with their place in the script', async () => {
    const sql = 'SELECT 1;\nSELECT utid,\n       nmae FROM thread';
    const e = (await sandbox.run(sql).catch((x: unknown) => x)) as QueryError;
    expect(e.kind).toBe('error');
    expect(e.message).toMatch(/nmae/);
    expect(e.position).toBe(sql.indexOf('nmae'));
    expect([e.line, e.column]).toEqual([3, 8]);
  });
});
