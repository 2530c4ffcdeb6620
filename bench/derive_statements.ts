/**
 * Where derive's time goes, statement by statement: each statement of
 * queries/model/derive_*.sql run on its own against a copy of an ingested
 * model, after the rows derive wrote are deleted (in one transaction, rolled
 * back after each round, so every round starts from the same model).
 *
 *   npx tsx bench/derive_statements.ts MODEL.duckdb [--reps N] [--sql-dir DIR]
 *
 * Prints, per statement, the median wall and process CPU ms over the rounds
 * (DuckDB runs in this process: its threads' CPU counts), with the engine's
 * two threads for derive_sched and one for the other files, as
 * server/model/derive_model.ts runs them. `--sql-dir` reads the derive files
 * from another tree (A/B of two versions on the same model copy).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDuckDb } from '../server/engine/engine.ts';
import { DERIVE_STEPS } from '../server/model/derive_model.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** What derive wrote, deleted before each round (the files' own DELETEs cover the rest). */
const CLEAR_DERIVED = ['DELETE FROM sched_slice', 'DELETE FROM thread_state'];

/**
 * A derive file's statements: split at a ';' ending a line, once whole-line
 * comments are gone (the headers' prose has semicolons; the SQL puts none
 * inside a line's string literals before a line break).
 */
function statements(sql: string): string[] {
  const code = sql
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n');
  return code
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** A statement's first line, shortened: its label in the table. */
function label(file: string, stmt: string): string {
  const first = stmt.split('\n')[0]!.replace(/\s+/g, ' ');
  return `${file.replace(/\.sql$/, '')}: ${first.slice(0, 60)}`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const model = args[0];
  if (!model) throw new Error('usage: derive_statements.ts MODEL.duckdb [--reps N] [--sql-dir DIR]');
  const reps = Number(args[args.indexOf('--reps') + 1] ?? 5) || 5;
  const sqlDir = args.includes('--sql-dir')
    ? path.resolve(args[args.indexOf('--sql-dir') + 1]!)
    : path.resolve(HERE, '../queries/model');

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'derive-stmts-'));
  const copy = path.join(dir, 'model.duckdb');
  fs.copyFileSync(model, copy);
  const engine = await openDuckDb(copy, { memoryLimit: '117MB', tempDirectory: dir });
  const [{ threads }] = await engine.query<{ threads: number }>(
    "SELECT CAST(current_setting('threads') AS INTEGER) AS threads",
  );
  await engine.exec('SET asof_loop_join_threshold = 0');

  const steps = DERIVE_STEPS.map((s) => ({
    ...s,
    stmts: statements(fs.readFileSync(path.join(sqlDir, s.file), 'utf8')),
  }));
  const wall = new Map<string, number[]>();
  const cpu = new Map<string, number[]>();
  for (let round = 0; round < reps; round++) {
    await engine.exec('BEGIN TRANSACTION');
    for (const stmt of CLEAR_DERIVED) await engine.exec(stmt);
    for (const step of steps) {
      await engine.exec(`SET threads = ${step.oneThread ? 1 : threads}`);
      for (const stmt of step.stmts) {
        const key = label(step.file, stmt);
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        await engine.exec(stmt);
        const t = performance.now() - t0;
        const c = process.cpuUsage(c0);
        (wall.get(key) ?? wall.set(key, []).get(key)!).push(t);
        (cpu.get(key) ?? cpu.set(key, []).get(key)!).push((c.user + c.system) / 1000);
      }
    }
    await engine.exec(`SET threads = ${threads}`);
    await engine.exec('ROLLBACK');
  }
  engine.close();
  fs.rmSync(dir, { recursive: true, force: true });

  let totalWall = 0;
  let totalCpu = 0;
  console.log(
    `${path.basename(path.dirname(model))}: median of ${reps} rounds, wall / CPU ms, load ${os.loadavg()[0]!.toFixed(1)}`,
  );
  for (const [key, ws] of wall) {
    const w = median(ws);
    const c = median(cpu.get(key)!);
    totalWall += w;
    totalCpu += c;
    if (w >= 1 || c >= 1) console.log(`${w.toFixed(0).padStart(6)} ${c.toFixed(0).padStart(6)}  ${key}`);
  }
  console.log(`${totalWall.toFixed(0).padStart(6)} ${totalCpu.toFixed(0).padStart(6)}  total (sum of medians)`);
}

await main();
