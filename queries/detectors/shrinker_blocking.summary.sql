-- shrinker_blocking summary: calls per shrinker
-- =============================================
--
-- One row per shrinker (scan callback symbol): how often it ran, how long
-- its calls took and who paid for the worst one, the way kernel developers
-- quote it ("super_cache_scan: 87,205 calls, 12 over 100 ms, worst 452.6 ms
-- in kswapd0"). Completed calls only (lib/macros.sql: ss_shrinker_calls()).
-- Percentiles are nearest-rank (quantile_disc): durations some call had.
--
-- Columns
--   shrinker VARCHAR            scan callback, e.g. super_cache_scan
--   calls BIGINT                completed calls
--   over_warn BIGINT            calls lasting warn_ns or more
--   over_critical BIGINT        calls lasting critical_ns or more
--   total_ns BIGINT             time spent in its calls (all tasks)
--   p50_ns, p99_ns, max_ns BIGINT   call duration percentiles
--   freed BIGINT                objects freed (sum of the ends' retval)
--   total_scan BIGINT           objects the calls set out to scan
--   kswapd_calls BIGINT         calls made by kswapd threads (the rest: direct / memcg reclaim, drop_caches)
--   worst_tid INTEGER, worst_task VARCHAR, worst_ts BIGINT   the longest call's task and start
SELECT
  c.shrinker,
  count(*) AS calls,
  count(*) FILTER (WHERE c.dur >= $warn_ns::BIGINT) AS over_warn,
  count(*) FILTER (WHERE c.dur >= $critical_ns::BIGINT) AS over_critical,
  sum(c.dur)::BIGINT AS total_ns,
  quantile_disc(c.dur, 0.50) AS p50_ns,
  quantile_disc(c.dur, 0.99) AS p99_ns,
  max(c.dur) AS max_ns,
  sum(c.freed)::BIGINT AS freed,
  sum(c.total_scan)::BIGINT AS total_scan,
  count(*) FILTER (WHERE ss_is_kswapd(t.name)) AS kswapd_calls,
  arg_max(t.tid, c.dur) AS worst_tid,
  arg_max(t.name, c.dur) AS worst_task,
  arg_max(c.ts, c.dur) AS worst_ts
FROM ss_shrinker_calls() c
LEFT JOIN thread t USING (utid)
GROUP BY c.shrinker
ORDER BY max_ns DESC, calls DESC, c.shrinker
