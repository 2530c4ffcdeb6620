-- dirty_throttled summary: balance_dirty_pages() per task and bdi
-- ===============================================================
--
-- One row per (thread, bdi) that called balance_dirty_pages: pauses
-- (pause > 0, ms in the event), calls that did not sleep, time paused, the
-- longest pause, bursts (gap_ns as in the detector), the dirty pages and
-- limits it saw at its highest dirty count, and the ratelimits (KB/s) then.
--
-- Columns
--   tid INTEGER, thread VARCHAR, bdi VARCHAR
--   pauses, not_paused, bursts BIGINT
--   paused_ns, max_pause_ns BIGINT
--   max_dirty, setpoint, dirty_limit BIGINT   pages (setpoint and limit at max_dirty)
--   dirty_ratelimit_kbps, task_ratelimit_kbps BIGINT   at max_dirty
--   first_ts, last_ts BIGINT
WITH s AS (
  SELECT *, greatest(coalesce(pause, 0), 0) * 1000000 AS ns,
    CASE WHEN ts - lag(ts) OVER (PARTITION BY utid, bdi ORDER BY ts, id) <= $gap_ns::BIGINT THEN 0 ELSE 1 END AS new_burst
  FROM balance_dirty_pages
)
SELECT any_value(t.tid) AS tid, any_value(t.name) AS thread, s.bdi,
  count(*) FILTER (WHERE ns > 0) AS pauses, count(*) FILTER (WHERE ns = 0) AS not_paused,
  sum(new_burst)::BIGINT AS bursts,
  sum(ns)::BIGINT AS paused_ns, max(ns)::BIGINT AS max_pause_ns,
  max(dirty) AS max_dirty, arg_max(setpoint, dirty) AS setpoint, arg_max("limit", dirty) AS dirty_limit,
  arg_max(dirty_ratelimit, dirty) AS dirty_ratelimit_kbps, arg_max(task_ratelimit, dirty) AS task_ratelimit_kbps,
  min(s.ts) AS first_ts, max(s.ts) AS last_ts
FROM s LEFT JOIN thread t USING (utid)
GROUP BY s.utid, s.bdi
ORDER BY paused_ns DESC, thread, s.bdi
