-- reclaim_writeback: memory reclaim writing pages out itself (pageout())
-- =====================================================================
--
-- @title Writeback from reclaim
-- @description Bursts of mm_vmscan_writepage / mm_vmscan_write_folio per issuing task: who (kswapd or a task in direct reclaim), file or anon, async or sync, pages written, and the nr_dirty / nr_writeback that LRU scanning reported around the burst. kswapd writing file pages is at least warn.
-- @param gap_ns BIGINT 100000000 -- writes of one task less than or exactly this far apart (ns, 100 ms) form one burst
-- @param critical_file_pages INTEGER 1024 -- a burst writing at least this many file pages is critical (4 MiB with 4 KiB pages)
-- @requires vmscan:mm_vmscan_write_folio|vmscan:mm_vmscan_writepage
-- @rows_from mm_vmscan_write_folio -- every finding is a burst of its writes (the LRU scans and reclaim windows only describe it): none of them, no findings, and the statement is not run (server/findings/empty_inputs.ts)
-- @impact the burst's span, first to last write: how long reclaim was issuing pageout() writes (they are asynchronous, so not a wait of their own).
-- @severity critical: a burst writing critical_file_pages (1024) file pages or more; warn: kswapd writing any file page, or any synchronous (RECLAIM_WB_SYNC) write; else info (anonymous pages to swap: how swap-out works).
--
-- What it finds
--   shrink_folio_list() (shrink_page_list() before 5.18) reclaims pages from
--   the tail of the inactive LRU. A dirty page there cannot be freed until it
--   is written: reclaim may call pageout(), which starts writeback of that
--   single page through the mapping's ->writepage and emits
--   mm_vmscan_writepage (<= 6.1) / mm_vmscan_write_folio (6.2+). Anonymous
--   and shmem pages go to swap this way (that is how swap-out works); file
--   pages are written only by kswapd (direct reclaim never writes file pages:
--   its stack is too deep for filesystem writeback), and only on kernels
--   whose filesystems still have ->writepage (none do after 6.x's removal).
--
-- Why it matters
--   The flusher threads write dirty file pages in inode and offset order,
--   in large IOs, well before the pages age to the LRU tail. File pages
--   written by kswapd mean the flushers fell behind: reclaim hit dirty pages
--   at the end of the LRU and now issues single-page, effectively random IO
--   in LRU order while allocators wait for it to make progress (the "from
--   here memory reclaim starts dirty page writeback" moment). It comes with
--   nr_dirty/nr_writeback counts in mm_vmscan_lru_shrink_inactive and, on
--   5.16+, mm_vmscan_throttled reason=VMSCAN_THROTTLE_WRITEBACK. SYNC writes
--   (old kernels' lumpy reclaim) made reclaim wait for the IO itself.
--   Anonymous pages written here are swap-out: normal under pressure with
--   swap enabled, reported as info so the onset of swapping is visible.
--
-- Defaults
--   gap 100 ms: pageout() calls of one reclaim pass come microseconds
--   apart; 100 ms separates reclaim episodes without merging a whole
--   pressure period into one burst. critical 1024 file pages: 4 MiB of
--   single-page random writes issued by reclaim is more than an occasional
--   stray dirty page; it means the LRU tail is full of dirty file pages.
--
-- Bursts (decisions where the issue leaves it open)
--   * One burst = writes of one task (utid) each at most gap_ns after the
--     previous one. ts = first write, dur = last write - first write (0 for
--     a single write), cpu = CPU of the first write.
--   * Issuer context: 'kswapd' for kswapd threads, else the task's traced
--     reclaim around the first write ('direct reclaim', 'memcg reclaim',
--     'node reclaim'; ss_reclaim_windows()), else 'other'.
--   * nr_dirty, nr_writeback, nr_congested, nr_immediate, nr_scanned,
--     nr_reclaimed: sums over the task's mm_vmscan_lru_shrink_inactive events
--     from ts - gap_ns to the last write + gap_ns (an LRU event near two
--     bursts counts for the later one). NULL on 4.x kernels, whose
--     lru_shrink_inactive does not print nr_dirty etc.
--   * Severity: critical when file_pages >= critical_file_pages; warn when
--     kswapd wrote file pages or any write was RECLAIM_WB_SYNC; else info.
--   * File, anon, sync, async: reclaim_flags as printed
--     ('RECLAIM_WB_ANON|RECLAIM_WB_ASYNC') or as the number raw-field text
--     keeps (9), read by ss_reclaim_wb (lib/macros.sql).
--
-- values: pages (always), file_pages, anon_pages, async_pages, sync_pages,
-- context, event, nr_dirty, nr_writeback, nr_congested, nr_immediate,
-- nr_scanned, nr_reclaimed, lru_passes. event_ids: every write of the burst.
-- kind: 'burst'.
WITH
params AS (
  SELECT $gap_ns::BIGINT AS gap_ns, $critical_file_pages::INTEGER AS crit_file
),
w AS (
  -- narrow rows for the sorts; cpu and event are joined back by id
  SELECT *, CASE WHEN ts - lag(ts) OVER (PARTITION BY utid ORDER BY ts, id) <= (SELECT gap_ns FROM params) THEN 0 ELSE 1 END AS new_burst
  FROM (
    SELECT id, ts, utid,
      ss_reclaim_wb(reclaim_flags, 'FILE') AS is_file,
      ss_reclaim_wb(reclaim_flags, 'ANON') AS is_anon,
      ss_reclaim_wb(reclaim_flags, 'SYNC') AS is_sync,
      ss_reclaim_wb(reclaim_flags, 'ASYNC') AS is_async
    FROM mm_vmscan_write_folio
  )
),
numbered AS (
  SELECT *, sum(new_burst) OVER (PARTITION BY utid ORDER BY ts, id ROWS UNBOUNDED PRECEDING) AS burst FROM w
),
bursts AS MATERIALIZED (
  SELECT utid, burst,
    min(ts) AS ts,
    max(ts) AS last_ts,
    arg_min(id, ts) AS first_id,
    count(*) AS pages,
    count(*) FILTER (WHERE is_file) AS file_pages,
    count(*) FILTER (WHERE is_anon) AS anon_pages,
    count(*) FILTER (WHERE is_sync) AS sync_pages,
    count(*) FILTER (WHERE is_async) AS async_pages,
    list_sort(list(id)) AS event_ids
  FROM numbered
  GROUP BY utid, burst
),
lru AS (
  SELECT l.utid, b.burst, l.nr_dirty, l.nr_writeback, l.nr_congested, l.nr_immediate, l.nr_scanned, l.nr_reclaimed
  FROM (SELECT * FROM mm_vmscan_lru_shrink_inactive WHERE utid IN (SELECT utid FROM bursts)) l
  ASOF JOIN (SELECT utid, burst, ts - (SELECT gap_ns FROM params) AS from_ts,
                    last_ts + (SELECT gap_ns FROM params) AS to_ts FROM bursts) b
    ON b.utid = l.utid AND l.ts >= b.from_ts
  WHERE l.ts <= b.to_ts
),
lru_agg AS (
  SELECT utid, burst,
    sum(nr_dirty)::BIGINT AS nr_dirty, sum(nr_writeback)::BIGINT AS nr_writeback,
    sum(nr_congested)::BIGINT AS nr_congested, sum(nr_immediate)::BIGINT AS nr_immediate,
    sum(nr_scanned)::BIGINT AS nr_scanned, sum(nr_reclaimed)::BIGINT AS nr_reclaimed,
    count(*) AS lru_passes
  FROM lru GROUP BY utid, burst
),
reclaim AS (
  SELECT utid, family, ts, end_ts, state FROM ss_reclaim_windows() WHERE family <> 'memcg_softlimit'
),
classified AS (
  SELECT b.*, f.cpu, f.event, t.tid, t.name AS tname, a.nr_dirty, a.nr_writeback, a.nr_congested, a.nr_immediate,
    a.nr_scanned, a.nr_reclaimed, a.lru_passes,
    CASE WHEN ss_is_kswapd(t.name) THEN 'kswapd'
         WHEN r.family IS NOT NULL AND (r.state <> 'closed' OR r.end_ts >= b.ts)
           THEN replace(r.family, '_', ' ') || ' reclaim'
         ELSE 'other' END AS context
  FROM bursts b
  JOIN (SELECT id AS first_id, cpu, event FROM mm_vmscan_write_folio) f USING (first_id)
  LEFT JOIN lru_agg a USING (utid, burst)
  LEFT JOIN thread t ON t.utid = b.utid
  ASOF LEFT JOIN reclaim r ON r.utid = b.utid AND b.ts >= r.ts
),
described AS (
  SELECT c.*,
    ss_task(tname, tid) || CASE WHEN context IN ('kswapd', 'other') THEN '' ELSE ' (' || context || ')' END AS who,
    CASE WHEN file_pages > 0 AND anon_pages > 0 THEN file_pages || ' file + ' || anon_pages || ' anon'
         WHEN file_pages > 0 THEN file_pages || ' file'
         WHEN anon_pages > 0 THEN anon_pages || ' anon'
         ELSE CAST(pages AS VARCHAR) END
      || CASE WHEN pages = 1 THEN ' page' ELSE ' pages' END AS pages_text
  FROM classified c
)
SELECT
  CASE WHEN file_pages >= p.crit_file THEN 'critical'
       WHEN (context = 'kswapd' AND file_pages > 0) OR sync_pages > 0 THEN 'warn'
       ELSE 'info' END AS severity,
  ts,
  last_ts - ts AS dur,
  last_ts - ts AS impact,
  cpu,
  utid,
  CASE WHEN file_pages > 0
       THEN who || ' starts dirty page writeback from reclaim: ' || pages_text || ' in ' || ss_fmt_dur(last_ts - ts)
       ELSE who || ' writes ' || pages_text || ' to swap from reclaim in ' || ss_fmt_dur(last_ts - ts) END
    || CASE WHEN sync_pages > 0 THEN ' (' || sync_pages || ' sync)' ELSE '' END AS title,
  {
    'pages': pages,
    'file_pages': file_pages,
    'anon_pages': anon_pages,
    'async_pages': async_pages,
    'sync_pages': sync_pages,
    'context': context,
    'event': event,
    'nr_dirty': nr_dirty,
    'nr_writeback': nr_writeback,
    'nr_congested': nr_congested,
    'nr_immediate': nr_immediate,
    'nr_scanned': nr_scanned,
    'nr_reclaimed': nr_reclaimed,
    'lru_passes': coalesce(lru_passes, 0)
  } AS "values",
  event_ids,
  'burst' AS kind
FROM described, params p
ORDER BY ss_severity_rank(severity), ts
