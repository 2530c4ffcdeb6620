-- dirty_throttled: writers paused in balance_dirty_pages()
-- =======================================================
--
-- @title Writers paused by dirty throttling
-- @description Tasks put to sleep by balance_dirty_pages() because the system's or their device's dirty pages passed the throttling setpoint, per task and bdi, in bursts: time paused, pauses, dirty pages against setpoint and limit, the ratelimits the kernel chose, and when the flusher ran.
-- @param warn_ns BIGINT 100000000 -- a burst whose pauses add up to at least this much (ns) is a warn finding: 100 ms
-- @param critical_ns BIGINT 1000000000 -- a burst whose pauses add up to at least this much (ns) is critical: 1 s
-- @param gap_ns BIGINT 1000000000 -- balance_dirty_pages events of one task and bdi at most this far apart (ns) form one burst: 1 s
-- @requires writeback:balance_dirty_pages
-- @rows_from balance_dirty_pages -- every finding is a burst of its events (writeback_work only adds the flusher's runs): none of them, no findings, and the statement is not run (server/findings/empty_inputs.ts)
-- @impact the burst's time paused: the sum of its positive pause values.
-- @severity critical: a burst paused critical_ns (1 s) or more in all; warn: warn_ns (100 ms) or more; else info (the task was throttled, briefly).
--
-- What it finds
--   A task that dirties page cache calls balance_dirty_pages() every few
--   dozen pages (its dirtied_pause). Above the freerun point (halfway
--   between the background and the hard dirty threshold) the kernel
--   computes a pause that slows the task to task_ratelimit (KB/s) and puts
--   it to sleep (TASK_KILLABLE, io_schedule_timeout). Each call that
--   decides emits balance_dirty_pages: pause > 0 is a sleep of that many ms
--   (the task then sleeps the whole pause: only a fatal signal ends it
--   early); pause <= 0 (the kernel traces min(pause, 0)) means the task had
--   already "thought" long enough and was not put to sleep. paused is the
--   time already slept in this call, period the ms the ratelimit allots to
--   dirtied pages, think the time since the last pause. Events of one task
--   and bdi at most gap_ns apart form a burst; one finding per burst.
--
-- Why it matters
--   Dirty throttling is how the kernel keeps a fast writer from filling
--   memory with dirty pages: pausing a bulk writer (dd, a backup) is the
--   design working. It becomes a stall when the paused task is not a bulk
--   writer (an editor saving, a database's log writer) or when pauses reach
--   the 200 ms maximum because the device cannot keep up: the
--   setpoint/limit and wb_dirty fields show how far over the limits the
--   system was, dirty_ratelimit the device's estimated write bandwidth
--   share. The flusher (writeback_start/_written, writeback_wake_background)
--   shows whether writeback was running meanwhile.
--
-- Defaults
--   warn 100 ms: a writer slowed by a tenth of a second in a burst notices;
--   critical 1 s: a second asleep in one burst is a user-visible stall even
--   for a bulk writer's caller. gap 1 s: calls of one writer come a few ms
--   apart while it writes.
--
-- Kernel versions
--   balance_dirty_pages has had limit, setpoint, dirty, bdi_setpoint,
--   bdi_dirty, dirty_ratelimit, task_ratelimit, dirtied, dirtied_pause,
--   paused, pause, period, think since 3.3 (3.2 printed bdi_dirty_limit
--   and base_rate, not read here); 4.x prints bdi_setpoint/bdi_dirty,
--   later kernels wb_setpoint/wb_dirty (read alike here); cgroup_ino came
--   with cgroup writeback (4.2). pause, paused, period, think are in ms (jiffies * 1000 / HZ);
--   dirty, setpoint, limit in pages; ratelimits in KB/s.
--
-- values: bdi, pauses (events with pause > 0), not_paused (pause <= 0),
-- paused_ns, max_pause_ns, max_dirty, setpoint, limit (at the longest
-- pause), wb_dirty, wb_setpoint, dirty_ratelimit_kbps, task_ratelimit_kbps
-- (at the longest pause), flusher_runs (writeback_start on the bdi during
-- the burst).
-- event_ids: the longest pause's event, then the burst's first events (at
-- most 50). kind: 'pause'.
WITH
params AS (
  SELECT $warn_ns::BIGINT AS warn_ns, $critical_ns::BIGINT AS critical_ns, $gap_ns::BIGINT AS gap_ns
),
calls AS (
  SELECT id, ts, cpu, utid, bdi, pause, paused, period, think, dirty, setpoint, "limit", bdi_dirty, bdi_setpoint,
    dirty_ratelimit, task_ratelimit,
    greatest(coalesce(pause, 0), 0) * 1000000 AS pause_ns,
    CASE WHEN ts - lag(ts) OVER (PARTITION BY utid, bdi ORDER BY ts, id) <= (SELECT gap_ns FROM params) THEN 0 ELSE 1 END AS new_burst
  FROM balance_dirty_pages
),
numbered AS (
  SELECT *, sum(new_burst) OVER (PARTITION BY utid, bdi ORDER BY ts, id ROWS UNBOUNDED PRECEDING) AS burst FROM calls
),
bursts AS (
  SELECT utid, bdi, burst,
    min(ts) AS ts,
    -- a pause starts at its event; the burst ends when its last pause does
    max(ts + pause_ns) AS end_ts,
    arg_min(cpu, ts) AS cpu,
    count(*) FILTER (WHERE pause_ns > 0) AS pauses,
    count(*) FILTER (WHERE pause_ns = 0) AS not_paused,
    sum(pause_ns)::BIGINT AS paused_ns,
    max(pause_ns) AS max_pause_ns,
    max(dirty) AS max_dirty,
    arg_max(id, (pause_ns, -ts)) AS worst_id,
    arg_max(setpoint, (pause_ns, -ts)) AS setpoint,
    arg_max("limit", (pause_ns, -ts)) AS "limit",
    arg_max(bdi_dirty, (pause_ns, -ts)) AS wb_dirty,
    arg_max(bdi_setpoint, (pause_ns, -ts)) AS wb_setpoint,
    arg_max(dirty_ratelimit, (pause_ns, -ts)) AS dirty_ratelimit,
    arg_max(task_ratelimit, (pause_ns, -ts)) AS task_ratelimit,
    list(id ORDER BY ts, id)[1:49] AS first_ids
  FROM numbered GROUP BY utid, bdi, burst
),
flusher AS (
  SELECT b.utid, b.bdi, b.burst,
    count(*) FILTER (WHERE w.event = 'writeback_start') AS flusher_runs
  FROM bursts b JOIN writeback_work w ON w.bdi = b.bdi AND w.ts BETWEEN b.ts AND b.end_ts
  GROUP BY b.utid, b.bdi, b.burst
),
described AS (
  SELECT b.*, f.flusher_runs, t.tid, t.name AS tname
  FROM bursts b LEFT JOIN flusher f USING (utid, bdi, burst) LEFT JOIN thread t ON t.utid = b.utid
)
SELECT
  CASE WHEN pauses = 0 THEN 'info' ELSE ss_severity(paused_ns, p.warn_ns, p.critical_ns, 'info') END AS severity,
  ts,
  end_ts - ts AS dur,
  paused_ns AS impact,
  cpu,
  utid,
  CASE WHEN pauses = 0
    THEN ss_task(tname, tid) || ' was dirty-throttled on bdi ' || coalesce(bdi, '?') || ' but never paused (' || not_paused || ' calls)'
    ELSE ss_task(tname, tid) || ' paused ' || ss_fmt_dur(paused_ns) || ' writing to bdi ' || coalesce(bdi, '?') || ' ('
      || pauses || CASE WHEN pauses = 1 THEN ' pause' ELSE ' pauses' END || ', longest ' || ss_fmt_dur(max_pause_ns)
      || ', dirty ' || coalesce(CAST(max_dirty AS VARCHAR), '?') || ' pages against setpoint ' || coalesce(CAST(setpoint AS VARCHAR), '?')
      || ' / limit ' || coalesce(CAST("limit" AS VARCHAR), '?')
      || ', ratelimit ' || coalesce(CAST(task_ratelimit AS VARCHAR), '?') || ' KB/s) over ' || ss_fmt_dur(end_ts - ts) END AS title,
  {
    'bdi': bdi,
    'pauses': pauses,
    'not_paused': not_paused,
    'paused_ns': paused_ns,
    'max_pause_ns': max_pause_ns,
    'max_dirty': max_dirty,
    'setpoint': setpoint,
    'limit': "limit",
    'wb_dirty': wb_dirty,
    'wb_setpoint': wb_setpoint,
    'dirty_ratelimit_kbps': dirty_ratelimit,
    'task_ratelimit_kbps': task_ratelimit,
    'flusher_runs': coalesce(flusher_runs, 0)
  } AS "values",
  [worst_id] || list_filter(first_ids, x -> x <> worst_id) AS event_ids,
  'pause' AS kind
FROM described, params p
ORDER BY ss_severity_rank(severity), ts
