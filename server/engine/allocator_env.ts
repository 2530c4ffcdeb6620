/**
 * How DuckDB's allocator gives memory back: set before DuckDB first
 * allocates (engine.ts imports this module before @duckdb/node-api).
 *
 * On Linux libduckdb allocates through its own jemalloc, configured by
 * $DUCKDB_JE_MALLOC_CONF (read once, at its first allocation). By default
 * jemalloc keeps freed pages mapped ("dirty", then "muzzy") for a decay
 * time and returns them only when the same arena allocates again; an ingest
 * frees a step's hash tables and sort runs and starts the next step on
 * another thread, so the pages of every step stayed resident: on
 * many_systems.v7 RSS after derive_block was 415 MB with the defaults and
 * 307 MB with the pages returned at once (decay 0), and the peak, at the
 * store's commit, 451 -> 390 MB. What DuckDB holds live stays bounded by
 * its memory_limit; this keeps what it freed from counting on top.
 *
 * A value the user set wins (e.g. to trade memory for allocation speed).
 */
export const DUCKDB_ALLOCATOR_CONF = 'dirty_decay_ms:0,muzzy_decay_ms:0';

if (process.env.DUCKDB_JE_MALLOC_CONF === undefined) process.env.DUCKDB_JE_MALLOC_CONF = DUCKDB_ALLOCATOR_CONF;
