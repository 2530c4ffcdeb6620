-- direct_reclaim_stall summary: stall rate and latency per process
-- ===============================================================
--
-- One row per (kind, process): how often its threads stalled in reclaim and
-- for how long, the way kernel developers quote it ("alloc stall rate =
-- 94.42/sec, p99 12.3 ms"). Only stalls whose begin and end are both in the
-- trace count. Percentiles are nearest-rank (quantile_disc): each is a
-- duration some stall really had, exact to the ns.
--
-- Columns
--   kind VARCHAR            'direct' | 'memcg' | 'node' (as the findings)
--   upid INTEGER            JOINID(process.upid); NULL when the trace does not say the tgid
--   pid INTEGER             process id (tgid); NULL when unknown
--   process VARCHAR         process name; the thread name when the process is unknown
--   threads BIGINT          distinct threads that stalled
--   stalls BIGINT           completed stalls
--   stalls_per_sec DOUBLE   stalls / trace duration in s, 2 decimals
--   total_ns BIGINT         time spent stalled (sum over threads)
--   p50_ns, p95_ns, p99_ns, max_ns BIGINT   stall duration percentiles
--   nr_reclaimed BIGINT     pages reclaimed by these stalls
WITH
bounds AS (
  SELECT
    ss_trace_start(least((SELECT min(ts) FROM mm_vmscan_direct_reclaim_begin), (SELECT min(ts) FROM mm_vmscan_direct_reclaim_end))) AS t0,
    ss_trace_end(greatest((SELECT max(ts) FROM mm_vmscan_direct_reclaim_begin), (SELECT max(ts) FROM mm_vmscan_direct_reclaim_end))) AS t1
),
stalls AS (
  -- completed passes (lib/macros.sql: ss_reclaim_windows(), shared with other detectors)
  SELECT r.utid, r.end_ts - r.ts AS dur, r.nr_reclaimed,
    CASE r.family WHEN 'direct' THEN 'direct' WHEN 'node' THEN 'node' ELSE 'memcg' END AS kind,
    t.upid, p.pid, coalesce(p.name, t.name) AS process, t.name AS tname
  FROM ss_reclaim_windows() r
  LEFT JOIN thread t ON t.utid = r.utid
  LEFT JOIN process p ON p.upid = t.upid
  WHERE r.state = 'closed'
)
SELECT
  kind,
  any_value(upid) AS upid,
  any_value(pid) AS pid,
  any_value(process) AS process,
  count(DISTINCT utid) AS threads,
  count(*) AS stalls,
  CASE WHEN (SELECT t1 - t0 FROM bounds) > 0
       THEN round(count(*) / ((SELECT t1 - t0 FROM bounds) / 1e9), 2) END AS stalls_per_sec,
  sum(dur)::BIGINT AS total_ns,
  quantile_disc(dur, 0.50) AS p50_ns,
  quantile_disc(dur, 0.95) AS p95_ns,
  quantile_disc(dur, 0.99) AS p99_ns,
  max(dur) AS max_ns,
  sum(nr_reclaimed)::BIGINT AS nr_reclaimed
FROM stalls
GROUP BY kind, coalesce('upid:' || upid, 'comm:' || tname)
ORDER BY stalls DESC, max_ns DESC, process
