-- stallscope trace model
-- =====================
--
-- Read this before writing SQL against a trace. One DuckDB file holds one
-- trace. Table and column names follow Perfetto's trace processor
-- (https://perfetto.dev/docs/analysis/sql-tables) where Perfetto has the
-- concept: `thread`, `process`, `cpu`, `ftrace_event`, `args`, `sched_slice`,
-- `thread_state`, `counter_track`, `counter`, `slice`, `flow`. Queries written
-- for those tables in PerfettoSQL mostly port unchanged.
--
-- Conventions
--   * ts, dur: BIGINT nanoseconds. ts is the trace clock (boot-time ns for
--     trace-cmd's default `local` clock), exactly as the trace gives it.
--   * id: ftrace_event.id, the event's position in the file (trace.dat: merged
--     across CPUs by timestamp, the order `trace-cmd report` prints). Every
--     typed event table's `id` is the same event's ftrace_event.id.
--   * utid / upid: stallscope's own thread / process keys (JOINID(thread.utid)),
--     as in Perfetto; tid / pid are the kernel's numbers. utid 0 is the idle
--     task (`swapper/N`, tid 0).
--   * Typed event tables are named after the event and have one column per
--     event field, named as the kernel's `format` file names it (6.x names;
--     older kernels' names are mapped, see server/model/typed_tables.ts).
--     A field the producing kernel does not have is NULL (e.g. nr_dirty on
--     4.x mm_vmscan_lru_shrink_inactive).
--   * Tables whose names start with `_` are the writer's internals.
--
-- Generated files: none. This file is executed as-is to create a trace
-- database (server/model/model_writer.ts), so it is always the truth.

-- ---------------------------------------------------------------------------
-- Trace-level facts
-- ---------------------------------------------------------------------------

-- One row per fact the ingest learned about the trace (key/value).
-- Keys: model_version (server/model/model_version.ts: the decoding this
-- model has), format, format_version, source_file, source_bytes, content_sha256,
-- cpus, first_ts, last_ts, events_total, lost_events, unparsed_lines,
-- skipped_inputs, ingest_started_at, ingest_finished_at, complete ('true' only
-- once every table is written), plus whatever the file states (kernel, clock...)
-- and how it was read: text_layout ('latency': trace-cmd report -l;
-- 'kernel_latency': the kernel's latency format, whose `timestamps` are
-- microseconds since the trace began; 'kernel_latency_verbose': with
-- options/verbose, trace clock times; 'fields': the kernel's options/fields),
-- tsc2nsec (trace.dat TSC cycles converted to ns, as trace-cmd does).
CREATE TABLE trace_info (
  key VARCHAR PRIMARY KEY,  -- fact name
  value VARCHAR             -- fact value, as text
);

-- One row per CPU that appears in the trace.
CREATE TABLE cpu (
  ucpu INTEGER,             -- unique cpu key (equals cpu here: one machine per trace)
  cpu INTEGER,              -- kernel CPU number
  event_count BIGINT,       -- events recorded on this CPU
  first_ts BIGINT,          -- first event's ts on this CPU
  last_ts BIGINT            -- last event's ts on this CPU
);

-- Lost events the kernel or recorder reported (ring buffer overruns).
CREATE TABLE lost_events (
  cpu INTEGER,              -- CPU whose buffer lost events
  ts BIGINT,                -- ts of the next event after the loss, or NULL
  count BIGINT,             -- events lost, NULL when the source does not say how many
  source_where BIGINT       -- line number (text) or byte offset (trace.dat) of the notice
);

-- Input that could not be decoded and was skipped. Nothing is dropped silently.
CREATE TABLE ingest_problem (
  source_where BIGINT,      -- 1-based line number or byte offset
  unit VARCHAR,             -- 'line' or 'offset'
  reason VARCHAR,           -- what was wrong
  excerpt VARCHAR           -- the start of the offending input
);

-- ---------------------------------------------------------------------------
-- Threads and processes
-- ---------------------------------------------------------------------------

-- One row per thread seen (as running task, or named by an event).
CREATE TABLE thread (
  utid INTEGER PRIMARY KEY, -- thread key
  tid INTEGER,              -- kernel thread id
  name VARCHAR,             -- last name seen (see thread_name_history)
  upid INTEGER,             -- JOINID(process.upid), NULL when the tgid is unknown
  start_ts BIGINT,          -- fork ts if the trace saw it, else NULL
  end_ts BIGINT,            -- exit ts if the trace saw it, else NULL
  is_main_thread BOOLEAN    -- tid = pid, when known
);

-- How a thread's name (comm) changed over time: one row per (thread, name) run.
CREATE TABLE thread_name_history (
  utid INTEGER,             -- JOINID(thread.utid)
  ts BIGINT,                -- first ts the name was seen
  name VARCHAR              -- comm
);

-- One row per process (thread group) whose pid the trace reveals
-- (record-tgid column, or saved tgids in trace.dat).
CREATE TABLE process (
  upid INTEGER PRIMARY KEY, -- process key
  pid INTEGER,              -- kernel tgid
  name VARCHAR              -- name of the main thread, if seen
);

-- ---------------------------------------------------------------------------
-- Every event
-- ---------------------------------------------------------------------------

-- Events that have no typed table (or whose text did not parse into fields).
-- Read events through the `ftrace_event` view (bottom of this file), which
-- adds every typed event: each event is stored exactly once.
CREATE TABLE _ftrace_event (
  id BIGINT,                -- position in the file (see conventions)
  ts BIGINT,                -- event timestamp, ns
  cpu INTEGER,              -- CPU the event was recorded on
  utid INTEGER,             -- JOINID(thread.utid): the running thread (common_pid)
  name_id INTEGER,          -- JOINID(_event_name.name_id)
  common_flags INTEGER,     -- TRACE_FLAG_* bits: 0x1 irqs-off, 0x4 need-resched, 0x8 hardirq, 0x10 softirq, 0x20 preempt-resched, 0x40 nmi, 0x80 bh-off; NULL when not recorded
  preempt_count INTEGER,    -- preempt depth, NULL when not recorded
  arg_set_id BIGINT,        -- JOINID(args.arg_set_id) for events without a typed table, else NULL
  raw VARCHAR,              -- printed argument text (text sources), kept only where the fields do not print it back: text that did not parse, or an event without a typed table whose fields an excerpt (report_line.ts formatArgs) would print otherwise; else NULL (kept_raw.ts)
  source_where BIGINT       -- 1-based line (text) or byte offset (trace.dat) in the decoded input
);

-- Event names: name_id -> name, system.
CREATE TABLE _event_name (
  name_id INTEGER PRIMARY KEY,
  name VARCHAR,             -- event name, e.g. sched_switch
  system VARCHAR            -- event system, e.g. sched (NULL when the source does not say)
);

-- The tables that store events, each with its own branch of the
-- ftrace_event and args views (below): for a reader that walks every event
-- in id order by id ranges (the Perfetto export). Through the views, every
-- id range scans every table's row groups: a small table's one row group
-- spans all ids.
CREATE TABLE _event_source (
  source VARCHAR,           -- the table: _ftrace_event, _stage_<typed table>, _shape_<n>
  events_sql VARCHAR,       -- SELECT of its events with the columns of _ftrace_event (name_id, not name)
  args_sql VARCHAR,         -- SELECT of its events' args rows with the args view's columns; NULL for a typed table
  fields_view VARCHAR       -- the typed table's view (its events' fields by id); NULL for the others
);

-- Interned strings: typed tables and args store string ids, not strings,
-- so a comm, a flags string or a field name is stored once, not per event.
-- Two threads intern args strings during an ingest, each in its own range
-- (sids from 2^30 are the field worker's), so a string may have two sids:
-- join on sid, as the `args` view does, rather than on str.
CREATE TABLE _string (
  sid INTEGER,              -- string id
  str VARCHAR               -- the string
);

-- Events without a typed table are stored one row per event in a table of
-- their shape, created while loading (server/model/untyped_rows.ts):
--   _shape_<n> (id, ts, cpu, utid, f STRUCT(common, source_where, raw, v0, v1, ...))
-- one per event name and field list, with a column per field: an integer,
-- an integer printed as 0x-hex (read back as that text), text as an id into
-- that column's dictionary, or text itself (a field whose values rarely
-- repeat); `raw` for text inputs only (NULL where the fields print it back). `ftrace_event` and `args` read them
-- as they read _ftrace_event and _args. Query those views, not the shapes.
--
-- The general storage behind `args` (see below), for the fields of events
-- that fit no shape (more than 64 fields; a writer past 512 shapes): one row
-- per field. Text is interned in _string until its dictionary holds 2^18
-- strings; after that, strings not in it are stored in the row (key_str,
-- str), so that values that rarely repeat cannot make an ingest's memory
-- grow with the file.
CREATE TABLE _args (
  arg_set_id BIGINT,        -- the event's id
  arg_index INTEGER,        -- position of the field in the event
  key_sid INTEGER,          -- JOINID(_string.sid): field name (NULL: in key_str)
  int_value BIGINT,         -- integer value, NULL for text
  string_sid INTEGER,       -- JOINID(_string.sid): text value (NULL for integers, or when in str)
  key_str VARCHAR,          -- field name, when not interned
  str VARCHAR               -- text value, when not interned
);

-- Fields of events that have no typed table, one row per field, as in
-- Perfetto's `args`. Events with a typed table keep their fields there.
-- The writer replaces this view by one that also reads every shape table
-- (server/model/model_store.ts createShapeViews): the same columns, a
-- branch per shape and field.
-- Each field reads as its event's print format shows it, the same from
-- trace.dat, trace-cmd report and the kernel's text of one recording:
--   numbers printed in decimal (%d, %u, %lu): int_value;
--   %pS call sites: string_value 'function+0xoffset' (as trace-cmd prints,
--     without the kernel's /size), %ps: 'function';
--   hex printed with 0x (pfn=0x%lx), pointers: string_value '0x158e8a';
--     a NULL pointer '0x0' (trace-cmd prints `(nil)`);
--   flags, enums and conditionals: the words (accounted 'false');
--   a number printed with its name beside it (vec=7 [action=SCHED]): 7.
--   Hex printed without 0x (%lx) is a number in trace.dat but reads as a
--   decimal or as text from the text formats, which cannot tell.
-- ftrace's own events read alike from text and trace.dat:
--   print (trace_marker writes): ip ('tracing_mark_write'), buf (the message,
--     without the newline the kernel ends it with);
--   bprint, bputs (trace_printk, trace_puts): ip (the calling function), buf
--     (the message, its format applied to the recorded arguments; trace.dat
--     and trace-cmd report text, not the kernel's own text, which prints no
--     event name for them);
--   kernel_stack, user_stack: caller (the frames, innermost first, one per
--     line, as symbols; 0x... where none resolves), size (frame count).
--   e.g. SELECT e.ts, a.string_value FROM ftrace_event e JOIN args a USING (arg_set_id)
--        WHERE e.name = 'print' AND a.key = 'buf';
--   sys_enter_NAME: each argument by its name, as an integer (the kernel's
--     text prints `sys_NAME(arg: 0x..)`); sys_exit_NAME: ret, signed (-2 is
--     -ENOENT). trace.dat adds __syscall_nr, which the text does not print.
CREATE VIEW args AS
SELECT
  a.arg_set_id,             -- JOINID(ftrace_event.arg_set_id); equals the event's id
  a.arg_index,              -- position of the field in the event (not in Perfetto)
  coalesce(k.str, a.key_str) AS flat_key,  -- field name
  coalesce(k.str, a.key_str) AS key,       -- field name (no nesting in ftrace)
  a.int_value,              -- integer value, when the field is an integer
  coalesce(v.str, a.str) AS string_value,  -- text value otherwise (as printed)
  CAST(NULL AS DOUBLE) AS real_value,  -- unused for ftrace, kept for Perfetto compatibility
  CASE WHEN a.string_sid IS NULL AND a.str IS NULL THEN 'int' ELSE 'string' END AS value_type
FROM _args a
LEFT JOIN _string k ON k.sid = a.key_sid
LEFT JOIN _string v ON v.sid = a.string_sid;

-- ---------------------------------------------------------------------------
-- Typed event tables (memory reclaim: include/trace/events/vmscan.h)
-- Common columns: id (= ftrace_event.id), ts, cpu, utid (the running thread).
--
-- How they are stored: the writer replaces each CREATE TABLE below by a VIEW
-- with exactly these columns over `_stage_<table>`, where each VARCHAR
-- column is an id into that column's own dictionary (a comm or flags string
-- is stored once, not per event), resolved in the view by a list lookup
-- that costs nothing when the column is not selected, and the event's
-- common_flags and preempt_count (packed in one `common` column) and
-- source_where are kept for `ftrace_event` (its name comes from the `event`
-- column, or is the table's one event). In `_stage_<table>`, id, ts, cpu
-- and utid are columns of their own and all the others are fields of one
-- STRUCT column `f` (DuckDB keeps no distinct-count statistics for STRUCT
-- fields, which makes loading cheaper; see server/model/model_store.ts).
-- Query the views.
-- ---------------------------------------------------------------------------

-- kswapd going to sleep on a node.
CREATE TABLE mm_vmscan_kswapd_sleep (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  nid INTEGER               -- NUMA node
);

-- kswapd woken up (runs in kswapd's context).
CREATE TABLE mm_vmscan_kswapd_wake (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  nid INTEGER,              -- NUMA node
  zid INTEGER,              -- zone index (NULL on kernels that do not print it)
  "order" INTEGER           -- allocation order that triggered the wake
);

-- An allocating task waking kswapd (runs in the allocator's context).
CREATE TABLE mm_vmscan_wakeup_kswapd (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  nid INTEGER, zid INTEGER, "order" INTEGER,
  gfp_flags VARCHAR         -- symbolic GFP flags, e.g. GFP_KERNEL|__GFP_ZERO
);

-- Start of direct reclaim in an allocating task. Also receives
-- mm_vmscan_memcg_reclaim_begin and mm_vmscan_memcg_softlimit_reclaim_begin
-- and mm_vmscan_node_reclaim_begin (see `event`).
CREATE TABLE mm_vmscan_direct_reclaim_begin (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  event VARCHAR,            -- the event's own name
  "order" INTEGER,          -- allocation order
  gfp_flags VARCHAR,        -- symbolic GFP flags
  nid INTEGER               -- node (node_reclaim only)
);

-- End of direct reclaim; pairs with the begin event of the same task. Also
-- receives the memcg / softlimit / node variants (see `event`).
CREATE TABLE mm_vmscan_direct_reclaim_end (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  event VARCHAR,            -- the event's own name
  nr_reclaimed BIGINT       -- pages reclaimed by this reclaim pass
);

-- One shrink_inactive_list() pass: the pages scanned and what became of them.
CREATE TABLE mm_vmscan_lru_shrink_inactive (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  nid INTEGER,
  zid INTEGER,              -- zone (4.x only)
  nr_scanned BIGINT, nr_reclaimed BIGINT,
  nr_dirty BIGINT, nr_writeback BIGINT, nr_congested BIGINT, nr_immediate BIGINT,  -- 4.16+
  nr_activate_anon BIGINT, nr_activate_file BIGINT, nr_ref_keep BIGINT, nr_unmap_fail BIGINT, -- 4.16+
  priority INTEGER,         -- scan priority: 12 (DEF_PRIORITY) down to 0; each step scans twice as much
  reclaim_flags VARCHAR     -- e.g. RECLAIM_WB_FILE|RECLAIM_WB_ASYNC (printed as flags=)
);

-- One shrink_active_list() pass.
CREATE TABLE mm_vmscan_lru_shrink_active (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  nid INTEGER,
  nr_taken BIGINT, nr_active BIGINT, nr_deactivated BIGINT, nr_referenced BIGINT,
  priority INTEGER,
  reclaim_flags VARCHAR
);

-- Pages isolated from an LRU list for scanning.
CREATE TABLE mm_vmscan_lru_isolate (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  highest_zoneidx INTEGER,  -- classzone_idx / classzone on older kernels
  "order" INTEGER,
  nr_requested BIGINT, nr_scanned BIGINT, nr_skipped BIGINT, nr_taken BIGINT,
  isolate_mode INTEGER,
  lru VARCHAR               -- e.g. inactive_file (NULL on kernels printing `file=`)
);

-- A slab shrinker call starting (do_shrink_slab()).
CREATE TABLE mm_shrink_slab_start (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  shr VARCHAR,              -- the struct shrinker pointer, 0x-hex (hashed in tracefs text)
  shrink VARCHAR,           -- the shrinker's scan callback symbol, e.g. super_cache_scan
  nid INTEGER,
  nr_objects_to_shrink BIGINT, -- deferred work carried in ("objects to shrink")
  gfp_flags VARCHAR,
  pgs_scanned BIGINT,       -- 4.x only
  lru_pgs BIGINT,           -- 4.x only
  cache_items BIGINT,       -- objects in the cache ("cache items")
  delta BIGINT,             -- new work computed for this call
  total_scan BIGINT,        -- objects this call will try to scan
  priority INTEGER          -- reclaim priority (5.x+)
);

-- A slab shrinker call ending.
CREATE TABLE mm_shrink_slab_end (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  shr VARCHAR, shrink VARCHAR, nid INTEGER,
  unused_scan BIGINT,       -- "unused scan count": deferred work before
  new_scan BIGINT,          -- "new scan count": deferred work left for next time
  total_scan BIGINT,
  retval BIGINT             -- "last shrinker return val": objects freed
);

-- Reclaim writing a page out (pageout()). Receives both mm_vmscan_writepage
-- (kernels up to 6.1) and mm_vmscan_write_folio (6.2+); see `event`.
CREATE TABLE mm_vmscan_write_folio (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  event VARCHAR,            -- mm_vmscan_writepage or mm_vmscan_write_folio
  pfn BIGINT,               -- page frame number
  reclaim_flags VARCHAR     -- RECLAIM_WB_ANON / RECLAIM_WB_FILE and RECLAIM_WB_ASYNC / RECLAIM_WB_SYNC
);

-- Reclaim throttling a task (5.16+).
CREATE TABLE mm_vmscan_throttled (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  nid INTEGER,
  usec_timeout BIGINT,
  usec_delayed BIGINT,      -- printed by the kernel as `usect_delayed=`
  reason VARCHAR            -- e.g. VMSCAN_THROTTLE_WRITEBACK
);

-- ---------------------------------------------------------------------------
-- Typed event tables (scheduler: include/trace/events/sched.h)
-- ---------------------------------------------------------------------------

CREATE TABLE sched_switch (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  prev_comm VARCHAR, prev_pid INTEGER, prev_prio INTEGER,
  prev_state VARCHAR,       -- as printed: R, R+, S, D, T, t, X, Z, P, I, combinations with |
  next_comm VARCHAR, next_pid INTEGER, next_prio INTEGER
);

-- sched_waking: a wakeup being requested (runs in the waker's context).
CREATE TABLE sched_waking (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  comm VARCHAR, pid INTEGER, prio INTEGER,
  success INTEGER,          -- old kernels only
  target_cpu INTEGER
);

-- sched_wakeup: the woken task made runnable.
CREATE TABLE sched_wakeup (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  comm VARCHAR, pid INTEGER, prio INTEGER, success INTEGER, target_cpu INTEGER
);

-- sched_wakeup_new: a new task made runnable for the first time.
CREATE TABLE sched_wakeup_new (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  comm VARCHAR, pid INTEGER, prio INTEGER, success INTEGER, target_cpu INTEGER
);

-- A task moved from one CPU's runqueue to another's (runs in the mover's context).
CREATE TABLE sched_migrate_task (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  comm VARCHAR, pid INTEGER, prio INTEGER,
  orig_cpu INTEGER, dest_cpu INTEGER
);

CREATE TABLE sched_process_fork (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  parent_comm VARCHAR, parent_pid INTEGER, child_comm VARCHAR, child_pid INTEGER
);

CREATE TABLE sched_process_exit (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  comm VARCHAR, pid INTEGER, prio INTEGER
);

-- CPU time a task ran since its last sched_stat_runtime (CFS accounting).
-- Frequent in `-e sched` recordings: typed so it costs one row, not one per field.
CREATE TABLE sched_stat_runtime (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  comm VARCHAR, pid INTEGER,
  runtime BIGINT,           -- ns run since the previous update
  vruntime BIGINT           -- CFS virtual runtime (older kernels only)
);

-- A task's exec (new program image).
CREATE TABLE sched_process_exec (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  filename VARCHAR, pid INTEGER, old_pid INTEGER
);

-- A task waiting for children / being freed. Receives sched_process_wait and
-- sched_process_free (see `event`).
CREATE TABLE sched_process_wait (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  event VARCHAR,
  comm VARCHAR, pid INTEGER, prio INTEGER
);

-- ---------------------------------------------------------------------------
-- Typed event tables (workqueue: include/trace/events/workqueue.h)
-- ---------------------------------------------------------------------------

CREATE TABLE workqueue_queue_work (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  work VARCHAR,             -- struct work_struct pointer, 0x-hex
  function VARCHAR,         -- work function symbol
  workqueue VARCHAR,        -- workqueue name (6.x) or pointer (older)
  req_cpu INTEGER,          -- requested CPU (WORK_CPU_UNBOUND is printed as a large number)
  cpu_target INTEGER        -- the `cpu=` field: CPU the work was queued on
);

CREATE TABLE workqueue_activate_work (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  work VARCHAR, function VARCHAR
);

CREATE TABLE workqueue_execute_start (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  work VARCHAR, function VARCHAR
);

CREATE TABLE workqueue_execute_end (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  work VARCHAR, function VARCHAR
);

-- ---------------------------------------------------------------------------
-- Typed event tables (writeback: include/trace/events/writeback.h)
-- ---------------------------------------------------------------------------

-- A page/folio dirtied. Receives writeback_dirty_page and writeback_dirty_folio.
CREATE TABLE writeback_dirty_folio (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  event VARCHAR,
  bdi VARCHAR,              -- backing device, e.g. 7:0
  ino BIGINT, "index" BIGINT
);

-- Writeback work items (writeback_work_class): writeback_queue, _exec,
-- _start, _written, _wait. See `event`.
CREATE TABLE writeback_work (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  event VARCHAR,
  bdi VARCHAR,
  nr_pages BIGINT, sync_mode INTEGER, kupdate INTEGER, range_cyclic INTEGER, background INTEGER,
  reason VARCHAR,
  cgroup_ino BIGINT
);

-- Dirty throttling of a writer (balance_dirty_pages()).
CREATE TABLE balance_dirty_pages (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  bdi VARCHAR,
  "limit" BIGINT, setpoint BIGINT, dirty BIGINT,
  bdi_setpoint BIGINT, bdi_dirty BIGINT,
  dirty_ratelimit BIGINT, task_ratelimit BIGINT,
  dirtied BIGINT, dirtied_pause BIGINT,
  paused BIGINT, pause BIGINT, period BIGINT, think BIGINT,
  cgroup_ino BIGINT
);

-- Global dirty page accounting snapshot.
CREATE TABLE global_dirty_state (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  dirty BIGINT, writeback BIGINT,
  background_thresh BIGINT, dirty_thresh BIGINT, dirty_limit BIGINT,
  nr_dirtied BIGINT, nr_written BIGINT
);

-- One inode written back (writeback_single_inode / _start).
CREATE TABLE writeback_single_inode (
  id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER,
  event VARCHAR,
  bdi VARCHAR, ino BIGINT, state VARCHAR, dirtied_when BIGINT, age BIGINT,
  "index" BIGINT, to_write BIGINT, wrote BIGINT, cgroup_ino BIGINT
);

-- ---------------------------------------------------------------------------
-- Derived tables (filled by queries/model/derive.sql after decoding)
-- ---------------------------------------------------------------------------

-- One row per period a thread ran on a CPU, from consecutive sched_switch
-- events on that CPU (Perfetto: sched_slice / sched).
CREATE TABLE sched_slice (
  id BIGINT,                -- the sched_switch id that started the slice
  ts BIGINT,                -- switch-in
  dur BIGINT,               -- until the next switch on that CPU (or end of trace: -1 when open)
  cpu INTEGER,
  utid INTEGER,             -- the thread that ran
  end_state VARCHAR,        -- prev_state at switch-out (NULL if still running at end of trace)
  priority INTEGER          -- next_prio at switch-in
);

-- One row per period a thread spent in one scheduling state (Perfetto: thread_state).
-- Running (state 'Running') comes from sched_slice; the time between
-- switch-out and the next wakeup carries the switch-out state (S, D, ...);
-- from wakeup (sched_waking, else sched_wakeup) to switch-in it is 'R' (runnable).
CREATE TABLE thread_state (
  id BIGINT,                -- row key: 3 * (id of the event that started the state) + 0 (switch-out), 1 (wakeup), 2 (switch-in)
  ts BIGINT,
  dur BIGINT,               -- -1 when still open at end of trace
  cpu INTEGER,              -- CPU when running; target CPU when runnable; NULL when blocked
  utid INTEGER,
  state VARCHAR,            -- 'Running', 'R', 'R+', 'S', 'D', ... as the kernel prints them
  io_wait BOOLEAN,          -- NULL: not recorded
  blocked_function VARCHAR, -- NULL: not recorded
  waker_utid INTEGER,       -- the thread that woke it (for 'R' rows started by a wakeup)
  waker_id BIGINT           -- the sched_waking / sched_wakeup event id
);

-- Block requests, issue paired with completion (queries/model/derive_block.sql
-- says how; the detectors read them through ss_block_requests()).
CREATE TABLE block_request (
  issue_id BIGINT,          -- JOINID(ftrace_event.id): block_rq_issue
  complete_id BIGINT,       -- JOINID(ftrace_event.id): the block_rq_complete that ended it; NULL: in flight at the end
  insert_id BIGINT,         -- JOINID(ftrace_event.id): the block_rq_insert that queued it; NULL: not traced
  dev BIGINT,               -- dev_t: major << 20 | minor
  sector BIGINT, nr_sector BIGINT,
  bytes BIGINT,             -- issue's bytes (0 for fs requests on kernels before 3.x)
  rwbs VARCHAR,             -- as the issue prints it: 'WS', 'RA', 'FWS'
  op VARCHAR,               -- 'R', 'W', 'D', 'E', 'F' (flush), 'N'
  is_sync BOOLEAN, is_meta BOOLEAN, is_readahead BOOLEAN,
  utid INTEGER,             -- thread running at issue (the flusher for writeback, the reader for a read)
  comm VARCHAR,             -- the issue's comm field
  cpu INTEGER,              -- CPU of the issue
  insert_ts BIGINT, issue_ts BIGINT, complete_ts BIGINT,
  error INTEGER             -- the completion's error (0: none)
);

-- Counter tracks (Perfetto: counter_track): one row per time series.
CREATE TABLE counter_track (
  id INTEGER PRIMARY KEY,
  name VARCHAR,             -- e.g. 'kswapd priority', 'lru nr_scanned', 'slab cache_items'
  unit VARCHAR,
  utid INTEGER,             -- thread the series belongs to, if any
  cpu INTEGER,              -- CPU the series belongs to, if any
  description VARCHAR
);

-- A %pS-printed function symbol without its '+0x0/0x1b0' offset suffix
-- (text inputs print one; trace.dat symbols come bare). contains() first:
-- the regexp only runs on symbols that have a suffix (~5x cheaper per row).
CREATE MACRO symbol_name(s) AS
  CASE WHEN contains(s, '+0x') THEN regexp_replace(s, '\+0x[0-9a-fA-F]+(/0x[0-9a-fA-F]+)?$', '') ELSE s END;

-- Which event field feeds each counter track (queries/model/derive_slices.sql
-- fills it): `series` is the track's name, `utid` the thread (per-thread
-- series), `sym` the shrinker symbol ('slab cache_items').
CREATE TABLE counter_source (
  track_id INTEGER,         -- JOINID(counter_track.id)
  series VARCHAR,
  utid INTEGER,
  sym VARCHAR
);

-- Counter values (Perfetto: counter), one row per value:
--   id BIGINT (the event the value comes from), ts BIGINT,
--   track_id INTEGER (JOINID(counter_track.id)), value DOUBLE.
-- A view over the events that carry the values: copying them (7.4M rows on
-- a 10M-event reclaim trace) was 0.7 s of every ingest, and queries of the
-- view measured as fast as of the copy (timeline summary 0.58-0.63 s vs
-- 0.48-0.62 s on that trace).
CREATE VIEW counter AS
SELECT l.id, l.ts, c.track_id, l.priority::DOUBLE AS value
FROM mm_vmscan_lru_shrink_inactive l JOIN counter_source c ON c.series = 'kswapd priority' AND c.utid = l.utid
WHERE l.priority IS NOT NULL
UNION ALL
SELECT l.id, l.ts, c.track_id, l.nr_scanned::DOUBLE
FROM mm_vmscan_lru_shrink_inactive l JOIN counter_source c ON c.series = 'lru nr_scanned' AND c.utid = l.utid
WHERE l.nr_scanned IS NOT NULL
UNION ALL
SELECT l.id, l.ts, c.track_id, l.nr_reclaimed::DOUBLE
FROM mm_vmscan_lru_shrink_inactive l JOIN counter_source c ON c.series = 'lru nr_reclaimed' AND c.utid = l.utid
WHERE l.nr_reclaimed IS NOT NULL
UNION ALL
SELECT s.id, s.ts, c.track_id, s.cache_items::DOUBLE
FROM mm_shrink_slab_start s JOIN counter_source c ON c.series = 'slab cache_items' AND c.sym = coalesce(symbol_name(s.shrink), '?')
WHERE s.cache_items IS NOT NULL
UNION ALL
SELECT g.id, g.ts, c.track_id,
  (CASE c.series WHEN 'dirty pages' THEN g.dirty WHEN 'writeback pages' THEN g.writeback
                 WHEN 'dirty threshold' THEN g.dirty_thresh ELSE g.background_thresh END)::DOUBLE
FROM global_dirty_state g JOIN counter_source c ON c.series IN ('dirty pages', 'writeback pages', 'dirty threshold', 'background threshold')
UNION ALL
SELECT b.complete_id, b.complete_ts, c.track_id, (b.complete_ts - b.issue_ts) / 1e6
FROM block_request b JOIN counter_source c ON c.series = 'block latency' AND c.sym = CAST(b.dev AS VARCHAR) || ' ' || b.op
WHERE b.complete_ts IS NOT NULL;

-- Slices: time ranges on a thread (Perfetto: slice, with thread tracks).
-- Shrinker calls, direct/memcg reclaim, workqueue work items.
CREATE TABLE slice (
  id BIGINT,                -- row key: the begin event's id
  ts BIGINT,
  dur BIGINT,               -- -1 when the end event is missing
  utid INTEGER,             -- thread the slice ran on
  cpu INTEGER,              -- CPU of the begin event
  category VARCHAR,         -- 'shrinker', 'direct_reclaim', 'memcg_reclaim', 'workqueue', ...
  name VARCHAR,             -- e.g. the shrinker symbol or work function
  depth INTEGER,            -- nesting on the thread (0 = outermost)
  begin_id BIGINT,          -- JOINID(ftrace_event.id) of the begin event
  end_id BIGINT             -- JOINID(ftrace_event.id) of the end event, NULL if missing
);

-- Storage of the flows computed by queries/model/derive_slices.sql ('wakeup',
-- 'migration'); query the `flow` view below.
CREATE TABLE _flow (
  id BIGINT,
  slice_out BIGINT,
  slice_in BIGINT,
  kind VARCHAR
);

-- ---------------------------------------------------------------------------
-- Views
-- ---------------------------------------------------------------------------

-- ftrace_event: every event, as in Perfetto's `ftrace_event` (plus `raw` and
-- `source_where`). Created by the writer (server/model/model_writer.ts) as
--   SELECT id, ts, cpu, cpu AS ucpu, utid, name, system, common_flags,
--          preempt_count, arg_set_id, raw, source_where
--   FROM _ftrace_event UNION ALL <every _stage_<typed table>> UNION ALL <every _shape_<n>>
--   JOIN _event_name USING (name_id)
-- Columns: id BIGINT, ts BIGINT, cpu INTEGER, ucpu INTEGER, utid INTEGER,
-- name VARCHAR, system VARCHAR, common_flags INTEGER, preempt_count INTEGER,
-- arg_set_id BIGINT, raw VARCHAR, source_where BIGINT.

-- Perfetto's short name for sched_slice.
CREATE VIEW sched AS SELECT * FROM sched_slice;

-- Links between events (Perfetto: flow): waker -> wakee, migration source ->
-- destination (both stored in _flow), begin -> end (from the slices).
-- Columns: id BIGINT (unique: odd in _flow, twice the slice id for
-- begin_end), slice_out BIGINT (JOINID(ftrace_event.id) the arrow starts at),
-- slice_in BIGINT (JOINID(ftrace_event.id) the arrow ends at), kind VARCHAR
-- ('wakeup', 'migration', 'begin_end').
CREATE VIEW flow AS
SELECT id, slice_out, slice_in, kind FROM _flow
UNION ALL
SELECT 2 * id, begin_id, end_id, 'begin_end' FROM slice
WHERE end_id IS NOT NULL AND category IN ('shrinker', 'direct_reclaim', 'memcg_reclaim', 'node_reclaim');
