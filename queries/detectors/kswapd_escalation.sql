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
-- Kinds
--   'escalation'        one kswapd episode (see ss_kswapd_episodes() in
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
--   slab_freed, lru_passes, priority_steps [{priority, at_ns}], ended_asleep,
--   end_reason, woken, wake_order, nid (kswapd); context, order, gfp_flags,
--   open (direct).
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
ep AS (
  SELECT e.*, t.tid, t.name AS tname FROM ss_kswapd_episodes() e LEFT JOIN thread t USING (utid)
),
escalations AS (
  SELECT
    CASE WHEN min_priority <= p.crit_p THEN 'critical' ELSE 'warn' END AS severity,
    ts, dur, cpu, utid,
    ss_task(tname, tid) || ' wound up to priority ' || min_priority || ' in ' || ss_fmt_dur(time_to_min_ns)
      || ' (scanned ' || ss_fmt_count(coalesce(nr_scanned, 0)) || ', reclaimed ' || ss_fmt_pct(nr_reclaimed, nr_scanned) || ')'
      || CASE end_reason WHEN 'end_of_trace' THEN ', awake at end of trace' ELSE '' END AS title,
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
      'ended_asleep': end_reason = 'sleep',
      'end_reason': end_reason,
      'woken': woken,
      'wake_order': wake_order,
      'nid': nid,
      'context': 'kswapd',
      'order': NULL::INTEGER,
      'gfp_flags': NULL::VARCHAR,
      'open': NULL::BOOLEAN
    } AS "values",
    event_ids,
    'escalation' AS kind
  FROM ep, params p
  WHERE min_priority <= p.warn_p
),
-- repeated ramp-ups: sliding window over qualifying episodes' starts
q AS (
  SELECT ep.*,
    count(*) OVER win AS in_window,
    max(ts) OVER win AS window_last
  FROM ep, params p
  WHERE min_priority <= p.warn_p
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
      'min_priorities': list(min_priority ORDER BY ts),
      'window_ns': p.window_ns
    } AS "values",
    list(start_id ORDER BY ts) AS event_ids,
    'repeated_rampup' AS kind
  FROM runs, params p
  GROUP BY utid, run, p.crit_p, p.n_rampups, p.warn_p, p.window_ns
),
-- direct / memcg / node reclaim passes of ordinary tasks
t_end AS (
  SELECT ss_trace_end(greatest((SELECT max(ts) FROM mm_vmscan_direct_reclaim_begin), (SELECT max(ts) FROM mm_vmscan_direct_reclaim_end),
    (SELECT max(ts) FROM mm_vmscan_lru_shrink_inactive), (SELECT max(ts) FROM mm_vmscan_lru_shrink_active))) AS t1
),
win AS (
  SELECT w.*, coalesce(w.end_ts, w.next_ts, (SELECT t1 FROM t_end)) AS stop_ts
  FROM ss_reclaim_windows() w
  WHERE w.family <> 'memcg_softlimit'
    AND w.utid NOT IN (SELECT utid FROM thread WHERE ss_is_kswapd(name))
),
dact AS (
  SELECT id, ts, utid, priority, nr_scanned, nr_reclaimed, NULL::BIGINT AS slab_freed, true AS is_lru
  FROM mm_vmscan_lru_shrink_inactive WHERE utid IN (SELECT utid FROM win)
  UNION ALL
  SELECT id, ts, utid, priority, NULL, NULL, NULL, false FROM mm_vmscan_lru_shrink_active WHERE utid IN (SELECT utid FROM win)
  UNION ALL
  SELECT id, ts, utid, priority, NULL, NULL, NULL, false FROM mm_shrink_slab_start WHERE utid IN (SELECT utid FROM win)
  UNION ALL
  SELECT id, ts, utid, NULL, NULL, NULL, retval, false FROM mm_shrink_slab_end WHERE utid IN (SELECT utid FROM win)
),
dmember AS (
  SELECT a.*, w.begin_id,
    min(a.priority) OVER (PARTITION BY w.begin_id ORDER BY a.ts, a.id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_min
  FROM dact a
  ASOF JOIN win w ON w.utid = a.utid AND a.ts >= w.ts
  WHERE a.ts <= w.stop_ts
),
dagg AS (
  SELECT begin_id,
    min(priority) AS min_priority,
    arg_min(priority, (ts, id)) FILTER (WHERE priority IS NOT NULL) AS start_priority,
    sum(nr_scanned)::BIGINT AS nr_scanned,
    sum(nr_reclaimed)::BIGINT AS nr_reclaimed,
    sum(slab_freed)::BIGINT AS slab_freed,
    count(*) FILTER (WHERE is_lru) AS lru_passes,
    list({'priority': priority, 'ts': ts} ORDER BY ts, id) FILTER (WHERE priority IS NOT NULL AND (prev_min IS NULL OR priority < prev_min)) AS steps,
    list(id ORDER BY ts, id) FILTER (WHERE priority IS NOT NULL AND (prev_min IS NULL OR priority < prev_min)) AS step_ids
  FROM dmember
  GROUP BY begin_id
),
direct AS (
  SELECT
    CASE WHEN d.min_priority <= p.crit_p THEN 'critical' ELSE 'warn' END AS severity,
    w.ts,
    w.stop_ts - w.ts AS dur,
    w.cpu,
    w.utid,
    ss_task(t.name, t.tid) || ' ' || replace(w.family, '_', ' ') || ' reclaim wound up to priority ' || d.min_priority
      || ' in ' || ss_fmt_dur(list_last(d.steps).ts - w.ts)
      || ' (scanned ' || ss_fmt_count(coalesce(d.nr_scanned, 0)) || ', reclaimed ' || ss_fmt_pct(d.nr_reclaimed, d.nr_scanned) || ')' AS title,
    {
      'min_priority': d.min_priority,
      'start_priority': d.start_priority,
      'time_to_min_ns': list_last(d.steps).ts - w.ts,
      'nr_scanned': d.nr_scanned,
      'nr_reclaimed': d.nr_reclaimed,
      'efficiency': CASE WHEN d.nr_scanned > 0 THEN round(d.nr_reclaimed / d.nr_scanned, 4) END,
      'slab_freed': d.slab_freed,
      'lru_passes': d.lru_passes,
      'priority_steps': [{'priority': s.priority, 'at_ns': s.ts - w.ts} FOR s IN d.steps],
      'ended_asleep': NULL::BOOLEAN,
      'end_reason': NULL::VARCHAR,
      'woken': NULL::BOOLEAN,
      'wake_order': NULL::INTEGER,
      'nid': w.nid,
      'context': replace(w.family, '_', ' ') || ' reclaim',
      'order': w."order",
      'gfp_flags': w.gfp_flags,
      'open': w.state <> 'closed'
    } AS "values",
    list_filter([w.begin_id] || d.step_ids || [w.end_id], x -> x IS NOT NULL) AS event_ids,
    'direct_escalation' AS kind
  FROM dagg d
  JOIN win w USING (begin_id)
  LEFT JOIN thread t ON t.utid = w.utid
  CROSS JOIN params p
  WHERE d.min_priority <= p.warn_p
)
SELECT * FROM (
  SELECT severity, ts, dur, cpu, utid, title, "values", event_ids, kind FROM escalations
  UNION ALL BY NAME
  SELECT severity, ts, dur, cpu, utid, title, "values", event_ids, kind FROM rampups
  UNION ALL BY NAME
  SELECT severity, ts, dur, cpu, utid, title, "values", event_ids, kind FROM direct
)
ORDER BY ss_severity_rank(severity), ts
