-- kswapd_escalation metrics: kswapd episodes and task reclaim passes
-- ==================================================================
--
-- The metrics contract: server/findings/METRICS.md. Episodes and passes as
-- in ss_reclaim_passes() (lib/macros.sql); "low priority" is warn_priority
-- (6) or lower, timed as the detector does (first pass at that priority to
-- the last reclaim event of the episode).
--
-- scope 'kswapd' (key: the kswapd thread name, e.g. kswapd0) and 'trace'
-- (key NULL: all kswapd threads together):
--   kswapd.episodes              count     episodes (wake to sleep)
--   kswapd.rounds_without_sleep  count     episodes that ended at kswapd's next
--                                          mm_vmscan_kswapd_wake, not asleep: the tracepoint fires
--                                          before each balance_pgdat() round, so a kswapd that
--                                          cannot meet the high watermark "wakes" every round
--                                          without having slept (woken = episodes - this)
--   kswapd.episodes_escalated    count     episodes reaching warn_priority or lower (lower is better)
--   kswapd.min_priority          priority  lowest priority of any episode         (higher)
--   kswapd.awake_ns              ns        time in episodes                        (lower)
--   kswapd.low_priority_ns       ns        time at warn_priority or lower          (lower)
--   kswapd.pages_scanned / pages_reclaimed  pages  mm_vmscan_lru_shrink_inactive sums
--   kswapd.efficiency            ratio     pages_reclaimed / pages_scanned         (higher)
--   kswapd.slab_freed            objects   mm_shrink_slab_end retval sum
--   kswapd.worst_start_priority  priority  the worst episode (lowest priority, then earliest): first priority
--   kswapd.worst_time_to_min_ns  ns        ... and how long it took to reach its lowest   (higher)
-- scope 'trace' and 'process' (key: process name) for tasks' own reclaim,
-- <family> direct | memcg | node:
--   reclaim_priority.<family>.passes           count    passes (begin to end)
--   reclaim_priority.<family>.passes_escalated count    passes reaching warn_priority or lower (lower)
--   reclaim_priority.<family>.min_priority     priority lowest priority of any pass        (higher)
--   reclaim_priority.<family>.low_priority_ns  ns       time at warn_priority or lower, summed (lower)
WITH
p AS (
  SELECT r.*, t.name AS tname, coalesce(pr.name, t.name, '?') AS process,
    CASE WHEN r.min_priority <= $warn_priority::INTEGER
         THEN greatest(coalesce(r.last_event_ns, 0) - list_min([x.from_ns FOR x IN r.priority_steps IF x.priority <= $warn_priority::INTEGER]), 0)
         ELSE 0 END AS low_ns,
    split_part(r.context, ' ', 1) AS family
  FROM ss_reclaim_passes() r
  LEFT JOIN thread t USING (utid)
  LEFT JOIN process pr ON pr.upid = t.upid
),
k AS (
  SELECT tname, GROUPING(tname) AS whole,
    count(*) AS episodes,
    count(*) FILTER (WHERE end_reason = 'next_wake') AS without_sleep,
    count(*) FILTER (WHERE min_priority <= $warn_priority::INTEGER) AS escalated,
    min(min_priority) AS min_p,
    sum(dur) AS awake, sum(low_ns) AS low,
    sum(nr_scanned) AS scanned, sum(nr_reclaimed) AS reclaimed, sum(slab_freed) AS slab,
    arg_min(start_priority, (coalesce(min_priority, 99), ts)) AS worst_start,
    arg_min(time_to_min_ns, (coalesce(min_priority, 99), ts)) AS worst_ttm
  FROM p WHERE is_kswapd
  GROUP BY GROUPING SETS ((tname), ())
  HAVING count(*) > 0
),
-- each row's metrics unnested in the inner SELECT list, not joined (FROM k,
-- unnest(...)): a lateral join is planned as a dependent join
-- (migration_pingpong.metrics.sql)
kswapd_rows AS (
  SELECT 'kswapd.' || u.m.name AS metric, scope, key, u.m.value, u.m.unit, u.m.better
  FROM (
    SELECT CASE WHEN whole = 1 THEN 'trace' ELSE 'kswapd' END AS scope,
      CASE WHEN whole = 1 THEN NULL ELSE tname END AS key,
      unnest([
        {'name': 'episodes', 'value': episodes::DOUBLE, 'unit': 'count', 'better': NULL::VARCHAR},
        {'name': 'rounds_without_sleep', 'value': without_sleep::DOUBLE, 'unit': 'count', 'better': 'lower'},
        {'name': 'episodes_escalated', 'value': escalated::DOUBLE, 'unit': 'count', 'better': 'lower'},
        {'name': 'min_priority', 'value': min_p::DOUBLE, 'unit': 'priority', 'better': 'higher'},
        {'name': 'awake_ns', 'value': awake::DOUBLE, 'unit': 'ns', 'better': 'lower'},
        {'name': 'low_priority_ns', 'value': low::DOUBLE, 'unit': 'ns', 'better': 'lower'},
        {'name': 'pages_scanned', 'value': scanned::DOUBLE, 'unit': 'pages', 'better': NULL},
        {'name': 'pages_reclaimed', 'value': reclaimed::DOUBLE, 'unit': 'pages', 'better': NULL},
        {'name': 'efficiency', 'value': CASE WHEN scanned > 0 THEN reclaimed / scanned END, 'unit': 'ratio', 'better': 'higher'},
        {'name': 'slab_freed', 'value': slab::DOUBLE, 'unit': 'objects', 'better': NULL},
        {'name': 'worst_start_priority', 'value': worst_start::DOUBLE, 'unit': 'priority', 'better': NULL},
        {'name': 'worst_time_to_min_ns', 'value': worst_ttm::DOUBLE, 'unit': 'ns', 'better': 'higher'}
      ]) AS m
    FROM k
  ) u
),
d AS (
  SELECT family, process, GROUPING(process) AS whole,
    count(*) AS passes,
    count(*) FILTER (WHERE min_priority <= $warn_priority::INTEGER) AS escalated,
    min(min_priority) AS min_p, sum(low_ns) AS low
  FROM p WHERE NOT is_kswapd
  GROUP BY GROUPING SETS ((family, process), (family))
),
task_rows AS (
  SELECT 'reclaim_priority.' || family || '.' || u.m.name AS metric, scope, key, u.m.value, u.m.unit, u.m.better
  FROM (
    SELECT family, CASE WHEN whole = 1 THEN 'trace' ELSE 'process' END AS scope,
      CASE WHEN whole = 1 THEN NULL ELSE process END AS key,
      unnest([
        {'name': 'passes', 'value': passes::DOUBLE, 'unit': 'count', 'better': NULL::VARCHAR},
        {'name': 'passes_escalated', 'value': escalated::DOUBLE, 'unit': 'count', 'better': 'lower'},
        {'name': 'min_priority', 'value': min_p::DOUBLE, 'unit': 'priority', 'better': 'higher'},
        {'name': 'low_priority_ns', 'value': low::DOUBLE, 'unit': 'ns', 'better': 'lower'}
      ]) AS m
    FROM d
  ) u
)
SELECT * FROM kswapd_rows WHERE value IS NOT NULL
UNION ALL
SELECT * FROM task_rows WHERE value IS NOT NULL
