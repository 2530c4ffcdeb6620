// The field worker's byte readers of untyped text events, end to end: a
// text of the many_systems corpus recording (`trace-cmd report -N`, its
// first 150,000 events: block, softirq and irq events interleaved with
// sched, timer and writeback ones) ingested on the workers, where block and
// softirq texts are read from their bytes (block_bytes.ts, softirq_bytes.ts)
// and irq_handler_*'s key=value sequence is learned by the native reader
// after the generic parser's recent sequences lost it. Each event's args
// in the model must be what its line prints, read here by a regex of the
// test's own.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuckDb, type Engine } from '../engine/engine.ts';
import { ingestFile } from './ingest_file.ts';

const DAT = fileURLToPath(new URL('../../fixtures/corpus/many_systems.v7.dat', import.meta.url));
const EVENTS = 150_000;

let dir = '';
let lines: string[] = [];
let engine: Engine | null = null;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-fw-text-'));
  const out = execFileSync('trace-cmd', ['report', '-N', '-i', DAT], {
    encoding: 'latin1',
    maxBuffer: 1 << 30,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const all = out.split('\n');
  // The `cpus=2` header, then events, one a line.
  lines = all.slice(1, 1 + EVENTS);
  const file = path.join(dir, 'many_systems.report.txt');
  fs.writeFileSync(file, [all[0], ...lines, ''].join('\n'), 'latin1');
  const r = await ingestFile(file, { dataDir: path.join(dir, 'data'), worker: true });
  engine = await openDuckDb(path.join(dir, 'data', 'traces', r.id, 'trace.duckdb'), { readOnly: true });
}, 300_000);

afterAll(() => {
  engine?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Each event of `name` in file order: its args as `key=value` texts, from the model. */
async function modelArgs(name: string): Promise<string[]> {
  const rows = await engine!.query<{ kv: string | null }>(
    `SELECT string_agg(a.key || '=' || coalesce(CAST(a.int_value AS VARCHAR), a.string_value), ' ' ORDER BY a.arg_index) AS kv
     FROM ftrace_event e LEFT JOIN args a USING (arg_set_id)
     WHERE e.name = '${name}' GROUP BY e.id, e.ts ORDER BY e.ts, e.id`,
  );
  return rows.map((r) => r.kv ?? '');
}

/** Each event of `name` in file order: its line's args text. */
function lineArgs(name: string): string[] {
  const re = new RegExp(`^.*?\\d+\\.\\d+: ${name}: +(.*)$`);
  return lines.flatMap((l) => {
    const m = re.exec(l);
    return m === null ? [] : [m[1]!];
  });
}

describe('the field worker reads untyped text events as their lines print them', () => {
  it('block_rq_issue: dev, sector, nr_sector, bytes, ioprio, rwbs, comm, cmd', async () => {
    const want = lineArgs('block_rq_issue').map((t) => {
      const m = /^(\d+),(\d+) (\S*) (\d+) \((.*)\) (\d+) \+ (\d+) ([^ ,]+),\d+,\d+ \[(.*)\]$/.exec(t)!;
      const dev = Number(m[1]) * 1048576 + Number(m[2]);
      return `dev=${dev} sector=${m[6]} nr_sector=${m[7]} bytes=${m[4]} ioprio=${m[8]} rwbs=${m[3]} comm=${m[9]} cmd=${m[5]}`;
    });
    expect(want.length).toBeGreaterThan(1000);
    expect(await modelArgs('block_rq_issue')).toEqual(want);
  });

  it('softirq_entry: vec', async () => {
    const want = lineArgs('softirq_entry').map((t) => `vec=${/^vec=(\d+) \[action=\w+\]$/.exec(t)![1]}`);
    expect(want.length).toBeGreaterThan(1000);
    expect(await modelArgs('softirq_entry')).toEqual(want);
  });

  it('irq_handler_entry and _exit (key=value, learned by the native reader): irq, name / ret', async () => {
    for (const name of ['irq_handler_entry', 'irq_handler_exit']) {
      const want = lineArgs(name);
      expect(want.length).toBeGreaterThan(1000);
      expect(await modelArgs(name)).toEqual(want);
    }
  });

  it('every event of the text is in the model', async () => {
    const [{ n }] = await engine!.query<{ n: bigint }>('SELECT count(*) AS n FROM ftrace_event');
    expect(Number(n)).toBe(lines.filter((l) => /\d+\.\d+: \w+:/.test(l)).length);
  });
});
