-- direct_reclaim_stall: allocations that stalled in direct or memcg reclaim
-- ========================================================================
--
-- @title Direct-reclaim allocation stalls
-- @description Allocations that stalled in direct reclaim (global, memcg or node reclaim) for 1 ms or more: duration, order, GFP flags, pages reclaimed; the summary gives per-process stall rates and p50/p95/p99/max.
-- @param warn_ns BIGINT 1000000 -- a stall lasting at least this long (ns) is a warn finding: 1 ms
-- @param critical_ns BIGINT 100000000 -- a stall lasting at least this long (ns) is critical: 100 ms
-- @requires vmscan:mm_vmscan_direct_reclaim_begin|vmscan:mm_vmscan_memcg_reclaim_begin|vmscan:mm_vmscan_node_reclaim_begin vmscan:mm_vmscan_direct_reclaim_end|vmscan:mm_vmscan_memcg_reclaim_end|vmscan:mm_vmscan_node_reclaim_end
-- @impact the stall: begin to end of the reclaim pass, the time the allocating task waited; for a pass open at the end of the trace or begun before it, the part inside the trace; 0 for a pass whose end was lost.
-- @severity critical: a stall of critical_ns (100 ms) or more; warn: warn_ns (1 ms) or more. Open at the end of the trace or begun before it: the same thresholds on the part inside the trace, else info. A pass whose end event was lost: info.
--
-- What it finds
--   An allocation that cannot be satisfied from the free lists above the min
--   watermark enters the slow path; if waking kswapd and compaction do not
--   help, the allocating task reclaims memory itself: try_to_free_pages(),
--   bracketed by mm_vmscan_direct_reclaim_begin/end. A task charging memory
--   over its cgroup's limit does the same for its cgroup
--   (mm_vmscan_memcg_reclaim_begin/end, try_to_free_mem_cgroup_pages()),
--   zone_reclaim_mode gives mm_vmscan_node_reclaim_begin/end, and cgroup v1
--   soft-limit reclaim (mm_vmscan_memcg_softlimit_reclaim_begin/end) runs
--   inside kswapd and direct reclaim. All of them land in the
--   mm_vmscan_direct_reclaim_begin/end tables; `event` says which.
--
-- Why it matters
--   Every nanosecond in direct reclaim is latency the allocating task sees:
--   a page fault or a read() that should take microseconds waits on LRU
--   scanning, shrinkers, writeback throttling and IO. Kernel developers
--   quote it as "allocstall" rates (/proc/vmstat allocstall_*) and latency
--   percentiles; the summary gives those per process.
--
-- Defaults
--   warn 1 ms: most direct reclaim passes reclaim SWAP_CLUSTER_MAX (32)
--   pages in tens of microseconds; a millisecond is already a latency an
--   application sees on a page fault. critical 100 ms: a visible freeze.
--
-- Pairing (decisions where the kernel leaves it open)
--   * Per task and family (direct, memcg, memcg_softlimit, node), a begin
--     pairs with the next event of that family on the task when it is an
--     end. Families are paired separately because softlimit reclaim nests
--     inside direct reclaim.
--   * A begin with no later event of its family on the task is OPEN (still
--     in reclaim at the end of the trace): dur = trace end - ts, a lower
--     bound, severity by the thresholds and at least info. values.open = true.
--   * A begin followed by another begin lost its end: dur = until that begin
--     (an upper bound), always info. values.open = true, end_lost = true.
--   * An end that is the first event of its family on its task began before
--     the trace: ts = trace start, dur = end - trace start, severity by the
--     thresholds, at least info. values.begin_missing = true. Other ends
--     without a begin (lost begins) are not reported.
--   * Closed stalls under warn_ns are not findings; they are in the summary.
--
-- Kinds: 'direct' (mm_vmscan_direct_reclaim_*), 'memcg' (memcg_reclaim and
-- memcg_softlimit_reclaim; values.event tells which), 'node' (node_reclaim).
-- values: event, order, gfp_flags, nid, nr_reclaimed, open, end_lost,
-- begin_missing. event_ids: [begin id, end id] (whichever exist).
WITH
params AS (
  SELECT $warn_ns::BIGINT AS warn_ns, $critical_ns::BIGINT AS critical_ns
),
bounds AS (
  SELECT
    ss_trace_start(least((SELECT min(ts) FROM mm_vmscan_direct_reclaim_begin), (SELECT min(ts) FROM mm_vmscan_direct_reclaim_end))) AS t0,
    ss_trace_end(greatest((SELECT max(ts) FROM mm_vmscan_direct_reclaim_begin), (SELECT max(ts) FROM mm_vmscan_direct_reclaim_end))) AS t1
),
marks AS (
  -- begin/end pairs per task and family (lib/macros.sql: ss_pair_marks)
  SELECT id, ts, utid, ss_reclaim_family(event) AS grp, true AS is_begin, NULL AS tag FROM mm_vmscan_direct_reclaim_begin
  UNION ALL
  SELECT id, ts, utid, ss_reclaim_family(event), false, NULL FROM mm_vmscan_direct_reclaim_end
),
pairs AS (
  SELECT begin_id, end_id, utid, grp AS family, state,
    CASE state WHEN 'open' THEN (SELECT t1 FROM bounds) - ts
               WHEN 'begin_missing' THEN ts - (SELECT t0 FROM bounds)
               ELSE next_ts - ts END AS f_dur,
    CASE WHEN state = 'begin_missing' THEN (SELECT t0 FROM bounds) ELSE ts END AS f_ts
  FROM ss_pair_marks(marks)
),
stalls AS (
  SELECT p.*, coalesce(b.cpu, e.cpu) AS cpu,
    coalesce(b.event, replace(e.event, '_end', '_begin')) AS event,
    b."order", b.gfp_flags, b.nid, e.nr_reclaimed
  FROM pairs p
  LEFT JOIN mm_vmscan_direct_reclaim_begin b ON b.id = p.begin_id
  LEFT JOIN mm_vmscan_direct_reclaim_end e ON e.id = p.end_id
),
classified AS (
  SELECT s.*, t.tid, t.name AS tname,
    CASE family WHEN 'direct' THEN 'direct' WHEN 'node' THEN 'node' ELSE 'memcg' END AS kind,
    CASE family WHEN 'direct' THEN 'direct reclaim' WHEN 'node' THEN 'node reclaim'
                WHEN 'memcg_softlimit' THEN 'memcg soft-limit reclaim' ELSE 'memcg reclaim' END AS what,
    ss_severity(s.f_dur, p.warn_ns, p.critical_ns, NULL) AS sev_by_dur
  FROM stalls s
  CROSS JOIN params p
  LEFT JOIN thread t ON t.utid = s.utid
)
SELECT
  CASE WHEN state = 'end_lost' THEN 'info' ELSE coalesce(sev_by_dur, 'info') END AS severity,
  f_ts AS ts,
  f_dur AS dur,
  CASE WHEN state = 'end_lost' THEN 0 ELSE f_dur END AS impact,
  cpu,
  utid,
  CASE state
    WHEN 'closed' THEN
      ss_task(tname, tid) || ' stalled ' || ss_fmt_dur(f_dur) || ' in ' || what
      || ' (order ' || coalesce(CAST("order" AS VARCHAR), '?')
      || coalesce(', ' || gfp_flags, '')
      || ', reclaimed ' || coalesce(CAST(nr_reclaimed AS VARCHAR), '?') || ' pages)'
    WHEN 'open' THEN
      ss_task(tname, tid) || ' still in ' || what || ' at end of trace after ' || ss_fmt_dur(f_dur)
      || ' (order ' || coalesce(CAST("order" AS VARCHAR), '?') || coalesce(', ' || gfp_flags, '') || ')'
    WHEN 'end_lost' THEN
      ss_task(tname, tid) || ' ' || what || ' has no end event (next begin ' || ss_fmt_dur(f_dur) || ' later)'
    ELSE
      ss_task(tname, tid) || ' was in ' || what || ' before the trace began; ended '
      || ss_fmt_dur(f_dur) || ' into it (reclaimed ' || coalesce(CAST(nr_reclaimed AS VARCHAR), '?') || ' pages)'
  END AS title,
  {
    'event': event,
    'order': "order",
    'gfp_flags': gfp_flags,
    'nid': nid,
    'nr_reclaimed': nr_reclaimed,
    'open': state IN ('open', 'end_lost'),
    'end_lost': state = 'end_lost',
    'begin_missing': state = 'begin_missing'
  } AS "values",
  list_filter([begin_id, end_id], x -> x IS NOT NULL) AS event_ids,
  kind
FROM classified
WHERE state <> 'closed' OR sev_by_dur IS NOT NULL
ORDER BY ss_severity_rank(severity), ts, coalesce(begin_id, end_id)
