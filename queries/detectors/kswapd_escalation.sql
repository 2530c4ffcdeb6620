-- kswapd_escalation: reclaim scan priority winding up (kswapd, direct and memcg reclaim)
-- =====================================================================================
--
-- @title Reclaim priority escalation
-- @description kswapd episodes (wake to sleep) and direct / memcg / node reclaim passes whose scan priority wound down to 6 or lower, rated by how long they stayed there, with the priority steps, pages scanned vs reclaimed and slab objects freed; and kswapd winding up again and again within a second.
-- @param warn_priority INTEGER 6 -- a pass reaching this priority or lower is a finding
-- @param critical_priority INTEGER 3 -- ... reaching this priority or lower can be critical
-- @param warn_low_ns BIGINT 10000000 -- ... and is warn once it stayed at warn_priority or lower this long (ns, 10 ms); info before
-- @param critical_low_ns BIGINT 100000000 -- ... and critical once it stayed at critical_priority or lower this long (ns, 100 ms)
-- @param rampup_count INTEGER 3 -- this many kswapd episodes reaching warn_priority ...
-- @param rampup_window_ns BIGINT 1000000000 -- ... starting within this window (ns, 1 s) are a repeated ramp-up
-- @requires vmscan:mm_vmscan_lru_shrink_inactive|vmscan:mm_vmscan_lru_shrink_active
-- @impact the time the pass spent at warn_priority (6) or lower: from the start of its first LRU pass at that priority (the end of the last pass above it) to its last reclaim event; for a repeated ramp-up, the sum over its episodes.
-- @severity critical: reached critical_priority (3) or lower and stayed there critical_low_ns (100 ms) or more; warn: reached warn_priority (6) or lower and stayed there warn_low_ns (10 ms) or more; else info (small LRUs, such as a small memory cgroup's, reach low priorities within microseconds without any harm).
-- @severity Repeated ramp-up: critical when its episodes together spent critical_low_ns at critical_priority or lower, else warn; the episodes it covers are its children (parent_id) and info.
--
-- What it finds
--   Reclaim scans the LRU lists in passes of decreasing `priority`: it starts
--   at DEF_PRIORITY (12), where a pass scans lru_size >> 12 pages (1/4096 of
--   each list), and every time a pass does not reclaim enough it lowers the
--   priority by one, doubling the share scanned: at priority 6 it scans 1/64
--   of the LRU per pass, at 1 half of it, at 0 all of it. kswapd
--   (balance_pgdat()) winds down this way until the node is balanced above
--   its high watermark, then sleeps; direct reclaim (do_try_to_free_pages())
--   and memcg reclaim (try_to_free_mem_cgroup_pages()) do the same for one
--   allocation or charge. Within one pass the priority only goes down. The
--   priority each pass runs at is in mm_vmscan_lru_shrink_inactive/active and
--   (5.x+) mm_shrink_slab_start.
--
-- Why it matters
--   A low priority held for long means reclaim cannot get what it needs at
--   the share it scans: either it is failing (scanned pages are referenced,
--   dirty, under writeback or unreclaimable: pinned, mlocked, no swap; the
--   title's "reclaimed N%" is low) or it has far more to reclaim than passes
--   at a high priority scan (a sustained allocation rate, or a large gap to
--   the high watermark; "reclaimed" near 100%). Either way reclaim scans ever
--   larger parts of memory, burns CPU, and allocators fall into direct
--   reclaim. Priority <= 3 (1/8 of
--   the LRU per pass) held for 100s of ms comes with stalls, writeback from
--   reclaim and, at 0, the road to OOM. kswapd woken again and again, each
--   time winding up, means it cannot keep the node above the watermarks: a
--   sustained allocation rate it cannot match.
--   How LOW the priority went says little on its own: the share scanned is
--   relative to the LRU size, so reclaim of a 256 MiB memory cgroup reaches
--   priority 2 in its first microseconds to find 32 pages, harmlessly. How
--   LONG reclaim stayed there is what costs: the severity rule rates that.
--
-- Defaults
--   warn at priority 6 held 10 ms: kswapd scans 1/64 of every LRU list per
--   pass, has failed six times in a row, and keeps at it for a scheduler
--   tick. critical at 3 held 100 ms: 1/8 per pass for a user-visible time,
--   close to scanning everything (0) and OOM. Three such episodes within a
--   second: kswapd is being woken faster than it can balance the node, not a
--   one-off burst.
--
-- Kinds
--   'escalation'        one kswapd episode (see ss_reclaim_passes() in
--                       lib/macros.sql: wake -> sleep, or next wake, or end of
--                       trace; or starting at the first reclaim event when the
--                       wake is not in the trace) whose lowest priority is
--                       <= warn_priority.
--   'repeated_rampup'   rampup_count or more kswapd episodes of one thread,
--                       each reaching <= warn_priority, whose starts fall within
--                       rampup_window_ns of each other (a sliding window);
--                       overlapping windows merge into one finding. The
--                       episodes it covers are its children.
--   'direct_escalation' one direct reclaim pass of an ordinary task
--   'memcg_escalation'  one memcg reclaim pass (a task charging over its cgroup's limit)
--   'node_escalation'   one node reclaim pass (zone_reclaim_mode)
--                       (mm_vmscan_*_reclaim_begin .. end, the task's own
--                       LRU/slab events in between) whose lowest priority is
--                       <= warn_priority. Soft-limit reclaim is nested in these
--                       and not separate. A pass with no end runs to the next
--                       begin / trace end. These titles name the task and its
--                       reclaim, never kswapd.
--
-- values (escalation, *_escalation): min_priority, start_priority,
--   time_to_min_ns, low_priority_ns (time at <= warn_priority),
--   critical_priority_ns (time at <= critical_priority), nr_scanned,
--   nr_reclaimed, efficiency (reclaimed/scanned), slab_freed, lru_passes,
--   priority_steps [{priority, at_ns}], end_reason, context, nid; kswapd:
--   ended_asleep, woken, wake_order; tasks: order, gfp_flags, open (no end
--   event), end_nr_reclaimed.
-- values (repeated_rampup): episodes, min_priority, critical_episodes
--   (episodes critical by themselves), min_priorities (per episode),
--   window_ns, low_priority_ns, critical_priority_ns (sums over the episodes).
-- event_ids: the wake / begin event, the event of each new lowest priority,
--   the sleep / end event (repeated_rampup: each episode's start event). The
--   thousands of LRU passes in between are not listed; ts/dur and the thread
--   identify them.
WITH
params AS (
  SELECT $warn_priority::INTEGER AS warn_p, $critical_priority::INTEGER AS crit_p,
         $warn_low_ns::BIGINT AS warn_low, $critical_low_ns::BIGINT AS crit_low,
         $rampup_count::INTEGER AS n_rampups, $rampup_window_ns::BIGINT AS window_ns
),
-- every kswapd episode and task reclaim pass that wound down to warn_priority,
-- with the time it then spent at or below warn_priority / critical_priority:
-- from the start of the first LRU pass at or below it (priority_steps'
-- from_ns: the end of the last pass above it, since mm_vmscan_lru_shrink_*
-- fire when a pass ends) to the last reclaim event of the episode (within a
-- pass the priority only goes down)
passes AS MATERIALIZED (
  SELECT r.*, t.tid, t.name AS tname,
    greatest(coalesce(r.last_event_ns, 0) - list_min([x.from_ns FOR x IN r.priority_steps IF x.priority <= $warn_priority::INTEGER]), 0) AS low_ns,
    CASE WHEN r.min_priority <= $critical_priority::INTEGER
         THEN greatest(coalesce(r.last_event_ns, 0) - list_min([x.from_ns FOR x IN r.priority_steps IF x.priority <= $critical_priority::INTEGER]), 0)
         ELSE 0 END AS crit_ns,
    CASE WHEN r.is_kswapd THEN 'kswapd' ELSE split_part(r.context, ' ', 1) END AS family
  FROM ss_reclaim_passes() r
  LEFT JOIN thread t USING (utid)
  WHERE r.min_priority <= $warn_priority::INTEGER
),
rated AS (
  SELECT passes.*,
    CASE WHEN min_priority <= p.crit_p AND crit_ns >= p.crit_low THEN 'critical'
         WHEN low_ns >= p.warn_low THEN 'warn'
         ELSE 'info' END AS own_severity,
    'pass:' || utid || ':' || seg AS ref
  FROM passes, params p
),
-- repeated ramp-ups: a sliding window over the qualifying kswapd episodes' starts
q AS (
  SELECT rated.*,
    count(*) OVER win AS in_window,
    max(ts) OVER win AS window_last
  FROM rated
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
escalations AS (
  SELECT
    CASE WHEN ru.run IS NOT NULL THEN 'info' ELSE r.own_severity END AS severity,
    r.ts, r.dur, r.cpu, r.utid,
    CASE WHEN r.is_kswapd THEN ss_task(r.tname, r.tid) ELSE ss_task(r.tname, r.tid) || ' in ' || r.context END
      || ' wound up to priority ' || r.min_priority || ' in ' || ss_fmt_dur(r.time_to_min_ns)
      || ', ' || ss_fmt_dur(r.low_ns) || ' at priority ' || p.warn_p || ' or lower'
      || ' (scanned ' || ss_fmt_count(coalesce(r.nr_scanned, 0)) || ', reclaimed ' || ss_fmt_pct(r.nr_reclaimed, r.nr_scanned) || ')'
      || CASE WHEN r.end_reason = 'end_of_trace' THEN CASE WHEN r.is_kswapd THEN ', awake at end of trace' ELSE ', still in reclaim at end of trace' END
              ELSE '' END AS title,
    {
      'min_priority': r.min_priority,
      'start_priority': r.start_priority,
      'time_to_min_ns': r.time_to_min_ns,
      'low_priority_ns': r.low_ns,
      'critical_priority_ns': CASE WHEN r.min_priority <= p.crit_p THEN r.crit_ns END,
      'nr_scanned': r.nr_scanned,
      'nr_reclaimed': r.nr_reclaimed,
      'efficiency': CASE WHEN r.nr_scanned > 0 THEN round(r.nr_reclaimed / r.nr_scanned, 4) END,
      'slab_freed': r.slab_freed,
      'lru_passes': r.lru_passes,
      'priority_steps': r.priority_steps,
      'end_reason': r.end_reason,
      'context': r.context,
      'nid': r.nid,
      'ended_asleep': CASE WHEN r.is_kswapd THEN r.end_reason = 'sleep' END,
      'woken': CASE WHEN r.is_kswapd THEN r.woken END,
      'wake_order': CASE WHEN r.is_kswapd THEN r.wake_order END,
      'order': CASE WHEN NOT r.is_kswapd THEN r.wake_order END,
      'gfp_flags': r.gfp_flags,
      'open': CASE WHEN NOT r.is_kswapd THEN r.end_reason <> 'end' END,
      'end_nr_reclaimed': r.end_nr_reclaimed
    } AS "values",
    r.event_ids,
    CASE WHEN r.is_kswapd THEN 'escalation' ELSE r.family || '_escalation' END AS kind,
    r.low_ns AS impact,
    r.ref,
    CASE WHEN ru.run IS NOT NULL THEN 'rampup:' || r.utid || ':' || ru.run END AS parent_ref
  FROM rated r
  CROSS JOIN params p
  LEFT JOIN runs ru ON ru.utid = r.utid AND ru.seg = r.seg
),
rampups AS (
  SELECT
    CASE WHEN sum(crit_ns) >= p.crit_low THEN 'critical' ELSE 'warn' END AS severity,
    min(ts) AS ts,
    max(end_ts) - min(ts) AS dur,
    arg_min(cpu, ts) AS cpu,
    utid,
    ss_task(any_value(tname), any_value(tid)) || ' wound up ' || count(*) || ' times in ' || ss_fmt_dur(max(end_ts) - min(ts))
      || ', each time to priority ' || p.warn_p || ' or lower (lowest ' || min(min_priority) || '), '
      || ss_fmt_dur(sum(low_ns)) || ' at priority ' || p.warn_p || ' or lower in all' AS title,
    {
      'episodes': count(*),
      'min_priority': min(min_priority),
      'critical_episodes': count(*) FILTER (WHERE own_severity = 'critical'),
      'min_priorities': [x.p FOR x IN list_sort(list({'ts': ts, 'p': min_priority}))],
      'window_ns': p.window_ns,
      'low_priority_ns': sum(low_ns)::BIGINT,
      'critical_priority_ns': sum(crit_ns)::BIGINT
    } AS "values",
    list_sort(list(start_id)) AS event_ids,
    'repeated_rampup' AS kind,
    sum(low_ns)::BIGINT AS impact,
    'rampup:' || utid || ':' || run AS ref,
    NULL::VARCHAR AS parent_ref
  FROM runs, params p
  GROUP BY utid, run, p.crit_low, p.warn_p, p.window_ns
)
SELECT * FROM (
  SELECT severity, ts, dur, cpu, utid, title, "values", event_ids, kind, impact, ref, parent_ref FROM escalations
  UNION ALL BY NAME
  SELECT severity, ts, dur, cpu, utid, title, "values", event_ids, kind, impact, ref, parent_ref FROM rampups
)
ORDER BY ss_severity_rank(severity), ts
