/**
 * "Save as detector": a query from the query page becomes a detector file in
 * the user's detector directory, `<dataDir>/detectors/<id>.sql`, which the
 * library runs with the built-in detectors through the same loader as
 * `stallscope analyze --queries DIR` (server/findings/detector_registry.ts).
 *
 * The query is kept as written, as the inner SELECT; an outer SELECT gives it
 * the columns every detector returns (severity, ts, dur, cpu, utid, title,
 * values, event_ids), taking each from the query when it has a column of
 * that name and a default otherwise (queries/detectors/README.md).
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import type { Engine, Row } from '../engine/engine.ts';
import { loadDetectorFile, loadDetectors, REQUIRED_COLUMNS } from '../findings/detector_registry.ts';
import { runDetectors, type RunResult } from '../findings/run_detectors.ts';
import { checkScript, RefusedStatement } from './statement_policy.ts';

import type { Severity } from '../../shared/contract/api.ts';
export type { Severity } from '../../shared/contract/api.ts';

export interface SaveRequest {
  id: string;
  title: string;
  description?: string;
  severity: Severity;
  /** One SELECT (the query page's text). */
  sql: string;
}

/** The user's detector directory in a data directory. */
export function userDetectorDir(dataDir: string): string {
  return path.join(dataDir, 'detectors');
}

/** A stamp of the user's detectors (names and contents): findings made under another stamp are stale. */
export async function userDetectorsStamp(dir: string): Promise<string> {
  let names: string[];
  try {
    names = (await fs.readdir(dir)).filter((n) => n.endsWith('.sql')).sort();
  } catch {
    return '';
  }
  if (names.length === 0) return '';
  const h = createHash('sha256');
  for (const n of names)
    h.update(`${n}\0`)
      .update(await fs.readFile(path.join(dir, n)).catch(() => Buffer.alloc(0)))
      .update('\0');
  return h.digest('hex');
}

export class SaveDetectorError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = 'SaveDetectorError';
  }
}

/** A one-line comment value (no line breaks: they would end the header). */
function oneLine(s: string, max: number): string {
  return s
    .replace(/[\r\n\t]+/g, ' ')
    .trim()
    .slice(0, max);
}

function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function quoteIdent(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

/**
 * The detector file for a query whose result has `columns`.
 */
export function detectorText(req: SaveRequest, columns: string[], origin: string): string {
  const has = new Set(columns);
  const body = req.sql.trim().replace(/;\s*$/, '');
  const header = [
    `-- ${req.id}: ${oneLine(req.title, 200)}`,
    `-- @title ${oneLine(req.title, 200)}`,
    `-- @description ${oneLine(req.description || req.title, 300)}`,
    '--',
    `-- Saved from stallscope's query page (${origin}). The query is the inner`,
    '-- SELECT, as written; the outer SELECT gives it the columns a detector',
    '-- returns (queries/detectors/README.md), from its own columns where it has',
    `-- them: severity '${req.severity}' unless it has a severity column, dur 0 without`,
    '-- dur, utid from tid when it has only tid, event_ids from id.',
    '',
  ].join('\n');
  if (REQUIRED_COLUMNS.every((c) => has.has(c))) return `${header}${body}\n`;
  if (!has.has('ts'))
    throw new SaveDetectorError('a detector needs a ts column (the time of each finding): add one to the query');
  const extra = columns.filter(
    (c) => !(REQUIRED_COLUMNS as readonly string[]).includes(c) && c !== 'kind' && c !== 'tid' && c !== 'id',
  );
  const valuesExpr = has.has('values')
    ? 'q."values"'
    : extra.length
      ? `struct_pack(${extra.map((c) => `${quoteIdent(c)} := q.${quoteIdent(c)}`).join(', ')})`
      : 'NULL';
  const titleBase = sqlString(oneLine(req.title, 200));
  const lines = [
    'SELECT',
    `  ${has.has('severity') ? 'q.severity' : sqlString(req.severity)} AS severity,`,
    '  CAST(q.ts AS BIGINT) AS ts,',
    `  ${has.has('dur') ? 'coalesce(CAST(q.dur AS BIGINT), 0)' : 'CAST(0 AS BIGINT)'} AS dur,`,
    `  ${has.has('cpu') ? 'CAST(q.cpu AS INTEGER)' : 'CAST(NULL AS INTEGER)'} AS cpu,`,
    `  ${has.has('utid') ? 'CAST(q.utid AS INTEGER)' : has.has('tid') ? '(SELECT max(t.utid) FROM thread t WHERE t.tid = q.tid)' : 'CAST(NULL AS INTEGER)'} AS utid,`,
    `  ${has.has('title') ? 'CAST(q.title AS VARCHAR)' : has.has('dur') ? `${titleBase} || CASE WHEN q.dur > 0 THEN ' (' || ss_fmt_dur(q.dur) || ')' ELSE '' END` : titleBase} AS title,`,
    `  ${valuesExpr} AS "values",`,
    `  ${has.has('event_ids') ? 'q.event_ids' : has.has('id') ? '[CAST(q.id AS BIGINT)]' : 'CAST([] AS BIGINT[])'} AS event_ids${has.has('kind') ? ',' : ''}`,
    ...(has.has('kind') ? ['  CAST(q.kind AS VARCHAR) AS kind'] : []),
    'FROM (',
    body,
    ') q',
    '',
  ];
  return `${header}${lines.join('\n')}`;
}

/** An Engine over a sandbox connection, for runDetectors (which reads through `connection` when it can). */
export function engineOver(conn: DuckDBConnection): Engine {
  const engine: Engine = {
    connection: conn,
    async query<T = Row>(sql: string, params?: Record<string, DuckDBValue> | DuckDBValue[]): Promise<T[]> {
      const r = await conn.runAndReadAll(sql, params as never);
      return r.getRowObjectsJS() as T[];
    },
    async queryColumns(sql: string, params?: Record<string, DuckDBValue> | DuckDBValue[]) {
      return (await conn.runAndReadAll(sql, params as never)).getColumnsObjectJS();
    },
    async exec(sql: string): Promise<void> {
      await conn.run(sql);
    },
    // No second connection over a borrowed one: queries run one after the other, as the sandbox's do.
    beside: async () => engine,
    close() {},
  };
  return engine;
}

export interface SaveResult {
  id: string;
  file: string;
  /** The new detector's findings on the trace it was saved from. */
  findings: number;
  replaced: boolean;
}

/**
 * Validates, test-runs (on `conn`, a sandbox connection to the trace the
 * query came from) and writes a detector. Nothing is written when any step
 * fails.
 */
export async function saveDetector(
  dataDir: string,
  req: SaveRequest,
  opts: { columns: string[]; conn: DuckDBConnection; origin: string; replace?: boolean },
): Promise<SaveResult & { result: RunResult }> {
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(req.id))
    throw new SaveDetectorError(
      'the detector id must be lower case letters, digits and _ (starting with a letter, at most 64)',
    );
  if (!['info', 'warn', 'critical'].includes(req.severity))
    throw new SaveDetectorError('severity must be info, warn or critical');
  if (!req.title.trim()) throw new SaveDetectorError('the detector needs a title');
  let statements;
  try {
    statements = checkScript(req.sql);
  } catch (e) {
    if (e instanceof RefusedStatement) throw new SaveDetectorError(e.message);
    throw e;
  }
  if (statements.length !== 1)
    throw new SaveDetectorError('a detector is ONE SELECT: remove the other statements (macros go in a lib file)');
  if (!/^(select|with|from|\()$/.test(statements[0]!.tokens[0]!.value))
    throw new SaveDetectorError('a detector is a SELECT (or WITH ... SELECT)');
  const dir = userDetectorDir(dataDir);
  const target = path.join(dir, `${req.id}.sql`);
  const existing = await loadDetectors(existsSync(dir) ? [dir] : []);
  const clash = existing.find((d) => d.id === req.id);
  if (clash?.builtin) throw new SaveDetectorError(`${req.id} is a built-in detector's id: choose another`, 409);
  if (clash && !opts.replace)
    throw new SaveDetectorError(
      `you already have a detector ${req.id} (${clash.file}): choose another id, or replace it`,
      409,
    );
  const text = detectorText(req, opts.columns, opts.origin);
  // Test it from a directory of its own: the loader validates the header and statement, then one run.
  const tmpDir = path.join(dataDir, 'tmp', `detector-${randomBytes(6).toString('hex')}`);
  await fs.mkdir(tmpDir, { recursive: true });
  try {
    const tmpFile = path.join(tmpDir, `${req.id}.sql`);
    await fs.writeFile(tmpFile, text);
    try {
      await loadDetectorFile(tmpFile, false);
    } catch (e) {
      throw new SaveDetectorError((e as Error).message.replace(tmpFile, `${req.id}.sql`));
    }
    let result: RunResult;
    try {
      result = await runDetectors(engineOver(opts.conn), { detectors: [req.id], extraDirs: [tmpDir] });
    } catch (e) {
      throw new SaveDetectorError(
        `the detector does not run: ${(e as Error).message.split(tmpFile).join(`${req.id}.sql`)}`,
      );
    }
    await fs.mkdir(dir, { recursive: true });
    await fs.rename(tmpFile, target);
    return { id: req.id, file: target, findings: result.findings.length, replaced: !!clash, result };
  } finally {
    await fs.rm(tmpDir, { recursive: true, force: true });
  }
}
