/**
 * Whether bench/thread_state_pass.ts (an experiment) writes the rows of
 * thread_state's statement in queries/model/derive_sched.sql (its
 * definition), and what each costs: on copies of a model, thread_state
 * emptied, then written by the SQL (copy a) and by the pass (copy b), each
 * in a transaction as derive runs in the ingest, compared EXCEPT ALL both
 * ways.
 *
 *   npx tsx bench/thread_state_compare.ts MODEL.duckdb [ROUNDS]
 *
 * Prints per round the wall and process CPU ms of each (alternating SQL,
 * pass; the pass's CPU by phase), then the rows, `same` or the differing
 * counts, and whether the pass declined (then copy b ran the SQL too).
 * Exits 1 on a difference.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDuckDb } from '../server/engine/engine.ts';
import { writeThreadStates } from './thread_state_pass.ts';

/** derive_sched.sql from its thread_state statement on (the file's second statement, its last). */
const DERIVE_SCHED = fs.readFileSync(
  fileURLToPath(new URL('../queries/model/derive_sched.sql', import.meta.url)),
  'utf8',
);
const THREAD_STATE_AT = DERIVE_SCHED.indexOf('-- thread_state: per thread');
if (THREAD_STATE_AT < 0) throw new Error('queries/model/derive_sched.sql: no thread_state statement found');
const SQL = DERIVE_SCHED.slice(THREAD_STATE_AT);

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Derives a copy's thread_state one way; returns [wall ms, CPU ms, the pass's phases (null: SQL)]. */
async function derive(
  model: string,
  copy: string,
  tmp: string,
  pass: boolean,
): Promise<[number, number, Record<string, number> | null, boolean]> {
  fs.copyFileSync(model, copy);
  const engine = await openDuckDb(copy, { memoryLimit: '200MB', tempDirectory: tmp });
  try {
    await engine.exec('DELETE FROM thread_state; CHECKPOINT');
    // In a transaction, as derive runs in the ingest (ingest_file.ts), committed outside the timing.
    await engine.exec('BEGIN TRANSACTION');
    const w0 = performance.now();
    const c0 = cpuMs();
    let phases: Record<string, number> | null = null;
    let declined = false;
    if (pass) {
      phases = await writeThreadStates(engine);
      declined = phases === null;
      if (declined) await engine.exec(SQL);
    } else await engine.exec(SQL);
    const timing: [number, number, Record<string, number> | null, boolean] = [
      performance.now() - w0,
      cpuMs() - c0,
      phases,
      declined,
    ];
    await engine.exec('COMMIT');
    return timing;
  } finally {
    engine.close();
  }
}

async function main(): Promise<void> {
  const model = process.argv[2];
  const rounds = Number(process.argv[3] ?? 1);
  if (!model) throw new Error('usage: thread_state_compare.ts MODEL.duckdb [ROUNDS]');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'thread-state-compare-'));
  try {
    const a = path.join(tmp, 'a.duckdb');
    const b = path.join(tmp, 'b.duckdb');
    let declined = false;
    for (let r = 0; r < rounds; r++) {
      const [sw, sc] = await derive(model, a, tmp, false);
      const [pw, pc, phases, d] = await derive(model, b, tmp, true);
      declined = d;
      const parts = phases
        ? ` (${Object.entries(phases)
            .map(([k, v]) => `${k} ${v.toFixed(0)}`)
            .join(', ')})`
        : ' (declined: ran the SQL)';
      console.log(
        `round ${r + 1}: sql ${sw.toFixed(0)} wall / ${sc.toFixed(0)} CPU ms; pass ${pw.toFixed(0)} / ${pc.toFixed(0)}${parts}`,
      );
    }
    const engine = await openDuckDb(':memory:', { memoryLimit: '300MB', tempDirectory: tmp });
    try {
      await engine.exec(`ATTACH '${a}' AS a (READ_ONLY); ATTACH '${b}' AS b (READ_ONLY)`);
      const [c] = await engine.query<{ n: bigint; only_a: bigint; only_b: bigint }>(
        `SELECT (SELECT count(*) FROM a.thread_state) AS n,
          (SELECT count(*) FROM (SELECT * FROM a.thread_state EXCEPT ALL SELECT * FROM b.thread_state)) AS only_a,
          (SELECT count(*) FROM (SELECT * FROM b.thread_state EXCEPT ALL SELECT * FROM a.thread_state)) AS only_b`,
      );
      const same = c!.only_a === 0n && c!.only_b === 0n;
      console.log(
        `${path.basename(path.dirname(model))}: ${c!.n} rows, ${same ? 'same' : `only sql ${c!.only_a}, only pass ${c!.only_b}`}${declined ? ', pass declined' : ''}`,
      );
      if (!same) process.exitCode = 1;
    } finally {
      engine.close();
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
