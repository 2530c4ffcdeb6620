/**
 * Whether two ingested models hold the same rows: every table and view of
 * the first (the shape tables, `ftrace_event` and `args` included) against
 * the same-named one of the second, EXCEPT ALL both ways. Ids and every
 * other column are compared as stored, so two decoders agree only if they
 * number events alike. Left out: trace_info's ingest_finished_at (the clock).
 *
 *   npx tsx bench/model_diff.ts A.duckdb B.duckdb
 *
 * Prints one line per relation that differs (rows only in A, only in B) and
 * a last line `identical: N relations` or `DIFFERENT: ...`; exits 1 on a
 * difference. Both files are opened read-only.
 */
import { openDuckDb } from '../server/engine/engine.ts';

const [a, b] = process.argv.slice(2);
if (a === undefined || b === undefined) {
  console.error('usage: npx tsx bench/model_diff.ts A.duckdb B.duckdb');
  process.exit(2);
}

/** Rows that differ between any two ingests of the same file: left out. */
const VOLATILE: Record<string, string> = { trace_info: "key <> 'ingest_finished_at'" };

const engine = await openDuckDb(':memory:');
const quote = (s: string): string => `'${s.replaceAll("'", "''")}'`;
await engine.query(`ATTACH ${quote(a)} AS a (READ_ONLY)`);
await engine.query(`ATTACH ${quote(b)} AS b (READ_ONLY)`);

const relations = async (db: string): Promise<string[]> =>
  (
    await engine.query<{ name: string }>(
      `SELECT table_name AS name FROM duckdb_tables() WHERE database_name = '${db}'
       UNION SELECT view_name FROM duckdb_views() WHERE database_name = '${db}' AND NOT internal
       ORDER BY 1`,
    )
  ).map((r) => r.name);

const inA = await relations('a');
const inB = new Set(await relations('b'));
const problems: string[] = [];
for (const name of inB) if (!inA.includes(name)) problems.push(`${name}: only in B`);
for (const name of inA) {
  if (!inB.has(name)) {
    problems.push(`${name}: only in A`);
    continue;
  }
  const where = VOLATILE[name] ?? 'true';
  const q = (x: string, y: string): string =>
    `SELECT count(*) AS n FROM (SELECT * FROM ${x}."${name}" WHERE ${where} EXCEPT ALL SELECT * FROM ${y}."${name}" WHERE ${where})`;
  const onlyA = Number((await engine.query<{ n: bigint }>(q('a', 'b')))[0]!.n);
  const onlyB = Number((await engine.query<{ n: bigint }>(q('b', 'a')))[0]!.n);
  if (onlyA !== 0 || onlyB !== 0) problems.push(`${name}: ${onlyA} rows only in A, ${onlyB} only in B`);
}
for (const p of problems) console.log(p);
console.log(problems.length === 0 ? `identical: ${inA.length} relations` : `DIFFERENT: ${problems.length} relations`);
await engine.close();
process.exit(problems.length === 0 ? 0 : 1);
