/**
 * Picking rows of the model's UNION ALL views (`ftrace_event`, `args`: a
 * branch per event table, 80 and 189 on many_systems.v7) by id, within the
 * read engines' 64MB cap. DuckDB (1.5) needed more than the cap, which then
 * lifted it until the engine was released (issue 29), for two forms:
 *  - an IN list of 5 or more constants, planned as a join inside every
 *    branch (on every trace, even for 5 ids);
 *  - an ORDER BY above the union (the args of a 200-event excerpt on
 *    many_systems.x10.v7: without it, they fit in 16MB).
 * So the ids go in as a subquery (idsSubquery) and the caller sorts the rows
 * (compareBigints).
 */

/** `(SELECT unnest([...]))`: the ids as a subquery, for `x IN ${idsSubquery(ids)}`. */
export function idsSubquery(ids: readonly (bigint | number)[]): string {
  return `(SELECT unnest([${ids.map(String).join(',')}]::BIGINT[]))`;
}

/** Ascending order of two bigints (ids, timestamps), for the sorts the statements leave out. */
export function compareBigints(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
