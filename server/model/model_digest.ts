/**
 * A digest of everything a user can query in a trace model: per public
 * table or view (names not starting with `_`), its row count and the sum of
 * the md5 of each row's text (which holds the column names), so it does not
 * depend on the order rows were written in.
 *
 * Facts about the ingest rather than the trace (where the file was, when it
 * was ingested) are left out, so two ingests of the same file on any machine
 * give the same digest. Used to notice a changed model (model_version.ts).
 */
import { openDuckDb, type Engine } from '../engine/engine.ts';

/** trace_info keys that describe the ingest, not the trace. */
const INGEST_FACTS = ['source_file', 'name', 'ingest_started_at', 'ingest_finished_at'];

export async function modelDigest(engine: Engine): Promise<Record<string, string>> {
  const relations = await engine.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = 'main' AND NOT starts_with(table_name, '_') ORDER BY table_name`,
  );
  const digest: Record<string, string> = {};
  for (const { name } of relations) {
    const where = name === 'trace_info' ? `WHERE key NOT IN (${INGEST_FACTS.map((k) => `'${k}'`).join(', ')})` : '';
    const [row] = await engine.query<{ n: bigint; h: string | null }>(
      `SELECT count(*) AS n, sum(md5_number_lower(CAST(t AS VARCHAR)))::VARCHAR AS h FROM (SELECT * FROM "${name}" ${where}) t`,
    );
    digest[name] = `${row!.n} rows, ${row!.h ?? '-'}`;
  }
  return digest;
}

/**
 * modelDigest of a model file but for trace_info, which names the file and
 * how it was encoded (compression, byte order): what two encodings of one
 * recording must share.
 */
export async function recordingDigest(dbPath: string): Promise<Record<string, string>> {
  const engine = await openDuckDb(dbPath, { readOnly: true });
  try {
    const { trace_info: _, ...rest } = await modelDigest(engine);
    return rest;
  } finally {
    engine.close();
  }
}
