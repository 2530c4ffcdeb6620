-- shrinker_blocking samples: every completed shrinker call's duration, for comparing traces
-- ========================================================================================
--
-- The per-event values behind shrinker.call_{p50,p99,max}_ns (METRICS.md,
-- "Samples"): one row per completed call (ss_shrinker_pairs(), state
-- 'closed'), the rows the metrics file aggregates. `stallscope compare`
-- tests them with Mann-Whitney U and draws their log2 histograms.
--
--   samples  VARCHAR  'shrinker.call'
--   scope    VARCHAR  'shrinker'
--   key      VARCHAR  the scan callback symbol
--   value    DOUBLE   the call, ns
--   unit     VARCHAR  'ns'
SELECT 'shrinker.call' AS samples, 'shrinker' AS scope, shrinker AS key, (next_ts - ts)::DOUBLE AS value, 'ns' AS unit
FROM ss_shrinker_pairs()
WHERE state = 'closed'
