/**
 * Detector parameters written into the statement, for the detector runner
 * (run_detectors.ts) and the samples statements (samples.ts).
 */
import type { DuckDBValue } from '@duckdb/node-api';
import { type ParamValue, blankCommentsAndStrings } from './detector_registry.ts';

const HUGEINT_MIN = -(2n ** 127n);
const HUGEINT_MAX = 2n ** 127n - 1n;

/**
 * The statement with its numeric and boolean parameters written in as
 * typed literals (a bigint as `CAST(n AS HUGEINT)`, a number as
 * `CAST(x AS DOUBLE)`: the types @duckdb/node-api binds them as), and the parameters
 * left to bind: strings, and numbers with no exact literal.
 *
 * Why: a statement with parameters is prepared, then bound and run, and
 * DuckDB plans it at both steps; planning is a third to half of a detector
 * statement's time on a 1M-event trace (migration_pingpong: EXPLAIN 15 ms
 * of 25-30). Written in, a whole findings run on many_systems.v7's model (6
 * statements on a fresh read engine) took 8-12 ms less, 5 alternating pairs.
 * Strings stay bound: a user's override is never SQL.
 */
export function inlineParams(
  sql: string,
  values: Record<string, ParamValue>,
): { sql: string; params: Record<string, DuckDBValue> } {
  const code = blankCommentsAndStrings(sql);
  const params: Record<string, DuckDBValue> = {};
  let out = '';
  let from = 0;
  for (const m of code.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)) {
    const name = m[1]!;
    const v = values[name];
    if (v === undefined) throw new Error(`parameter $${name} has no value`);
    const literal = sqlLiteral(v);
    if (literal === null) {
      params[name] = v;
      continue;
    }
    out += sql.slice(from, m.index) + literal;
    from = m.index + m[0].length;
  }
  return { sql: out + sql.slice(from), params };
}

/** A value as an SQL literal of the type binding it would give, or null (bind it). */
function sqlLiteral(v: ParamValue): string | null {
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'bigint') return v >= HUGEINT_MIN && v <= HUGEINT_MAX ? `CAST(${v} AS HUGEINT)` : null;
  if (typeof v === 'number') return Number.isFinite(v) ? `CAST(${String(v)} AS DOUBLE)` : null;
  return null;
}
