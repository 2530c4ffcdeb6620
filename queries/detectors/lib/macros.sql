-- stallscope detector library: small TEMP macros shared by the detector files
-- ===========================================================================
--
-- The detector runner (server/findings/run_detectors.ts) executes this file
-- on the connection before running any detector, so every detector, built-in
-- or user-supplied (`--queries DIR`), may call these macros. To run a
-- detector by hand in the duckdb shell: `.read queries/detectors/lib/macros.sql`,
-- then run the detector's SELECT with each `$param` replaced by a value
-- (its default is in the file's `@param` line).
--
-- All names start with `ss_` so they do not collide with DuckDB builtins.

-- Human duration from ns: '850 ns', '12.3 us', '412.5 ms', '2.35 s'.
-- ARG ns BIGINT  duration in ns. RETURNS VARCHAR ('?' for NULL).
CREATE OR REPLACE TEMP MACRO ss_fmt_dur(ns) AS
  CASE
    WHEN ns IS NULL THEN '?'
    WHEN abs(ns) < 1000 THEN CAST(ns AS VARCHAR) || ' ns'
    WHEN abs(ns) < 1000000 THEN printf('%.1f us', ns / 1e3)
    WHEN abs(ns) < 1000000000 THEN printf('%.1f ms', ns / 1e6)
    ELSE printf('%.2f s', ns / 1e9)
  END;

-- Human count: 37, 999, 12.3k, 1.2M, 3.4G.
-- ARG n BIGINT. RETURNS VARCHAR ('?' for NULL).
CREATE OR REPLACE TEMP MACRO ss_fmt_count(n) AS
  CASE
    WHEN n IS NULL THEN '?'
    WHEN abs(n) < 1000 THEN CAST(CAST(n AS BIGINT) AS VARCHAR)
    WHEN abs(n) < 1000000 THEN printf('%.1fk', n / 1e3)
    WHEN abs(n) < 1000000000 THEN printf('%.1fM', n / 1e6)
    ELSE printf('%.1fG', n / 1e9)
  END;

-- Percentage a of b, rounded to an integer: '3%'; 'n/a' when b is 0 or NULL.
CREATE OR REPLACE TEMP MACRO ss_fmt_pct(a, b) AS
  CASE WHEN b IS NULL OR b = 0 OR a IS NULL THEN 'n/a'
       ELSE printf('%.0f%%', 100.0 * a / b) END;

-- A task as titles name it: kswapd threads by name ('kswapd0'), any other
-- task as 'comm[tid]' ('dd[4242]'); '?' stands in for an unknown name or tid.
CREATE OR REPLACE TEMP MACRO ss_task(name, tid) AS
  CASE WHEN regexp_matches(coalesce(name, ''), '^kswapd[0-9]+')
       THEN name
       ELSE coalesce(name, '?') || '[' || coalesce(CAST(tid AS VARCHAR), '?') || ']' END;

-- True for kswapd threads (named kswapdN, or kswapdN:M on some kernels).
CREATE OR REPLACE TEMP MACRO ss_is_kswapd(name) AS
  regexp_matches(coalesce(name, ''), '^kswapd[0-9]+(:[0-9]+)?$');

-- A %pS-printed function symbol without its '+0x0/0x210' offset suffix
-- (decoders already strip it; this keeps user-built tables working too).
CREATE OR REPLACE TEMP MACRO ss_sym(s) AS
  CASE WHEN contains(s, '+0x') THEN regexp_replace(s, '\+0x[0-9a-fA-F]+(/0x[0-9a-fA-F]+)?$', '') ELSE s END;

-- Whether a reclaim_flags value has one RECLAIM_WB_* flag: flag 'FILE', 'ANON',
-- 'MIXED', 'SYNC' or 'ASYNC'. Printed text and trace.dat name the flags
-- ('RECLAIM_WB_FILE|RECLAIM_WB_ASYNC'); raw-field text (`trace-cmd report -R`,
-- `[FAILED TO PARSE]`, options/fields) keeps the number (10), whose bits have
-- been the same since the flags appeared (include/trace/events/vmscan.h:
-- ANON 0x1, FILE 0x2, SYNC 0x4, ASYNC 0x8, MIXED 0x10).
CREATE OR REPLACE TEMP MACRO ss_reclaim_wb(flags, flag) AS
  coalesce(
    CASE WHEN regexp_matches(flags, '^(0x[0-9a-fA-F]+|[0-9]+)$')
         THEN (CAST(flags AS BIGINT) & CASE flag WHEN 'ANON' THEN 1 WHEN 'FILE' THEN 2 WHEN 'SYNC' THEN 4 WHEN 'ASYNC' THEN 8 WHEN 'MIXED' THEN 16 END) <> 0
         ELSE list_contains(string_split(flags, '|'), 'RECLAIM_WB_' || flag) END,
    false);

-- The reclaim family of a direct_reclaim_begin/end row from its `event`
-- column: 'direct', 'memcg', 'memcg_softlimit' or 'node' ('direct' when the
-- writer left `event` NULL).
CREATE OR REPLACE TEMP MACRO ss_reclaim_family(event) AS
  CASE WHEN event IS NULL OR starts_with(event, 'mm_vmscan_direct_') THEN 'direct'
       WHEN starts_with(event, 'mm_vmscan_memcg_softlimit_') THEN 'memcg_softlimit'
       WHEN starts_with(event, 'mm_vmscan_memcg_') THEN 'memcg'
       WHEN starts_with(event, 'mm_vmscan_node_') THEN 'node'
       ELSE coalesce(nullif(regexp_extract(event, '^mm_vmscan_(.*)_reclaim_(begin|end)$', 1), ''), 'direct') END;

-- First / last ts of the trace: trace_info's first_ts / last_ts when the
-- ingest recorded them, else the min / max ts of ftrace_event, else the
-- caller's fallback (a detector passes the min / max of its own tables, so
-- tables filled by hand in tests work without ftrace_event rows).
CREATE OR REPLACE TEMP MACRO ss_trace_start(fallback) AS coalesce(
  (SELECT TRY_CAST(value AS BIGINT) FROM trace_info WHERE key = 'first_ts'),
  (SELECT min(ts) FROM _ftrace_event),
  fallback);
CREATE OR REPLACE TEMP MACRO ss_trace_end(fallback) AS coalesce(
  (SELECT TRY_CAST(value AS BIGINT) FROM trace_info WHERE key = 'last_ts'),
  (SELECT max(ts) FROM _ftrace_event),
  fallback);

-- Severity from a measured value and two thresholds (higher is worse):
-- 'critical' at or above crit, 'warn' at or above warn, else `otherwise`
-- (NULL: no finding; 'info': always report).
CREATE OR REPLACE TEMP MACRO ss_severity(v, warn, crit, otherwise) AS
  CASE WHEN v >= crit THEN 'critical' WHEN v >= warn THEN 'warn' ELSE otherwise END;

-- Sort rank of a severity: critical 0, warn 1, info 2.
CREATE OR REPLACE TEMP MACRO ss_severity_rank(s) AS
  CASE s WHEN 'critical' THEN 0 WHEN 'warn' THEN 1 WHEN 'info' THEN 2 ELSE 3 END;

-- ---------------------------------------------------------------------------
-- Table macros (shared building blocks; call as `FROM ss_reclaim_windows()`)
-- ---------------------------------------------------------------------------
--
-- A table macro whose definition is preceded by a `-- @per_run` line is
-- computed at most once per detector run: the runner
-- (server/findings/run_detectors.ts) materialises it into a TEMP table the
-- first time a detector or summary of the run calls it, and later calls read
-- that table. Such a macro takes no arguments (callers filter its rows).

-- ss_pair_marks(marks): pairs the begin and end tracepoints of a kernel
-- function that runs synchronously in a task (mm_vmscan_*_reclaim_begin/end,
-- mm_shrink_slab_start/end). `marks` names a table or CTE of the caller with
--   id BIGINT, ts BIGINT, utid INTEGER
--   grp      marks pair within (utid, grp) only (any type; use NULL for one group per task)
--   is_begin BOOLEAN
--   tag      a begin is closed only by an end with the same tag, or where either tag is NULL
--            (any type; NULL where there is nothing to match)
-- A begin pairs with the next mark of its (utid, grp) in (ts, id) order when
-- that is an end with a matching tag. One row per begin, plus one per end
-- that is the first mark of its (utid, grp) (the call began before the trace):
--   begin_id BIGINT   the begin; NULL for 'begin_missing'
--   end_id BIGINT     the end that closes it ('closed'), or the end of 'begin_missing'
--   ts BIGINT         begin ts ('begin_missing': the end's ts)
--   utid, grp, tag    of the begin ('begin_missing': of the end)
--   next_ts BIGINT    ts of the next mark of the (utid, grp) after the begin (its end, or
--                     whatever came instead); NULL if none ('begin_missing': the end's ts)
--   state VARCHAR     'closed' | 'open' (no later mark: running at the end of the trace)
--                     | 'end_lost' (followed by a begin, or by an end of another tag)
--                     | 'begin_missing'
CREATE OR REPLACE TEMP MACRO ss_pair_marks(marks) AS TABLE
SELECT
  CASE WHEN is_begin THEN id END AS begin_id,
  CASE WHEN NOT is_begin THEN id WHEN closes THEN n_id END AS end_id,
  ts, utid, grp, tag,
  CASE WHEN is_begin THEN n_ts ELSE ts END AS next_ts,
  CASE WHEN NOT is_begin THEN 'begin_missing' WHEN closes THEN 'closed'
       WHEN n_is_begin IS NULL THEN 'open' ELSE 'end_lost' END AS state
FROM (
  SELECT *, coalesce(is_begin AND NOT n_is_begin AND (tag IS NULL OR n_tag IS NULL OR tag = n_tag), false) AS closes
  FROM (
    SELECT *,
      lead(is_begin) OVER w AS n_is_begin, lead(id) OVER w AS n_id, lead(ts) OVER w AS n_ts, lead(tag) OVER w AS n_tag,
      lag(is_begin) OVER w AS p_is_begin
    FROM (SELECT id, ts, utid, grp, is_begin, tag FROM query_table(marks))  -- narrow rows for the sort
    WINDOW w AS (PARTITION BY utid, grp ORDER BY ts, id)
  )
)
WHERE is_begin OR p_is_begin IS NULL;  -- every begin; an end only as the first mark of its (utid, grp)

-- ss_reclaim_windows(): one row per reclaim pass of a task bracketed by
-- mm_vmscan_{direct,memcg,memcg_softlimit,node}_reclaim_begin/end. A begin
-- pairs with the next event of its family on its task when that is an end
-- (families pair separately: soft-limit reclaim nests inside direct reclaim).
--   begin_id BIGINT     JOINID(ftrace_event.id) of the begin
--   end_id BIGINT       JOINID(ftrace_event.id) of the end; NULL if not traced
--   ts BIGINT           begin ts
--   end_ts BIGINT       end ts; NULL when state <> 'closed'
--   next_ts BIGINT      ts of the next event of the family on the task (end or next begin); NULL if none
--   cpu INTEGER         CPU of the begin
--   utid INTEGER        JOINID(thread.utid)
--   family VARCHAR      'direct' | 'memcg' | 'memcg_softlimit' | 'node'
--   event VARCHAR       the begin event's name
--   "order" INTEGER, gfp_flags VARCHAR, nid INTEGER   from the begin
--   nr_reclaimed BIGINT from the end
--   state VARCHAR       'closed' | 'open' (nothing after it: in reclaim at end of trace)
--                       | 'end_lost' (followed by another begin)
-- @per_run
CREATE OR REPLACE TEMP MACRO ss_reclaim_windows() AS TABLE
WITH marks AS (
  SELECT id, ts, utid, ss_reclaim_family(event) AS grp, true AS is_begin, NULL AS tag FROM mm_vmscan_direct_reclaim_begin
  UNION ALL
  SELECT id, ts, utid, ss_reclaim_family(event), false, NULL FROM mm_vmscan_direct_reclaim_end
)
SELECT
  p.begin_id, p.end_id, p.ts,
  CASE WHEN p.state = 'closed' THEN p.next_ts END AS end_ts,
  p.next_ts, b.cpu, p.utid, p.grp AS family, b.event, b."order", b.gfp_flags, b.nid,
  e.nr_reclaimed, p.state
FROM ss_pair_marks(marks) p
JOIN mm_vmscan_direct_reclaim_begin b ON b.id = p.begin_id
LEFT JOIN mm_vmscan_direct_reclaim_end e ON e.id = p.end_id;

-- ss_reclaim_passes(): one row per kswapd episode and per direct / memcg /
-- node reclaim pass of an ordinary task, with the scan priorities its LRU and
-- slab passes ran at.
--
-- kswapd: a kswapd thread is one named kswapdN or one that emitted
-- mm_vmscan_kswapd_wake/sleep. An episode starts at mm_vmscan_kswapd_wake,
-- or at the thread's first reclaim event after a sleep or at the start of
-- the trace (excerpts, and traces that do not record the wake); it ends at
-- the first mm_vmscan_kswapd_sleep, else at the next wake, else at the end
-- of the trace. On 6.x every balance_pgdat() run starts with a wake, also
-- after a premature (HZ/10) nap that emits no sleep.
-- Ordinary tasks: a pass runs from mm_vmscan_{direct,memcg,node}_reclaim_begin
-- to the task's next *_reclaim_end, else to its next begin, else to the end
-- of the trace. Soft-limit reclaim nests inside these and is not a pass of
-- its own. Reclaim events of a task outside any traced pass are ignored.
-- Members: the thread's mm_vmscan_lru_shrink_inactive/active and
-- mm_shrink_slab_start/end in between.
--
-- How: per thread, the markers (wake, sleep, begin, end; a few per episode)
-- number the segments between them; a sleep or end closes the segment before
-- it. Each of the millions of LRU / slab events finds its segment by an ASOF
-- join on ts against the markers (one sort of those events; no window runs
-- over them), then a hash aggregate reduces them to one row per segment and
-- priority. A kswapd segment with any event, or opened by a wake, is an
-- episode; a task's segment is a pass when a begin opens it.
--
-- Computed once per detector run (@per_run): callers filter (is_kswapd,
-- min_priority) themselves.
--   utid INTEGER           JOINID(thread.utid)
--   is_kswapd BOOLEAN      kswapd episode (else a task's reclaim pass)
--   context VARCHAR        'kswapd' | 'direct reclaim' | 'memcg reclaim' | 'node reclaim'
--   seg BIGINT             segment number on the thread (a key)
--   start_id BIGINT        the wake / begin event, or the first reclaim event (implicit kswapd episode)
--   ts BIGINT              start
--   cpu INTEGER            CPU of the start event
--   woken BOOLEAN          kswapd: started by mm_vmscan_kswapd_wake
--   wake_order INTEGER     kswapd: order of the wake; task: order of the begin
--   gfp_flags VARCHAR      task: GFP flags of the begin
--   nid INTEGER            node of the wake / begin (begin: node_reclaim only)
--   end_id BIGINT          the sleep / end event, if any
--   end_ts BIGINT          sleep / end ts, else the next start on the thread, else trace end
--   end_reason VARCHAR     'sleep' | 'end' | 'next_wake' | 'next_begin' | 'end_of_trace'
--   dur BIGINT             end_ts - ts
--   min_priority INTEGER   lowest scan priority reached (NULL: no priority seen)
--   start_priority INTEGER first priority seen
--   time_to_min_ns BIGINT  from start to the first event at min_priority
--   min_id BIGINT          that event
--   nr_scanned, nr_reclaimed BIGINT   sums over mm_vmscan_lru_shrink_inactive
--   slab_freed BIGINT      sum of mm_shrink_slab_end.retval
--   lru_passes BIGINT      mm_vmscan_lru_shrink_inactive events
--   end_nr_reclaimed BIGINT task: nr_reclaimed of the end event
--   priority_steps STRUCT(priority INTEGER, at_ns BIGINT, from_ns BIGINT)[]
--                          each new lowest priority: at_ns when its first LRU / slab event came
--                          (from start; LRU events come at the end of a pass), from_ns when the
--                          pass that reached it began (the last event at a higher priority, or
--                          the start)
--   last_event_ns BIGINT   from start to its last LRU / slab event (reclaim work ends there; a
--                          kswapd episode ended by the next wake may nap up to HZ/10 after it)
--   event_ids BIGINT[]     start event, the event of each priority step, the end event
-- @per_run
CREATE OR REPLACE TEMP MACRO ss_reclaim_passes() AS TABLE
WITH
kthreads AS (
  SELECT utid FROM thread WHERE ss_is_kswapd(name)
  UNION SELECT utid FROM mm_vmscan_kswapd_wake
  UNION SELECT utid FROM mm_vmscan_kswapd_sleep
),
t1 AS (
  SELECT ss_trace_end(greatest(
    (SELECT max(ts) FROM mm_vmscan_lru_shrink_inactive), (SELECT max(ts) FROM mm_vmscan_lru_shrink_active),
    (SELECT max(ts) FROM mm_shrink_slab_start), (SELECT max(ts) FROM mm_shrink_slab_end),
    (SELECT max(ts) FROM mm_vmscan_kswapd_wake), (SELECT max(ts) FROM mm_vmscan_kswapd_sleep),
    (SELECT max(ts) FROM mm_vmscan_direct_reclaim_begin), (SELECT max(ts) FROM mm_vmscan_direct_reclaim_end))) AS t1
),
-- Markers, per thread in (ts, id) order: k 1 wake, 2 sleep, 3 begin, 4 end.
-- Marker n opens segment n (the thread's events up to its next marker);
-- segment 0 is what comes before its first marker.
markers AS (
  SELECT *, row_number() OVER (PARTITION BY utid ORDER BY ts, id) AS n
  FROM (
    SELECT id, ts, utid, 1 AS k FROM mm_vmscan_kswapd_wake
    UNION ALL
    SELECT id, ts, utid, 2 FROM mm_vmscan_kswapd_sleep
    UNION ALL
    SELECT id, ts, utid, 3 FROM mm_vmscan_direct_reclaim_begin
    WHERE ss_reclaim_family(event) <> 'memcg_softlimit' AND utid NOT IN (SELECT utid FROM kthreads)
    UNION ALL
    SELECT id, ts, utid, 4 FROM mm_vmscan_direct_reclaim_end
    WHERE ss_reclaim_family(event) <> 'memcg_softlimit' AND utid NOT IN (SELECT utid FROM kthreads)
  )
),
-- Each segment with the marker that opens it (a wake or begin; a sleep or end
-- opens a segment too, one that is an episode only if kswapd did something in
-- it) and the sleep / end that closes it (the next marker, if it is one).
segments AS (
  SELECT utid, n AS seg,
    CASE WHEN k IN (1, 3) THEN id END AS open_id,
    CASE WHEN k IN (1, 3) THEN ts END AS open_ts,
    k = 1 AS woken, k = 3 AS begun,
    CASE WHEN next_k IN (2, 4) THEN next_id END AS end_id,
    CASE WHEN next_k IN (2, 4) THEN next_ts END AS end_marker_ts
  FROM (
    SELECT *, lead(k) OVER w AS next_k, lead(id) OVER w AS next_id, lead(ts) OVER w AS next_ts
    FROM markers WINDOW w AS (PARTITION BY utid ORDER BY n)
  )
  UNION ALL
  SELECT utid, 0, NULL, NULL, false, false,
    CASE WHEN k IN (2, 4) THEN id END, CASE WHEN k IN (2, 4) THEN ts END
  FROM markers WHERE n = 1
),
-- The markers of a thread at one timestamp (one usually; a clock tick can
-- hold several): an event at that very ts is after those with a lower id.
marker_ts AS (
  SELECT utid, ts, min(n) AS first_n, max(n) AS last_n, list(id) AS ids
  FROM markers GROUP BY utid, ts
),
relevant AS (
  -- threads whose reclaim events can belong to a pass
  SELECT utid FROM kthreads
  UNION
  SELECT utid FROM mm_vmscan_direct_reclaim_begin
),
events AS (
  -- k 5 lru inactive, 6 lru active, 7 slab start, 8 slab end
  SELECT id, ts, utid, 5::UTINYINT AS k, priority, nr_scanned, nr_reclaimed, NULL::BIGINT AS slab_freed
  FROM mm_vmscan_lru_shrink_inactive WHERE utid IN (SELECT utid FROM relevant)
  UNION ALL
  SELECT id, ts, utid, 6, priority, NULL, NULL, NULL FROM mm_vmscan_lru_shrink_active
  WHERE utid IN (SELECT utid FROM relevant)
  UNION ALL
  SELECT id, ts, utid, 7, priority, NULL, NULL, NULL FROM mm_shrink_slab_start
  WHERE utid IN (SELECT utid FROM relevant)
  UNION ALL
  SELECT id, ts, utid, 8, NULL, NULL, NULL, retval FROM mm_shrink_slab_end
  WHERE utid IN (SELECT utid FROM relevant)
),
-- Each event's segment: the thread's last marker before it, found by an
-- ASOF join on ts (one sort of the events, no window over them). At a tied
-- ts the ids decide, as everywhere: (ts, id) is the event order.
-- Then per segment and priority (at most 14 rows per segment: 0..12 and
-- NULL for slab ends), the first event at that priority and the sums; all
-- per-segment values below derive from these few rows. first_key orders
-- events like (ts, id) in one number.
by_priority AS MATERIALIZED (
  SELECT utid, seg, priority,
    min(ts::HUGEINT * 18446744073709551616 + id) AS first_key,
    min(ts) AS first_ts,
    max(ts) AS last_ts,
    count(*) AS n_events,
    sum(nr_scanned) AS nr_scanned,
    sum(nr_reclaimed) AS nr_reclaimed,
    sum(slab_freed) AS slab_freed,
    count(*) FILTER (WHERE k = 5) AS lru_passes
  FROM (
    SELECT e.*,
      CASE WHEN m.ts IS NULL THEN 0
           WHEN m.ts < e.ts THEN m.last_n
           ELSE m.first_n - 1 + len(list_filter(m.ids, i -> i < e.id)) END AS seg
    FROM events e
    ASOF LEFT JOIN marker_ts m ON m.utid = e.utid AND e.ts >= m.ts
  )
  GROUP BY utid, seg, priority
),
by_segment AS (
  SELECT utid, seg,
    min(first_key) AS first_key,
    count(*) AS n_priorities,
    sum(n_events) AS n_events,
    min(priority) AS min_priority,
    arg_min(priority, first_key) FILTER (WHERE priority IS NOT NULL) AS start_priority,
    min(first_ts) AS first_ts,
    max(last_ts) AS last_ts,
    arg_min(first_key, priority) FILTER (WHERE priority IS NOT NULL) AS min_key,
    arg_min(first_ts, priority) FILTER (WHERE priority IS NOT NULL) AS min_ts,
    sum(nr_scanned)::BIGINT AS nr_scanned,
    sum(nr_reclaimed)::BIGINT AS nr_reclaimed,
    sum(slab_freed)::BIGINT AS slab_freed,
    sum(lru_passes)::BIGINT AS lru_passes
  FROM by_priority
  GROUP BY utid, seg
),
groups AS MATERIALIZED (
  SELECT utid, seg, s.open_id IS NOT NULL AS opened,
    coalesce(s.open_id, (b.first_key - b.first_ts::HUGEINT * 18446744073709551616)::BIGINT) AS start_id,
    coalesce(s.open_ts, b.first_ts) AS ts,
    coalesce(s.woken, false) AS woken, coalesce(s.begun, false) AS begun,
    s.end_marker_ts, s.end_id,
    b.min_priority, b.start_priority, b.last_ts,
    b.min_ts, (b.min_key - b.min_ts::HUGEINT * 18446744073709551616)::BIGINT AS min_id,
    b.nr_scanned, b.nr_reclaimed, b.slab_freed, coalesce(b.lru_passes, 0) AS lru_passes,
    utid IN (SELECT utid FROM kthreads) AS is_kswapd
  FROM segments s FULL JOIN by_segment b USING (utid, seg)
  WHERE CASE WHEN utid IN (SELECT utid FROM kthreads) THEN s.woken OR b.n_events > 0 ELSE s.begun END
),
-- each new lowest priority of a segment: the first event at a priority, kept
-- when no lower priority came earlier (a window over at most 13 rows per
-- segment); list_sort of (ts, id, ...) structs orders them in time
steps AS (
  SELECT utid, seg, list_sort(list({'ts': first_ts, 'id': (first_key - first_ts::HUGEINT * 18446744073709551616)::BIGINT, 'priority': priority, 'from_ts': from_ts})) AS steps
  FROM (
    SELECT b.*,
      min(b.first_key) OVER (PARTITION BY b.utid, b.seg ORDER BY b.priority ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS lower_first,
      -- the pass that reached this priority began after the last event before it at a higher
      -- priority (LRU events are emitted at the end of a pass)
      (SELECT max(CASE WHEN h.last_ts < b.first_ts THEN h.last_ts ELSE h.first_ts END)
       FROM by_priority h
       WHERE h.utid = b.utid AND h.seg = b.seg AND h.priority > b.priority AND h.first_ts < b.first_ts) AS from_ts
    FROM by_priority b
    SEMI JOIN groups g ON g.utid = b.utid AND g.seg = b.seg
    WHERE b.priority IS NOT NULL
  )
  WHERE lower_first IS NULL OR first_key < lower_first
  GROUP BY utid, seg
),
ended AS (
  SELECT g.*, lead(g.ts) OVER (PARTITION BY g.utid ORDER BY g.ts, g.seg) AS next_start FROM groups g
),
starts AS (
  SELECT id, cpu, "order", nid, NULL::VARCHAR AS gfp_flags, NULL::VARCHAR AS family FROM mm_vmscan_kswapd_wake
  UNION ALL
  SELECT id, cpu, "order", nid, gfp_flags, ss_reclaim_family(event) FROM mm_vmscan_direct_reclaim_begin
  UNION ALL
  SELECT id, cpu, NULL, NULL, NULL, NULL FROM mm_vmscan_lru_shrink_inactive WHERE utid IN (SELECT utid FROM kthreads)
  UNION ALL
  SELECT id, cpu, NULL, NULL, NULL, NULL FROM mm_vmscan_lru_shrink_active WHERE utid IN (SELECT utid FROM kthreads)
  UNION ALL
  SELECT id, cpu, NULL, NULL, NULL, NULL FROM mm_shrink_slab_start WHERE utid IN (SELECT utid FROM kthreads)
  UNION ALL
  SELECT id, cpu, NULL, NULL, NULL, NULL FROM mm_shrink_slab_end WHERE utid IN (SELECT utid FROM kthreads)
)
SELECT
  e.utid, e.is_kswapd,
  CASE WHEN e.is_kswapd THEN 'kswapd' ELSE replace(st.family, '_', ' ') || ' reclaim' END AS context,
  e.seg, e.start_id, e.ts, st.cpu, e.woken,
  CASE WHEN e.woken OR e.begun THEN st."order" END AS wake_order,
  st.gfp_flags,
  CASE WHEN e.woken OR e.begun THEN st.nid END AS nid,
  e.end_id,
  coalesce(e.end_marker_ts, e.next_start, (SELECT t1 FROM t1)) AS end_ts,
  CASE WHEN e.end_marker_ts IS NOT NULL THEN CASE WHEN e.is_kswapd THEN 'sleep' ELSE 'end' END
       WHEN e.next_start IS NOT NULL THEN CASE WHEN e.is_kswapd THEN 'next_wake' ELSE 'next_begin' END
       ELSE 'end_of_trace' END AS end_reason,
  coalesce(e.end_marker_ts, e.next_start, (SELECT t1 FROM t1)) - e.ts AS dur,
  e.min_priority, e.start_priority, e.min_ts - e.ts AS time_to_min_ns, e.min_id,
  e.nr_scanned, e.nr_reclaimed, e.slab_freed, e.lru_passes,
  en.nr_reclaimed AS end_nr_reclaimed,
  [{'priority': x.priority, 'at_ns': x.ts - e.ts, 'from_ns': least(coalesce(x.from_ts, e.ts), x.ts) - e.ts} FOR x IN coalesce(s.steps, [])] AS priority_steps,
  e.last_ts - e.ts AS last_event_ns,
  list_filter(
    CASE WHEN s.steps[1].id = e.start_id THEN [x.id FOR x IN s.steps]
         ELSE [e.start_id] || [x.id FOR x IN coalesce(s.steps, [])] END || [e.end_id],
    x -> x IS NOT NULL) AS event_ids
FROM ended e
LEFT JOIN steps s USING (utid, seg)
LEFT JOIN starts st ON st.id = e.start_id
LEFT JOIN (SELECT id, nr_reclaimed FROM mm_vmscan_direct_reclaim_end) en ON en.id = e.end_id;

-- ss_shrinker_pairs(): every slab shrinker call of a task, as ss_pair_marks
-- pairs mm_shrink_slab_start and _end (a start closes with the task's next
-- shrinker event when that is an end of the same symbol), for the detector,
-- its summary and its metrics (computed once per run).
--   begin_id, end_id BIGINT   the start and end events (as ss_pair_marks)
--   ts BIGINT                 the start ('begin_missing': the end)
--   utid INTEGER              the task
--   shrinker VARCHAR          the scan callback symbol, without '+0x..' (ss_sym)
--   next_ts BIGINT            the task's next shrinker event after the start
--   state VARCHAR             'closed' | 'open' | 'end_lost' | 'begin_missing'
-- A completed call is a 'closed' row: dur = next_ts - ts.
-- @per_run
CREATE OR REPLACE TEMP MACRO ss_shrinker_pairs() AS TABLE
WITH marks AS (
  SELECT id, ts, utid, NULL AS grp, true AS is_begin, ss_sym(shrink) AS tag FROM mm_shrink_slab_start
  UNION ALL
  SELECT id, ts, utid, NULL, false, ss_sym(shrink) FROM mm_shrink_slab_end
)
SELECT begin_id, end_id, ts, utid, tag AS shrinker, next_ts, state FROM ss_pair_marks(marks);

-- ss_migration_moves(): every migration of a task to another CPU
-- (sched_migrate_task, pid <> 0, orig_cpu <> dest_cpu) with the pid's latest
-- sched_waking at or before it. Computed once per detector run (@per_run):
-- the migration_pingpong detector, its summary and metrics all read it, and
-- the search among the wakings is the costly part (tens of thousands of
-- sched_waking rows against a few thousand migrations).
--   id, ts BIGINT; pid INTEGER; comm VARCHAR; orig_cpu, dest_cpu INTEGER
--   utid INTEGER, cpu INTEGER   the mover (the thread the event fired in) and its CPU
--   waking_id, waking_ts BIGINT; waking_utid, waking_cpu INTEGER
--                               the pid's latest sched_waking at or before ts, its
--                               waker and the CPU it ran on (NULL: none)
--   at_wakeup BOOLEAN           that sched_waking was emitted by the mover, on the same
--                               CPU, at most 1 ms before (select_task_rq() at wakeup)
--   o1, o2, o3 INTEGER; t1, t2, t3 BIGINT
--                               orig_cpu and ts of the pid's previous three of these
--                               migrations, in (ts, id) order (NULL: fewer before it)
-- The previous moves are here, computed once with the rest, because the
-- detector, its summary and its metrics each classified bounces with the
-- same window over these rows (the metrics once per reference to it).
-- @per_run
CREATE OR REPLACE TEMP MACRO ss_migration_moves() AS TABLE
SELECT m.id, m.ts, m.pid, m.comm, m.orig_cpu, m.dest_cpu, m.utid, m.cpu,
  wk.id AS waking_id, wk.ts AS waking_ts, wk.utid AS waking_utid, wk.cpu AS waking_cpu,
  coalesce(wk.utid = m.utid AND wk.cpu = m.cpu AND m.ts - wk.ts <= 1000000, false) AS at_wakeup,
  lag(m.orig_cpu, 1) OVER w AS o1, lag(m.ts, 1) OVER w AS t1,
  lag(m.orig_cpu, 2) OVER w AS o2, lag(m.ts, 2) OVER w AS t2,
  lag(m.orig_cpu, 3) OVER w AS o3, lag(m.ts, 3) OVER w AS t3
FROM (SELECT id, ts, pid, comm, orig_cpu, dest_cpu, utid, cpu FROM sched_migrate_task
      WHERE pid <> 0 AND orig_cpu IS DISTINCT FROM dest_cpu) m
ASOF LEFT JOIN (SELECT id, ts, utid, cpu, pid FROM sched_waking WHERE pid IN (SELECT pid FROM sched_migrate_task)) wk
  ON wk.pid = m.pid AND m.ts >= wk.ts
WINDOW w AS (PARTITION BY m.pid ORDER BY m.ts, m.id);

-- ss_migrations(win): the migrations of ss_migration_moves() classified as
-- the migration_pingpong detector does:
--   id, ts BIGINT; pid INTEGER; comm VARCHAR; orig_cpu, dest_cpu INTEGER
--   utid INTEGER, cpu INTEGER   the mover (the thread the event fired in) and its CPU
--   is_bounce BOOLEAN           back to a CPU the task left at most win ns ago (up to 3 moves back)
--   at_wakeup BOOLEAN           the pid's latest sched_waking before it was emitted by the mover,
--                               on the same CPU, at most 1 ms before (select_task_rq() at wakeup)
CREATE OR REPLACE TEMP MACRO ss_migrations(win) AS TABLE
SELECT id, ts, pid, comm, orig_cpu, dest_cpu, utid, cpu,
  coalesce((dest_cpu = o1 AND ts - t1 <= win) OR (dest_cpu = o2 AND ts - t2 <= win)
        OR (dest_cpu = o3 AND ts - t3 <= win), false) AS is_bounce,
  at_wakeup
FROM ss_migration_moves();

-- ---------------------------------------------------------------------------
-- Block I/O and writeback (io_latency, dirty_throttled, reclaim_throttled)
-- ---------------------------------------------------------------------------

-- A block device as the kernel prints it, 'major,minor', from a dev_t as
-- the block events store it (major << 20 | minor).
CREATE OR REPLACE TEMP MACRO ss_dev(dev) AS
  CASE WHEN dev IS NULL THEN '?' ELSE CAST(dev >> 20 AS VARCHAR) || ',' || CAST(dev & 1048575 AS VARCHAR) END;

-- The operation of a request from its rwbs letters (blk_fill_rwbs(): an
-- optional F for a preflush, then W write / R read / D discard / E secure
-- erase / N none, then F FUA, A readahead, S sync, M meta). 'R', 'W', 'D',
-- 'E', 'F' (a pure flush: 'F' or 'FN'), 'N'. 2.6-3.x kernels print the same
-- letters (B barrier on kernels before 2.6.37, treated like F).
CREATE OR REPLACE TEMP MACRO ss_rwbs_op(rwbs) AS
  CASE WHEN rwbs IS NULL THEN '?'
       WHEN contains(rwbs, 'R') THEN 'R'
       WHEN contains(rwbs, 'W') THEN 'W'
       WHEN contains(rwbs, 'D') THEN 'D'
       WHEN contains(rwbs, 'E') THEN 'E'
       WHEN contains(rwbs, 'F') OR contains(rwbs, 'B') THEN 'F'
       ELSE 'N' END;

-- ss_block_requests(): block requests, issue paired with completion: the
-- rows of the `block_request` table the ingest derives
-- (queries/model/derive_block.sql says how they are paired; schema.sql lists
-- the columns). The macro adds:
--   device VARCHAR   ss_dev(dev), '7,2'
--   queue_ns BIGINT  issue_ts - insert_ts (NULL without a traced insert)
--   latency_ns BIGINT complete_ts - issue_ts: what biolatency measures (NULL: still in flight)
CREATE OR REPLACE TEMP MACRO ss_block_requests() AS TABLE
SELECT *, ss_dev(dev) AS device, issue_ts - insert_ts AS queue_ns, complete_ts - issue_ts AS latency_ns
FROM block_request;

-- The log2 bucket of a latency as biolatency prints it (usecs): bucket k
-- holds [2^k, 2^(k+1)) us, k = 0 also holding 0 and 1 us. Returns the
-- bucket's low bound in us (0, 2, 4, 8, ...; 0 for under 2 us).
CREATE OR REPLACE TEMP MACRO ss_log2_us(ns) AS
  CASE WHEN ns < 2000 THEN 0 ELSE CAST(1 AS BIGINT) << CAST(floor(log2(ns // 1000)) AS INTEGER) END;
