-- reclaim_writeback summary: pages written by reclaim, per issuing thread
-- ======================================================================
--
-- One row per thread that wrote pages from reclaim (mm_vmscan_writepage /
-- mm_vmscan_write_folio), with bursts counted as in the detector (gap_ns).
--
-- Columns
--   tid INTEGER, thread VARCHAR   the issuing thread
--   is_kswapd BOOLEAN             a kswapd thread
--   bursts BIGINT                 bursts (writes at most gap_ns apart)
--   pages, file_pages, anon_pages, sync_pages BIGINT
--   first_ts, last_ts BIGINT      first and last write
WITH w AS (
  SELECT utid, ts, id,
    CASE WHEN ts - lag(ts) OVER (PARTITION BY utid ORDER BY ts, id) <= $gap_ns::BIGINT THEN 0 ELSE 1 END AS new_burst,
    ss_reclaim_wb(reclaim_flags, 'FILE') AS is_file,
    ss_reclaim_wb(reclaim_flags, 'ANON') AS is_anon,
    ss_reclaim_wb(reclaim_flags, 'SYNC') AS is_sync
  FROM mm_vmscan_write_folio
)
SELECT
  any_value(t.tid) AS tid,
  any_value(t.name) AS thread,
  ss_is_kswapd(any_value(t.name)) AS is_kswapd,
  sum(new_burst)::BIGINT AS bursts,
  count(*) AS pages,
  count(*) FILTER (WHERE is_file) AS file_pages,
  count(*) FILTER (WHERE is_anon) AS anon_pages,
  count(*) FILTER (WHERE is_sync) AS sync_pages,
  min(w.ts) AS first_ts,
  max(w.ts) AS last_ts
FROM w LEFT JOIN thread t USING (utid)
GROUP BY w.utid
ORDER BY pages DESC, thread
