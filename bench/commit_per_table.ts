/**
 * What DuckDB needs, per column of a load's tables, to close its appenders
 * and COMMIT: the lowest memory_limit at which a load of T event kinds with
 * F fields each (a shape table each, server/model/many_tables_load.ts: the
 * store's own appenders and transaction, appended at the store's 40MB) closes
 * its appenders and commits. Why: a COMMIT cap from the resident bytes alone
 * left 40MB to the -e all recording's ~390 tables and DuckDB could not
 * allocate a block to flush them (commit 2d8009b); the cap's floor counts
 * the columns (ingest_memory.ts COMMIT_BYTES_PER_COLUMN).
 *
 *   npx tsx bench/commit_per_table.ts [T...]   ($FIELDS, default 10; $EVENTS a kind, default 40; each trial a fresh database)
 *
 * At 64 KiB blocks and DuckDB's 256 KiB (ingestBlockSize).
 */
import fs from 'node:fs';
import { loadManyTables } from '../server/model/many_tables_load.ts';

const FIELDS = Number(process.env.FIELDS ?? 10);
const EVENTS = Number(process.env.EVENTS ?? 40);

/** The stored columns if `kinds` kinds commit at `limitMb`, else null (DuckDB out of memory). */
async function commitsAt(kinds: number, limitMb: number, blockSize: number): Promise<number | null> {
  try {
    const load = await loadManyTables({
      kinds,
      fieldsPerKind: FIELDS,
      eventsPerKind: EVENTS,
      loadLimit: '40MB',
      commitLimit: () => `${limitMb}MB`,
      blockSize,
    });
    load.engine.close();
    fs.rmSync(load.dir, { recursive: true, force: true });
    return load.storedColumns;
  } catch (err) {
    if (!/could not allocate|failed to pin|Out of Memory/i.test(String(err))) throw err;
    return null;
  }
}

async function main(): Promise<void> {
  const counts = process.argv.slice(2).map(Number);
  for (const blockSize of [65_536, 262_144]) {
    for (const kinds of counts.length ? counts : [50, 200, 400]) {
      let lo = 1;
      let hi = 256;
      const columns = await commitsAt(kinds, hi, blockSize);
      if (columns === null) {
        console.log(`block ${blockSize / 1024} KiB, ${kinds} kinds: no commit at ${hi}MB`);
        continue;
      }
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if ((await commitsAt(kinds, mid, blockSize)) !== null) hi = mid;
        else lo = mid;
      }
      console.log(
        `block ${blockSize / 1024} KiB, ${kinds} kinds x ${FIELDS} fields x ${EVENTS} events (${columns} columns): commits at ${hi}MB, not ${lo}MB (${((hi * 1024) / columns).toFixed(1)} KiB a column)`,
      );
    }
  }
}

await main();
