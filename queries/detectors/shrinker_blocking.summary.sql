-- shrinker_blocking summary: calls per shrinker
-- =============================================
--
-- One row per shrinker (scan callback symbol): how often it ran, how long
-- its calls took and who paid for the worst one, the way kernel developers
-- quote it ("super_cache_scan: 87,205 calls, 12 over 100 ms, worst 452.6 ms
-- in kswapd0"). Completed calls only (lib/macros.sql: ss_shrinker_pairs(),
-- state 'closed'); freed and total_scan over all of its ends and starts.
-- Percentiles are nearest-rank (quantile_disc): durations some call had.
--
-- Columns
--   shrinker VARCHAR            scan callback, e.g. super_cache_scan
--   calls BIGINT                completed calls
--   over_warn BIGINT            calls lasting warn_ns or more
--   over_critical BIGINT        calls lasting critical_ns or more
--   total_ns BIGINT             time spent in its calls (all tasks)
--   p50_ns, p99_ns, max_ns BIGINT   call duration percentiles
--   freed BIGINT                objects freed (sum of all its ends' retval)
--   total_scan BIGINT           objects its calls set out to scan (sum of all its starts' total_scan)
--   kswapd_calls BIGINT         calls made by kswapd threads (the rest: direct / memcg reclaim, drop_caches)
--   worst_tid INTEGER, worst_task VARCHAR, worst_ts BIGINT   the longest call's task and start
WITH
calls AS (SELECT shrinker, utid, ts, next_ts - ts AS dur FROM ss_shrinker_pairs() WHERE state = 'closed'),
per_shrinker AS (
  SELECT shrinker,
    count(*) AS calls,
    count(*) FILTER (WHERE dur >= $warn_ns::BIGINT) AS over_warn,
    count(*) FILTER (WHERE dur >= $critical_ns::BIGINT) AS over_critical,
    sum(dur)::BIGINT AS total_ns,
    quantile_disc(dur, 0.50) AS p50_ns,
    quantile_disc(dur, 0.99) AS p99_ns,
    max(dur) AS max_ns,
    arg_max(utid, (dur, -ts)) AS worst_utid,
    arg_max(ts, (dur, -ts)) AS worst_ts
  FROM calls GROUP BY shrinker
),
by_task AS (  -- calls per (shrinker, task): to count kswapd's without joining every call to thread
  SELECT shrinker, utid, count(*) AS n FROM calls GROUP BY ALL
),
kswapd_calls AS (
  SELECT b.shrinker, sum(b.n) FILTER (WHERE ss_is_kswapd(t.name)) AS kswapd_calls
  FROM by_task b LEFT JOIN thread t USING (utid) GROUP BY b.shrinker
),
freed AS (SELECT ss_sym(shrink) AS shrinker, sum(retval)::BIGINT AS freed FROM mm_shrink_slab_end GROUP BY 1),
scanned AS (SELECT ss_sym(shrink) AS shrinker, sum(total_scan)::BIGINT AS total_scan FROM mm_shrink_slab_start GROUP BY 1)
SELECT
  p.shrinker, p.calls, p.over_warn, p.over_critical, p.total_ns, p.p50_ns, p.p99_ns, p.max_ns,
  f.freed, s.total_scan, coalesce(k.kswapd_calls, 0)::BIGINT AS kswapd_calls,
  t.tid AS worst_tid, t.name AS worst_task, p.worst_ts
FROM per_shrinker p
LEFT JOIN freed f USING (shrinker)
LEFT JOIN scanned s USING (shrinker)
LEFT JOIN kswapd_calls k USING (shrinker)
LEFT JOIN thread t ON t.utid = p.worst_utid
ORDER BY p.max_ns DESC, p.calls DESC, p.shrinker
