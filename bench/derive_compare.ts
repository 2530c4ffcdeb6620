/**
 * Whether two versions of queries/model/derive_*.sql derive the same rows:
 * derives one model twice, on two copies (every derived table emptied first
 * by the files' own DELETEs, sched_slice and thread_state here), with the
 * SQL of DIR_A and of DIR_B, and compares each derived table EXCEPT ALL both
 * ways. A change to derive meant to be faster must print `same` on every
 * model it is tried on.
 *
 *   npx tsx bench/derive_compare.ts MODEL.duckdb DIR_A DIR_B
 *
 * e.g. DIR_A = /work/main/queries/model, DIR_B = queries/model. The model is
 * left unchanged. Steps run as server/model/derive_model.ts runs them (its
 * order, one DuckDB thread where it uses one), all of them (no skipping of
 * steps whose events the trace lacks: they write nothing then).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDuckDb } from '../server/engine/engine.ts';
import { DERIVE_STEPS } from '../server/model/derive_model.ts';

/** Every table the derive files write. */
const DERIVED_TABLES = [
  'sched_slice',
  'thread_state',
  'slice',
  '_flow',
  'counter_track',
  'counter_source',
  'block_request',
];

async function deriveCopy(model: string, copy: string, sqlDir: string, tmp: string): Promise<void> {
  fs.copyFileSync(model, copy);
  const engine = await openDuckDb(copy, { memoryLimit: '200MB', tempDirectory: tmp });
  try {
    await engine.exec('SET asof_loop_join_threshold = 0');
    await engine.exec('DELETE FROM sched_slice; DELETE FROM thread_state');
    for (const step of DERIVE_STEPS) {
      await engine.exec(`SET threads = ${step.oneThread ? 1 : 2}`);
      await engine.exec(fs.readFileSync(path.join(sqlDir, step.file), 'utf8'));
    }
  } finally {
    engine.close();
  }
}

async function main(): Promise<void> {
  const [model, dirA, dirB] = process.argv.slice(2);
  if (!model || !dirA || !dirB) throw new Error('usage: derive_compare.ts MODEL.duckdb DIR_A DIR_B');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'derive-compare-'));
  try {
    await deriveCopy(model, path.join(tmp, 'a.duckdb'), path.resolve(dirA), tmp);
    await deriveCopy(model, path.join(tmp, 'b.duckdb'), path.resolve(dirB), tmp);
    const engine = await openDuckDb(':memory:', { memoryLimit: '300MB', tempDirectory: tmp });
    await engine.exec(`ATTACH '${tmp}/a.duckdb' AS a (READ_ONLY); ATTACH '${tmp}/b.duckdb' AS b (READ_ONLY)`);
    let differing = 0;
    const parts: string[] = [];
    for (const t of DERIVED_TABLES) {
      const [r] = await engine.query<{ n: bigint; only_a: bigint; only_b: bigint }>(
        `SELECT (SELECT count(*) FROM a.${t}) AS n,
                (SELECT count(*) FROM (SELECT * FROM a.${t} EXCEPT ALL SELECT * FROM b.${t})) AS only_a,
                (SELECT count(*) FROM (SELECT * FROM b.${t} EXCEPT ALL SELECT * FROM a.${t})) AS only_b`,
      );
      if (r!.only_a !== 0n || r!.only_b !== 0n) differing++;
      parts.push(`${t} ${r!.n} -${r!.only_a} +${r!.only_b}`);
    }
    engine.close();
    console.log(`${differing ? 'DIFF' : 'same'} ${model}: ${parts.join(', ')}`);
    if (differing) process.exitCode = 1;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
