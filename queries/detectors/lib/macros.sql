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
CREATE OR REPLACE TEMP MACRO ss_reclaim_windows() AS TABLE
WITH marks AS (
  SELECT id, ts, cpu, utid, true AS is_begin, ss_reclaim_family(event) AS family, event,
         "order", gfp_flags, nid, NULL::BIGINT AS nr_reclaimed
  FROM mm_vmscan_direct_reclaim_begin
  UNION ALL
  SELECT id, ts, cpu, utid, false, ss_reclaim_family(event), event, NULL, NULL, NULL, nr_reclaimed
  FROM mm_vmscan_direct_reclaim_end
),
seq AS (
  SELECT *,
    lead(is_begin) OVER w AS n_is_begin, lead(id) OVER w AS n_id, lead(ts) OVER w AS n_ts,
    lead(nr_reclaimed) OVER w AS n_nr_reclaimed
  FROM marks
  WINDOW w AS (PARTITION BY utid, family ORDER BY ts, id)
)
SELECT
  id AS begin_id,
  CASE WHEN NOT n_is_begin THEN n_id END AS end_id,
  ts,
  CASE WHEN NOT n_is_begin THEN n_ts END AS end_ts,
  n_ts AS next_ts,
  cpu, utid, family, event, "order", gfp_flags, nid,
  CASE WHEN NOT n_is_begin THEN n_nr_reclaimed END AS nr_reclaimed,
  CASE WHEN NOT n_is_begin THEN 'closed' WHEN n_is_begin IS NULL THEN 'open' ELSE 'end_lost' END AS state
FROM seq
WHERE is_begin;

-- ss_reclaim_passes(steps_at_or_below := 12, kswapd_only := false): one row per kswapd episode and
-- per direct / memcg / node reclaim pass of an ordinary task, with the scan
-- priorities its LRU and slab passes ran at.
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
-- How (one sort of all those events): per thread, a running count of the
-- markers (wake, sleep, begin, end) numbers the segments between them; a
-- sleep or end belongs to the segment before it. A kswapd segment with any
-- non-sleep event is an episode; a task's segment is a pass when it starts
-- with a begin.
--
-- priority_steps is computed only for rows whose min_priority is at or
-- below `steps_at_or_below` (empty for the others): the per-event window work
-- is then limited to what a caller reports. kswapd_only := true skips the
-- events of ordinary tasks altogether (for kswapd summaries).
--   utid INTEGER           JOINID(thread.utid)
--   is_kswapd BOOLEAN      kswapd episode (else a task's reclaim pass)
--   context VARCHAR        'kswapd' | 'direct reclaim' | 'memcg reclaim' | 'node reclaim'
--   seg BIGINT             segment number on the thread (a key, not consecutive)
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
--   priority_steps STRUCT(priority INTEGER, at_ns BIGINT)[]  each new lowest priority and when (from start)
--   event_ids BIGINT[]     start event, the event of each priority step, the end event
CREATE OR REPLACE TEMP MACRO ss_reclaim_passes(steps_at_or_below := 12, kswapd_only := false) AS TABLE
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
relevant AS (
  -- threads whose reclaim events can belong to a pass
  SELECT utid FROM kthreads
  UNION
  SELECT utid FROM mm_vmscan_direct_reclaim_begin WHERE NOT kswapd_only
),
act AS (
  -- narrow rows (the sort below carries them): k 1 wake, 2 sleep, 3 begin, 4 end (markers),
  -- 5 lru inactive, 6 lru active, 7 slab start, 8 slab end; v1 = nr_scanned or slab retval,
  -- v2 = nr_reclaimed. Marker details are joined back by id afterwards.
  SELECT id, ts, utid, 1::UTINYINT AS k, NULL::INTEGER AS priority, NULL::BIGINT AS v1, NULL::BIGINT AS v2
  FROM mm_vmscan_kswapd_wake
  UNION ALL
  SELECT id, ts, utid, 2, NULL, NULL, NULL FROM mm_vmscan_kswapd_sleep
  UNION ALL
  SELECT id, ts, utid, 3, NULL, NULL, NULL FROM mm_vmscan_direct_reclaim_begin
  WHERE NOT kswapd_only AND ss_reclaim_family(event) <> 'memcg_softlimit' AND utid NOT IN (SELECT utid FROM kthreads)
  UNION ALL
  SELECT id, ts, utid, 4, NULL, NULL, NULL FROM mm_vmscan_direct_reclaim_end
  WHERE NOT kswapd_only AND ss_reclaim_family(event) <> 'memcg_softlimit' AND utid NOT IN (SELECT utid FROM kthreads)
  UNION ALL
  SELECT id, ts, utid, 5, priority, nr_scanned, nr_reclaimed FROM mm_vmscan_lru_shrink_inactive
  WHERE utid IN (SELECT utid FROM relevant)
  UNION ALL
  SELECT id, ts, utid, 6, priority, NULL, NULL FROM mm_vmscan_lru_shrink_active
  WHERE utid IN (SELECT utid FROM relevant)
  UNION ALL
  SELECT id, ts, utid, 7, priority, NULL, NULL FROM mm_shrink_slab_start
  WHERE utid IN (SELECT utid FROM relevant)
  UNION ALL
  SELECT id, ts, utid, 8, NULL, retval, NULL FROM mm_shrink_slab_end
  WHERE utid IN (SELECT utid FROM relevant)
),
members AS MATERIALIZED (
  SELECT id, ts, utid, k, priority, v1, v2, rn, CASE WHEN k IN (2, 4) THEN seg - 1 ELSE seg END AS key
  FROM (
    SELECT *,
      -- one global running count over (utid, ts, id): unpartitioned, so the
      -- sort runs on all threads even when one kswapd has most events;
      -- (utid, seg) is still a unique segment key
      sum(CASE WHEN k <= 4 THEN 1 ELSE 0 END) OVER w AS seg,
      row_number() OVER w AS rn  -- (ts, id) order as one integer, for cheap arg_min below
    FROM act
    WINDOW w AS (ORDER BY utid, ts, id ROWS UNBOUNDED PRECEDING)
  )
),
agg AS (
  SELECT
    utid, key AS seg,
    arg_min(id, rn) FILTER (WHERE k NOT IN (2, 4)) AS start_id,
    min(ts) FILTER (WHERE k NOT IN (2, 4)) AS ts,
    bool_or(k = 1) AS woken,
    bool_or(k = 3) AS begun,
    count(*) FILTER (WHERE k NOT IN (2, 4)) AS n_members,
    min(ts) FILTER (WHERE k IN (2, 4)) AS end_marker_ts,
    min(id) FILTER (WHERE k IN (2, 4)) AS end_id,
    min(priority) AS min_priority,
    arg_min(priority, rn) FILTER (WHERE priority IS NOT NULL) AS start_priority,
    arg_min(ts, priority * 1099511627776 + rn) FILTER (WHERE priority IS NOT NULL) AS min_ts,
    arg_min(id, priority * 1099511627776 + rn) FILTER (WHERE priority IS NOT NULL) AS min_id,
    sum(v1) FILTER (WHERE k = 5)::BIGINT AS nr_scanned,
    sum(v2) FILTER (WHERE k = 5)::BIGINT AS nr_reclaimed,
    sum(v1) FILTER (WHERE k = 8)::BIGINT AS slab_freed,
    count(*) FILTER (WHERE k = 5) AS lru_passes
  FROM members
  GROUP BY utid, key
),
groups AS MATERIALIZED (
  SELECT a.*, a.utid IN (SELECT utid FROM kthreads) AS is_kswapd
  FROM agg a
  WHERE CASE WHEN a.utid IN (SELECT utid FROM kthreads) THEN a.n_members > 0 ELSE a.begun END
),
-- each new lowest priority of a segment: the first row of each priority value
-- (a hash aggregate), kept when no lower priority came earlier (a window over
-- at most 13 rows per segment); list_sort of (ts, id, ...) structs is much
-- cheaper than an ordered aggregate
firsts AS (
  SELECT m.utid, m.key AS seg, m.priority, min(m.rn) AS rn, arg_min(m.ts, m.rn) AS ts, arg_min(m.id, m.rn) AS id
  FROM members m
  SEMI JOIN groups g ON g.utid = m.utid AND g.seg = m.key AND g.min_priority <= steps_at_or_below
  WHERE m.priority IS NOT NULL
  GROUP BY m.utid, m.key, m.priority
),
steps AS (
  SELECT utid, seg, list_sort(list({'ts': ts, 'id': id, 'priority': priority})) AS steps
  FROM (
    SELECT *, min(rn) OVER (PARTITION BY utid, seg ORDER BY priority ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS lower_first
    FROM firsts
  )
  WHERE lower_first IS NULL OR rn < lower_first
  GROUP BY utid, seg
),
ended AS (
  SELECT g.*, lead(g.ts) OVER (PARTITION BY g.utid ORDER BY g.ts) AS next_start FROM groups g
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
  [{'priority': x.priority, 'at_ns': x.ts - e.ts} FOR x IN coalesce(s.steps, [])] AS priority_steps,
  list_filter(
    CASE WHEN s.steps[1].id = e.start_id THEN [x.id FOR x IN s.steps]
         ELSE [e.start_id] || [x.id FOR x IN coalesce(s.steps, [])] END || [e.end_id],
    x -> x IS NOT NULL) AS event_ids
FROM ended e
LEFT JOIN steps s USING (utid, seg)
LEFT JOIN starts st ON st.id = e.start_id
LEFT JOIN (SELECT id, nr_reclaimed FROM mm_vmscan_direct_reclaim_end) en ON en.id = e.end_id;  -- ids are unique: a sleep id never matches
