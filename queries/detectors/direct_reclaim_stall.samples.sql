-- direct_reclaim_stall samples: every completed stall's duration, for comparing traces
-- ===================================================================================
--
-- The per-event values behind reclaim_stall.<family>.stall_{p50,p95,p99,max}_ns
-- (METRICS.md, "Samples"): one row per completed stall (ss_reclaim_windows(),
-- state 'closed'), the same rows the metrics file aggregates. `stallscope
-- compare` tests them with Mann-Whitney U and draws their log2 histograms.
--
--   samples  VARCHAR  'reclaim_stall.<family>.stall' (family direct, memcg, node)
--   scope    VARCHAR  'process'
--   key      VARCHAR  the process name (as the metrics' process scope)
--   value    DOUBLE   the stall, ns
--   unit     VARCHAR  'ns'
SELECT 'reclaim_stall.' || CASE r.family WHEN 'direct' THEN 'direct' WHEN 'node' THEN 'node' ELSE 'memcg' END || '.stall' AS samples,
  'process' AS scope,
  coalesce(p.name, t.name, '?') AS key,
  (r.end_ts - r.ts)::DOUBLE AS value,
  'ns' AS unit
FROM ss_reclaim_windows() r
LEFT JOIN thread t ON t.utid = r.utid
LEFT JOIN process p ON p.upid = t.upid
WHERE r.state = 'closed'
