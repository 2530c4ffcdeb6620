-- migration_pingpong: tasks bounced back and forth between CPUs
-- =============================================================
--
-- @title Migration ping-pong
-- @description Tasks moved to a CPU and straight back (A->B->A, or around up to 4 CPUs) again and again within milliseconds, with the bounce rate, the CPUs, and who moved them (the task running at the migration, e.g. a kworker completing IO) and who woke them.
-- @param window_ns BIGINT 10000000 -- a migration back to a CPU the task left at most this long ago (ns, 10 ms) is a bounce; a burst is a chain of migrations of one task each at most this far apart
-- @param min_bounces INTEGER 3 -- a burst with at least this many bounces is a finding (info)
-- @param warn_bounces INTEGER 10 -- ... at least this many bounces: warn
-- @param critical_bounces INTEGER 50 -- ... at least this many bounces: critical
--
-- What it finds
--   sched_migrate_task fires whenever a task's CPU changes: at wakeup
--   (select_task_rq() in try_to_wake_up(), running in the WAKER's context),
--   by load balancing (in the context of whatever runs on the balancing CPU,
--   or the migration/N stopper), by NUMA balancing and by affinity changes.
--   A bounce is a migration that returns the task to a CPU it left at most
--   window_ns ago: A->B then B->A, or a short cycle A->B->C->A (up to four
--   CPUs: the destination matches the origin of one of the three previous
--   migrations). Consecutive migrations of one task (by pid) at most
--   window_ns apart form a burst; bursts with >= min_bounces bounces are
--   findings.
--
-- Why it matters
--   Each migration costs the task its warm L1/L2 (and, across LLC domains,
--   L3) cache and adds wakeup latency; ping-pong typically comes from a
--   waker on one CPU (a bound kworker/N:1H completing block IO, an unbound
--   kworker/uN:M, a partner thread) pulling the wakee to its own CPU via
--   wake_affine while load balancing pushes it back. The mover and waker
--   columns say who does it: fsync-heavy workloads show kworker IO
--   completion bouncing the fsync-ing task between CPUs.
--
-- Defaults
--   window 10 ms: several scheduler ticks and many wakeups of an IO-bound
--   task; a return within it undoes the previous move before the task could
--   profit from it. 3 bounces: once can be balancing, three times in a row is
--   a pattern. warn 10 / critical 50 bounces in one burst: sustained
--   ping-pong that costs measurable cache misses and wakeup latency.
--
-- Decisions
--   * Migrations with orig_cpu = dest_cpu and pid 0 (idle) are ignored.
--   * mover = the thread running when the migration event fired (the
--     event's utid); waker = the thread that emitted the latest sched_waking
--     of the pid at or before the migration, if at most window_ns before it.
--   * ts = first migration of the burst, dur = last - first migration, cpu =
--     CPU the first migration event fired on, utid = the migrated task (the
--     thread whose tid is the pid, as of the burst start).
--
-- values: pid, comm, cpus (sorted), bounces (always), migrations,
-- rate_per_s (bounces per second of burst; NULL for a zero-length burst),
-- movers / wakers: [{tid, comm, count}] most frequent first (at most 3).
-- event_ids: every migration of the burst and the matched sched_waking
-- events, in id order. kind: 'burst'.
WITH
params AS (
  SELECT $window_ns::BIGINT AS win, $min_bounces::INTEGER AS min_b,
         $warn_bounces::INTEGER AS warn_b, $critical_bounces::INTEGER AS crit_b
),
m AS (
  -- narrow rows for the sorts; cpu, mover and comm are joined back by id
  SELECT id, ts, pid, orig_cpu, dest_cpu
  FROM sched_migrate_task
  WHERE pid <> 0 AND orig_cpu IS DISTINCT FROM dest_cpu
),
seq AS (
  SELECT *,
    lag(orig_cpu, 1) OVER w AS o1, lag(ts, 1) OVER w AS t1,
    lag(orig_cpu, 2) OVER w AS o2, lag(ts, 2) OVER w AS t2,
    lag(orig_cpu, 3) OVER w AS o3, lag(ts, 3) OVER w AS t3
  FROM m
  WINDOW w AS (PARTITION BY pid ORDER BY ts, id)
),
flagged AS (
  SELECT s.*,
    coalesce((dest_cpu = o1 AND ts - t1 <= p.win) OR (dest_cpu = o2 AND ts - t2 <= p.win)
             OR (dest_cpu = o3 AND ts - t3 <= p.win), false) AS is_bounce,
    CASE WHEN ts - t1 <= p.win THEN 0 ELSE 1 END AS new_chain
  FROM seq s, params p
),
chained AS (
  SELECT *, sum(new_chain) OVER (PARTITION BY pid ORDER BY ts, id ROWS UNBOUNDED PRECEDING) AS chain
  FROM flagged
),
bursts AS MATERIALIZED (
  SELECT pid, chain,
    min(ts) AS ts, max(ts) AS last_ts,
    arg_min(id, ts) AS first_id,
    arg_max(id, ts) AS last_id,
    count(*) FILTER (WHERE is_bounce) AS bounces,
    count(*) AS migrations,
    list_sort(list_distinct(flatten(list([orig_cpu, dest_cpu])))) AS cpus
  FROM chained
  GROUP BY pid, chain
  HAVING count(*) FILTER (WHERE is_bounce) >= (SELECT min_b FROM params)
),
members AS (
  SELECT c.pid, c.chain, c.id, c.ts, mt.utid AS mover_utid
  FROM chained c
  SEMI JOIN bursts b ON b.pid = c.pid AND b.chain = c.chain
  JOIN sched_migrate_task mt ON mt.id = c.id
),
woken AS MATERIALIZED (
  SELECT mb.pid, mb.chain, mb.id, mb.mover_utid,
    CASE WHEN mb.ts - wk.ts <= (SELECT win FROM params) THEN wk.id END AS waking_id,
    CASE WHEN mb.ts - wk.ts <= (SELECT win FROM params) THEN wk.utid END AS waker_utid
  FROM members mb
  ASOF LEFT JOIN (SELECT id, ts, utid, pid FROM sched_waking WHERE pid IN (SELECT pid FROM bursts)) wk
    ON wk.pid = mb.pid AND mb.ts >= wk.ts
),
movers AS (
  SELECT pid, chain,
    list({'tid': tid, 'comm': name, 'count': n} ORDER BY n DESC, tid)[1:3] AS movers
  FROM (SELECT pid, chain, mover_utid, count(*) AS n FROM woken GROUP BY ALL) x
  LEFT JOIN thread t ON t.utid = x.mover_utid
  GROUP BY pid, chain
),
wakers AS (
  SELECT pid, chain,
    list({'tid': tid, 'comm': name, 'count': n} ORDER BY n DESC, tid)[1:3] AS wakers
  FROM (SELECT pid, chain, waker_utid, count(*) AS n FROM woken WHERE waker_utid IS NOT NULL GROUP BY ALL) x
  LEFT JOIN thread t ON t.utid = x.waker_utid
  GROUP BY pid, chain
),
ids AS (
  SELECT pid, chain, list_sort(list_distinct(list(id) || coalesce(list(waking_id) FILTER (WHERE waking_id IS NOT NULL), []))) AS event_ids
  FROM woken GROUP BY pid, chain
),
th AS (
  SELECT utid, tid, coalesce(start_ts, -9223372036854775807) AS st FROM thread
),
described AS (
  SELECT b.*, f.cpu, l.comm, th.utid, mv.movers, wk.wakers, ids.event_ids,
    b.last_ts - b.ts AS dur,
    CASE WHEN b.last_ts > b.ts THEN round(b.bounces / ((b.last_ts - b.ts) / 1e9), 1) END AS rate_per_s
  FROM bursts b
  JOIN ids USING (pid, chain)
  LEFT JOIN movers mv USING (pid, chain)
  LEFT JOIN wakers wk USING (pid, chain)
  JOIN sched_migrate_task f ON f.id = b.first_id
  JOIN sched_migrate_task l ON l.id = b.last_id
  ASOF LEFT JOIN th ON th.tid = b.pid AND b.ts >= th.st
)
SELECT
  ss_severity(bounces, p.warn_b, p.crit_b, 'info') AS severity,
  ts,
  dur,
  cpu,
  utid,
  ss_task(comm, pid) || ' bounced ' || bounces || ' times between CPUs ' || array_to_string(cpus, ',')
    || ' in ' || ss_fmt_dur(dur)
    || CASE WHEN rate_per_s IS NOT NULL THEN ' (' || printf('%.0f', rate_per_s) || '/s)' ELSE '' END
    || coalesce(', moved by ' || ss_task(movers[1].comm, movers[1].tid), '') AS title,
  {
    'pid': pid,
    'comm': comm,
    'cpus': cpus,
    'bounces': bounces,
    'migrations': migrations,
    'rate_per_s': rate_per_s,
    'movers': movers,
    'wakers': wakers
  } AS "values",
  event_ids,
  'burst' AS kind
FROM described, params p
ORDER BY ss_severity_rank(severity), ts
