-- direct_reclaim_stall metrics: allocation stalls in reclaim, per trace and per process
-- ====================================================================================
--
-- The metrics contract: server/findings/METRICS.md. Completed stalls only
-- (a begin and its end both in the trace; lib/macros.sql:
-- ss_reclaim_windows()); percentiles are nearest-rank. <family> is
-- direct (mm_vmscan_direct_reclaim_*), memcg (memcg and memcg soft-limit
-- reclaim) or node (node_reclaim).
--
--   reclaim_stall.<family>.stalls        count  completed stalls
--   reclaim_stall.<family>.stalls_per_s  per_s  stalls per second of trace           (lower)
--   reclaim_stall.<family>.tasks         count  threads that stalled                  (lower)
--   reclaim_stall.<family>.stalled_ns    ns     time spent stalled, all threads        (lower)
--   reclaim_stall.<family>.stall_p50_ns / _p95_ns / _p99_ns / _max_ns  ns  stall duration (lower)
--   reclaim_stall.<family>.over_warn     count  stalls of warn_ns (1 ms) or more       (lower)
--   reclaim_stall.<family>.over_critical count  stalls of critical_ns (100 ms) or more (lower)
--   reclaim_stall.<family>.pages_reclaimed pages nr_reclaimed of the ends
-- scope 'trace' (key NULL) and 'process' (key: the process name, threads of
-- processes of one name together; the thread name where the trace does not
-- say the process).
WITH
bounds AS (
  SELECT
    ss_trace_start(least((SELECT min(ts) FROM mm_vmscan_direct_reclaim_begin), (SELECT min(ts) FROM mm_vmscan_direct_reclaim_end))) AS t0,
    ss_trace_end(greatest((SELECT max(ts) FROM mm_vmscan_direct_reclaim_begin), (SELECT max(ts) FROM mm_vmscan_direct_reclaim_end))) AS t1
),
stalls AS (
  SELECT r.utid, r.end_ts - r.ts AS dur, r.nr_reclaimed,
    CASE r.family WHEN 'direct' THEN 'direct' WHEN 'node' THEN 'node' ELSE 'memcg' END AS family,
    coalesce(p.name, t.name, '?') AS process
  FROM ss_reclaim_windows() r
  LEFT JOIN thread t ON t.utid = r.utid
  LEFT JOIN process p ON p.upid = t.upid
  WHERE r.state = 'closed'
),
agg AS (
  SELECT family, process, GROUPING(process) AS whole,
    count(*) AS stalls, count(DISTINCT utid) AS tasks, sum(dur) AS stalled,
    quantile_disc(dur, 0.50) AS p50, quantile_disc(dur, 0.95) AS p95, quantile_disc(dur, 0.99) AS p99, max(dur) AS mx,
    count(*) FILTER (WHERE dur >= $warn_ns::BIGINT) AS over_warn,
    count(*) FILTER (WHERE dur >= $critical_ns::BIGINT) AS over_critical,
    sum(nr_reclaimed) AS reclaimed
  FROM stalls
  GROUP BY GROUPING SETS ((family, process), (family))
)
-- unnested in the inner SELECT list, not joined (FROM agg, unnest(...)): a
-- lateral join is planned as a dependent join (migration_pingpong.metrics.sql)
SELECT 'reclaim_stall.' || family || '.' || u.m.name AS metric, scope, key, u.m.value, u.m.unit, u.m.better
FROM (
  SELECT family,
    CASE WHEN whole = 1 THEN 'trace' ELSE 'process' END AS scope,
    CASE WHEN whole = 1 THEN NULL ELSE process END AS key,
    unnest([
      {'name': 'stalls', 'value': stalls::DOUBLE, 'unit': 'count', 'better': NULL::VARCHAR},
      {'name': 'stalls_per_s', 'value': CASE WHEN b.span > 0 THEN stalls / (b.span / 1e9) END, 'unit': 'per_s', 'better': 'lower'},
      {'name': 'tasks', 'value': tasks::DOUBLE, 'unit': 'count', 'better': 'lower'},
      {'name': 'stalled_ns', 'value': stalled::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'stall_p50_ns', 'value': p50::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'stall_p95_ns', 'value': p95::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'stall_p99_ns', 'value': p99::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'stall_max_ns', 'value': mx::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'over_warn', 'value': over_warn::DOUBLE, 'unit': 'count', 'better': 'lower'},
      {'name': 'over_critical', 'value': over_critical::DOUBLE, 'unit': 'count', 'better': 'lower'},
      {'name': 'pages_reclaimed', 'value': reclaimed::DOUBLE, 'unit': 'pages', 'better': NULL}
    ]) AS m
  FROM agg, (SELECT t1 - t0 AS span FROM bounds) b
) u
WHERE u.m.value IS NOT NULL
