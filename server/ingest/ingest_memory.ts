/**
 * The ingest's memory budget, and DuckDB's share of it.
 *
 * Target: peak RSS <= 350 MB for any file (issue 29), so every part is
 * bounded by a constant, none by the file's size:
 *   ~80 MB   the process before any work: node, libduckdb's code, V8 (RSS at
 *            "workspace" in STALLSCOPE_TIMING's output: 72-92 MB)
 *   ~40 MB   the decode/field/store worker isolates and their heaps
 *   ~75 MB   the main thread's heap and buffers: chunks in flight to the store
 *            (store_protocol.ts MAX_IN_FLIGHT) and to the field worker
 *            (MAX_BATCHES_IN_FLIGHT), idle recycled buffers (16 MB,
 *            recycled_buffers.ts), the decoder's read buffers (heap 33 MB and
 *            array buffers 37-76 MB at the end of decode on the corpus)
 *   INGEST_MEMORY_LIMIT  DuckDB's buffer pool: the rows a load has appended
 *            and not committed, the derive queries' hash tables and sorts;
 *            past it DuckDB writes to the database file or spills to the work
 *            dir's spill/
 *   the rest headroom for what DuckDB allocates outside its pool (query
 *            plans, the allocator's own slack; its freed pages go back at
 *            once, engine/allocator_env.ts).
 * Why 128MB: the rest of the process takes ~200 MB while decoding, so a
 * 256MB limit could not keep the total under 350 MB once DuckDB filled it,
 * and on the 1M-event recordings DuckDB holds ~100 MB of uncommitted rows at
 * the end of decoding either way (so 128MB costs them nothing); on a
 * 10M-event one the store's rows and derive's sorts reach the limit (see the
 * issue-29m note for peak RSS and CPU at 128MB and 256MB). Earlier, on the
 * bench's 10M-event trace.dat: 894 MB peak at 1GB, 807 MB at 512MB, 715 MB
 * at 256MB, with 256MB no slower (26-28 s vs 30 s).
 * $STALLSCOPE_INGEST_MEMORY overrides (a DuckDB size, e.g. '512MB').
 */
export const INGEST_MEMORY_LIMIT = process.env.STALLSCOPE_INGEST_MEMORY ?? '128MB';
