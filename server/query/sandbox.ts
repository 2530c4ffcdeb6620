/**
 * The query sandbox: user SQL (the query page, `stallscope query`, saved
 * detectors) and the app's heavier reads (event list, search, range
 * aggregates) run here, on a DuckDB instance of their own over the trace's
 * database file:
 *
 *   access_mode=READ_ONLY            the trace cannot be changed
 *   enable_external_access=false     no file, directory or URL besides the database itself
 *                                    (COPY, EXPORT, ATTACH, read_csv, glob, INSTALL...)
 *   autoload/autoinstall=false       no extension is fetched or loaded behind a query
 *   temp_directory=''                nothing spills to disk: past memory_limit a query fails
 *   memory_limit, threads            the cap for everything the sandbox runs
 *   lock_configuration=true          set last: no SET / PRAGMA can undo any of the above
 *
 * That configuration is the barrier; statement_policy.ts only refuses the
 * same things first, with clearer messages. A separate instance (not a
 * connection of the library's) means a long query holds no lock the track
 * queries or an ingest wait on, and its memory is its own; each run gets a
 * fresh connection (so TEMP objects and variables never leak between runs or
 * users) that `interrupt()` cancels on timeout, cancel or a closed request.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  DuckDBConnection,
  DuckDBInstance,
  DuckDBTypeId,
  StatementType,
  type DuckDBPreparedStatement,
  type DuckDBResultReader,
  type DuckDBValue,
} from '@duckdb/node-api';
import { DETECTOR_MACROS_FILE } from '../findings/detector_registry.ts';
import { checkScript, RefusedStatement } from './statement_policy.ts';
import { lineColumn, splitStatements, type Statement } from './sql_tokens.ts';
import type { ColumnInfo, QueryResult } from '../../shared/contract/query.ts';

export interface SandboxOptions {
  /** DuckDB memory_limit of the sandbox instance (default $STALLSCOPE_QUERY_MEMORY or 1GB). */
  memoryLimit?: string;
  /** DuckDB threads (default $STALLSCOPE_QUERY_THREADS or half the cores, at least 1). */
  threads?: number;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_ROWS = 200_000;

/** The settings, in the order they must be applied (lock_configuration last: nothing can be set after it). */
export function sandboxConfig(opts: SandboxOptions = {}): Record<string, string> {
  const threads =
    opts.threads ??
    (Number(process.env.STALLSCOPE_QUERY_THREADS) || Math.max(1, Math.floor(availableParallelism() / 2)));
  return {
    access_mode: 'READ_ONLY',
    memory_limit: opts.memoryLimit ?? process.env.STALLSCOPE_QUERY_MEMORY ?? '1GB',
    threads: String(threads),
    temp_directory: '',
    autoload_known_extensions: 'false',
    autoinstall_known_extensions: 'false',
    allow_community_extensions: 'false',
    allow_unsigned_extensions: 'false',
    enable_external_access: 'false',
    lock_configuration: 'true',
  };
}

export type { ColumnInfo, QueryResult } from '../../shared/contract/query.ts';
/** A query error with where it happened in the script (offset, 1-based line/column), when known. */
export class QueryError extends Error {
  constructor(
    message: string,
    readonly kind: 'refused' | 'error' | 'timeout' | 'cancelled' | 'memory',
    readonly position: number | null = null,
    readonly line: number | null = null,
    readonly column: number | null = null,
  ) {
    super(message);
    this.name = 'QueryError';
  }
}

export interface RunOptions {
  timeoutMs?: number;
  maxRows?: number;
  /** Aborting it cancels the query (DuckDB's interrupt). */
  signal?: AbortSignal;
  /** Tests only: skip statement_policy.ts, so DuckDB's own barrier is all that stands. */
  unchecked?: boolean;
}

/** Statement types a script may contain (what statement_policy.ts lets through, as DuckDB classifies it). */
const ALLOWED_TYPES = new Set<StatementType>([
  StatementType.SELECT,
  StatementType.EXPLAIN,
  StatementType.CREATE,
  StatementType.CREATE_FUNC,
  StatementType.DROP,
  StatementType.VARIABLE_SET,
  StatementType.TRANSACTION,
  StatementType.PRAGMA,
  StatementType.RELATION,
]);

/**
 * Told each time a run starts executing (its time limit starts then; before,
 * it may wait for a free slot): the query process reports it to the server,
 * whose last-resort kill timer counts from there (query_process.ts).
 */
export const runStarts = new AsyncLocalStorage<(timeoutMs: number) => void>();

/** Errors of stallscope's own checks, by name (importing their classes here would make a cycle). */
const OWN_ERRORS = new Set(['FilterError', 'SaveDetectorError', 'RefusedStatement', 'DetectorDefinitionError']);

let macrosSql: string | null = null;
function detectorMacros(): string {
  return (macrosSql ??= readFileSync(DETECTOR_MACROS_FILE, 'utf8'));
}

export class QuerySandbox {
  private running = 0;
  private closeWhenIdle = false;
  private closed = false;
  private readonly live = new Set<DuckDBConnection>();

  private constructor(
    private readonly instance: DuckDBInstance,
    readonly dbPath: string,
  ) {}

  static async open(dbPath: string, opts: SandboxOptions = {}): Promise<QuerySandbox> {
    const instance = await DuckDBInstance.create(dbPath, sandboxConfig(opts));
    return new QuerySandbox(instance, dbPath);
  }

  /**
   * Runs a script (one or more statements; the last one's rows are the
   * result). Throws QueryError with the position of the failing statement.
   */
  async run(sql: string, opts: RunOptions = {}): Promise<QueryResult> {
    const started = performance.now();
    let statements: Statement[];
    try {
      statements = opts.unchecked ? splitStatements(sql) : checkScript(sql);
    } catch (e) {
      if (e instanceof RefusedStatement) throw positioned(sql, e.message, 'refused', e.position);
      throw e;
    }
    const maxRows = opts.maxRows ?? DEFAULT_MAX_ROWS;
    return this.withConnection(
      async (conn) => {
        let reader: DuckDBResultReader | null = null;
        for (let k = 0; k < statements.length; k++) {
          const st = statements[k]!;
          const last = k === statements.length - 1;
          let prepared: DuckDBPreparedStatement;
          try {
            prepared = await conn.prepare(st.text);
          } catch (e) {
            throw fromDuckDb(sql, st, e);
          }
          if (!opts.unchecked && !ALLOWED_TYPES.has(prepared.statementType)) {
            throw positioned(
              sql,
              `${StatementType[prepared.statementType]} statements do not run in the query sandbox: only queries (and TEMP objects for one run)`,
              'refused',
              st.start,
            );
          }
          try {
            reader = await prepared.streamAndReadUntil(last ? maxRows + 1 : 1);
          } catch (e) {
            throw fromDuckDb(sql, st, e);
          }
        }
        return toResult(reader!, maxRows, statements.length, performance.now() - started);
      },
      { timeoutMs: opts.timeoutMs, signal: opts.signal, macros: true },
    );
  }

  /**
   * A fresh connection for `fn` (the app's own parameterised reads), cancelled
   * on timeout or abort, closed after. `macros`: with the detectors' ss_* macros.
   */
  async withConnection<T>(
    fn: (conn: DuckDBConnection) => Promise<T>,
    opts: { timeoutMs?: number; signal?: AbortSignal; macros?: boolean } = {},
  ): Promise<T> {
    if (this.closed || this.closeWhenIdle)
      throw new QueryError('the trace was closed (its model was replaced or the server is stopping)', 'cancelled');
    this.running++;
    let conn: DuckDBConnection | null = null;
    const state: { stopped: 'timeout' | 'cancelled' | null } = { stopped: null };
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // DuckDB's interrupt stops the statement running at that moment only: one
    // that lands between two of `fn`'s statements (a catalog read, the macros,
    // then the user's query) was lost and the next ran to its end. So once
    // stopped, the connection is interrupted again until `fn` returns.
    let interrupting: ReturnType<typeof setInterval> | null = null;
    const stop = (reason: 'timeout' | 'cancelled') => {
      if (state.stopped) return;
      state.stopped = reason;
      conn?.interrupt();
      interrupting = setInterval(() => conn?.interrupt(), 20);
    };
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    runStarts.getStore()?.(timeoutMs);
    const onAbort = () => stop('cancelled');
    opts.signal?.addEventListener('abort', onAbort);
    try {
      if (opts.signal?.aborted) state.stopped = 'cancelled';
      conn = await this.instance.connect();
      this.live.add(conn);
      if (state.stopped) throw new Error('interrupted before it started');
      if (opts.macros) await conn.run(detectorMacros());
      return await fn(conn);
    } catch (e) {
      if (state.stopped === 'timeout')
        throw new QueryError(`the query ran past its time limit of ${fmtMs(timeoutMs)} and was cancelled`, 'timeout');
      if (state.stopped === 'cancelled') throw new QueryError('the query was cancelled', 'cancelled');
      if (e instanceof QueryError) throw e;
      // Our own errors (a bad filter expression, a detector that cannot be saved) pass as they are.
      if (e instanceof Error && OWN_ERRORS.has(e.name)) throw e;
      throw fromDuckDb('', null, e);
    } finally {
      clearTimeout(timer);
      if (interrupting) clearInterval(interrupting);
      opts.signal?.removeEventListener('abort', onAbort);
      if (conn) {
        this.live.delete(conn);
        conn.closeSync();
      }
      if (--this.running === 0 && this.closeWhenIdle) this.closeNow();
    }
  }

  /** Closes the instance once running queries end (they are interrupted first: closing under a query deadlocks DuckDB). */
  close(): void {
    if (this.closed) return;
    for (const c of this.live) c.interrupt();
    if (this.running > 0) {
      this.closeWhenIdle = true;
      return;
    }
    this.closeNow();
  }

  private closeNow(): void {
    if (this.closed) return;
    this.closed = true;
    this.instance.closeSync();
  }
}

function fmtMs(ms: number): string {
  return ms >= 1000 ? `${+(ms / 1000).toFixed(1)} s` : `${ms} ms`;
}

function positioned(sql: string, message: string, kind: QueryError['kind'], position: number | null): QueryError {
  if (position === null) return new QueryError(message, kind);
  const { line, column } = lineColumn(sql, position);
  return new QueryError(message, kind, position, line, column);
}

/**
 * DuckDB's error, with its `LINE n: <excerpt>` / caret mapped back to an
 * offset in the whole script, and the excerpt dropped from the message.
 */
export function fromDuckDb(sql: string, st: Statement | null, e: unknown): QueryError {
  const msg = e instanceof Error ? e.message : String(e);
  const kind: QueryError['kind'] = /Out of Memory Error|memory limit/i.test(msg) ? 'memory' : 'error';
  const m = /\n\s*LINE (\d+): (.*)\n( *)\^/.exec(msg);
  const text = msg.replace(/\n\s*LINE \d+: [\s\S]*$/, '').trim();
  if (!m || !st)
    return new QueryError(
      kind === 'memory'
        ? `${text} (the query sandbox's memory cap; narrow the query: fewer rows, fewer columns, a LIMIT)`
        : text,
      kind,
    );
  const lineNo = Number(m[1]);
  const excerpt = m[2]!;
  const caret = m[3]!.length - `LINE ${m[1]}: `.length;
  const lines = st.text.split('\n');
  const lineText = lines[lineNo - 1] ?? '';
  let lineStart = 0;
  for (let i = 0; i < lineNo - 1 && i < lines.length; i++) lineStart += lines[i]!.length + 1;
  // DuckDB cuts long lines to an excerpt, with "..." where it cut.
  const lead = excerpt.startsWith('...') ? 3 : 0;
  const body = excerpt.slice(lead).replace(/\.\.\.$/, '');
  const at = lead ? Math.max(0, lineText.indexOf(body.slice(0, 40))) : 0;
  const inLine = Math.min(lineText.length, Math.max(0, at + caret - lead));
  return positioned(sql, text, kind, st.start + lineStart + inLine);
}

const INTEGER_TYPES = new Set<DuckDBTypeId>([
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.HUGEINT,
  DuckDBTypeId.UHUGEINT,
]);

function toResult(reader: DuckDBResultReader, maxRows: number, statements: number, elapsedMs: number): QueryResult {
  const n = reader.columnCount;
  const columns: ColumnInfo[] = [];
  for (let c = 0; c < n; c++) columns.push({ name: reader.columnName(c), type: reader.columnType(c).toString() });
  const all = reader.currentRowCount;
  const rowCount = Math.min(all, maxRows);
  // getColumnsJson() has no column arrays when there are no rows: one (empty) per column, as every reader expects.
  const json = reader.getColumnsJson() as unknown[][];
  const cols = columns.map((_, c) => {
    const col = json[c] ?? [];
    const sliced = col.length > rowCount ? col.slice(0, rowCount) : col;
    if (!INTEGER_TYPES.has(reader.columnTypeId(c))) return sliced;
    // Exact integers as numbers when a double holds them, else as their decimal string.
    return sliced.map((v) => {
      if (typeof v !== 'string') return v;
      const x = Number(v);
      return Number.isSafeInteger(x) ? x : v;
    });
  });
  return {
    columns,
    cols,
    rowCount,
    truncated: all > maxRows || !reader.done,
    statements,
    elapsedMs: Math.round(elapsedMs),
  };
}

/** Rows of a parameterised read on a sandbox connection, as JS values (BIGINT as bigint). */
export async function readRows<T = Record<string, unknown>>(
  conn: DuckDBConnection,
  sql: string,
  params?: Record<string, DuckDBValue> | DuckDBValue[],
): Promise<T[]> {
  const reader = await conn.runAndReadAll(sql, params as never);
  return reader.getRowObjectsJS() as T[];
}
