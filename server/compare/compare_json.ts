/**
 * The JSON of a comparison (`stallscope compare --json`, GET /api/compare):
 * the CompareResult as it is, with every number finite (a test statistic
 * that is infinite, a degenerate Welch test between two sides that never
 * vary, becomes null). The shape is documented in COMPARE.md; fields are
 * added, never renamed, and `version` moves when one changes meaning.
 */
import type { CompareResult } from './compare.ts';

export function compareResultToJson(r: CompareResult): unknown {
  return JSON.parse(JSON.stringify(r, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v)));
}
