-- reclaim_writeback metrics: pages written by reclaim (pageout())
-- ===============================================================
--
-- The metrics contract: server/findings/METRICS.md. mm_vmscan_writepage /
-- mm_vmscan_write_folio events, file and anon as reclaim_flags says
-- (lib/macros.sql ss_reclaim_wb).
--
-- scope 'trace' (key NULL) and 'task' (key: the issuing thread's comm):
--   writeback.pages         pages  pages written by reclaim        (lower is better)
--   writeback.file_pages    pages  file pages (flushers fell behind) (lower)
--   writeback.anon_pages    pages  anon / shmem pages (swap-out)
--   writeback.sync_pages    pages  written synchronously            (lower)
--   writeback.bursts        count  bursts (writes at most gap_ns apart)
--   writeback.first_write_ns ns    first write, from the trace's first event
--   writeback.span_ns       ns     first to last write
-- scope 'trace' only, where writeback_start is traced:
--   writeback.flusher_vmscan_starts count  flusher work started for reclaim
--     (writeback_start reason=vmscan: reclaim met dirty file pages at the LRU
--     tail and woke the flushers, wakeup_flusher_threads(WB_REASON_VMSCAN).
--     Direct and memcg reclaim never write dirty file pages themselves
--     (pageout() is kswapd's alone for them), so on a memcg under pressure
--     this count, not writeback.pages, says reclaim pushed writeback)
WITH
t0 AS (SELECT ss_trace_start((SELECT min(ts) FROM mm_vmscan_write_folio)) AS t0),
w AS (
  SELECT f.utid, f.ts, coalesce(t.name, '?') AS task,
    CASE WHEN f.ts - lag(f.ts) OVER (PARTITION BY f.utid ORDER BY f.ts, f.id) <= $gap_ns::BIGINT THEN 0 ELSE 1 END AS new_burst,
    ss_reclaim_wb(f.reclaim_flags, 'FILE') AS is_file,
    ss_reclaim_wb(f.reclaim_flags, 'ANON') AS is_anon,
    ss_reclaim_wb(f.reclaim_flags, 'SYNC') AS is_sync
  FROM mm_vmscan_write_folio f
  LEFT JOIN thread t USING (utid)
),
agg AS (
  SELECT task, GROUPING(task) AS whole,
    count(*) AS pages,
    count(*) FILTER (WHERE is_file) AS file_pages,
    count(*) FILTER (WHERE is_anon) AS anon_pages,
    count(*) FILTER (WHERE is_sync) AS sync_pages,
    sum(new_burst) AS bursts,
    min(ts) - (SELECT t0 FROM t0) AS first_write,
    max(ts) - min(ts) AS span
  FROM w
  GROUP BY GROUPING SETS ((task), ())
  HAVING count(*) > 0
)
-- unnested in the inner SELECT list, not joined (FROM agg, unnest(...)): a
-- lateral join is planned as a dependent join (migration_pingpong.metrics.sql)
SELECT 'writeback.' || u.m.name AS metric, scope, key, u.m.value, u.m.unit, u.m.better
FROM (
  SELECT CASE WHEN whole = 1 THEN 'trace' ELSE 'task' END AS scope,
    CASE WHEN whole = 1 THEN NULL ELSE task END AS key,
    unnest([
      {'name': 'pages', 'value': pages::DOUBLE, 'unit': 'pages', 'better': 'lower'},
      {'name': 'file_pages', 'value': file_pages::DOUBLE, 'unit': 'pages', 'better': 'lower'},
      {'name': 'anon_pages', 'value': anon_pages::DOUBLE, 'unit': 'pages', 'better': NULL::VARCHAR},
      {'name': 'sync_pages', 'value': sync_pages::DOUBLE, 'unit': 'pages', 'better': 'lower'},
      {'name': 'bursts', 'value': bursts::DOUBLE, 'unit': 'count', 'better': NULL},
      {'name': 'first_write_ns', 'value': first_write::DOUBLE, 'unit': 'ns', 'better': NULL},
      {'name': 'span_ns', 'value': span::DOUBLE, 'unit': 'ns', 'better': 'lower'}
    ]) AS m
  FROM agg
) u
UNION ALL
SELECT 'writeback.flusher_vmscan_starts', 'trace', NULL,
  (count(*) FILTER (WHERE reason = 'vmscan'))::DOUBLE, 'count', NULL
FROM writeback_work
WHERE event = 'writeback_start'
HAVING count(*) > 0
