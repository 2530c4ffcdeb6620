-- oom_kill metrics: OOM kills (oom:mark_victim)
-- =============================================
--
-- The metrics contract: server/findings/METRICS.md.
--
-- scope 'trace' (key NULL) and 'task' (key: the victim's comm, or its
-- thread's name when the event has none):
--   oom.kills          count  processes the OOM killer killed     (lower is better)
--   oom.anon_rss_max   bytes  the largest victim's anon-rss (6.8+ kernels: the event's kB x 1024)
WITH k AS (
  SELECT v.id, coalesce(v.comm, t.name, '?') AS victim, v.anon_rss
  FROM _event_mark_victim v
  LEFT JOIN thread t ON t.tid = v.pid AND coalesce(t.start_ts, v.ts) <= v.ts
  QUALIFY row_number() OVER (PARTITION BY v.id ORDER BY t.start_ts DESC NULLS LAST, t.utid DESC) = 1
),
agg AS (
  SELECT victim, GROUPING(victim) AS no_victim, count(*) AS kills, max(anon_rss) * 1024 AS anon_max
  FROM k GROUP BY GROUPING SETS ((), (victim))
  HAVING count(*) > 0
)
-- unnested in the inner SELECT list, not joined (migration_pingpong.metrics.sql)
SELECT 'oom.' || u.m.name AS metric, scope, key, u.m.value, u.m.unit, u.m.better
FROM (
  SELECT CASE WHEN no_victim = 1 THEN 'trace' ELSE 'task' END AS scope,
    CASE WHEN no_victim = 0 THEN victim END AS key,
    unnest([
      {'name': 'kills', 'value': kills::DOUBLE, 'unit': 'count', 'better': 'lower'},
      {'name': 'anon_rss_max', 'value': anon_max::DOUBLE, 'unit': 'bytes', 'better': NULL::VARCHAR}
    ]) AS m
  FROM agg
) u
WHERE u.m.value IS NOT NULL
