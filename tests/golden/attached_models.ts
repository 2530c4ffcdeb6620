// Golden tests compare the models several decoders build of one recording:
// each file is ingested, and its model attached read-only under a name, to
// one in-memory DuckDB the assertions query across.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDuckDb, type Engine } from '../../server/engine/engine.ts';
import { ingestFile, type IngestResult } from '../../server/ingest/ingest_file.ts';
import { TYPED_TABLES } from '../../server/model/typed_tables.ts';

export const FIXTURES = path.resolve(__dirname, '../../fixtures');

/** A fixture's counts file (fixtures/README.md: made with awk, independently of stallscope). */
export function fixtureCounts(file: string): {
  events_by_name: Record<string, number>;
  events_total: number;
  cpus: number;
} {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, file), 'utf8'));
}

export interface AttachedModels<K extends string> {
  engine: Engine;
  results: Record<K, IngestResult>;
  close(): void;
}

/** Ingests fixtures/`files[k]` for each k, attached as `k`. */
export async function attachModels<K extends string>(
  files: Record<K, string>,
  label: string,
): Promise<AttachedModels<K>> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `stallscope-${label}-`));
  const engine = await openDuckDb(':memory:');
  const results = {} as Record<K, IngestResult>;
  for (const key of Object.keys(files) as K[]) {
    const r = await ingestFile(path.join(FIXTURES, files[key]), { dataDir });
    results[key] = r;
    await engine.exec(`ATTACH '${r.dbPath}' AS ${key} (READ_ONLY)`);
  }
  return {
    engine,
    results,
    close() {
      engine.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Rows in one table and not the other, either way (as multisets). */
export async function differingRows(engine: Engine, a: string, b: string): Promise<bigint> {
  const [{ n }] = await engine.query<{ n: bigint }>(
    `SELECT count(*) AS n FROM ((SELECT * FROM ${a} EXCEPT ALL SELECT * FROM ${b}) UNION ALL (SELECT * FROM ${b} EXCEPT ALL SELECT * FROM ${a}))`,
  );
  return n;
}

/**
 * The tables a build writes from the events, which every way of building a
 * trace (one thread, store and field workers) must fill identically.
 */
export const WORKER_BUILD_TABLES = [
  ...TYPED_TABLES,
  'thread',
  'thread_name_history',
  'thread_state',
  'sched_slice',
  'slice',
  'flow',
  'counter',
  'ftrace_event',
  'args',
];

/**
 * Builds fixtures/`file` (or `file`, an absolute path) again with the store
 * and field workers (as large files are) and returns, per table, the rows
 * that differ from the model attached as `alias` (built on one thread, as
 * small files are).
 */
export async function workerBuildDifferences(
  engine: Engine,
  alias: string,
  file: string,
  tables: string[],
): Promise<{ table: string; differing: bigint }[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-worker-'));
  try {
    const r = await ingestFile(path.resolve(FIXTURES, file), { dataDir: dir, worker: true });
    const onWorker = `onWorker_${alias}`;
    await engine.exec(`ATTACH '${r.dbPath}' AS ${onWorker} (READ_ONLY)`);
    try {
      const out: { table: string; differing: bigint }[] = [];
      for (const table of tables)
        out.push({ table, differing: await differingRows(engine, `${onWorker}.${table}`, `${alias}.${table}`) });
      return out;
    } finally {
      await engine.exec(`DETACH ${onWorker}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
