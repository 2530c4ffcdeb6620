/**
 * Which statements the query sandbox runs, and the message for those it
 * refuses.
 *
 * The barrier is DuckDB's configuration (sandbox.ts: no external access,
 * locked configuration, read-only database, no extensions): every statement
 * refused here would fail there too, with a message that names a file or a
 * setting but not the rule. This check runs first so the user reads the rule
 * ("the sandbox has no file access") and where in the script it applies.
 * Statements it does not recognise still meet DuckDB's barrier
 * (tests/query/sandbox_barrier.test.ts runs them with this check skipped).
 */
import { type Statement, type Token, splitStatements, SqlLexError } from './sql_tokens.ts';

export class RefusedStatement extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = 'RefusedStatement';
  }
}

const NO_FILES = "the query sandbox reads only this trace's tables: no files, directories or URLs on the server";

/** Table functions (and scalar ones) that read or list files or URLs. */
const FILE_FUNCTION =
  /^(read_\w+|parquet_\w+|\w+_scan|scan_\w+|glob|sniff_csv|iceberg_\w+|delta_\w+|load_aws_credentials|open_prompt|st_read\w*|sqlite_\w+|postgres_\w+|mysql_\w+|httpfs_\w+|duckdb_extensions)$/;
/** Functions that run SQL given as a string, which this check cannot see into. */
const SQL_IN_STRING = new Set(['query', 'query_table']);

/** First words of statements that only read (or define TEMP objects for one run). */
const QUERY_START = new Set([
  'select',
  'with',
  'from',
  'values',
  'table',
  'describe',
  'desc',
  'show',
  'summarize',
  'pivot',
  'unpivot',
  'explain',
]);
const TRANSACTION = new Set(['begin', 'commit', 'rollback', 'abort', 'start', 'end']);
/** PRAGMAs that only describe: the rest change settings. */
const READ_PRAGMAS = new Set([
  'table_info',
  'show_tables',
  'show_tables_expanded',
  'show',
  'version',
  'storage_info',
  'functions',
  'database_size',
  'metadata_info',
]);
const TEMP_OBJECTS = new Set(['macro', 'function', 'view', 'table', 'sequence', 'type']);
const READ_ONLY = 'the trace database is read-only (CREATE TEMP VIEW / TABLE / MACRO objects live for one run)';

/**
 * Checks a script; throws RefusedStatement (position: offset in `sql`) for
 * the first statement the sandbox does not run. Returns the statements.
 */
export function checkScript(sql: string): Statement[] {
  let statements: Statement[];
  try {
    statements = splitStatements(sql);
  } catch (e) {
    if (e instanceof SqlLexError) throw new RefusedStatement(`syntax: ${e.message}`, e.position);
    throw e;
  }
  if (statements.length === 0) throw new RefusedStatement('nothing to run: the query is empty', 0);
  for (const s of statements) checkStatement(s);
  return statements;
}

function refuse(t: Token, message: string): never {
  throw new RefusedStatement(message, t.start);
}

function word(t: Token | undefined): string {
  return t && t.kind === 'word' ? t.value : '';
}

export function checkStatement(s: Statement): void {
  const toks = s.tokens;
  let i = 0;
  // A script may start with parentheses: (SELECT ...) UNION ...
  while (toks[i]?.kind === 'punct' && toks[i]!.value === '(') i++;
  const first = toks[i]!;
  const w = word(first);
  if (w === 'explain') {
    // EXPLAIN [ANALYZE] <statement>: the statement is what runs.
    let j = i + 1;
    if (word(toks[j]) === 'analyze' || word(toks[j]) === 'analyse') j++;
    if (toks[j]) checkStatement({ ...s, tokens: toks.slice(j) });
    return;
  }
  if (!QUERY_START.has(w)) checkLeadingKeyword(toks, i);
  checkCallsAndSources(toks);
}

function checkLeadingKeyword(toks: Token[], i: number): void {
  const first = toks[i]!;
  const w = word(first);
  switch (w) {
    case 'copy':
      return refuse(
        first,
        `COPY reads or writes files: ${NO_FILES}. Run the SELECT itself; the results can be copied as CSV or TSV, and \`stallscope query FILE "SQL" --format csv\` writes CSV`,
      );
    case 'export':
    case 'import':
      return refuse(first, `${w.toUpperCase()} DATABASE writes or reads files: ${NO_FILES}`);
    case 'attach':
    case 'detach':
    case 'use':
      return refuse(
        first,
        `${w.toUpperCase()}: queries run on this trace's database only; other databases cannot be attached`,
      );
    case 'install':
    case 'load':
    case 'force':
      return refuse(
        first,
        `${w === 'load' ? 'LOAD' : 'INSTALL'}: extensions cannot be installed or loaded in the query sandbox`,
      );
    case 'update':
      if (word(toks[i + 1]) === 'extensions')
        return refuse(first, 'UPDATE EXTENSIONS: extensions cannot be installed or loaded in the query sandbox');
      return refuse(first, `UPDATE: ${READ_ONLY}`);
    case 'set':
    case 'reset': {
      const next = word(toks[i + 1]);
      // SET VARIABLE x = ... is the connection's own variable, not a setting.
      if (next === 'variable') return;
      const scope = next === 'global' || next === 'session' || next === 'local' ? `${next.toUpperCase()} ` : '';
      return refuse(
        first,
        `${w.toUpperCase()} ${scope}changes a setting: settings (memory_limit, threads, file access...) are fixed by the server for the query sandbox`,
      );
    }
    case 'pragma': {
      const name = toks[i + 1];
      const hasAssign = toks.some((t) => t.kind === 'punct' && t.value === '=');
      if (name && READ_PRAGMAS.has(name.value.toLowerCase()) && !hasAssign) return;
      return refuse(
        first,
        'PRAGMA: only the describing pragmas (table_info, show_tables, show, version, functions...) run here; the others change settings, which are fixed by the server for the query sandbox',
      );
    }
    case 'call':
      return refuse(first, 'CALL: write SELECT * FROM function(...) instead');
    case 'prepare':
    case 'execute':
    case 'deallocate':
      return refuse(
        first,
        `${w.toUpperCase()}: prepared statements are not supported here; write the statement itself`,
      );
    case 'create': {
      let j = i + 1;
      if (word(toks[j]) === 'or' && word(toks[j + 1]) === 'replace') j += 2;
      const temp = word(toks[j]);
      if (temp === 'temp' || temp === 'temporary') {
        if (TEMP_OBJECTS.has(word(toks[j + 1]))) return;
        if (word(toks[j + 1]) === 'secret')
          return refuse(first, 'CREATE SECRET: credentials for remote storage are not used by the query sandbox');
      }
      if (temp === 'secret' || word(toks[j + 1]) === 'secret')
        return refuse(first, 'CREATE SECRET: credentials for remote storage are not used by the query sandbox');
      return refuse(first, `CREATE: ${READ_ONLY}`);
    }
    case 'drop': {
      // DROP of a TEMP object made earlier in the same run.
      return;
    }
    case 'insert':
    case 'delete':
    case 'alter':
    case 'truncate':
    case 'merge':
    case 'comment':
      return refuse(first, `${w.toUpperCase()}: ${READ_ONLY}`);
    case 'checkpoint':
    case 'vacuum':
    case 'analyze':
      return refuse(first, `${w.toUpperCase()}: the trace database is read-only and maintained by stallscope`);
    default:
      if (TRANSACTION.has(w)) return;
      return refuse(
        first,
        `${first.text.slice(0, 30)}: only queries run here (SELECT, WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN, CREATE TEMP VIEW/TABLE/MACRO, SET VARIABLE)`,
      );
  }
}

/**
 * Anywhere in the statement (subqueries, CTEs, macro bodies): calls of
 * functions that read files or run SQL from strings, and file names or URLs
 * used as tables (`FROM 'x.csv'`, DuckDB's replacement scans).
 */
function checkCallsAndSources(toks: Token[]): void {
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k]!;
    const next = toks[k + 1];
    if ((t.kind === 'word' || t.kind === 'qident') && next?.kind === 'punct' && next.value === '(') {
      const name = t.value.toLowerCase();
      if (FILE_FUNCTION.test(name)) refuse(t, `${name}() reads files or URLs: ${NO_FILES}`);
      if (SQL_IN_STRING.has(name))
        refuse(
          t,
          `${name}() runs SQL given as a string, which the sandbox's checks cannot read: write that SQL directly`,
        );
    }
    // A file or URL named where a table goes: FROM 'file.csv', JOIN "x.parquet", FROM tbl, 'y.json'
    if (t.kind === 'string' || (t.kind === 'qident' && looksLikePath(t.value))) {
      const prev = toks[k - 1];
      const pw = word(prev);
      const asSource =
        pw === 'from' || pw === 'join' || (prev?.kind === 'punct' && prev.value === ',' && inFromList(toks, k - 1));
      if (asSource) refuse(t, `${t.text.slice(0, 60)} names a file or URL as a table: ${NO_FILES}`);
    }
  }
}

function looksLikePath(s: string): boolean {
  return /[/\\]|:\/\/|\.(csv|tsv|parquet|json|jsonl|ndjson|txt|gz|zst|db|duckdb|sqlite|xlsx|arrow)$/i.test(s);
}

/** Is the `,` at index k inside a FROM list (the nearest clause keyword at its nesting level is FROM)? */
function inFromList(toks: Token[], k: number): boolean {
  let depth = 0;
  for (let j = k - 1; j >= 0; j--) {
    const t = toks[j]!;
    if (t.kind === 'punct' && t.value === ')') depth++;
    else if (t.kind === 'punct' && t.value === '(') {
      if (depth === 0) return false;
      depth--;
    } else if (depth === 0 && t.kind === 'word') {
      if (t.value === 'from' || t.value === 'join') return true;
      if (
        [
          'select',
          'where',
          'group',
          'order',
          'having',
          'limit',
          'values',
          'qualify',
          'window',
          'on',
          'using',
          'set',
        ].includes(t.value)
      )
        return false;
    }
  }
  return false;
}
