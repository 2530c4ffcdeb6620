-- shrinker_blocking metrics: slab shrinker calls, per trace and per shrinker
-- ==========================================================================
--
-- The metrics contract: server/findings/METRICS.md (one row per metric and
-- key: metric, scope, key, value, unit, better). Completed calls only
-- (lib/macros.sql: ss_shrinker_pairs(), state 'closed'); percentiles are
-- nearest-rank; freed sums every end's retval.
--
--   shrinker.calls               count   completed shrinker calls
--   shrinker.calls_over_warn     count   calls of warn_ns (10 ms) or more          (lower is better)
--   shrinker.calls_over_critical count   calls of critical_ns (100 ms) or more     (lower is better)
--   shrinker.blocked_ns          ns      time spent in shrinker calls, all tasks   (lower)
--   shrinker.call_p50_ns / call_p99_ns / call_max_ns   ns   call duration      (lower)
--   shrinker.freed               objects objects freed (end retval)              (higher)
-- scope 'trace' (key NULL) and 'shrinker' (key: the scan callback symbol).
WITH
calls AS (SELECT shrinker, next_ts - ts AS dur FROM ss_shrinker_pairs() WHERE state = 'closed'),
freed AS (SELECT ss_sym(shrink) AS shrinker, sum(retval) AS freed FROM mm_shrink_slab_end GROUP BY 1),
agg AS (
  SELECT c.shrinker, GROUPING(c.shrinker) AS whole,
    count(*) AS calls,
    count(*) FILTER (WHERE dur >= $warn_ns::BIGINT) AS over_warn,
    count(*) FILTER (WHERE dur >= $critical_ns::BIGINT) AS over_critical,
    sum(dur) AS blocked,
    quantile_disc(dur, 0.50) AS p50, quantile_disc(dur, 0.99) AS p99, max(dur) AS mx
  FROM calls c
  GROUP BY GROUPING SETS ((c.shrinker), ())
),
with_freed AS (
  SELECT a.*, CASE WHEN a.whole = 1 THEN (SELECT sum(freed) FROM freed) ELSE f.freed END AS freed
  FROM agg a LEFT JOIN freed f ON f.shrinker = a.shrinker
)
-- unnested in the inner SELECT list, not joined (FROM with_freed, unnest(...)):
-- a lateral join is planned as a dependent join (migration_pingpong.metrics.sql)
SELECT u.m.metric, scope, key, u.m.value, u.m.unit, u.m.better
FROM (
  SELECT CASE WHEN whole = 1 THEN 'trace' ELSE 'shrinker' END AS scope,
    CASE WHEN whole = 1 THEN NULL ELSE shrinker END AS key,
    unnest([
      {'metric': 'shrinker.calls', 'value': calls::DOUBLE, 'unit': 'count', 'better': NULL::VARCHAR},
      {'metric': 'shrinker.calls_over_warn', 'value': over_warn::DOUBLE, 'unit': 'count', 'better': 'lower'},
      {'metric': 'shrinker.calls_over_critical', 'value': over_critical::DOUBLE, 'unit': 'count', 'better': 'lower'},
      {'metric': 'shrinker.blocked_ns', 'value': blocked::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'metric': 'shrinker.call_p50_ns', 'value': p50::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'metric': 'shrinker.call_p99_ns', 'value': p99::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'metric': 'shrinker.call_max_ns', 'value': mx::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'metric': 'shrinker.freed', 'value': freed::DOUBLE, 'unit': 'objects', 'better': 'higher'}
    ]) AS m
  FROM with_freed
  WHERE calls > 0
) u
