-- kswapd_escalation: reclaim scan priority winding up (kswapd and direct reclaim)
-- ==============================================================================
--
-- @title kswapd priority escalation
-- @description kswapd episodes (wake to sleep) and direct/memcg reclaim passes whose scan priority wound down to 6 or lower, with time to the lowest priority, pages scanned vs reclaimed and slab objects freed; and kswapd winding up again and again within a second.
-- @param warn_priority INTEGER 6 -- lowest priority at or below this is a warn finding
-- @param critical_priority INTEGER 3 -- lowest priority at or below this is critical
-- @param rampup_count INTEGER 3 -- this many kswapd episodes reaching warn_priority ...
-- @param rampup_window_ns BIGINT 1000000000 -- ... starting within this window (ns, 1 s) are a repeated ramp-up
--
-- What it finds
--   Reclaim scans the LRU lists in passes of decreasing `priority`: it starts
--   at DEF_PRIORITY (12), where a pass scans lru_size >> 12 pages (1/4096 of
--   each list), and every time a pass does not reclaim enough it lowers the
--   priority by one, doubling the share scanned: at priority 6 it scans 1/64
--   of the LRU per pass, at 1 half of it, at 0 all of it. kswapd
--   (balance_pgdat()) winds down this way until the node is balanced above
--   its high watermark, then sleeps; direct reclaim (do_try_to_free_pages())
--   does the same for one allocation. The priority each pass runs at is in
--   mm_vmscan_lru_shrink_inactive/active and (5.x+) mm_shrink_slab_start.
--
-- Why it matters
--   A low priority means reclaim is failing: scanned pages are referenced,
--   dirty, under writeback or unreclaimable (pinned, mlocked, no swap), so
--   kswapd scans ever larger parts of memory for little gain, burns CPU, and
--   allocators fall into direct reclaim. Reaching priority <= 3 (1/8 of the
--   LRU per pass) usually comes with stalls, writeback from reclaim and, at
--   0, the road to OOM. kswapd woken again and again, each time winding up,
--   means it cannot keep the node above the watermarks: a sustained
--   allocation rate it cannot match.
--
-- Defaults
--   warn at priority 6: kswapd scans 1/64 of every LRU list per pass and has
--   failed six times in a row to balance the node. critical at 3: 1/8 per
--   pass, where reclaim is close to scanning everything (0) and OOM. Three
--   such episodes within a second: kswapd is being woken faster than it can
--   balance the node, not a one-off burst.
--
-- Kinds
--   'escalation'        one kswapd episode (see ss_reclaim_passes() in
--                       lib/macros.sql: wake -> sleep, or next wake, or end of
--                       trace; or starting at the first reclaim event when the
--                       wake is not in the trace) whose lowest priority is
--                       <= warn_priority; critical at <= critical_priority.
--   'repeated_rampup'   rampup_count or more kswapd episodes of one thread,
--                       each reaching <= warn_priority, whose starts fall within
--                       rampup_window_ns of each other (a sliding window);
--                       overlapping windows merge into one finding. warn;
--                       critical when rampup_count of them reached
--                       <= critical_priority.
--   'direct_escalation' one direct / memcg / node reclaim pass of an ordinary
--                       task (mm_vmscan_*_reclaim_begin .. end, the task's own
--                       LRU/slab events in between) whose lowest priority is
--                       <= warn_priority; critical at <= critical_priority.
--                       Soft-limit reclaim is nested in these and not separate.
--                       A pass with no end runs to the next begin / trace end.
--
-- values (escalation, direct_escalation): min_priority, start_priority,
--   time_to_min_ns, nr_scanned, nr_reclaimed, efficiency (reclaimed/scanned),
--   slab_freed, lru_passes, priority_steps [{priority, at_ns}], end_reason,
--   context, nid; kswapd: ended_asleep, woken, wake_order; direct: order,
--   gfp_flags, open (no end event), end_nr_reclaimed.
-- values (repeated_rampup): episodes, min_priority, critical_episodes,
--   min_priorities (per episode), window_ns.
-- event_ids: the wake / begin event, the event of each new lowest priority,
--   the sleep / end event (repeated_rampup: each episode's start event). The
--   thousands of LRU passes in between are not listed; ts/dur and the thread
--   identify them.
WITH
params AS (
  SELECT $warn_priority::INTEGER AS warn_p, $critical_priority::INTEGER AS crit_p,
         $rampup_count::INTEGER AS n_rampups, $rampup_window_ns::BIGINT AS window_ns
),
-- every kswapd episode and task reclaim pass that wound down to warn_priority
passes AS MATERIALIZED (
  SELECT r.*, t.tid, t.name AS tname
  FROM ss_reclaim_passes() r
  LEFT JOIN thread t USING (utid)
  WHERE r.min_priority <= $warn_priority::INTEGER
),
escalations AS (
  SELECT
    CASE WHEN min_priority <= p.crit_p THEN 'critical' ELSE 'warn' END AS severity,
    ts, dur, cpu, utid,
    CASE WHEN is_kswapd THEN ss_task(tname, tid) ELSE ss_task(tname, tid) || ' ' || context END
      || ' wound up to priority ' || min_priority || ' in ' || ss_fmt_dur(time_to_min_ns)
      || ' (scanned ' || ss_fmt_count(coalesce(nr_scanned, 0)) || ', reclaimed ' || ss_fmt_pct(nr_reclaimed, nr_scanned) || ')'
      || CASE WHEN end_reason = 'end_of_trace' THEN CASE WHEN is_kswapd THEN ', awake at end of trace' ELSE ', still in reclaim at end of trace' END
              ELSE '' END AS title,
    {
      'min_priority': min_priority,
      'start_priority': start_priority,
      'time_to_min_ns': time_to_min_ns,
      'nr_scanned': nr_scanned,
      'nr_reclaimed': nr_reclaimed,
      'efficiency': CASE WHEN nr_scanned > 0 THEN round(nr_reclaimed / nr_scanned, 4) END,
      'slab_freed': slab_freed,
      'lru_passes': lru_passes,
      'priority_steps': priority_steps,
      'end_reason': end_reason,
      'context': context,
      'nid': nid,
      'ended_asleep': CASE WHEN is_kswapd THEN end_reason = 'sleep' END,
      'woken': CASE WHEN is_kswapd THEN woken END,
      'wake_order': CASE WHEN is_kswapd THEN wake_order END,
      'order': CASE WHEN NOT is_kswapd THEN wake_order END,
      'gfp_flags': gfp_flags,
      'open': CASE WHEN NOT is_kswapd THEN end_reason <> 'end' END,
      'end_nr_reclaimed': end_nr_reclaimed
    } AS "values",
    event_ids,
    CASE WHEN is_kswapd THEN 'escalation' ELSE 'direct_escalation' END AS kind
  FROM passes, params p
),
-- repeated ramp-ups: a sliding window over the qualifying kswapd episodes' starts
q AS (
  SELECT passes.*,
    count(*) OVER win AS in_window,
    max(ts) OVER win AS window_last
  FROM passes
  WHERE is_kswapd
  WINDOW win AS (PARTITION BY utid ORDER BY ts RANGE BETWEEN CURRENT ROW AND $rampup_window_ns::BIGINT FOLLOWING)
),
covered AS (
  SELECT q.*,
    max(CASE WHEN in_window >= p.n_rampups THEN window_last END)
      OVER (PARTITION BY utid ORDER BY ts, start_id ROWS UNBOUNDED PRECEDING) AS cover_until
  FROM q, params p
),
runs AS (
  SELECT *,
    sum(CASE WHEN prev_cover IS NULL OR prev_cover < ts THEN 1 ELSE 0 END)
      OVER (PARTITION BY utid ORDER BY ts, start_id ROWS UNBOUNDED PRECEDING) AS run
  FROM (
    SELECT *, lag(cover_until) OVER (PARTITION BY utid ORDER BY ts, start_id) AS prev_cover
    FROM covered
  )
  WHERE ts <= cover_until
),
rampups AS (
  SELECT
    CASE WHEN count(*) FILTER (WHERE min_priority <= p.crit_p) >= p.n_rampups
         THEN 'critical' ELSE 'warn' END AS severity,
    min(ts) AS ts,
    max(end_ts) - min(ts) AS dur,
    arg_min(cpu, ts) AS cpu,
    utid,
    ss_task(any_value(tname), any_value(tid)) || ' wound up ' || count(*) || ' times in ' || ss_fmt_dur(max(end_ts) - min(ts))
      || ', each time to priority ' || p.warn_p || ' or lower (lowest ' || min(min_priority) || ')' AS title,
    {
      'episodes': count(*),
      'min_priority': min(min_priority),
      'critical_episodes': count(*) FILTER (WHERE min_priority <= p.crit_p),
      'min_priorities': [x.p FOR x IN list_sort(list({'ts': ts, 'p': min_priority}))],
      'window_ns': p.window_ns
    } AS "values",
    list_sort(list(start_id)) AS event_ids,
    'repeated_rampup' AS kind
  FROM runs, params p
  GROUP BY utid, run, p.crit_p, p.n_rampups, p.warn_p, p.window_ns
)
SELECT * FROM (
  SELECT severity, ts, dur, cpu, utid, title, "values", event_ids, kind FROM escalations
  UNION ALL BY NAME
  SELECT severity, ts, dur, cpu, utid, title, "values", event_ids, kind FROM rampups
)
ORDER BY ss_severity_rank(severity), ts
