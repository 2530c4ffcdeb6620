-- reclaim_throttled: reclaim putting tasks to sleep (mm_vmscan_throttled)
-- =====================================================================
--
-- @title Reclaim throttled on writeback
-- @description Sleeps in reclaim_throttle() (mm_vmscan_throttled, 5.16+) per task, in bursts: how many, how long in all and at most, for which reason (WRITEBACK, ISOLATED, NOPROGRESS, CONGESTED), how many slept their full timeout, and the reclaim they sat in (kswapd, or the task's direct / memcg reclaim).
-- @param warn_ns BIGINT 50000000 -- a burst whose sleeps add up to at least this much (ns) is a warn finding: 50 ms
-- @param critical_ns BIGINT 1000000000 -- a burst whose sleeps add up to at least this much (ns) is critical: 1 s
-- @param gap_ns BIGINT 1000000000 -- sleeps of one task whose ends are at most this far apart (ns) form one burst: 1 s
-- @requires vmscan:mm_vmscan_throttled
-- @impact the burst's time asleep: the sum of its usec_delayed.
-- @severity critical: a burst slept critical_ns (1 s) or more in all; warn: warn_ns (50 ms) or more; else info (a few short sleeps: reclaim pacing itself as designed).
--
-- What it finds
--   Since 5.16 reclaim no longer calls congestion_wait(): when it finds
--   pages it cannot reclaim yet it sleeps in reclaim_throttle() on a
--   per-node wait queue until enough pages finish writeback (or isolation
--   ends, or reclaim makes progress), or until a timeout: WRITEBACK HZ/10
--   (100 ms), ISOLATED HZ/50, NOPROGRESS and CONGESTED a jiffy or HZ/50.
--   mm_vmscan_throttled is emitted when the sleep ends, with usec_delayed
--   (printed `usect_delayed=`, the kernel's typo) the time slept, rounded to
--   jiffies. Each sleep here is [ts - usec_delayed, ts]. Sleeps of one task
--   whose ends are at most gap_ns apart make a burst; one finding per burst.
--
-- Why it matters
--   A task in direct or memcg reclaim that sleeps on writeback is held up
--   by the device: its allocation waits for dirty pages to be cleaned, the
--   "is memory cleaned fast enough for reclaim" question of the writeback
--   throttling threads. WRITEBACK sleeps say reclaim met too many pages
--   under writeback (nr_writeback, nr_immediate); a sleep that ran its full
--   timeout (usec_delayed >= usec_timeout) got no wake-up at all: writeback
--   completed too slowly to wake it. ISOLATED means too many pages were
--   isolated by parallel reclaimers, NOPROGRESS that reclaim freed nothing.
--
-- Defaults
--   warn 50 ms: a handful of jiffy sleeps is reclaim pacing itself; tens of
--   milliseconds of sleep in one allocation burst is latency the task's
--   user sees (a 60 Hz frame is 16 ms). critical 1 s: a task asleep in
--   reclaim for a second in one burst is a stall worth a bug report. gap
--   1 s: sleeps of one pressure episode come tens of ms apart.
--
-- Kernel versions
--   mm_vmscan_throttled exists since 5.16 (before it, reclaim waited in
--   congestion_wait(), traced as writeback:writeback_congestion_wait with
--   usec_delayed, and wait_iff_congested: not read here). Its reason field
--   prints VMSCAN_THROTTLE_* names; raw-field text keeps the bit number
--   value, and trace.dat decodes it as
--   the flag bits' number ('0x1'): 1 WRITEBACK, 2 ISOLATED, 4 NOPROGRESS,
--   8 CONGESTED, 0 NONE (the reason is one bit, 1 << VMSCAN_THROTTLE_*).
--   CONGESTED was added in 5.17.
--
-- values: sleeps, slept_ns, max_sleep_ns, timed_out (sleeps that ran the
-- full timeout), reasons ('WRITEBACK 25, ISOLATED 2'), context ('kswapd',
-- 'direct reclaim', 'memcg reclaim', 'node reclaim', 'other'), nid.
-- event_ids: every mm_vmscan_throttled of the burst (at most 50). kind: the
-- burst's main reason, lower case: 'writeback', 'isolated', 'noprogress',
-- 'congested' (the one with the most time slept).
WITH
params AS (
  SELECT $warn_ns::BIGINT AS warn_ns, $critical_ns::BIGINT AS critical_ns, $gap_ns::BIGINT AS gap_ns
),
sleeps AS (
  SELECT id, ts, cpu, utid, nid, usec_timeout, usec_delayed,
    greatest(coalesce(usec_delayed, 0), 0) * 1000 AS slept_ns,
    CASE WHEN regexp_matches(coalesce(reason, ''), '^(0x[0-9a-fA-F]+|[0-9]+)$')
         THEN CASE CAST(reason AS INTEGER) WHEN 1 THEN 'WRITEBACK' WHEN 2 THEN 'ISOLATED' WHEN 4 THEN 'NOPROGRESS' WHEN 8 THEN 'CONGESTED' WHEN 0 THEN 'NONE' ELSE reason END
         ELSE replace(coalesce(reason, 'NONE'), 'VMSCAN_THROTTLE_', '') END AS why,
    CASE WHEN ts - lag(ts) OVER (PARTITION BY utid ORDER BY ts, id) <= (SELECT gap_ns FROM params) THEN 0 ELSE 1 END AS new_burst
  FROM mm_vmscan_throttled
),
numbered AS (
  SELECT *, sum(new_burst) OVER (PARTITION BY utid ORDER BY ts, id ROWS UNBOUNDED PRECEDING) AS burst FROM sleeps
),
by_reason AS (
  SELECT utid, burst, why, count(*) AS n, sum(slept_ns) AS ns FROM numbered GROUP BY utid, burst, why
),
reasons AS (
  SELECT utid, burst, string_agg(why || ' ' || n, ', ' ORDER BY ns DESC, why) AS reasons, arg_max(why, (ns, n)) AS main
  FROM by_reason GROUP BY utid, burst
),
bursts AS (
  SELECT utid, burst,
    min(ts - slept_ns) AS ts, max(ts) AS end_ts,
    arg_min(cpu, ts) AS cpu, arg_min(nid, ts) AS nid,
    count(*) AS sleeps, sum(slept_ns)::BIGINT AS slept_ns, max(slept_ns) AS max_sleep_ns,
    count(*) FILTER (WHERE usec_timeout > 0 AND usec_delayed >= usec_timeout) AS timed_out,
    list(id ORDER BY ts, id)[1:50] AS event_ids
  FROM numbered GROUP BY utid, burst
),
reclaim AS (
  SELECT utid, family, ts, end_ts, state FROM ss_reclaim_windows() WHERE family <> 'memcg_softlimit'
),
classified AS (
  SELECT b.*, r2.reasons, r2.main, t.tid, t.name AS tname,
    CASE WHEN ss_is_kswapd(t.name) THEN 'kswapd'
         WHEN w.family IS NOT NULL AND (w.state <> 'closed' OR w.end_ts >= b.end_ts)
           THEN replace(w.family, '_', ' ') || ' reclaim'
         ELSE 'other' END AS context
  FROM bursts b
  JOIN reasons r2 USING (utid, burst)
  LEFT JOIN thread t ON t.utid = b.utid
  ASOF LEFT JOIN reclaim w ON w.utid = b.utid AND b.end_ts >= w.ts
)
SELECT
  ss_severity(slept_ns, p.warn_ns, p.critical_ns, 'info') AS severity,
  ts,
  end_ts - ts AS dur,
  slept_ns AS impact,
  cpu,
  utid,
  ss_task(tname, tid) || CASE WHEN context IN ('kswapd', 'other') THEN '' ELSE ' (' || context || ')' END
    || ' slept ' || ss_fmt_dur(slept_ns) || ' throttled in reclaim (' || sleeps || CASE WHEN sleeps = 1 THEN ' sleep' ELSE ' sleeps' END
    || ': ' || reasons || '; longest ' || ss_fmt_dur(max_sleep_ns)
    || CASE WHEN timed_out > 0 THEN ', ' || timed_out || ' ran the full timeout' ELSE '' END
    || ') over ' || ss_fmt_dur(end_ts - ts) AS title,
  {
    'sleeps': sleeps,
    'slept_ns': slept_ns,
    'max_sleep_ns': max_sleep_ns,
    'timed_out': timed_out,
    'reasons': reasons,
    'context': context,
    'nid': nid
  } AS "values",
  event_ids,
  lower(main) AS kind
FROM classified, params p
ORDER BY ss_severity_rank(severity), ts
