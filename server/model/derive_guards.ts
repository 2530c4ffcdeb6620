/**
 * Blocks of a derive file (queries/model/derive_*.sql) that run only when
 * one of the tables or views they read holds a row:
 *
 *   -- @if-rows mm_shrink_slab_start, workqueue_execute_start
 *   INSERT INTO slice ... ;
 *   -- @end-if
 *
 * Why: each derive statement costs DuckDB a fixed 10-50 CPU ms even on
 * empty input (binding, planning and running the windows and joins of
 * their CTEs), and most traces hold only a few of the events a derive file
 * reads: perfetto_block.pftrace (sched_switch and block events) ran
 * derive_slices' slice INSERT and counter tracks for nothing, and every
 * trace with global_dirty_state but no block requests the block_request
 * INSERT. A block is skipped only when every relation it names is empty,
 * so it must name each relation whose rows can make it write one (for an
 * INSERT, the driving side of its joins; for a temp table, what its users
 * write too: the block holds them). DELETEs stay outside the blocks: a
 * re-derive of an existing model needs them.
 *
 * The markers are SQL comments, so the file still runs as it is (bench/
 * derive_statements.ts runs each statement on its own).
 */
import type { Engine } from '../engine/engine.ts';

const IF_ROWS = /^\s*--\s*@if-rows\s+(.+?)\s*$/;
const END_IF = /^\s*--\s*@end-if\s*$/;
const RELATION = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface Block {
  /** null: always runs. */
  needs: string[] | null;
  sql: string;
}

/** The file cut at its markers. Throws on a nested, unclosed or stray marker. */
export function guardedBlocks(sql: string, label: string): Block[] {
  const blocks: Block[] = [];
  let current: Block = { needs: null, sql: '' };
  for (const line of sql.split('\n')) {
    const open = IF_ROWS.exec(line);
    if (open) {
      if (current.needs !== null) throw new Error(`${label}: @if-rows inside another @if-rows block`);
      const needs = open[1]!.split(',').map((s) => s.trim());
      for (const n of needs) if (!RELATION.test(n)) throw new Error(`${label}: @if-rows: not a table name: ${n}`);
      blocks.push(current);
      current = { needs, sql: '' };
      continue;
    }
    if (END_IF.test(line)) {
      if (current.needs === null) throw new Error(`${label}: @end-if without @if-rows`);
      blocks.push(current);
      current = { needs: null, sql: '' };
      continue;
    }
    current.sql += `${line}\n`;
  }
  if (current.needs !== null) throw new Error(`${label}: @if-rows without @end-if`);
  blocks.push(current);
  return blocks.filter((b) => b.sql.trim() !== '');
}

/**
 * The file's SQL without the blocks whose relations are all empty, found by
 * one query (a row of each relation at most) when the file has blocks.
 */
export async function sqlWithoutEmptyBlocks(engine: Engine, sql: string, label: string): Promise<string> {
  const blocks = guardedBlocks(sql, label);
  const names = [...new Set(blocks.flatMap((b) => b.needs ?? []))];
  if (names.length === 0) return sql;
  const [row] = await engine.query<Record<string, boolean>>(
    `SELECT ${names.map((n) => `EXISTS (SELECT 1 FROM ${n}) AS "${n}"`).join(', ')}`,
  );
  return blocks
    .filter((b) => b.needs === null || b.needs.some((n) => row![n] === true))
    .map((b) => b.sql)
    .join('');
}
