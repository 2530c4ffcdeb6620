/**
 * Which statements of the built-in detectors have nothing to read: every
 * table or view they name (the table macros of lib/macros.sql they call
 * included) is empty. A trace.dat says which tracepoints were enabled
 * (coverage.ts), and a recording that enabled vmscan but never reclaimed
 * (fixtures/corpus/kmem) still ran all of the reclaim detectors, their
 * summaries and metrics: ~20 statements of 3-40 CPU ms each that found
 * nothing. Such a statement is skipped and counts as having returned no rows.
 *
 * That is exact only for statements that return no rows when their data is
 * empty, which the built-in ones do (tests/golden/detectors_real.test.ts runs
 * them on recordings with enabled, never-fired tracepoints, skipping and
 * not); a user's detector may not (`SELECT count(*) ...`), so it always runs.
 *
 * A statement that reads more than where its rows come from says so with a
 * comment line `-- @rows_from rel ...`: it returns no rows when those
 * relations are empty, whatever the others hold (dirty_throttled's pauses
 * come from balance_dirty_pages, though it also reads the flusher's
 * writeback_work), so only they are checked. Named relations it does not
 * read are an error: a misspelling would skip it on the wrong table.
 *
 * Context tables do not count as data: the threads, the trace's facts and
 * its CPUs are there in every trace and no detector finds anything in them
 * alone. Scalar macros are not followed: the only ones naming tables
 * (ss_trace_start / ss_trace_end) read the trace's bounds, not events.
 */
import type { Engine } from '../engine/engine.ts';

const CONTEXT_RELATIONS = new Set([
  'thread',
  'process',
  'thread_name_history',
  'trace_info',
  'cpu',
  '_event_name',
  '_string',
]);

/** SQL text with its comments blanked (string literals and quoted identifiers kept: they may name tables). */
function blankComments(sql: string): string {
  return sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)/g, (m) =>
    m.startsWith('--') || m.startsWith('/*') ? m.replace(/[^\n]/g, ' ') : m,
  );
}

/** The relations of the statement's `-- @rows_from a b ... [-- why]` lines, lower case (null: none). */
export function rowsFromRelations(sql: string): string[] | null {
  const names = [...sql.matchAll(/^[ \t]*--[ \t]*@rows_from\b([^\n]*)/gm)].flatMap((m) =>
    m[1]!.split('--')[0]!.trim().toLowerCase().split(/\s+/).filter(Boolean),
  );
  return names.length > 0 ? names : null;
}

/** Every word of the statement (identifiers, quoted or not, and the words of its string literals), lower case. */
function words(sql: string): Set<string> {
  return new Set(
    blankComments(sql)
      .toLowerCase()
      .match(/[a-z_][a-z0-9_]*/g) ?? [],
  );
}

/** Table macro name -> the words of its body (lib/macros.sql's `CREATE ... MACRO name(...) AS TABLE ...;`). */
export function tableMacroWords(macrosSql: string): Map<string, Set<string>> {
  const code = blankComments(macrosSql);
  const out = new Map<string, Set<string>>();
  const re =
    /CREATE\s+(?:OR\s+REPLACE\s+)?TEMP(?:ORARY)?\s+MACRO\s+([A-Za-z_][A-Za-z0-9_]*)\s*\([^)]*\)\s*AS\s+TABLE\b/gi;
  for (const m of code.matchAll(re)) {
    const end = code.indexOf(';', m.index + m[0].length);
    out.set(m[1]!.toLowerCase(), words(code.slice(m.index + m[0].length, end < 0 ? code.length : end)));
  }
  return out;
}

export class EmptyInputs {
  private relations: Promise<Set<string>> | null = null;
  private readonly empty = new Map<string, Promise<boolean>>();

  constructor(
    private readonly engine: Engine,
    private readonly macros: Map<string, Set<string>>,
  ) {}

  /** The data relations `sql` reads (its own words and those of the table macros it calls, transitively). */
  async dataRelationsOf(sql: string): Promise<string[]> {
    const relations = await (this.relations ??= this.engine
      .query<{ name: string }>(
        `SELECT table_name AS name FROM duckdb_tables() WHERE NOT internal
         UNION SELECT view_name FROM duckdb_views() WHERE NOT internal`,
      )
      .then((rows) => new Set(rows.map((r) => r.name.toLowerCase()))));
    const seen = new Set<string>();
    const found = new Set<string>();
    const visit = (ws: Set<string>) => {
      for (const w of ws) {
        if (relations.has(w) && !CONTEXT_RELATIONS.has(w)) found.add(w);
        const body = this.macros.get(w);
        if (body && !seen.has(w)) {
          seen.add(w);
          visit(body);
        }
      }
    };
    visit(words(sql));
    return [...found];
  }

  /**
   * Looks up, in one query, whether the data relations of these statements
   * are empty (one statement each cost ~1 ms of planning and round trip,
   * which ate what skipping saved on a trace whose detectors all run).
   * A UNION ALL branch per relation reading at most one row of it: one
   * `SELECT EXISTS (FROM r0), EXISTS (FROM r1), ...` over the nine relations
   * of many_systems' detectors (views over the event tables) took 18-19 CPU
   * ms on every corpus model, these branches 4-5.
   */
  async prefetch(sqls: readonly string[]): Promise<void> {
    const wanted = new Set<string>();
    for (const sql of sqls) for (const r of await this.sourcesOf(sql)) if (!this.empty.has(r)) wanted.add(r);
    if (wanted.size === 0) return;
    const names = [...wanted];
    const found = this.engine
      .query<{ i: number; n: bigint | number }>(
        names
          .map(
            (r, i) =>
              `SELECT ${i}::INTEGER AS i, count(*) AS n FROM (SELECT 1 FROM "${r.replace(/"/g, '""')}" LIMIT 1)`,
          )
          .join('\nUNION ALL\n'),
      )
      .then((rows) => new Set(rows.filter((x) => Number(x.n) > 0).map((x) => x.i)));
    names.forEach((r, i) =>
      this.empty.set(
        r,
        found.then((nonEmpty) => !nonEmpty.has(i)),
      ),
    );
    await found;
  }

  /** What decides whether `sql` returns rows: its `@rows_from` relations, else every data relation it reads. */
  async sourcesOf(sql: string): Promise<string[]> {
    const read = await this.dataRelationsOf(sql);
    const named = rowsFromRelations(sql);
    if (named === null) return read;
    const unread = named.filter((r) => !read.includes(r));
    if (unread.length > 0) throw new Error(`@rows_from names ${unread.join(', ')}, which the statement does not read`);
    return named;
  }

  /** True when `sql` reads data and all of it that its rows come from (sourcesOf) is empty. */
  async nothingToRead(sql: string): Promise<boolean> {
    const rels = await this.sourcesOf(sql);
    if (rels.length === 0) return false;
    await this.prefetch([sql]);
    for (const r of rels) if (!(await this.empty.get(r))) return false;
    return true;
  }
}
