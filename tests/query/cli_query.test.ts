/**
 * `stallscope query FILE "SQL"` and `-f q.sql`: table, CSV and JSON output
 * of the model's rows, and the same sandbox as the query page. Expected
 * counts: fixtures/*.counts.json (awk over `trace-cmd report`).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const FIXTURE = path.join(ROOT, 'fixtures/fsync_xfs.v7.dat');
const counts = JSON.parse(fs.readFileSync(path.join(ROOT, 'fixtures/fsync_xfs.counts.json'), 'utf8')) as {
  events_by_name: Record<string, number>;
};

let dataDir: string;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [path.join(ROOT, 'bin/stallscope.mjs'), ...args, '--data-dir', dataDir], {
      maxBuffer: 1 << 26,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-cli-query-'));
});

afterAll(() => {
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('stallscope query', () => {
  it('prints rows as CSV', async () => {
    const r = await cli(
      'query',
      FIXTURE,
      'SELECT name, count(*) AS n FROM ftrace_event GROUP BY 1 ORDER BY 1',
      '--format',
      'csv',
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\r\n');
    expect(lines[0]).toBe('name,n');
    const got = Object.fromEntries(lines.slice(1).map((l) => [l.split(',')[0], Number(l.split(',')[1])]));
    expect(got).toEqual(counts.events_by_name);
  }, 120_000);

  it('prints a result of no rows in every format (the table crashed on it)', async () => {
    const sql = "SELECT name, count(*) AS n FROM ftrace_event WHERE name = 'no_such_event' GROUP BY 1";
    const table = await cli('query', FIXTURE, sql);
    expect(table.code, table.stderr).toBe(0);
    // With no rows each column is as wide as its name.
    expect(table.stdout.split('\n').slice(0, 3)).toEqual(['name  n', '----  -', '(0 rows)']);
    const csv = await cli('query', FIXTURE, sql, '--format', 'csv');
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).toBe('name,n\r\n');
    const json = await cli('query', FIXTURE, sql, '--format', 'json');
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout).toBe('[]\n');
  }, 120_000);

  it('reads the SQL from a file, prints JSON with exact integers', async () => {
    const q = path.join(dataDir, 'q.sql');
    fs.writeFileSync(
      q,
      '-- the sched_switch count, and one big integer\nSELECT count(*) AS n, 9007199254740993::BIGINT AS big FROM sched_switch;\n',
    );
    const r = await cli('query', FIXTURE, '-f', q, '--format', 'json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('"big": 9007199254740993');
    expect(JSON.parse(r.stdout)[0].n).toBe(counts.events_by_name.sched_switch);
  }, 120_000);

  it('prints an aligned table by default', async () => {
    const r = await cli('query', FIXTURE, "SELECT 'sched_switch' AS name, 12 AS n");
    expect(r.stdout).toBe('name           n\n------------  --\nsched_switch  12\n(1 row)\n');
  }, 120_000);

  it('refuses what the sandbox refuses, with where', async () => {
    const target = path.join(dataDir, 'out.csv');
    const r = await cli('query', FIXTURE, `SELECT 1;\nCOPY thread TO '${target}'`);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/query: COPY reads or writes files.*\(line 2, column 1\)/);
    expect(fs.existsSync(target)).toBe(false);
    const bad = await cli('query', FIXTURE, 'SELECT nmae FROM thread');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/nmae[\s\S]*\(line 1, column 8\)/);
  }, 120_000);

  it('wants the SQL once', async () => {
    const r = await cli('query', FIXTURE);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/give the SQL as an argument or with -f FILE/);
  });
});
