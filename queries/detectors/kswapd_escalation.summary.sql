-- kswapd_escalation summary: kswapd episodes per thread
-- =====================================================
--
-- One row per kswapd thread: how often it woke, how far its priority wound
-- down, how long it was awake and how much it reclaimed for what it scanned.
-- Episodes as in ss_reclaim_passes() (lib/macros.sql).
--
-- Columns
--   tid INTEGER                kswapd thread id
--   thread VARCHAR             kswapdN
--   episodes BIGINT            episodes in the trace
--   episodes_warn BIGINT       episodes whose lowest priority <= warn_priority
--   episodes_critical BIGINT   episodes whose lowest priority <= critical_priority
--   min_priority INTEGER       lowest priority of any episode
--   awake_ns BIGINT            total episode time
--   low_priority_ns BIGINT     time spent at warn_priority or lower (as the detector measures it)
--   ended_asleep BIGINT        episodes that ended with mm_vmscan_kswapd_sleep
--   nr_scanned, nr_reclaimed BIGINT   LRU pages (mm_vmscan_lru_shrink_inactive)
--   efficiency DOUBLE          nr_reclaimed / nr_scanned, 4 decimals
--   slab_freed BIGINT          slab objects freed (mm_shrink_slab_end retval)
SELECT
  any_value(t.tid) AS tid,
  any_value(t.name) AS thread,
  count(*) AS episodes,
  count(*) FILTER (WHERE e.min_priority <= $warn_priority::INTEGER) AS episodes_warn,
  count(*) FILTER (WHERE e.min_priority <= $critical_priority::INTEGER) AS episodes_critical,
  min(e.min_priority) AS min_priority,
  sum(e.dur)::BIGINT AS awake_ns,
  coalesce(sum(greatest(coalesce(e.last_event_ns, 0) - list_min([x.from_ns FOR x IN e.priority_steps IF x.priority <= $warn_priority::INTEGER]), 0)), 0)::BIGINT AS low_priority_ns,
  count(*) FILTER (WHERE e.end_reason = 'sleep') AS ended_asleep,
  sum(e.nr_scanned)::BIGINT AS nr_scanned,
  sum(e.nr_reclaimed)::BIGINT AS nr_reclaimed,
  CASE WHEN sum(e.nr_scanned) > 0 THEN round(sum(e.nr_reclaimed) / sum(e.nr_scanned), 4) END AS efficiency,
  sum(e.slab_freed)::BIGINT AS slab_freed
FROM ss_reclaim_passes() e  -- computed once per run, shared with the detector
LEFT JOIN thread t USING (utid)
WHERE e.is_kswapd
GROUP BY e.utid
ORDER BY thread, e.utid
