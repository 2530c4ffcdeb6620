-- reclaim_throttled summary: sleeps in reclaim per task and reason
-- ================================================================
--
-- One row per (thread, reason): the mm_vmscan_throttled sleeps, bursts
-- counted as in the detector (gap_ns between sleep ends), time asleep
-- (usec_delayed), the longest sleep, sleeps that ran their full timeout.
--
-- Columns
--   tid INTEGER, thread VARCHAR   the sleeping thread
--   reason VARCHAR                WRITEBACK, ISOLATED, NOPROGRESS, CONGESTED, NONE
--   sleeps BIGINT, bursts BIGINT
--   slept_ns, max_sleep_ns BIGINT
--   timed_out BIGINT              sleeps with usec_delayed >= usec_timeout
--   timeout_ns BIGINT             the timeout the sleeps asked for (the largest)
--   first_ts, last_ts BIGINT      first and last sleep's end
WITH s AS (
  SELECT utid, ts, id, usec_timeout,
    CASE WHEN regexp_matches(coalesce(reason, ''), '^(0x[0-9a-fA-F]+|[0-9]+)$')
         THEN CASE CAST(reason AS INTEGER) WHEN 1 THEN 'WRITEBACK' WHEN 2 THEN 'ISOLATED' WHEN 4 THEN 'NOPROGRESS' WHEN 8 THEN 'CONGESTED' WHEN 0 THEN 'NONE' ELSE reason END
         ELSE replace(coalesce(reason, 'NONE'), 'VMSCAN_THROTTLE_', '') END AS why,
    greatest(coalesce(usec_delayed, 0), 0) * 1000 AS ns,
    usec_timeout > 0 AND usec_delayed >= usec_timeout AS timed_out,
    CASE WHEN ts - lag(ts) OVER (PARTITION BY utid ORDER BY ts, id) <= $gap_ns::BIGINT THEN 0 ELSE 1 END AS new_burst
  FROM mm_vmscan_throttled
)
SELECT any_value(t.tid) AS tid, any_value(t.name) AS thread, s.why AS reason,
  count(*) AS sleeps, sum(new_burst)::BIGINT AS bursts,
  sum(ns)::BIGINT AS slept_ns, max(ns)::BIGINT AS max_sleep_ns,
  count(*) FILTER (WHERE timed_out) AS timed_out,
  max(usec_timeout)::BIGINT * 1000 AS timeout_ns,
  min(s.ts) AS first_ts, max(s.ts) AS last_ts
FROM s LEFT JOIN thread t USING (utid)
GROUP BY s.utid, s.why
ORDER BY slept_ns DESC, thread, reason
