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
  regexp_replace(s, '\+0x[0-9a-fA-F]+(/0x[0-9a-fA-F]+)?$', '');

-- The reclaim family of a direct_reclaim_begin/end row from its `event`
-- column: 'direct', 'memcg', 'memcg_softlimit' or 'node' ('direct' when the
-- writer left `event` NULL).
CREATE OR REPLACE TEMP MACRO ss_reclaim_family(event) AS
  coalesce(nullif(regexp_extract(event, '^mm_vmscan_(.*)_reclaim_(begin|end)$', 1), ''), 'direct');

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

-- ss_kswapd_episodes(): one row per kswapd episode. A kswapd thread is one
-- named kswapdN or one that emitted mm_vmscan_kswapd_wake/sleep. An episode
-- starts at mm_vmscan_kswapd_wake, or at the thread's first reclaim event
-- after a sleep or at the start of the trace (excerpts and kernels that do
-- not show the wake); it ends at the first mm_vmscan_kswapd_sleep, else at
-- the next wake, else at the end of the trace. Reclaim events of the thread
-- in between (mm_vmscan_lru_shrink_inactive/active, mm_shrink_slab_start/end)
-- belong to it. On 6.x every balance_pgdat() run starts with a wake, also
-- after a premature (HZ/10) nap, so one sleep can close several wakes' worth
-- of work only via the last one.
--   utid INTEGER           JOINID(thread.utid) of the kswapd thread
--   ep BIGINT              episode number on the thread, from 1
--   start_id BIGINT        the wake event, or the first reclaim event
--   ts BIGINT              episode start
--   cpu INTEGER            CPU of the start event
--   woken BOOLEAN          started by mm_vmscan_kswapd_wake
--   wake_order INTEGER     allocation order of the wake (NULL if not woken)
--   nid INTEGER            node of the wake (NULL if not woken)
--   end_ts BIGINT          sleep ts, else next wake ts, else trace end
--   end_reason VARCHAR     'sleep' | 'next_wake' | 'end_of_trace'
--   sleep_id BIGINT        the sleep event, if any
--   dur BIGINT             end_ts - ts
--   min_priority INTEGER   lowest scan priority reached (NULL: no priority seen)
--   start_priority INTEGER first priority seen
--   time_to_min_ns BIGINT  from episode start to the first event at min_priority
--   min_id BIGINT          that event
--   nr_scanned, nr_reclaimed BIGINT   sums over mm_vmscan_lru_shrink_inactive
--   slab_freed BIGINT      sum of mm_shrink_slab_end.retval
--   lru_passes BIGINT      mm_vmscan_lru_shrink_inactive events
--   priority_steps STRUCT(priority INTEGER, at_ns BIGINT)[]  each new lowest priority and when (from start)
--   event_ids BIGINT[]     start event, the event of each priority step, the sleep event
CREATE OR REPLACE TEMP MACRO ss_kswapd_episodes() AS TABLE
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
    (SELECT max(ts) FROM mm_vmscan_kswapd_wake), (SELECT max(ts) FROM mm_vmscan_kswapd_sleep))) AS t1
),
act AS (
  SELECT id, ts, cpu, utid, 'W' AS k, NULL::INTEGER AS priority, NULL::BIGINT AS nr_scanned, NULL::BIGINT AS nr_reclaimed,
         NULL::BIGINT AS slab_freed, "order" AS wake_order, nid
  FROM mm_vmscan_kswapd_wake
  UNION ALL
  SELECT id, ts, cpu, utid, 'S', NULL, NULL, NULL, NULL, NULL, nid FROM mm_vmscan_kswapd_sleep
  UNION ALL
  SELECT id, ts, cpu, utid, 'I', priority, nr_scanned, nr_reclaimed, NULL, NULL, NULL
  FROM mm_vmscan_lru_shrink_inactive WHERE utid IN (SELECT utid FROM kthreads)
  UNION ALL
  SELECT id, ts, cpu, utid, 'A', priority, NULL, NULL, NULL, NULL, NULL
  FROM mm_vmscan_lru_shrink_active WHERE utid IN (SELECT utid FROM kthreads)
  UNION ALL
  SELECT id, ts, cpu, utid, 'B', priority, NULL, NULL, NULL, NULL, NULL
  FROM mm_shrink_slab_start WHERE utid IN (SELECT utid FROM kthreads)
  UNION ALL
  SELECT id, ts, cpu, utid, 'E', NULL, NULL, NULL, retval, NULL, NULL
  FROM mm_shrink_slab_end WHERE utid IN (SELECT utid FROM kthreads)
),
seq AS (
  SELECT *, lag(k) OVER (PARTITION BY utid ORDER BY ts, id) AS pk FROM act
),
numbered AS (
  SELECT *,
    sum(CASE WHEN k = 'W' OR (k <> 'S' AND (pk IS NULL OR pk = 'S')) THEN 1 ELSE 0 END)
      OVER (PARTITION BY utid ORDER BY ts, id ROWS UNBOUNDED PRECEDING) AS ep
  FROM seq
),
members AS (
  -- drop repeated sleeps and sleeps before any episode
  SELECT *,
    min(priority) OVER (PARTITION BY utid, ep ORDER BY ts, id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_min,
    row_number() OVER (PARTITION BY utid, ep ORDER BY ts, id) AS rn
  FROM numbered
  WHERE ep > 0 AND NOT (k = 'S' AND coalesce(pk, 'S') = 'S')
),
flagged AS (
  SELECT *,
    priority IS NOT NULL AND (prev_min IS NULL OR priority < prev_min) AS is_step,
    min(priority) OVER (PARTITION BY utid, ep) AS ep_min,
    first_value(ts) OVER (PARTITION BY utid, ep ORDER BY ts, id) AS ep_ts
  FROM members
),
episodes AS (
  SELECT
    utid, ep,
    min(id) FILTER (WHERE rn = 1) AS start_id,
    min(ts) AS ts,
    min(cpu) FILTER (WHERE rn = 1) AS cpu,
    bool_or(k = 'W' AND rn = 1) AS woken,
    min(wake_order) FILTER (WHERE k = 'W' AND rn = 1) AS wake_order,
    min(nid) FILTER (WHERE k = 'W' AND rn = 1) AS nid,
    min(ts) FILTER (WHERE k = 'S') AS sleep_ts,
    min(id) FILTER (WHERE k = 'S') AS sleep_id,
    min(priority) AS min_priority,
    arg_min(priority, (ts, id)) FILTER (WHERE priority IS NOT NULL) AS start_priority,
    min(ts) FILTER (WHERE priority = ep_min) - min(ts) AS time_to_min_ns,
    arg_min(id, (ts, id)) FILTER (WHERE priority = ep_min) AS min_id,
    sum(nr_scanned)::BIGINT AS nr_scanned,
    sum(nr_reclaimed)::BIGINT AS nr_reclaimed,
    sum(slab_freed)::BIGINT AS slab_freed,
    count(*) FILTER (WHERE k = 'I') AS lru_passes,
    list({'priority': priority, 'at_ns': ts - ep_ts} ORDER BY ts, id) FILTER (WHERE is_step) AS priority_steps,
    list(id ORDER BY ts, id) FILTER (WHERE rn = 1 OR is_step OR k = 'S') AS event_ids
  FROM flagged
  GROUP BY utid, ep
)
SELECT
  utid, ep, start_id, ts, cpu, woken, wake_order, nid,
  coalesce(sleep_ts, lead(ts) OVER (PARTITION BY utid ORDER BY ep), (SELECT t1 FROM t1)) AS end_ts,
  CASE WHEN sleep_ts IS NOT NULL THEN 'sleep'
       WHEN lead(ts) OVER (PARTITION BY utid ORDER BY ep) IS NOT NULL THEN 'next_wake'
       ELSE 'end_of_trace' END AS end_reason,
  sleep_id,
  coalesce(sleep_ts, lead(ts) OVER (PARTITION BY utid ORDER BY ep), (SELECT t1 FROM t1)) - ts AS dur,
  min_priority, start_priority, time_to_min_ns, min_id,
  nr_scanned, nr_reclaimed, slab_freed, lru_passes,
  coalesce(priority_steps, []) AS priority_steps,
  event_ids
FROM episodes;
