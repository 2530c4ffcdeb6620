-- migration_pingpong: tasks bounced back and forth between CPUs
-- =============================================================
--
-- @title Migration ping-pong
-- @description Tasks moved to a CPU and straight back (A->B->A, or around up to 4 CPUs) again and again within milliseconds, with the bounce rate, the CPUs, and why: at wakeup (who woke them, on which CPU: e.g. a kworker completing IO) or by load / idle balancing.
-- @param window_ns BIGINT 10000000 -- a migration back to a CPU the task left at most this long ago (ns, 10 ms) is a bounce; a burst is a chain of migrations of one task each at most this far apart
-- @param min_bounces INTEGER 3 -- a burst with at least this many bounces is a finding (info)
-- @param warn_bounces INTEGER 10 -- ... at least this many bounces, mostly at wakeup, with the waits below: warn
-- @param warn_mean_wait_ns BIGINT 100000 -- ... and the task waited on average at least this long (ns, 100 us) to run after each move: warn
-- @param warn_total_wait_ns BIGINT 10000000 -- ... or at least this long (ns, 10 ms) in all after the burst's moves: warn
-- @param critical_bounces INTEGER 50 -- ... at least this many bounces, mostly at wakeup, with the waits below: critical
-- @param critical_mean_wait_ns BIGINT 1000000 -- ... and the task waited on average at least this long (ns, 1 ms) to run after each move: critical
-- @param critical_wait_ns BIGINT 100000000 -- ... and at least this long (ns, 100 ms) in all after the burst's moves: critical
-- @param balance_warn_bounces INTEGER 200 -- a burst mostly by load balancing is info below this many bounces, warn from it
-- @requires sched:sched_migrate_task
-- @impact the time the bounced task waited to run after its moves: for each migration of the burst, from the migration to the task's next switch-in (at most window_ns each).
-- @severity wakeup ping-pong (at least half of the bounces happened at wakeup): critical at critical_bounces (50) bounces when each move cost the task critical_mean_wait_ns (1 ms) of waiting on average and critical_wait_ns (100 ms) in all, warn at warn_bounces (10) bounces when the moves cost the task warn_mean_wait_ns (100 us) of waiting on average or warn_total_wait_ns (10 ms) in all, else info. Load / idle balancing ping-pong (the scheduler spreading runnable tasks, as in a busy parallel build): info, warn from balance_warn_bounces (200); never critical. An unbound kworker (kworker/uN:M) bounced in either way: info.
--
-- What it finds
--   sched_migrate_task fires whenever a task's CPU changes: at wakeup
--   (select_task_rq() in try_to_wake_up(), running in the WAKER's context,
--   right after its sched_waking), by load balancing (periodic or newly-idle
--   balance, in the context of whatever runs on the balancing CPU, or the
--   migration/N stopper for active balance), by NUMA balancing and by
--   affinity changes. A bounce is a migration that returns the task to a CPU
--   it left at most window_ns ago: A->B then B->A, or a short cycle
--   A->B->C->A (up to four CPUs: the destination matches the origin of one
--   of the three previous migrations). Consecutive migrations of one task
--   (by pid) at most window_ns apart form a burst; bursts with >= min_bounces
--   bounces are findings.
--
-- Why it matters
--   Each migration costs the task its warm L1/L2 (and, across LLC domains,
--   L3) cache and adds wakeup latency. Ping-pong AT WAKEUP comes from wakers
--   on alternating CPUs pulling the wakee to their own CPU (wake_affine): a
--   bound kworker/N:1H completing block IO, an unbound kworker/uN:M, a
--   partner thread. That is a pattern to fix (affinity, the waker's CPU, the
--   workqueue's cpumask). Ping-pong by LOAD BALANCING is the scheduler
--   spreading runnable tasks over idle CPUs, which a busy build on few CPUs
--   does all the time by design: worth knowing, rarely a bug. Hence the two
--   kinds and their different severities.
--
-- Defaults
--   window 10 ms: several scheduler ticks and many wakeups of an IO-bound
--   task; a return within it undoes the previous move before the task could
--   profit from it. 3 bounces: once can be balancing, three times in a row is
--   a pattern. warn 10 / critical 50 wakeup bounces in one burst: sustained
--   ping-pong that costs measurable cache misses and wakeup latency (with
--   the waits below). 200
--   balancing bounces in one burst (4 x critical): the scheduler moving one
--   task back and forth far more than spreading load needs.
--   critical also needs the moves to have cost the task waiting, per move:
--   many bounces alone are a pattern to look at, not a stall. The wait after
--   a move is the task's wakeup latency on the CPU it was moved to; 1 ms on
--   average (critical_mean_wait_ns) means the moves put it behind other
--   tasks' slices, again and again (1 ms is about one scheduler slice:
--   EEVDF's base_slice_ns is under 1 ms before its scaling with the CPU
--   count), where a move to an idle CPU costs tens of us. Total waiting alone grows with the burst's
--   length: on three ext4 fsync loops beside a 200 us timer task
--   (fixtures/fsync_timers), jbd2, the unbound kworkers and the timer task
--   bounce thousands of times in 0.6-1.2 s, 100-280 ms in all, but only
--   40-240 us per move (11-23% of the burst): warn, not critical. The
--   100 ms in all (critical_wait_ns) stays beside the mean, the bar the
--   other detectors set for a critical stall (a direct reclaim stall, a
--   shrinker call): a short burst of slow wakeups is not one.
--   warn needs the moves to have cost something too: warn_mean_wait_ns
--   (100 us) per move on average, or warn_total_wait_ns (10 ms) in all
--   (issue 29pf; weighed and left out by issue 29pp). Bounces whose task
--   then ran within tens of us are wake_affine pulling a wakee to its
--   waker's CPU, as it is meant to: the cost is the L1/L2 refill, which the
--   wait does not show and no tracepoint does. On a 2-CPU VM running dbench
--   (fixtures/corpus/sched_wq, many_systems), tasks woken by IO-completing
--   kworkers and ksoftirqd bounce 10-79 times in 4-141 ms, 0.1-6.4 ms in
--   all, 10-380 us per move; those under 100 us per move (10-96 us,
--   0.1-6.2 ms in all) are info now, kept as findings. 100 us is a tenth of
--   critical's bar, and the wait within which 92-98% of the moves onto an
--   idle CPU (the task's next switch-in took the CPU from the idle task) ran
--   on sched_wq, many_systems and fsync_timers; 75-82% of the other moves
--   did (means 36-118 us against 136-261 us; the awk below, -v by_dest=1).
--   The total clause keeps a long burst of cheap moves: jbd2 on
--   fsync_timers, woken by ksoftirqd on alternating CPUs, bounces 2557 times
--   in 0.6 s at 42 us per move (1741 of its moves got an idle CPU), 107 ms
--   in all (18% of the burst), the clearest wakeup ping-pong of the
--   fixtures. 10 ms is the warn bar of one shrinker call or slow read
--   (shrinker_blocking, io_latency); no other wakeup burst of 10 bounces or
--   more under 100 us per move in the fixtures waited more than 6.2 ms in
--   all. Warn bursts, counted with awk over `trace-cmd report`
--   (fixtures/recording/migration_pingpong_bursts.awk): 5 on sched_wq, 10 on
--   many_systems, 19 on fsync_timers (without the floor 21 / 30 / 20; 100 us
--   per move alone 5 / 10 / 18; 50 us alone 14 / 19 / 19; 200 us alone
--   1 / 1 / 3). The 100 us line cuts a continuum (92 and 96 us per move fell
--   under it, 103 and 104 us over): a threshold, not a gap in the data.
--   An unbound kworker (kworker/uN:M, comm matched) has no home CPU: its
--   pool may run it on any CPU of the workqueue's cpumask, and a waker's CPU
--   is where the work's data is warm. Its bounces are the scheduler doing
--   what the unbound pool asks, not a bug of the task: info whatever the
--   counts, impact kept (its waits still delay the IO it completes). The
--   tasks it wakes and pulls are rated by the rule above.
--
-- Decisions
--   * Migrations with orig_cpu = dest_cpu and pid 0 (idle) are ignored.
--   * mover = the thread running when the migration event fired (the
--     event's utid), on the CPU the event fired on.
--   * A migration is AT WAKEUP when the pid's latest sched_waking at or
--     before it was emitted by the mover, on the same CPU, at most 1 ms
--     before (ttwu emits both back to back); the waker is then the mover.
--     Else it is a BALANCE migration (load / idle / active balancing,
--     affinity, NUMA). Without sched_waking in the trace every migration is
--     counted as balance.
--   * waker (for the wakers list) = the thread that emitted the latest
--     sched_waking of the pid at or before the migration, if at most
--     window_ns before it, and the CPU it emitted it on.
--   * kind: 'wakeup' when at least half of the burst's bounces were at
--     wakeup, else 'balance'.
--   * ts = first migration of the burst, dur = last - first migration, cpu =
--     CPU the first migration event fired on, utid = the migrated task (the
--     thread whose tid is the pid, as of the burst start).
--
-- values: pid, comm, cpus (sorted), bounces (always), migrations,
-- wakeup_bounces, balance_bounces, wakeup_migrations, balance_migrations,
-- rate_per_s (bounces per second of burst; NULL for a zero-length burst),
-- wait_ns (the impact), mean_wait_ns (wait_ns over the moves whose next
-- switch-in is in the trace, rounded; NULL without any), unbound_kworker
-- (the task is a kworker/uN:M), movers / wakers: [{tid, comm, cpu, utid, count}]
-- most frequent first (at most 3; one entry per thread and CPU).
-- event_ids: every migration of the burst and the matched sched_waking
-- events, in id order. kind: 'wakeup' | 'balance'.
WITH
params AS (
  SELECT $window_ns::BIGINT AS win, $min_bounces::INTEGER AS min_b,
         $warn_bounces::INTEGER AS warn_b, $warn_mean_wait_ns::BIGINT AS warn_mean_wait,
         $warn_total_wait_ns::BIGINT AS warn_wait, $critical_bounces::INTEGER AS crit_b,
         $critical_wait_ns::BIGINT AS crit_wait, $critical_mean_wait_ns::BIGINT AS crit_mean_wait,
         $balance_warn_bounces::INTEGER AS bal_warn_b
),
m AS (
  -- each migration with its pid's latest sched_waking and its previous three
  -- moves, o1..o3 / t1..t3 (lib/macros.sql; computed once per run, the
  -- summary and metrics read the same rows)
  SELECT * FROM ss_migration_moves()
),
flagged AS (
  SELECT s.*,
    coalesce((dest_cpu = o1 AND ts - t1 <= p.win) OR (dest_cpu = o2 AND ts - t2 <= p.win)
             OR (dest_cpu = o3 AND ts - t3 <= p.win), false) AS is_bounce,
    CASE WHEN ts - t1 <= p.win THEN 0 ELSE 1 END AS new_chain
  FROM m s, params p
),
chained AS (
  SELECT *, sum(new_chain) OVER (PARTITION BY pid ORDER BY ts, id ROWS UNBOUNDED PRECEDING) AS chain
  FROM flagged
),
candidates AS MATERIALIZED (
  SELECT pid, chain
  FROM chained
  GROUP BY pid, chain
  HAVING count(*) FILTER (WHERE is_bounce) >= (SELECT min_b FROM params)
),
woken AS MATERIALIZED (
  SELECT c.pid, c.chain, c.id, c.ts, c.comm, c.is_bounce, c.orig_cpu, c.dest_cpu, c.utid AS mover_utid, c.cpu AS mover_cpu,
    CASE WHEN c.ts - c.waking_ts <= (SELECT win FROM params) THEN c.waking_id END AS waking_id,
    CASE WHEN c.ts - c.waking_ts <= (SELECT win FROM params) THEN c.waking_utid END AS waker_utid,
    CASE WHEN c.ts - c.waking_ts <= (SELECT win FROM params) THEN c.waking_cpu END AS waker_cpu,
    c.at_wakeup
  FROM chained c
  SEMI JOIN candidates b ON b.pid = c.pid AND b.chain = c.chain
),
-- how long the task waited to run after each move: to its next switch-in
-- (none before the bursts' first move can be one: the scan starts there)
waited AS (
  SELECT w.pid, w.chain, w.id, CASE WHEN sw.ts IS NOT NULL THEN least(sw.ts - w.ts, (SELECT win FROM params)) END AS wait
  FROM woken w
  ASOF LEFT JOIN (SELECT ts, next_pid FROM sched_switch
                  WHERE next_pid IN (SELECT pid FROM candidates) AND ts >= (SELECT min(ts) FROM woken)) sw
    ON sw.next_pid = w.pid AND w.ts <= sw.ts
),
bursts AS (
  SELECT pid, chain,
    min(ts) AS ts, max(ts) AS last_ts,
    -- the CPU of the first migration event and the comm of the last ((ts, id) is the event order)
    arg_min(mover_cpu, (ts, id)) AS cpu,
    arg_max(comm, (ts, id)) AS comm,
    count(*) FILTER (WHERE is_bounce) AS bounces,
    count(*) FILTER (WHERE is_bounce AND at_wakeup) AS wakeup_bounces,
    count(*) FILTER (WHERE is_bounce AND NOT at_wakeup) AS balance_bounces,
    count(*) AS migrations,
    count(*) FILTER (WHERE at_wakeup) AS wakeup_migrations,
    count(*) FILTER (WHERE NOT at_wakeup) AS balance_migrations,
    list_sort(list_distinct(flatten(list([orig_cpu, dest_cpu])))) AS cpus
  FROM woken
  GROUP BY pid, chain
),
waits AS (
  SELECT pid, chain, coalesce(sum(wait), 0)::BIGINT AS wait_ns, round(avg(wait))::BIGINT AS mean_wait_ns
  FROM waited GROUP BY pid, chain
),
-- movers and wakers: the threads (and CPUs) that moved / woke the task,
-- counted in one pass over woken and named by one join with thread
movers_wakers AS (
  SELECT pid, chain,
    list({'tid': tid, 'comm': name, 'cpu': x.cpu, 'utid': x.utid, 'count': n} ORDER BY n DESC, tid, x.cpu)
      FILTER (WHERE x.mover)[1:3] AS movers,
    list({'tid': tid, 'comm': name, 'cpu': x.cpu, 'utid': x.utid, 'count': n} ORDER BY n DESC, tid, x.cpu)
      FILTER (WHERE NOT x.mover)[1:3] AS wakers
  FROM (
    SELECT pid, chain, true AS mover, mover_utid AS utid, mover_cpu AS cpu, count(*) AS n FROM woken GROUP BY ALL
    UNION ALL
    SELECT pid, chain, false, waker_utid, waker_cpu, count(*) FROM woken WHERE waker_utid IS NOT NULL GROUP BY ALL
  ) x
  LEFT JOIN thread t ON t.utid = x.utid
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
  SELECT b.*, th.utid, mw.movers, mw.wakers, ids.event_ids, ws.wait_ns, ws.mean_wait_ns,
    regexp_matches(b.comm, '^kworker/u[0-9]+:[0-9]+') AS unbound_kworker,
    b.last_ts - b.ts AS dur,
    CASE WHEN b.last_ts > b.ts THEN round(b.bounces / ((b.last_ts - b.ts) / 1e9), 1) END AS rate_per_s,
    CASE WHEN 2 * b.wakeup_bounces >= b.bounces THEN 'wakeup' ELSE 'balance' END AS kind
  FROM bursts b
  JOIN ids USING (pid, chain)
  JOIN waits ws USING (pid, chain)
  JOIN movers_wakers mw USING (pid, chain)
  ASOF LEFT JOIN th ON th.tid = b.pid AND b.ts >= th.st
)
SELECT
  CASE WHEN unbound_kworker THEN 'info'
       WHEN kind = 'wakeup' THEN CASE WHEN bounces >= p.crit_b AND mean_wait_ns >= p.crit_mean_wait
                                           AND wait_ns >= p.crit_wait THEN 'critical'
                                      WHEN bounces >= p.warn_b AND (mean_wait_ns >= p.warn_mean_wait
                                                                    OR wait_ns >= p.warn_wait) THEN 'warn'
                                      ELSE 'info' END
       ELSE CASE WHEN bounces >= p.bal_warn_b THEN 'warn' ELSE 'info' END END AS severity,
  ts,
  dur,
  cpu,
  utid,
  ss_task(comm, pid) || ' bounced ' || bounces || ' times between CPUs ' || array_to_string(cpus, ',')
    || ' in ' || ss_fmt_dur(dur)
    || CASE WHEN rate_per_s IS NOT NULL THEN ' (' || printf('%.0f', rate_per_s) || '/s)' ELSE '' END
    || CASE WHEN kind = 'wakeup'
            THEN ', ' || wakeup_bounces || ' of them at wakeup'
                 || coalesce(' (woken most by ' || ss_task(wakers[1].comm, wakers[1].tid) || ' on CPU ' || wakers[1].cpu || ')', '')
            ELSE ', by load balancing'
                 || coalesce(' (moved most by ' || ss_task(movers[1].comm, movers[1].tid) || ' on CPU ' || movers[1].cpu || ')', '') END
    -- the wait decides warn and critical, so the title carries it (none when the task never ran again in the trace)
    || CASE WHEN mean_wait_ns IS NOT NULL
            THEN '; waited ' || ss_fmt_dur(wait_ns) || ' to run after the moves (' || ss_fmt_dur(mean_wait_ns) || ' per move)'
            ELSE '' END
    || CASE WHEN unbound_kworker THEN '; an unbound kworker, free to run on any CPU' ELSE '' END AS title,
  {
    'pid': pid,
    'comm': comm,
    'cpus': cpus,
    'bounces': bounces,
    'migrations': migrations,
    'wakeup_bounces': wakeup_bounces,
    'balance_bounces': balance_bounces,
    'wakeup_migrations': wakeup_migrations,
    'balance_migrations': balance_migrations,
    'rate_per_s': rate_per_s,
    'wait_ns': wait_ns,
    'mean_wait_ns': mean_wait_ns,
    'unbound_kworker': unbound_kworker,
    'movers': movers,
    'wakers': wakers
  } AS "values",
  event_ids,
  kind,
  wait_ns AS impact
FROM described, params p
ORDER BY ss_severity_rank(severity), ts
