/**
 * The fleet dataset on disk (DATASET.md): one directory per table of
 * schema.json, Parquet files inside, and dataset.json (format, schema
 * version, tables). `stallscope batch` writes it with DuckDB; the Spark job
 * writes the same tables with Spark (part files of its own naming). Readers
 * glob `<out>/<table>/*.parquet`.
 *
 * Rows are written in a canonical order (CANONICAL_ORDER), which the Spark
 * job uses too, so the two writers' files read back in the same order.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Engine, openDuckDb } from '../engine/engine.ts';

export interface FleetSchema {
  format: 'stallscope-fleet';
  schema_version: number;
  tables: Record<string, [string, 'string' | 'long' | 'int' | 'double'][]>;
}

/** A user's mistake (a path that is not a dataset, a label no trace has): printed without a stack. */
export class FleetError extends Error {
  override name = 'FleetError';
}

export const SCHEMA_FILE = fileURLToPath(new URL('./schema.json', import.meta.url));

export async function loadSchema(): Promise<FleetSchema> {
  return JSON.parse(await readFile(SCHEMA_FILE, 'utf8')) as FleetSchema;
}

/** ORDER BY of each table: a total order, the same in DuckDB and Spark SQL. */
export const CANONICAL_ORDER: Record<string, string> = {
  traces: 'file',
  labels: 'trace_id, name',
  detectors: 'trace_id, detector',
  findings: 'trace_id, rank',
  metrics: 'trace_id, detector, metric, scope, key',
  failures: 'file',
};

/** Spark sorts nulls first in ascending order, DuckDB last unless told: say it. */
function orderBy(table: string): string {
  return CANONICAL_ORDER[table]!.split(', ')
    .map((c) => `"${c}" ASC NULLS FIRST`)
    .join(', ');
}

const DUCK_TYPE = { string: 'VARCHAR', long: 'BIGINT', int: 'INTEGER', double: 'DOUBLE' } as const;

/** One analysed input: its path as given, its content hash, the NDJSON lines of fleet-task (trace_rows.ts), its labels. */
export interface InputResult {
  file: string;
  traceId: string | null;
  /** fleet-task's lines as it printed them (integers exact: they are never parsed into numbers here). */
  lines: string[];
  labels: Record<string, string>;
}

/** Columns the writer fills from the input rather than from fleet-task's row. */
const FROM_INPUT: Record<string, string[]> = { traces: ['file', 'labels'], failures: ['file', 'trace_id'] };

/** labels as JSON text with sorted keys and no spaces (Python: json.dumps(sort_keys=True, separators=(',', ':'), ensure_ascii=False)). */
export function labelsJson(labels: Record<string, string>): string {
  const sorted: Record<string, string> = {};
  for (const k of Object.keys(labels).sort()) sorted[k] = labels[k]!;
  return JSON.stringify(sorted);
}

/** The table a fleet-task line belongs to. */
export function lineTable(line: string): string {
  return (JSON.parse(line) as { table: string }).table;
}

/**
 * Staged lines for the writer: each fleet-task line wrapped with its input
 * (`{"file", "trace_id", "labels", "table", "row"}`), plus the labels rows.
 * Inputs with the same content are analysed once and listed once, under the
 * first path in sorted order.
 */
export function assembleLines(results: InputResult[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const r of [...results].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))) {
    if (r.traceId !== null && seen.has(r.traceId)) continue;
    if (r.traceId !== null) seen.add(r.traceId);
    const head = `{"file":${JSON.stringify(r.file)},"trace_id":${JSON.stringify(r.traceId)},"labels":${JSON.stringify(labelsJson(r.labels))},`;
    let analysed = false;
    for (const l of r.lines) {
      out.push(head + l.trim().slice(1));
      if (lineTable(l) === 'traces') analysed = true;
    }
    if (analysed) {
      for (const name of Object.keys(r.labels).sort()) {
        out.push(JSON.stringify({ table: 'labels', row: { trace_id: r.traceId, name, value: r.labels[name] } }));
      }
    }
  }
  return out;
}

/** Writes the dataset: `<out>/<table>/part-0.parquet` per table and dataset.json. */
export async function writeDataset(outDir: string, lines: string[], workDir: string): Promise<void> {
  const schema = await loadSchema();
  await mkdir(workDir, { recursive: true });
  const staged = path.join(workDir, 'assembled.ndjson');
  await writeFile(staged, lines.join('\n') + '\n');
  const engine = await openDuckDb(':memory:', { threads: 1 });
  try {
    await engine.exec(
      `CREATE TABLE staged AS SELECT * FROM read_json(${sqlString(staged)}, format='newline_delimited', ` +
        `columns={'file': 'VARCHAR', 'trace_id': 'VARCHAR', 'labels': 'VARCHAR', 'table': 'VARCHAR', 'row': 'JSON'})`,
    );
    for (const [table, cols] of Object.entries(schema.tables)) {
      const dir = path.join(outDir, table);
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      const select = cols
        .map(([c, t]) =>
          (FROM_INPUT[table] ?? []).includes(c)
            ? `CAST("${c}" AS ${DUCK_TYPE[t]}) AS "${c}"`
            : `CAST("row"->>${sqlString(c)} AS ${DUCK_TYPE[t]}) AS "${c}"`,
        )
        .join(', ');
      await engine.exec(
        `COPY (SELECT ${select} FROM staged WHERE "table" = ${sqlString(table)} ORDER BY ${orderBy(table)}) ` +
          `TO ${sqlString(path.join(dir, 'part-0.parquet'))} (FORMAT parquet)`,
      );
    }
  } finally {
    engine.close();
  }
  await writeManifest(outDir, schema, 'batch');
  await rm(staged, { force: true });
}

export async function writeManifest(outDir: string, schema: FleetSchema, writer: string): Promise<void> {
  await writeFile(
    path.join(outDir, 'dataset.json'),
    `${JSON.stringify({ format: schema.format, schema_version: schema.schema_version, writer, tables: Object.keys(schema.tables) }, null, 2)}\n`,
  );
}

export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** Opens an in-memory DuckDB with one view per table of a dataset (views.sql adds the fleet questions). */
export async function openDataset(dir: string): Promise<Engine> {
  const schema = await loadSchema();
  const text = await readFile(path.join(dir, 'dataset.json'), 'utf8').catch(() => {
    throw new FleetError(
      `${dir}: not a stallscope fleet dataset (no dataset.json: write one with stallscope batch or fleet)`,
    );
  });
  const manifest = JSON.parse(text) as { format?: string; schema_version?: number };
  if (manifest.format !== schema.format)
    throw new FleetError(`${dir}: not a stallscope fleet dataset (dataset.json format ${manifest.format})`);
  if (manifest.schema_version !== schema.schema_version) {
    throw new FleetError(
      `${dir}: dataset schema version ${manifest.schema_version}, this stallscope reads ${schema.schema_version}: rerun batch`,
    );
  }
  const engine = await openDuckDb(':memory:');
  for (const table of Object.keys(schema.tables)) {
    await engine.exec(
      `CREATE VIEW ${table} AS SELECT * FROM read_parquet(${sqlString(path.join(dir, table, '*.parquet'))})`,
    );
  }
  return engine;
}
