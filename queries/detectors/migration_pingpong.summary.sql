-- migration_pingpong summary: migrations per task
-- ===============================================
--
-- One row per migrated task (by pid): how often it changed CPU, per second of
-- trace, how many of those were bounces (back to a CPU it left at most
-- window_ns before; same rule as the detector), and how many happened at
-- wakeup (the waker pulled it) rather than by load / idle balancing
-- (lib/macros.sql: ss_migrations()).
--
-- Columns
--   pid INTEGER                  the migrated task's tid (sched_migrate_task.pid)
--   task VARCHAR                 its comm (latest seen in the events)
--   migrations BIGINT            migrations with orig_cpu <> dest_cpu
--   migrations_per_sec DOUBLE    migrations / trace duration in s, 2 decimals
--   bounces BIGINT               migrations that were bounces
--   wakeup_migrations BIGINT     migrations at wakeup
--   balance_migrations BIGINT    migrations by load / idle balancing (and affinity, NUMA)
--   cpus BIGINT                  distinct CPUs it ran on (orig or dest)
--   first_ts, last_ts BIGINT     first and last migration
WITH
bounds AS (
  SELECT ss_trace_start((SELECT min(ts) FROM sched_migrate_task)) AS t0,
         ss_trace_end((SELECT max(ts) FROM sched_migrate_task)) AS t1
)
SELECT
  pid,
  arg_max(comm, (ts, id)) AS task,
  count(*) AS migrations,
  CASE WHEN (SELECT t1 - t0 FROM bounds) > 0
       THEN round(count(*) / ((SELECT t1 - t0 FROM bounds) / 1e9), 2) END AS migrations_per_sec,
  count(*) FILTER (WHERE is_bounce) AS bounces,
  count(*) FILTER (WHERE at_wakeup) AS wakeup_migrations,
  count(*) FILTER (WHERE NOT at_wakeup) AS balance_migrations,
  length(list_distinct(flatten(list([orig_cpu, dest_cpu])))) AS cpus,
  min(ts) AS first_ts,
  max(ts) AS last_ts
FROM ss_migrations($window_ns::BIGINT)
GROUP BY pid
ORDER BY migrations DESC, pid
