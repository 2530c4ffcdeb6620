/**
 * The ingest's memory budget: every part bounded by a constant, none by the
 * file's size, so that peak RSS stays under issue 29's 350 MB whatever the
 * trace. What the process holds at its peak, from /proc/PID/smaps on
 * many_systems.v7 (354 MB; issue-29m note, session 2):
 *   ~85 MB   code: node's binary and libduckdb.so mapped from disk (file
 *            pages, the same for any input)
 *   ~55 MB   V8 heaps of three isolates: the main thread's (34 MB on 1M
 *            events, 54 MB on 10M, of which 15 MB live after a collection:
 *            its young generation grows to V8's maximum, not its contents)
 *            and the two workers', whose young generation is capped at
 *            WORKER_YOUNG_GENERATION_MB each
 *   ~90 MB   DuckDB (its own jemalloc): STORE_MEMORY_LIMIT's buffer pool, the
 *            rows the load has appended and not committed, plus what it
 *            allocates outside the pool (compression at COMMIT; the rows
 *            appended and not flushed, model/column_appender.ts
 *            UNFLUSHED_BUDGET_BYTES; the open appenders' data chunks,
 *            OPEN_APPENDERS_BUDGET_BYTES, which once followed the number of
 *            tables: ~50 MB on `-e all` recordings; its freed pages go back
 *            at once, engine/allocator_env.ts)
 *   ~120 MB  malloc'd ArrayBuffers and native buffers of the threads:
 *            what is in flight between them, at most
 *            3 x IN_FLIGHT_BUDGET_BYTES (chunks from the main thread and
 *            from the field worker to the store, record batches from the
 *            main thread to the field worker; in_flight_bytes.ts), idle
 *            recycled buffers, at most MAX_IDLE_BYTES a pool
 *            (recycled_buffers.ts, three pools: the freed ones go back at
 *            once), the chunks the tables are filling (one a table with
 *            rows not handed over; in the field worker at most
 *            OPEN_CHUNKS_BUDGET_BYTES, ~23 MB before on a `-e all`
 *            trace.dat of ~400 event names), the decoder's read and
 *            decompression buffers (trace.dat's reused per stream,
 *            cpu_stream.ts), and the garbage ones among them until V8
 *            collects them: it does so after ~64 MB of external allocation,
 *            so the main thread's share swings from run to run (41-77 MB
 *            at the end of decoding, ~27 MB of it live).
 * The peak was the store's COMMIT, which reads its spilled rows back while
 * the decoding threads still held that garbage; each thread now collects it
 * when its part ends (collectGarbage), so RSS falls to ~190-200 MB during
 * the commit and the peak is the end of decoding: 310-340 MB on the 1M-event
 * files, ~350 MB on the 10M-event ones (session 3 of the issue-29m note).
 * After the load, derive runs on the main thread with INGEST_MEMORY_LIMIT:
 * the workers are idle then and the decode buffers gone, so derive's hash
 * tables and sorts get the larger pool.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Bytes that may be in flight from one producer thread to its consumer
 * (in_flight_bytes.ts): the main thread's chunks to the store worker, the
 * field worker's to the store worker, and the main thread's record batches
 * to the field worker each have a budget of this size. Why 4 MB: the
 * earlier bounds, 48 chunks and 8 batches, let 13-22 MB of batches (8 of
 * ~1.6 MB: a 1 MiB page buffer each) and 6-7 MB of the field worker's
 * chunks wait on every trace.dat and text file, and as many again sat idle
 * in the pools once they came back, while two batches (~80 ms of the field
 * worker's work) or a few MB of chunks keep the consumer busy as well.
 * $STALLSCOPE_IN_FLIGHT_MB overrides.
 */
export const IN_FLIGHT_BUDGET_BYTES = (Number(process.env.STALLSCOPE_IN_FLIGHT_MB) || 4) * 1048576;

/**
 * Bytes the field worker's column chunks may hold while they fill
 * (model/open_chunk_budget.ts): one chunk per table with rows not yet handed
 * over. Past it, the chunks with the most unfilled room are handed over
 * part-filled. Why 8 MB: taken at a chunk's first row, they held up to
 * 17.7 MB on a `trace-cmd record -e all` trace.dat (all.dat, 4.4M events,
 * 412 tables; ~7 MB of it rows), and the corpus's 1M-event traces at most
 * 5.3 MB (many_systems.v7), so the budget binds only on the many-table
 * ones. On all.dat (issue-29mem5 note, load 4-8) 8 MB hands over ~1,040
 * chunks part-filled: peak 346-363 MB against 372-388 on main, for ~+0.5
 * CPU-s, mostly the store's appends and flushes of the extra chunks; 16 MB
 * handed over 12 (370-378 MB, as with no budget: 376); 4 MB peaked at
 * 347-356 for +2-3 CPU-s.
 * $STALLSCOPE_OPEN_CHUNKS_MB overrides.
 */
export const OPEN_CHUNKS_BUDGET_BYTES = (Number(process.env.STALLSCOPE_OPEN_CHUNKS_MB) || 8) * 1048576;

/**
 * DuckDB's cap while deriving (and for a trace loaded in process, small files
 * on one thread). Why 128MB: the rest of the process takes ~200 MB then, so
 * 256MB could not keep the total under 350 MB once DuckDB filled it; on the
 * 10M-event recordings derive's sorts reach it and spill (the issue-29m note
 * has peak RSS and CPU at 128MB and 256MB). Earlier, on the bench's 10M-event
 * trace.dat: 894 MB peak at 1GB, 807 MB at 512MB, 715 MB at 256MB, with 256MB
 * no slower (26-28 s vs 30 s).
 * $STALLSCOPE_INGEST_MEMORY overrides (a DuckDB size, e.g. '512MB').
 */
export const INGEST_MEMORY_LIMIT = process.env.STALLSCOPE_INGEST_MEMORY ?? '128MB';

/**
 * Files of this many events or more (estimated from their size, as for the
 * store worker: ingest_file.ts estimatedEvents) are large: DuckDB gets
 * LARGE_INGEST_MEMORY_LIMIT instead of INGEST_MEMORY_LIMIT for the COMMIT
 * and derive. Why: over a long decode the rest of the process grows by
 * ~20-30 MB that a 1M-event one does not reach (the main thread's young
 * generation doubles to V8's maximum between 2M and 6M events, 16 -> 32 MB,
 * and the field worker's heap grows), so DuckDB's share shrinks by as much.
 * The 1M-event files (and the 3.2M-event compile_syscalls.v7) are unchanged.
 */
export const LARGE_LOAD_EVENTS = 5_000_000;

/**
 * Whether DuckDB's freed pages may stay a second (engine/allocator_decay.ts)
 * through a trace's store COMMIT, and its detectors and first view once it
 * is built (its decode returns them at once; derive: see
 * freedPagesKeptThroughDerive). Not for a large trace (LARGE_LOAD_EVENTS):
 * pages kept there took many_systems.x10.v7's upload peak from 351-361 to
 * 401 MB; a 1M-event trace's detectors stay below its decode's peak.
 */
export function freedPagesKept(estimatedEvents: number): boolean {
  return estimatedEvents < LARGE_LOAD_EVENTS;
}

/**
 * Resident bytes at derive's start up to which DuckDB's freed pages also
 * stay through derive (allocator_decay.ts pastDecodePeak; the store's COMMIT
 * keeps them whenever freedPagesKept). What they keep is derive's churn of a
 * second, not bounded by its cap: many_systems.v7 193 -> 313 MB at
 * derive_block (290-296 MB at decode's end, which was the peak), and a
 * server's second upload of the 1.3M-event Perfetto file (loaded on the
 * ingest's own instance, derive from 227 MB on a fresh server) 335-338 ->
 * 376-392 MB. A trace.dat or text load of a fresh process starts derive at
 * ~185-196 MB; past this, derive returns its pages at once.
 */
export const DERIVE_KEEPS_PAGES_RESIDENT_MAX = 210 * 1024 * 1024;

/** Whether freed pages stay through derive: a trace under LARGE_LOAD_EVENTS on a process holding no more than a fresh one's load. */
export function freedPagesKeptThroughDerive(residentBytes: number, events: number): boolean {
  return freedPagesKept(events) && residentBytes <= DERIVE_KEEPS_PAGES_RESIDENT_MAX;
}

/**
 * DuckDB's cap for the COMMIT and derive of a large file (LARGE_LOAD_EVENTS).
 * With 128MB the COMMIT was the peak of the 10M-event files (issue-29mm
 * note, store cap 40MB): many_systems.x10.tracefs 373-377 MB against
 * 347-348 at 96MB, for ~3% more CPU (spilled rows read back in smaller
 * pieces). $STALLSCOPE_INGEST_MEMORY overrides both caps.
 */
export const LARGE_INGEST_MEMORY_LIMIT = process.env.STALLSCOPE_INGEST_MEMORY ?? '96MB';

/** DuckDB's cap from the COMMIT on, for a file of about `estimatedEvents` events. */
export function ingestMemoryLimit(estimatedEvents: number): string {
  return estimatedEvents >= LARGE_LOAD_EVENTS ? LARGE_INGEST_MEMORY_LIMIT : INGEST_MEMORY_LIMIT;
}

/**
 * Block size of the trace database of a file of fewer than
 * SMALL_BLOCK_MAX_EVENTS (estimated) events: 64 KiB instead of DuckDB's
 * 256 KiB. Why: a 1M-event trace has 40-80 tables (one per event kind or
 * field shape), most of them smaller than a row group, and DuckDB writes and
 * pins each table's columns in whole blocks: the COMMIT wrote a block or
 * more per table (80 tables of 100 rows: a 22 MB file at 256 KiB, 6 MB at
 * 64 KiB), and each appender flush pinned a block per column. Issue-29cm
 * note, 4 alternating pairs: the store thread's finish+commit (closing the
 * appenders, COMMIT) many_systems.v7 578 -> 400 CPU ms, sched_wq.v7 410 ->
 * 340; whole ingest CPU -0.2 and -0.4 s; peak RSS -21 MB and even; identical
 * models. Not for larger files: DuckDB spills a block of another size than
 * 256 KiB to a file of its own (spill/duckdb_temp_block-N.block, hundreds
 * to thousands of them), and the store's cap makes it spill more as the
 * trace grows: the store's appender flushes took 0.6-0.8 -> 1.6 CPU-s on
 * the 2M-event many_systems.x2.v7, 1.4-1.6 -> 4.5-5.1 on x4, 4 -> 12 on the
 * 10M-event x10 (sys time 5.6 -> 15 s). 1.4M events of reclaim.x4.v7
 * (estimated 1.2M) were even, hence the margin below 2M.
 * Perfetto files too (issue-33p note; CLI, alternating pairs at load 11-13,
 * CPU-s medians, finish+commit CPU ms medians): perfetto_reclaim (33k
 * events) 6 pairs 0.735 -> 0.685, 158 -> 112; perfetto_compact 6 pairs 0.67
 * -> 0.645, 125 -> 101, peak 141-148 -> 134-135 MB; 30 copies of
 * perfetto_reclaim (1M events) 4 pairs 2.19 -> 2.15, 226 -> 191, peak
 * 243-245 -> 220-222 MB; 100 copies of perfetto_compact (1.36M events,
 * estimated 0.9M) 4 pairs 3.27 -> 3.27, 280 -> 254. At 1.3-2.6M events
 * (loaded on the ingest's thread up to 3M) 64 KiB was even on CPU.
 * $STALLSCOPE_DB_BLOCK_SIZE overrides (bytes; 0: DuckDB's default).
 */
export const SMALL_BLOCK_MAX_EVENTS = 1_250_000;
const SMALL_BLOCK_BYTES = 65_536;

/**
 * Perfetto files keep 64 KiB blocks up to more events: they load on the
 * ingest's thread up to PERFETTO_STORE_WORKER_MIN_EVENTS, whose cap does not
 * spill as the store worker's does, and 64 KiB was even on CPU there (x40,
 * x80 above). What a block per column costs follows the number of tables, not
 * of events: a tracebox recording of sched, workqueue, block and writeback
 * events with an fsync loop (56 MB, 820k events in the model, estimated 1.4M)
 * peaked at 338-350 MB in the server's first view with 256 KiB blocks and
 * 313-322 MB with 64 KiB, the CLI at 308-315 and 285-292 MB, and x40 then it
 * uploaded into one server at 350-352 and 323-329 MB; CPU even (issue-33im
 * note: alternating pairs at load 1.2-4.2).
 */
export const PERFETTO_SMALL_BLOCK_MAX_EVENTS = 2_000_000;

/** The block size for the trace database of a file of about `estimatedEvents` events; undefined: DuckDB's default. */
export function ingestBlockSize(estimatedEvents: number, perfetto = false): number | undefined {
  const forced = process.env.STALLSCOPE_DB_BLOCK_SIZE;
  if (forced !== undefined) return Number(forced) || undefined;
  const max = perfetto ? PERFETTO_SMALL_BLOCK_MAX_EVENTS : SMALL_BLOCK_MAX_EVENTS;
  return estimatedEvents < max ? SMALL_BLOCK_BYTES : undefined;
}

/**
 * DuckDB's cap on the store thread while it loads. Its rows stay in memory
 * until COMMIT: every table is created in the load's transaction, and the
 * tables of a 1M-event trace (25-40 of them, one per event kind or field
 * shape) each hold less than one row group (122,880 rows), which DuckDB only
 * writes to the file once full. So without a lower cap it holds ~100 MB of
 * rows on any 1M-event trace, and ~memory_limit on larger ones (sched_wq.v7:
 * 99 MB at 128MB), while the decoding threads hold their own ~150 MB. Past
 * the cap the rest spills to the work dir's spill/ and is read back at
 * COMMIT. The cap holds while decoding (the peak); from `finish` on, the
 * store thread raises it to derive's (INGEST_MEMORY_LIMIT, store_worker.ts).
 * 64MB against 128MB (issue-29m note): peak -20 to -40 MB. 40MB against
 * 64MB (issue-29mm note; 3 alternating pairs each, load 3-12): sched_wq.v7
 * 300 -> 280 MB, compile_syscalls.v7 (3.2M events) 336 -> 309,
 * many_systems.x10.v7 355 -> 348, many_systems.x10.tracefs 370 -> 366, CPU
 * within the noise (+1.4%, 0, -0.4%, +0.6%): the spilled rows are written
 * and read back by the store thread, which waits for the decoders most of
 * the time. On the 10M-event files the peak then moves to the COMMIT at
 * derive's cap; a 64MB cap for the COMMIT cost 2-5% CPU on the 1M-event
 * files.
 * $STALLSCOPE_STORE_MEMORY overrides.
 */
export const STORE_MEMORY_LIMIT = process.env.STALLSCOPE_STORE_MEMORY ?? '40MB';

/** Issue 29's target: the ingest's peak resident bytes, whatever the trace. */
export const INGEST_PEAK_TARGET_BYTES = 350 * 1048576;

/**
 * What DuckDB allocates outside its buffer pool while it closes the
 * appenders and commits (compression buffers, the appenders' own chunks),
 * over what it held outside the pool while loading: a margin, from the
 * block-heavy trace.dat's COMMIT (issue-29bm note: resident at `finish`
 * plus the raise of the cap plus the kept pages came within ~10 MB of the
 * peak measured).
 */
export const COMMIT_OUTSIDE_POOL_BYTES = 16 * 1048576;

/**
 * DuckDB's cap for the store's closing flushes and COMMIT, from what the
 * process holds when decoding has ended (`residentBytes`, after the
 * decoding threads' garbage is collected): the load's cap plus what is left
 * of INGEST_PEAK_TARGET_BYTES once the resident bytes, the freed pages kept
 * meanwhile (allocator_decay.ts KEPT_PAGES_MAX_BYTES) and
 * COMMIT_OUTSIDE_POOL_BYTES are counted; never below the load's cap nor
 * above derive's (`commitLimit`). Why from the resident bytes: the COMMIT
 * reads back every row spilled while loading, so DuckDB fills whatever cap
 * it has, and what the rest of the process still holds then grows with the
 * trace (decode buffers, heaps): a block-heavy 2.2M-event trace.dat,
 * estimated under LARGE_LOAD_EVENTS, held ~257 MB at `finish` and its COMMIT
 * at derive's 128MB peaked at 347-397 MB (issue-29bm note).
 */
export function commitMemoryLimit(
  residentBytes: number,
  loadLimit: string,
  commitLimit: string,
  keptPagesMaxBytes: number,
): string {
  if (process.env.STALLSCOPE_INGEST_MEMORY) return commitLimit;
  const load = duckDbSizeBytes(loadLimit);
  const most = duckDbSizeBytes(commitLimit);
  if (load === null || most === null) return commitLimit;
  const room = INGEST_PEAK_TARGET_BYTES - residentBytes - keptPagesMaxBytes - COMMIT_OUTSIDE_POOL_BYTES;
  const cap = Math.min(most, Math.max(load, load + room));
  return `${Math.floor(cap / 1048576)}MB`;
}

/**
 * Spilled bytes from which the COMMIT's cap comes from the resident bytes
 * (commitMemoryLimit) rather than derive's. Why: what raised the ingest's
 * peak at COMMIT was the spilled rows read back (the block-heavy 2.2M-event
 * trace.dat had spilled 113 MB past the load's 40MB and peaked at 344-389
 * MB with derive's 128MB; 330 MB with the cap from the resident bytes). A
 * load that spilled nothing holds its rows in memory already: many_systems.v7
 * (0 MB spilled, 38 MB in DuckDB, ~280 MB resident at `finish`) peaks at
 * decode either way (290-296 MB), but at the 55-61MB the resident bytes gave,
 * closing its appenders took 268-372 CPU ms instead of 122-129 (evictions).
 */
export const COMMIT_READBACK_MIN_BYTES = 16 * 1048576;

/** The COMMIT's cap: `fromResident` (commitMemoryLimit) if the load spilled at least COMMIT_READBACK_MIN_BYTES, else derive's `deriveCap`. */
export function commitCapAfterLoad(fromResident: string, deriveCap: string, spilledBytes: number): string {
  return spilledBytes >= COMMIT_READBACK_MIN_BYTES ? fromResident : deriveCap;
}

/**
 * What DuckDB needs, per column of a table holding rows of the load, to
 * close the appenders and COMMIT: each column's unfinished segment is pinned
 * then (the load could evict it to the spill file; the COMMIT cannot), ~18
 * KiB each whatever the block size (64 KiB or 256 KiB) or the rows per
 * table (100 or 3000), STRUCT fields counting as columns. Measured with
 * standalone loads of T tables of 8 to 32 columns, lowest memory_limit at
 * which they commit: 50 x 8 columns 9 MB, 200 x 8 29 MB, 400 x 8 57-59 MB,
 * 200 x 16 59 MB, 200 x 32 118 MB. A cap below this failed the ingest of
 * `trace-cmd record -e all` (390 tables): "could not allocate block of size
 * 16.0 KiB (38.1 MiB/38.1 MiB used)". Through the store's own path
 * (`npx tsx bench/commit_per_table.ts 50`: 50 shape tables of 16 columns),
 * 14MB at 64 KiB blocks, 16MB at 256 KiB: 18-20.5 KiB a column. 24 KiB and
 * COMMIT_FLOOR_BASE_BYTES leave a third more than measured.
 */
export const COMMIT_BYTES_PER_COLUMN = 24 * 1024;
/** The rest of the COMMIT's floor: the whole-trace tables and views finish() writes, DuckDB's own state. */
export const COMMIT_FLOOR_BASE_BYTES = 8 * 1048576;

/**
 * The COMMIT's cap raised to what its tables need (COMMIT_BYTES_PER_COLUMN
 * per column of the tables holding rows, `storedColumns`): a cap from the
 * resident bytes alone (commitMemoryLimit) can leave less than that to a
 * trace of many event kinds, and then the load fails. So the floor wins
 * over the 350 MB target: losing the trace is worse than passing it.
 */
export function withCommitFloor(limit: string, storedColumns: number): string {
  const floor = COMMIT_FLOOR_BASE_BYTES + storedColumns * COMMIT_BYTES_PER_COLUMN;
  const bytes = duckDbSizeBytes(limit);
  if (bytes !== null && bytes >= floor) return limit;
  return `${Math.ceil(floor / 1048576)}MB`;
}

/**
 * What an open shape table pins per column while the load appends, before
 * any COMMIT: DuckDB keeps each column's unfinished segment of every table
 * it appends to. A generated tracefs text of 400 event kinds x 2,500 events
 * (4 fields each: 400 shape tables, 4,400 columns, 1M events; issue-29mk
 * note) failed its load at the store's 40MB: "could not allocate block of
 * size 64.0 KiB (38.1 MiB/38.1 MiB used)". `trace-cmd record -e all` (195
 * shape tables, ~2,100 columns) loads at 40MB. Half the COMMIT's per-column
 * need (COMMIT_BYTES_PER_COLUMN) puts the 400-kind load at 60MB and leaves
 * every recording of the corpus and -e all at their caps.
 */
export const LOAD_BYTES_PER_SHAPE_COLUMN = 12 * 1024;

/**
 * The load's cap raised, when its shape tables' columns need more than it
 * (LOAD_BYTES_PER_SHAPE_COLUMN each, over COMMIT_FLOOR_BASE_BYTES for the
 * typed tables and DuckDB's own state); null when the cap suffices. As with
 * the COMMIT's floor, losing the trace is worse than passing 350 MB.
 */
export function withLoadFloor(limit: string, shapeColumns: number): string | null {
  const floor = COMMIT_FLOOR_BASE_BYTES + shapeColumns * LOAD_BYTES_PER_SHAPE_COLUMN;
  const bytes = duckDbSizeBytes(limit);
  if (bytes === null || bytes >= floor) return null;
  return `${Math.ceil(floor / 1048576)}MB`;
}

/**
 * The load's cap for a second build after the first ran out of DuckDB memory
 * (ingest_file.ts retryingLoadCap). withLoadFloor's per-column figure comes
 * from two files, but a table pins more as it holds more rows: tracefs text
 * of 150 kinds x 12 fields x 6,700 events (2,850 shape-table columns; floor
 * 42MB) failed at 44MB and loaded at 50MB with 64 KiB blocks, and needed
 * 50-53MB with 256 KiB blocks; 400 kinds x 4 fields x 2,500 events (4,400
 * columns; floor 60MB) loads at 44MB. Raising the per-column figure to cover
 * the first would raise every `-e all` recording's cap (+7-11 MB peak at
 * 50MB, two pairs); the second build costs only the traces that need it.
 * 96MB: over twice the store's cap; the 3M-event version of the first file
 * (20,000 events a kind) loads at 64MB.
 */
export const LOAD_RETRY_MEMORY_LIMIT = '96MB';

/**
 * Whether a build failed because its load could not get DuckDB memory (the
 * case a higher load cap mends): the store worker's errors, or an append on
 * the ingest's own thread. Derive's have their own cap and are not retried.
 */
export function isLoadOutOfMemory(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return (
    /could not allocate block of size/.test(message) &&
    (message.startsWith('store worker:') || /Failed to append/.test(message))
  );
}

/**
 * What derive's queries allocate outside DuckDB's pool (hash tables' and
 * sorts' scratch, the result chunks) over its cap, with a margin: on the
 * 2.2M-event writeback_flood.x128.v7 (bench/memory_check_block.ts), derive
 * from ~186 MB resident with 32 MB of kept pages peaked at 354-360 MB at
 * 128MB, 348-356 at 112MB, 322-330 at 100MB (issue-29cc note).
 */
export const DERIVE_OUTSIDE_POOL_BYTES = 32 * 1048576;

/** The least derive gets, however much the process holds: a 64MB cap cost the store's COMMIT 2-5% CPU (STORE_MEMORY_LIMIT), derive's sorts would spill more below. */
export const DERIVE_MEMORY_MIN_BYTES = 64 * 1048576;

/**
 * DuckDB's cap for derive, from what the process holds when it starts
 * (`residentBytes`): derive's cap (`deriveLimit`, INGEST_MEMORY_LIMIT or
 * LARGE_INGEST_MEMORY_LIMIT) unless that plus the resident bytes, the freed
 * pages kept through derive (`keptPagesMaxBytes`) and
 * DERIVE_OUTSIDE_POOL_BYTES would pass INGEST_PEAK_TARGET_BYTES; never below
 * DERIVE_MEMORY_MIN_BYTES. Why: once the COMMIT's cap follows the resident
 * bytes (commitMemoryLimit), derive at 128MB was the next peak of the
 * block-heavy writeback_flood.x128.v7 (354-360 MB). With both caps,
 * alternating A (main) / B, CLI `/usr/bin/time -v`, 2 pairs, load 3.2-5.0
 * (issue-29cc note): writeback_flood.x128.v7 362-368 -> 319-341 MB (derive
 * 96-102MB), user+sys 13.7-14.9 -> 12.2-13.8 s; block_2m5.v7 366-369 ->
 * 329-330 MB (derive 88-91MB); -e all 512 -> 513 MB, its v6 493-495 ->
 * 493-499 (derive 64MB, no error; their peak is decoding's); sched_wq.v7
 * 281 -> 283-287, many_systems.v7 319 -> 308-315, kmem.v7 265-273 ->
 * 264-271 MB (derive 99-111MB), CPU within the noise (sched_wq 5.5-6.0 ->
 * 5.6-6.2 s, many_systems 5.0-6.9 -> 5.5-6.1, kmem 4.0-4.8 -> 3.2-5.0).
 * A fresh server's upload (VmHWM once the job is done, 2 pairs):
 * block_2m5.v7 373-380 -> 349-364 MB, writeback_flood.x128.v7 364-393 ->
 * 357-358: there the end of decoding (hwm 330-355) and the first view's
 * detectors (+10-25 MB) are the peak, not the COMMIT nor derive.
 */
export function deriveMemoryLimit(residentBytes: number, deriveLimit: string, keptPagesMaxBytes: number): string {
  if (process.env.STALLSCOPE_INGEST_MEMORY) return deriveLimit;
  const most = duckDbSizeBytes(deriveLimit);
  if (most === null) return deriveLimit;
  const room = INGEST_PEAK_TARGET_BYTES - residentBytes - keptPagesMaxBytes - DERIVE_OUTSIDE_POOL_BYTES;
  if (room >= most) return deriveLimit;
  return `${Math.floor(Math.max(DERIVE_MEMORY_MIN_BYTES, room) / 1048576)}MB`;
}

/** Bytes of a DuckDB size written as this module writes them ('40MB', '1GB'; KiB-based as DuckDB's 'MiB'); null for any other form. */
export function duckDbSizeBytes(size: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*(KB|MB|GB|KiB|MiB|GiB)$/i.exec(size.trim());
  if (!m) return null;
  const unit = m[2]!.toUpperCase();
  const scale = unit.startsWith('K') ? 1024 : unit.startsWith('M') ? 1048576 : 1073741824;
  return Number(m[1]) * scale;
}

/**
 * The store's cap for a load that would otherwise pass 350 MB with 40MB:
 *  - a process that already holds more than a fresh one: a server that has
 *    opened traces keeps ~240-250 MB resident after its first view (code
 *    pages, V8 heaps, glibc's retained arenas: issue-29mz note) against
 *    ~120 MB fresh, and its next 3.2M-event upload peaked at 351-360 MB
 *    with 40MB, 335-346 with 24MB (3 alternating pairs), upload CPU within
 *    ~5% (noisy);
 *  - a large file (LARGE_LOAD_EVENTS), whose peak is the end of decoding:
 *    many_systems.x10 (2 alternating pairs each, KiB/1000) report text
 *    342.7-342.8 with 40MB (344-353 in other runs) -> 333.5-336.0, CPU +5%;
 *    tracefs text 340.8-343.6 -> 330.4-333.8 and v7 318.9-321.3 ->
 *    307.3-308.3, CPU even.
 * Not for every load: on a fresh process 24MB cost 3-13% CPU on the
 * 1M-event files (helper 29mz) for peaks already under the bound (271-311 MB).
 */
export const STORE_MEMORY_LIMIT_TIGHT = '24MB';

/** Resident bytes past which a process counts as holding more than a fresh one (fresh server ~120-140 MB, CLI ~70). */
export const RESIDENT_BEFORE_LOAD_THRESHOLD = 180 * 1024 * 1024;

/** The store thread's cap for a load of about `estimatedEvents` that starts with `residentBytes` already resident (process.memoryUsage.rss()). */
export function storeMemoryLimit(residentBytes: number, estimatedEvents: number): string {
  if (process.env.STALLSCOPE_STORE_MEMORY) return process.env.STALLSCOPE_STORE_MEMORY;
  const tight = residentBytes > RESIDENT_BEFORE_LOAD_THRESHOLD || estimatedEvents >= LARGE_LOAD_EVENTS;
  return tight ? STORE_MEMORY_LIMIT_TIGHT : STORE_MEMORY_LIMIT;
}

/**
 * The young generation (new objects) of each ingest worker's V8 heap, MB.
 * V8 sizes it by the machine's memory (up to 16 MB semi-spaces, ~48 MB of
 * young generation per isolate); the workers allocate short-lived objects
 * only (rows of one batch or chunk), so a small one is collected more often
 * for the same work.
 */
export const WORKER_YOUNG_GENERATION_MB = 4;

/**
 * A full garbage collection of this thread's V8 heap, at the points where an
 * ingest thread's work ends while memory is at its peak: a worker whose job
 * just ended (job_loop.ts; it then sits idle in the pool, and an idle thread
 * allocates nothing, so V8 would never collect it), and the main thread once
 * decoding is done, while the store worker commits (the peak of the whole
 * ingest). What it frees is garbage V8 would otherwise keep until a later
 * allocation triggered a collection: the Buffers each thread allocated and
 * dropped (zstd's output, read windows, rows of finished batches), which V8
 * collects only after ~64 MB more external allocation, and the heap's own
 * garbage. Measured on many_systems.v7 (issue-29m note, session 3).
 *
 * V8 exposes `gc` only with --expose-gc; setting that flag at run time makes
 * it available to contexts created afterwards (the flag only adds the `gc`
 * function to a new context), so one is made here. If anything fails, this
 * does nothing: a collection is an optimisation, never needed for
 * correctness.
 */
export function collectGarbage(): void {
  if (DISABLED) return;
  collector ??= makeCollector();
  collector();
}

let collector: (() => void) | undefined;

/** STALLSCOPE_NO_COLLECT=1 turns collectGarbage off (to measure what it gains and costs). */
const DISABLED = Boolean(process.env.STALLSCOPE_NO_COLLECT);

/**
 * The main thread's collections while it decodes (ingest_file.ts): the first
 * after COLLECT_FIRST_AT_EVENTS events, then one per COLLECT_EVERY_EVENTS.
 * Why: on a 10M-event trace the main thread's heap grows past its young
 * generation's maximum (22 -> 51 MB) and its garbage ArrayBuffers reach
 * ~40 MB before V8 collects them on its own, which put 30-40 MB on the
 * decoding plateau (many_systems.x10.v7: 340-379 MB without, 313-349 MB with
 * one collection per 1M events). The longer the decode, the more garbage V8
 * lets pile up between its own collections (heap 34 MB at the end of a
 * 1M-event decode, 53 MB at 10M), and one collection per 1M events still
 * left ~20 MB of it at the peak: many_systems.x10.v7 378-386 MB with one per
 * 1M, 365-368 with one per 250k (issue-29m note, session 4). A collection
 * costs 20-50 ms of CPU with ~15 MB live. 1M-event files get none before the
 * one at the store's finish, as before (the first comes at 1M): their peak
 * moved by 2-5 MB at 250k for 1-2% more CPU.
 * $STALLSCOPE_COLLECT_EVERY_EVENTS overrides the interval (1000000: the
 * previous schedule).
 */
export const COLLECT_FIRST_AT_EVENTS = 1_000_000;
export const COLLECT_EVERY_EVENTS = Number(process.env.STALLSCOPE_COLLECT_EVERY_EVENTS) || 250_000;

function makeCollector(): () => void {
  try {
    const existing = (globalThis as { gc?: unknown }).gc;
    if (typeof existing === 'function') return existing as () => void;
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    if (typeof gc === 'function') return gc as () => void;
  } catch {
    // no collector: fall through
  }
  return () => undefined;
}

/**
 * How far (MB) the field worker's V8 heap may grow past what its last
 * collection left before it collects again (heapBound). Why: its young
 * generation is small (WORKER_YOUNG_GENERATION_MB), so the objects of a
 * batch that outlive two scavenges are promoted, and V8 lets the old
 * generation grow to several times its live size before a full collection
 * of its own. On compile_syscalls.v7 (3.2M events, 78% sys_enter/sys_exit)
 * the field worker's heap grew to 85-93 MB with ~21 MB live, the largest
 * part of the ingest's 384-405 MB peak (sched_wq.v7's stays ~16 MB). With
 * 16 MB it stays at ~41 MB: 6 collections of ~21 MB live, 17 ms wall and
 * ~7 ms of this thread's CPU each, and the peak falls to 343-359 MB
 * (issue-29r note); 8 MB made 17 collections for ~10 MB less, 24 MB ~359 MB.
 * The files that never reach the first bound (2 x this) are unchanged.
 * $STALLSCOPE_WORKER_HEAP_SLACK_MB overrides; 0 turns the check off.
 */
export const WORKER_HEAP_SLACK_MB = Number(process.env.STALLSCOPE_WORKER_HEAP_SLACK_MB ?? 16);

/**
 * Returns a check to call between units of a thread's work (the field
 * worker: after each batch): a full collection once the heap in use has grown
 * WORKER_HEAP_SLACK_MB past what the last one left (the first at twice that).
 * getHeapStatistics costs microseconds, so it can run at every batch.
 */
export function heapBound(slackMb = WORKER_HEAP_SLACK_MB): () => void {
  if (!(slackMb > 0)) return () => undefined;
  const slack = slackMb * 1048576;
  let limit = 2 * slack;
  return () => {
    if (getHeapStatistics().used_heap_size < limit) return;
    collectGarbage();
    limit = getHeapStatistics().used_heap_size + slack;
  };
}
