/**
 * Detector parameters written into the statement: only outside strings and
 * comments, strings left bound, and the same result and types as binding.
 */
import { describe, expect, it } from 'vitest';
import { openDuckDb } from '../engine/engine.ts';
import { inlineParams } from './inline_params.ts';

describe('parameters written into the statement', () => {
  const SQL = [
    'SELECT $n::BIGINT + 1 AS n1, $n * 2 AS n2, 10-$neg AS d, $x AS x, $on AS b, $who AS who,',
    "  '$n in a string' AS lit -- $n in a comment",
  ].join('\n');
  const values = { n: 9007199254740993n, neg: -5n, x: 0.25, on: true, who: "it's; DROP TABLE thread" };

  it('writes in numbers and booleans outside strings and comments, and keeps strings bound', () => {
    const { sql, params } = inlineParams(SQL, values);
    expect(sql).toBe(
      [
        'SELECT CAST(9007199254740993 AS HUGEINT)::BIGINT + 1 AS n1, CAST(9007199254740993 AS HUGEINT) * 2 AS n2, ' +
          '10-CAST(-5 AS HUGEINT) AS d, CAST(0.25 AS DOUBLE) AS x, true AS b, $who AS who,',
        "  '$n in a string' AS lit -- $n in a comment",
      ].join('\n'),
    );
    expect(params).toEqual({ who: "it's; DROP TABLE thread" });
    expect(() => inlineParams('SELECT $missing', values)).toThrow('parameter $missing has no value');
  });

  it('gives the same row, with the same types, as binding every parameter', async () => {
    const db = await openDuckDb(':memory:');
    const conn = db.connection!;
    const bound = await conn.runAndReadAll(SQL, values);
    const { sql, params } = inlineParams(SQL, values);
    const written = await conn.runAndReadAll(sql, params);
    expect(written.columnTypes().map(String)).toEqual(bound.columnTypes().map(String));
    expect(written.getRowsJson()).toEqual(bound.getRowsJson());
    // Counted by hand: 2^53 + 1 survives as an integer (a DOUBLE would round it).
    expect(written.getRowsJson()[0]!.slice(0, 3)).toEqual(['9007199254740994', '18014398509481986', '15']);
    db.close();
  });
});
