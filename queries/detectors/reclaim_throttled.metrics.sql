-- reclaim_throttled metrics: sleeps in reclaim_throttle() (mm_vmscan_throttled)
-- =============================================================================
--
-- The metrics contract: server/findings/METRICS.md. Each sleep lasts its
-- usec_delayed; a sleep "timed out" when usec_delayed >= usec_timeout.
--
-- scope 'trace' (key NULL), 'task' (key: the thread's comm) and 'reason'
-- (key: WRITEBACK, ISOLATED, NOPROGRESS, CONGESTED):
--   throttle.sleeps        count  sleeps                                 (lower is better)
--   throttle.slept_ns      ns     time asleep, all sleeps                (lower)
--   throttle.max_sleep_ns  ns     longest sleep                          (lower)
--   throttle.timed_out     count  sleeps that ran their full timeout     (lower)
--   throttle.tasks         count  tasks that slept (scope trace only)
WITH
s AS (
  SELECT m.utid, coalesce(t.name, '?') AS task,
    CASE WHEN regexp_matches(coalesce(m.reason, ''), '^(0x[0-9a-fA-F]+|[0-9]+)$')
         THEN CASE CAST(m.reason AS INTEGER) WHEN 1 THEN 'WRITEBACK' WHEN 2 THEN 'ISOLATED' WHEN 4 THEN 'NOPROGRESS' WHEN 8 THEN 'CONGESTED' WHEN 0 THEN 'NONE' ELSE m.reason END
         ELSE replace(coalesce(m.reason, 'NONE'), 'VMSCAN_THROTTLE_', '') END AS why,
    greatest(coalesce(m.usec_delayed, 0), 0) * 1000 AS ns,
    m.usec_timeout > 0 AND m.usec_delayed >= m.usec_timeout AS timed_out
  FROM mm_vmscan_throttled m LEFT JOIN thread t USING (utid)
),
agg AS (
  SELECT task, why, GROUPING(task) AS no_task, GROUPING(why) AS no_why,
    count(*) AS sleeps, sum(ns) AS slept, max(ns) AS mx, count(*) FILTER (WHERE timed_out) AS tmo,
    count(DISTINCT utid) AS tasks
  FROM s GROUP BY GROUPING SETS ((), (task), (why))
  HAVING count(*) > 0
)
-- unnested in the inner SELECT list, not joined (FROM agg, unnest(...)): a
-- lateral join is planned as a dependent join (migration_pingpong.metrics.sql)
SELECT 'throttle.' || u.m.name AS metric, scope, key, u.m.value, u.m.unit, u.m.better
FROM (
  SELECT CASE WHEN no_task = 1 AND no_why = 1 THEN 'trace' WHEN no_task = 0 THEN 'task' ELSE 'reason' END AS scope,
    CASE WHEN no_task = 0 THEN task WHEN no_why = 0 THEN why END AS key,
    unnest([
      {'name': 'sleeps', 'value': sleeps::DOUBLE, 'unit': 'count', 'better': 'lower'},
      {'name': 'slept_ns', 'value': slept::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'max_sleep_ns', 'value': mx::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'timed_out', 'value': tmo::DOUBLE, 'unit': 'count', 'better': 'lower'},
      {'name': 'tasks', 'value': CASE WHEN no_task = 1 AND no_why = 1 THEN tasks END::DOUBLE, 'unit': 'count', 'better': NULL::VARCHAR}
    ]) AS m
  FROM agg
) u
WHERE u.m.value IS NOT NULL
