-- migration_pingpong summary: migrations per task
-- ===============================================
--
-- One row per migrated task (by pid): how often it changed CPU, per second of
-- trace, and how many of those were bounces (back to a CPU it left at most
-- window_ns before; same rule as the detector).
--
-- Columns
--   pid INTEGER                  the migrated task's tid (sched_migrate_task.pid)
--   task VARCHAR                 its comm (latest seen in the events)
--   migrations BIGINT            migrations with orig_cpu <> dest_cpu
--   migrations_per_sec DOUBLE    migrations / trace duration in s, 2 decimals
--   bounces BIGINT               migrations that were bounces
--   cpus BIGINT                  distinct CPUs it ran on (orig or dest)
--   first_ts, last_ts BIGINT     first and last migration
WITH
bounds AS (
  SELECT ss_trace_start((SELECT min(ts) FROM sched_migrate_task)) AS t0,
         ss_trace_end((SELECT max(ts) FROM sched_migrate_task)) AS t1
),
seq AS (
  SELECT pid, ts, id, comm, orig_cpu, dest_cpu,
    coalesce((dest_cpu = lag(orig_cpu, 1) OVER w AND ts - lag(ts, 1) OVER w <= $window_ns::BIGINT)
          OR (dest_cpu = lag(orig_cpu, 2) OVER w AND ts - lag(ts, 2) OVER w <= $window_ns::BIGINT)
          OR (dest_cpu = lag(orig_cpu, 3) OVER w AND ts - lag(ts, 3) OVER w <= $window_ns::BIGINT), false) AS is_bounce
  FROM sched_migrate_task
  WHERE pid <> 0 AND orig_cpu IS DISTINCT FROM dest_cpu
  WINDOW w AS (PARTITION BY pid ORDER BY ts, id)
)
SELECT
  pid,
  arg_max(comm, (ts, id)) AS task,
  count(*) AS migrations,
  CASE WHEN (SELECT t1 - t0 FROM bounds) > 0
       THEN round(count(*) / ((SELECT t1 - t0 FROM bounds) / 1e9), 2) END AS migrations_per_sec,
  count(*) FILTER (WHERE is_bounce) AS bounces,
  length(list_distinct(flatten(list([orig_cpu, dest_cpu])))) AS cpus,
  min(ts) AS first_ts,
  max(ts) AS last_ts
FROM seq
GROUP BY pid
ORDER BY migrations DESC, pid
