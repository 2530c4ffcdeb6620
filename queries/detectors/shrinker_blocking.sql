-- shrinker_blocking: slab shrinker calls that block the reclaiming task
-- =====================================================================
--
-- @title Shrinker calls that block
-- @description Slab shrinker calls (do_shrink_slab) lasting 10 ms or more, with the shrinker, the work it carried in and what it freed, and the reclaim context it held up (kswapd, or which task's direct / memcg reclaim).
-- @param warn_ns BIGINT 10000000 -- a call lasting at least this long (ns) is a warn finding: 10 ms
-- @param critical_ns BIGINT 100000000 -- a call lasting at least this long (ns) is critical: 100 ms
-- @requires vmscan:mm_shrink_slab_start vmscan:mm_shrink_slab_end
-- @impact the call's duration (start to end): the time the reclaiming task was held up; for a call open at the end of the trace or begun before it, the part inside the trace; 0 for a call whose end was lost (its length is not known).
-- @severity critical: a call of critical_ns (100 ms) or more; warn: warn_ns (10 ms) or more. A call still running at the end of the trace or begun before it: by the same thresholds on the part inside the trace, else info. A call whose end event was lost: info.
--
-- What it finds
--   Every mm_shrink_slab_start paired with the mm_shrink_slab_end that closes
--   it, as one "shrinker call" of a task. Reclaim (kswapd, direct reclaim,
--   memcg reclaim, drop_caches) calls each registered shrinker through
--   do_shrink_slab(); the shrinker's scan callback (e.g. super_cache_scan for
--   the dentry/inode caches of one superblock, or a filesystem's own) runs
--   synchronously in the reclaiming task. While it runs, kswapd does not
--   reclaim LRU pages and a task in direct reclaim does not get its memory.
--
-- Why it matters
--   A shrinker blocking for 100s of ms (inode eviction waiting on XFS log or
--   inode cluster IO, lock contention on a busy cache) stalls every allocator
--   waiting on kswapd or in direct reclaim behind it. `nr_objects_to_shrink`
--   is the deferred work carried in from earlier calls that could not scan
--   (GFP_NOFS callers defer their share to the next capable caller), so a
--   large value means one unlucky caller pays for others' deferred work;
--   `freed` (the tracepoint's "last shrinker return val") against
--   `total_scan` says whether the time bought anything.
--
-- Defaults
--   warn 10 ms: a healthy shrinker call takes microseconds to a few hundred
--   of them; 10 ms is a full scheduler tick at HZ=100 and the point where
--   allocators waiting on kswapd start to notice. critical 100 ms: a
--   user-visible hang, the inode/XFS reclaim stalls kernel developers chase.
--
-- Pairing (decisions where the kernel leaves it open)
--   * Per task (utid), a start pairs with the task's next shrinker event when
--     that is an end of the same shrinker symbol (either symbol NULL counts as
--     the same). Shrinker calls do not nest on a task (reclaim sets
--     PF_MEMALLOC, so a shrinker's own allocations never re-enter reclaim).
--     The `shr` pointer is not compared: tracefs text hashes it.
--   * A start followed by another start (or by an end of another shrinker) on
--     its task lost its end event (ring-buffer overrun). dur = until that next
--     event (an upper bound), always info. values.open = true, end_lost = true.
--   * A start whose end was lost (either of the above, or no later shrinker
--     event at all) but whose task has a later reclaim event before its next
--     shrinker event (mm_vmscan_lru_*, kswapd_sleep/wake, *_reclaim_begin/end,
--     write_folio, wakeup_kswapd: none can happen inside a shrinker call,
--     whose task runs with PF_MEMALLOC): the call had returned by then.
--     dur = until that event (an upper bound, values.bound_ns), always info,
--     end_lost = true. A ring buffer that overran loses ends this way;
--     reporting them as 600 ms "still running" calls would be false.
--   * A start with no later shrinker or reclaim event on its task is OPEN:
--     still running when the trace ended. dur = trace end - ts (a lower
--     bound), severity by the thresholds, at least info. values.open = true.
--   * An end that is its task's first shrinker event began before the trace:
--     ts = trace start, dur = end - trace start, severity by the thresholds,
--     at least info. values.begin_missing = true. Other ends without a start
--     (lost start events) are not reported.
--   * Context: 'kswapd' for kswapd threads; else the innermost traced reclaim
--     of the same task around the call ('direct reclaim', 'memcg reclaim',
--     'node reclaim', from mm_vmscan_*_reclaim_begin/end); else 'other'
--     (drop_caches, proactive reclaim, or a reclaim whose begin was not traced).
--
-- Columns: the finding contract (severity, ts, dur, cpu, utid, title, values,
-- event_ids, kind). kind is always 'call'. values: shrinker, context, shr,
-- nid, priority, gfp_flags, nr_objects_to_shrink, cache_items, delta,
-- total_scan, freed, unused_scan, new_scan, open, end_lost, begin_missing,
-- bound_ns (end lost: the call had returned within this long).
-- event_ids: [start id, end id] (whichever exist).
WITH
params AS (
  SELECT $warn_ns::BIGINT AS warn_ns, $critical_ns::BIGINT AS critical_ns
),
bounds AS (
  SELECT
    ss_trace_start(least((SELECT min(ts) FROM mm_shrink_slab_start), (SELECT min(ts) FROM mm_shrink_slab_end))) AS t0,
    ss_trace_end(greatest((SELECT max(ts) FROM mm_shrink_slab_start), (SELECT max(ts) FROM mm_shrink_slab_end))) AS t1
),
-- Starts and ends of one task (lib/macros.sql: ss_shrinker_pairs, shared with
-- the summary and metrics): a start pairs with the task's next shrinker event
-- if that is an end of the same symbol.
paired AS (
  SELECT begin_id AS start_id, ts, utid, shrinker AS sym, state, end_id, next_ts AS n_ts FROM ss_shrinker_pairs()
),
-- Starts without their end: did the task go on reclaiming after them? Its
-- next reclaim event (of any kind a shrinker call cannot emit) bounds the
-- call, when it comes before the task's next shrinker event.
unended AS (
  SELECT start_id, ts, utid, n_ts FROM paired WHERE state IN ('open', 'end_lost')
),
later_reclaim AS (
  SELECT utid, ts FROM mm_vmscan_lru_shrink_inactive WHERE utid IN (SELECT utid FROM unended)
  UNION ALL SELECT utid, ts FROM mm_vmscan_lru_shrink_active WHERE utid IN (SELECT utid FROM unended)
  UNION ALL SELECT utid, ts FROM mm_vmscan_lru_isolate WHERE utid IN (SELECT utid FROM unended)
  UNION ALL SELECT utid, ts FROM mm_vmscan_kswapd_sleep WHERE utid IN (SELECT utid FROM unended)
  UNION ALL SELECT utid, ts FROM mm_vmscan_kswapd_wake WHERE utid IN (SELECT utid FROM unended)
  UNION ALL SELECT utid, ts FROM mm_vmscan_wakeup_kswapd WHERE utid IN (SELECT utid FROM unended)
  UNION ALL SELECT utid, ts FROM mm_vmscan_direct_reclaim_begin WHERE utid IN (SELECT utid FROM unended)
  UNION ALL SELECT utid, ts FROM mm_vmscan_direct_reclaim_end WHERE utid IN (SELECT utid FROM unended)
  UNION ALL SELECT utid, ts FROM mm_vmscan_write_folio WHERE utid IN (SELECT utid FROM unended)
),
returned AS (
  SELECT u.start_id, min(l.ts) AS bound_ts
  FROM unended u
  JOIN later_reclaim l ON l.utid = u.utid AND l.ts > u.ts AND (u.n_ts IS NULL OR l.ts < u.n_ts)
  GROUP BY u.start_id
),
pairs AS (
  SELECT p.start_id, p.ts, p.utid, p.sym,
    CASE WHEN r.bound_ts IS NOT NULL THEN 'returned' ELSE p.state END AS state,
    p.end_id, coalesce(r.bound_ts, p.n_ts) AS n_ts
  FROM paired p LEFT JOIN returned r USING (start_id)
),
-- Duration and severity first, so the details below are joined for the
-- findings only (a few thousand rows), not for every call (millions).
measured AS (
  SELECT p.*,
    CASE state WHEN 'begin_missing' THEN (SELECT t0 FROM bounds) ELSE p.ts END AS f_ts,
    CASE state WHEN 'closed' THEN n_ts - p.ts
               WHEN 'open' THEN (SELECT t1 FROM bounds) - p.ts
               WHEN 'end_lost' THEN n_ts - p.ts
               WHEN 'returned' THEN n_ts - p.ts
               ELSE p.ts - (SELECT t0 FROM bounds) END AS f_dur
  FROM pairs p
),
reported AS (
  SELECT m.*, ss_severity(m.f_dur, p.warn_ns, p.critical_ns, NULL) AS sev_by_dur
  FROM measured m CROSS JOIN params p
  WHERE m.state <> 'closed' OR ss_severity(m.f_dur, p.warn_ns, p.critical_ns, NULL) IS NOT NULL
),
calls AS (
  SELECT r.*,
    coalesce(s.cpu, e.cpu) AS cpu, coalesce(s.shr, e.shr) AS shr, coalesce(s.nid, e.nid) AS nid,
    s.priority, s.gfp_flags, s.nr_objects_to_shrink, s.cache_items, s.delta,
    CASE WHEN r.state = 'begin_missing' THEN e.total_scan ELSE s.total_scan END AS total_scan,
    e.retval AS freed_, e.unused_scan AS unused_scan_, e.new_scan AS new_scan_
  FROM reported r
  LEFT JOIN (SELECT * FROM mm_shrink_slab_start WHERE id IN (SELECT start_id FROM reported)) s ON s.id = r.start_id
  LEFT JOIN (SELECT * FROM mm_shrink_slab_end WHERE id IN (SELECT end_id FROM reported)) e ON e.id = r.end_id
),
-- Traced reclaim windows of ordinary tasks (softlimit reclaim runs nested in
-- direct reclaim / kswapd, so it is not a context of its own here).
reclaim AS (
  SELECT utid, family, ts, end_ts FROM ss_reclaim_windows() WHERE family <> 'memcg_softlimit'
),
classified AS (
  SELECT m.*, t.tid, t.name AS tname,
    CASE WHEN ss_is_kswapd(t.name) THEN 'kswapd'
         WHEN r.family IS NOT NULL AND (r.end_ts IS NULL OR r.end_ts >= m.ts)
           THEN replace(r.family, '_', ' ') || ' reclaim'
         ELSE 'other' END AS context
  FROM calls m
  LEFT JOIN thread t ON t.utid = m.utid
  ASOF LEFT JOIN reclaim r ON r.utid = m.utid AND m.ts >= r.ts
)
SELECT
  CASE WHEN state IN ('end_lost', 'returned') THEN 'info' ELSE coalesce(sev_by_dur, 'info') END AS severity,
  f_ts AS ts,
  f_dur AS dur,
  CASE WHEN state IN ('end_lost', 'returned') THEN 0 ELSE f_dur END AS impact,
  cpu,
  utid,
  CASE state
    WHEN 'closed' THEN
      coalesce(sym, '?') || ' blocked ' || ss_task(tname, tid)
      || CASE WHEN context IN ('kswapd', 'other') THEN '' ELSE ' in ' || context END
      || ' for ' || ss_fmt_dur(f_dur)
      || ' (freed ' || ss_fmt_count(freed_) || ' of ' || ss_fmt_count(coalesce(total_scan, nr_objects_to_shrink)) || ' objects to scan)'
    WHEN 'open' THEN
      coalesce(sym, '?') || ' call by ' || ss_task(tname, tid)
      || ' still running at end of trace after ' || ss_fmt_dur(f_dur)
    WHEN 'end_lost' THEN
      coalesce(sym, '?') || ' call by ' || ss_task(tname, tid)
      || ' has no end event (next shrinker event ' || ss_fmt_dur(f_dur) || ' later)'
    WHEN 'returned' THEN
      coalesce(sym, '?') || ' call by ' || ss_task(tname, tid)
      || ' has no end event; it had returned within ' || ss_fmt_dur(f_dur)
      || ' (the task''s next reclaim event)'
    ELSE
      coalesce(sym, '?') || ' call by ' || ss_task(tname, tid)
      || ' began before the trace and ended ' || ss_fmt_dur(f_dur) || ' into it'
  END AS title,
  {
    'shrinker': sym,
    'context': context,
    'shr': shr,
    'nid': nid,
    'priority': priority,
    'gfp_flags': gfp_flags,
    'nr_objects_to_shrink': nr_objects_to_shrink,
    'cache_items': cache_items,
    'delta': delta,
    'total_scan': total_scan,
    'freed': freed_,
    'unused_scan': unused_scan_,
    'new_scan': new_scan_,
    'open': state IN ('open', 'end_lost', 'returned'),
    'end_lost': state IN ('end_lost', 'returned'),
    'begin_missing': state = 'begin_missing',
    'bound_ns': CASE WHEN state IN ('end_lost', 'returned') THEN f_dur END
  } AS "values",
  list_filter([start_id, end_id], x -> x IS NOT NULL) AS event_ids,
  'call' AS kind
FROM classified
WHERE state <> 'closed' OR sev_by_dur IS NOT NULL
ORDER BY ss_severity_rank(severity), ts, start_id
