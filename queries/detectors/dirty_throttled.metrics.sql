-- dirty_throttled metrics: balance_dirty_pages() pauses and the flusher
-- =====================================================================
-- @rows_from balance_dirty_pages -- every row aggregates its events (the flusher's runs and the dirty state are added to those rows): none of them, no metrics, and the statement is not run (server/findings/empty_inputs.ts)
--
-- The metrics contract: server/findings/METRICS.md. A pause is a
-- balance_dirty_pages event with pause > 0 (ms); pause <= 0: not put to sleep.
--
-- scope 'trace' (key NULL) and 'task' (key: the thread's comm):
--   dirty.pauses          count  pauses                                   (lower is better)
--   dirty.paused_ns       ns     time paused                              (lower)
--   dirty.max_pause_ns    ns     longest pause                            (lower)
--   dirty.calls           count  balance_dirty_pages events (paused or not)
--   dirty.tasks           count  tasks paused at least once (scope trace)
--   dirty.flusher_runs    count  writeback_start events, all bdis (scope trace; when traced)
--   dirty.max_dirty_pages pages  highest global_dirty_state dirty (scope trace; when traced)
--   dirty.dirty_thresh_pages pages  global dirty threshold at that point (scope trace)
WITH
s AS (
  SELECT b.utid, coalesce(t.name, '?') AS task, greatest(coalesce(b.pause, 0), 0) * 1000000 AS ns
  FROM balance_dirty_pages b LEFT JOIN thread t USING (utid)
),
agg AS (
  SELECT task, GROUPING(task) AS whole,
    count(*) FILTER (WHERE ns > 0) AS pauses, sum(ns) AS paused, max(ns) AS mx, count(*) AS calls,
    count(DISTINCT utid) FILTER (WHERE ns > 0) AS tasks
  FROM s GROUP BY GROUPING SETS ((), (task))
  HAVING count(*) > 0
),
extra AS (
  SELECT (SELECT count(*) FROM writeback_work WHERE event = 'writeback_start') AS runs,
    (SELECT max(dirty) FROM global_dirty_state) AS max_dirty,
    (SELECT arg_max(dirty_thresh, dirty) FROM global_dirty_state) AS thresh
)
-- unnested in the inner SELECT list, not joined (FROM agg, extra, unnest(...)):
-- a lateral join is planned as a dependent join (migration_pingpong.metrics.sql)
SELECT 'dirty.' || u.m.name AS metric, scope, key, u.m.value, u.m.unit, u.m.better
FROM (
  SELECT CASE WHEN whole = 1 THEN 'trace' ELSE 'task' END AS scope,
    CASE WHEN whole = 1 THEN NULL ELSE task END AS key,
    unnest([
      {'name': 'pauses', 'value': pauses::DOUBLE, 'unit': 'count', 'better': 'lower'},
      {'name': 'paused_ns', 'value': paused::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'max_pause_ns', 'value': mx::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'calls', 'value': calls::DOUBLE, 'unit': 'count', 'better': NULL::VARCHAR},
      {'name': 'tasks', 'value': CASE WHEN whole = 1 THEN tasks END::DOUBLE, 'unit': 'count', 'better': NULL},
      {'name': 'flusher_runs', 'value': CASE WHEN whole = 1 AND runs > 0 THEN runs END::DOUBLE, 'unit': 'count', 'better': NULL},
      {'name': 'max_dirty_pages', 'value': CASE WHEN whole = 1 THEN max_dirty END::DOUBLE, 'unit': 'pages', 'better': NULL},
      {'name': 'dirty_thresh_pages', 'value': CASE WHEN whole = 1 THEN thresh END::DOUBLE, 'unit': 'pages', 'better': NULL}
    ]) AS m
  FROM agg, extra
) u
WHERE u.m.value IS NOT NULL
