/**
 * The statement check: what it refuses (every form the issue lists, in
 * upper/lower case, after comments, joined with `;`, inside subqueries and
 * CTEs, with quoted names) and what it lets through. The real barrier is
 * DuckDB's configuration: sandbox_barrier.test.ts runs the same statements
 * past this check and sees DuckDB refuse them.
 */
import { describe, expect, it } from 'vitest';
import { checkScript, RefusedStatement } from './statement_policy.ts';
import { splitStatements, tokenize } from './sql_tokens.ts';

function refusal(sql: string): RefusedStatement {
  try {
    checkScript(sql);
  } catch (e) {
    if (e instanceof RefusedStatement) return e;
    throw e;
  }
  throw new Error(`not refused: ${sql}`);
}

/** Each refused form, with a word its message must contain. */
const REFUSED: Array<[string, RegExp]> = [
  [`COPY thread TO '/tmp/x.csv'`, /COPY/],
  [`copy (select * from thread) to '/tmp/x.parquet' (format parquet)`, /COPY/],
  [`EXPORT DATABASE '/tmp/exp'`, /EXPORT/],
  [`IMPORT DATABASE '/tmp/exp'`, /IMPORT/],
  [`ATTACH '/tmp/other.duckdb' AS o`, /ATTACH/],
  [`attach database ':memory:' as m`, /ATTACH/],
  [`DETACH trace`, /DETACH/],
  [`INSTALL httpfs`, /extensions/],
  [`FORCE INSTALL httpfs`, /extensions/],
  [`LOAD httpfs`, /extensions/],
  [`UPDATE EXTENSIONS`, /extensions/],
  [`SELECT * FROM read_csv('/etc/passwd')`, /read_csv/],
  [`SELECT * FROM read_csv_auto('/etc/passwd')`, /read_csv_auto/],
  [`select * from READ_PARQUET('http://example.com/x.parquet')`, /read_parquet/],
  [`SELECT content FROM read_text('/etc/hostname')`, /read_text/],
  [`SELECT * FROM read_blob('/etc/hostname')`, /read_blob/],
  [`SELECT * FROM read_json('/etc/x.json')`, /read_json/],
  [`SELECT * FROM parquet_scan('/x.parquet')`, /parquet_scan/],
  [`SELECT * FROM glob('/etc/*')`, /glob/],
  [`SELECT * FROM sniff_csv('/etc/passwd')`, /sniff_csv/],
  [`SELECT * FROM '/etc/passwd'`, /file or URL/],
  [`SELECT * FROM 'https://example.com/data.csv'`, /file or URL/],
  [`SELECT * FROM "/etc/passwd.csv"`, /file or URL/],
  [`SELECT * FROM thread, '/etc/x.csv'`, /file or URL/],
  [`SELECT * FROM thread JOIN 'x.parquet' USING (utid)`, /file or URL/],
  [`SET memory_limit = '64GB'`, /setting/],
  [`SET GLOBAL threads = 8`, /setting/],
  [`set enable_external_access = true`, /setting/],
  [`RESET memory_limit`, /setting/],
  [`PRAGMA memory_limit = '64GB'`, /PRAGMA/],
  [`PRAGMA enable_profiling`, /PRAGMA/],
  [`CALL read_csv('/etc/passwd')`, /CALL/],
  [`CREATE TABLE t AS SELECT 1`, /read-only/],
  [`CREATE SECRET (TYPE s3, KEY_ID 'x')`, /SECRET/],
  [`INSERT INTO thread VALUES (1)`, /read-only/],
  [`CHECKPOINT`, /read-only/],
  [`SELECT * FROM query('SELECT * FROM read_text(''/etc/hostname'')')`, /query\(\)/],
  [`SELECT * FROM query_table('/etc/x.csv')`, /query_table/],
  [`PREPARE p AS COPY thread TO '/tmp/x'`, /PREPARE/],
  [`USE other`, /USE/],
];

describe('statement check: refused', () => {
  for (const [sql, word] of REFUSED) {
    it(sql, () => {
      const e = refusal(sql);
      expect(e.message).toMatch(word);
    });
  }

  it('refuses in any case and after comments', () => {
    expect(refusal("/* a comment */ -- another\n  cOpY thread TO '/tmp/x'").message).toMatch(/COPY/);
    expect(refusal("/* nested /* comment */ still */ Export Database '/tmp/e'").message).toMatch(/EXPORT/);
  });

  it('refuses a statement joined with ; after an allowed one, at its position', () => {
    const sql = "SELECT 1; SELECT 2;\nATTACH '/tmp/x.db'";
    const e = refusal(sql);
    expect(e.message).toMatch(/ATTACH/);
    expect(e.position).toBe(sql.indexOf('ATTACH'));
  });

  it('refuses table functions in subqueries, CTEs, macro bodies and EXPLAIN', () => {
    expect(refusal("SELECT * FROM thread WHERE name IN (SELECT column0 FROM read_csv('/etc/passwd'))").message).toMatch(
      /read_csv/,
    );
    expect(refusal("WITH x AS (FROM glob('/*')) SELECT * FROM x").message).toMatch(/glob/);
    expect(
      refusal("CREATE TEMP MACRO m() AS TABLE SELECT * FROM read_text('/etc/hostname'); FROM m()").message,
    ).toMatch(/read_text/);
    expect(refusal("EXPLAIN ANALYZE SELECT * FROM read_parquet('x')").message).toMatch(/read_parquet/);
    expect(refusal("EXPLAIN COPY thread TO '/tmp/x'").message).toMatch(/COPY/);
    expect(refusal('SELECT (SELECT count(*) FROM "read_csv"(\'/etc/passwd\'))').message).toMatch(/read_csv/);
    expect(refusal("SELECT * FROM main.read_csv('/etc/passwd')").message).toMatch(/read_csv/);
  });

  it('points at the offending call', () => {
    const sql = "SELECT 1\nFROM thread t\nJOIN read_csv('/x') c ON true";
    expect(refusal(sql).position).toBe(sql.indexOf('read_csv'));
  });
});

describe('statement check: allowed', () => {
  const ALLOWED = [
    'SELECT name, count(*) FROM ftrace_event GROUP BY 1',
    'with a as (select 1 as x) select * from a',
    'FROM thread LIMIT 3',
    'VALUES (1, 2)',
    'DESCRIBE thread',
    'SHOW TABLES',
    'SUMMARIZE thread',
    'EXPLAIN SELECT 1',
    "PRAGMA table_info('thread')",
    "SET VARIABLE x = 3; SELECT getvariable('x')",
    'CREATE TEMP MACRO twice(x) AS x * 2; SELECT twice(2)',
    'CREATE OR REPLACE TEMP VIEW v AS SELECT 1; FROM v',
    "SELECT 'COPY thread TO x' AS text_not_a_statement -- read_csv('x') in a comment",
    'SELECT "read_csv" FROM (SELECT 1 AS "read_csv")',
    '(SELECT 1) UNION ALL (SELECT 2)',
    "SELECT * FROM thread WHERE name = '/etc/passwd'",
    'SELECT $$ COPY x TO y; $$ AS s',
  ];
  for (const sql of ALLOWED) {
    it(sql, () => {
      expect(() => checkScript(sql)).not.toThrow();
    });
  }

  it('refuses an empty script', () => {
    expect(refusal('  -- only a comment\n').message).toMatch(/empty/);
  });
});

describe('lexer', () => {
  it('splits at top-level ; only', () => {
    const st = splitStatements(`SELECT ';' AS a; SELECT "x;y" FROM t /* ; */; -- ;\nSELECT $$;$$`);
    expect(st.map((s) => s.text)).toEqual([`SELECT ';' AS a`, `SELECT "x;y" FROM t`, 'SELECT $$;$$']);
  });

  it('unquotes strings and identifiers', () => {
    const t = tokenize(`'it''s' "a""b" E'x\\'y'`);
    expect(t.map((x) => [x.kind, x.value])).toEqual([
      ['string', "it's"],
      ['qident', 'a"b'],
      ['string', "x'y"],
    ]);
  });

  it('reports an unterminated string where it starts', () => {
    const e = refusal("SELECT 'abc");
    expect(e.position).toBe(7);
  });
});
