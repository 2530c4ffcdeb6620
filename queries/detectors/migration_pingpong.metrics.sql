-- migration_pingpong metrics: task migrations, per trace, per task and per CPU
-- ============================================================================
--
-- The metrics contract: server/findings/METRICS.md. Migrations as in
-- lib/macros.sql ss_migrations() (pid <> 0, orig_cpu <> dest_cpu).
--
-- scope 'trace' (key NULL) and 'task' (key: the task's comm; threads of one
-- comm together):
--   migration.migrations          count  migrations
--   migration.migrations_per_s    per_s  migrations per second of trace      (lower is better)
--   migration.bounces             count  back to a CPU left within window_ns (lower)
--   migration.wakeup_migrations   count  at wakeup (the waker pulled the task)
--   migration.balance_migrations  count  by load / idle balancing, affinity, NUMA
--   migration.wakeup_bounces      count  bounces at wakeup                   (lower)
-- scope 'cpu' (key: the CPU number):
--   migration.in                  count  migrations to this CPU
--   migration.out                 count  migrations from this CPU
WITH
bounds AS (
  SELECT ss_trace_start((SELECT min(ts) FROM sched_migrate_task)) AS t0,
         ss_trace_end((SELECT max(ts) FROM sched_migrate_task)) AS t1
),
mig AS (SELECT * FROM ss_migrations($window_ns::BIGINT)),
names AS (
  -- a task's comm: the latest the events give it
  SELECT pid, arg_max(comm, (ts, id)) AS task FROM mig GROUP BY pid
),
agg AS (
  SELECT n.task, GROUPING(n.task) AS whole,
    count(*) AS migrations,
    count(*) FILTER (WHERE is_bounce) AS bounces,
    count(*) FILTER (WHERE at_wakeup) AS wakeups,
    count(*) FILTER (WHERE NOT at_wakeup) AS balances,
    count(*) FILTER (WHERE is_bounce AND at_wakeup) AS wakeup_bounces
  FROM mig JOIN names n USING (pid)
  GROUP BY GROUPING SETS ((n.task), ())
  HAVING count(*) > 0
),
per_cpu AS (
  SELECT cpu_key, sum(n_in) AS n_in, sum(n_out) AS n_out FROM (
    SELECT dest_cpu AS cpu_key, count(*) AS n_in, 0 AS n_out FROM mig GROUP BY 1
    UNION ALL
    SELECT orig_cpu, 0, count(*) FROM mig GROUP BY 1
  ) GROUP BY cpu_key
)
-- Each row's metrics unnested in the inner SELECT list, not joined to it
-- (FROM agg, unnest(...)): DuckDB plans that lateral join as a dependent
-- join, ~40% of this statement's time.
SELECT 'migration.' || u.m.name AS metric, scope, key, u.m.value, u.m.unit, u.m.better
FROM (
  SELECT CASE WHEN whole = 1 THEN 'trace' ELSE 'task' END AS scope,
    CASE WHEN whole = 1 THEN NULL ELSE task END AS key,
    unnest([
      {'name': 'migrations', 'value': migrations::DOUBLE, 'unit': 'count', 'better': NULL::VARCHAR},
      {'name': 'migrations_per_s', 'value': CASE WHEN b.span > 0 THEN migrations / (b.span / 1e9) END, 'unit': 'per_s', 'better': 'lower'},
      {'name': 'bounces', 'value': bounces::DOUBLE, 'unit': 'count', 'better': 'lower'},
      {'name': 'wakeup_migrations', 'value': wakeups::DOUBLE, 'unit': 'count', 'better': NULL},
      {'name': 'balance_migrations', 'value': balances::DOUBLE, 'unit': 'count', 'better': NULL},
      {'name': 'wakeup_bounces', 'value': wakeup_bounces::DOUBLE, 'unit': 'count', 'better': 'lower'}
    ]) AS m
  FROM agg, (SELECT t1 - t0 AS span FROM bounds) b
) u
WHERE u.m.value IS NOT NULL
UNION ALL
SELECT 'migration.' || u.m.name, 'cpu', key, u.m.value, 'count', NULL
FROM (
  SELECT CAST(cpu_key AS VARCHAR) AS key,
    unnest([
      {'name': 'in', 'value': n_in::DOUBLE},
      {'name': 'out', 'value': n_out::DOUBLE}
    ]) AS m
  FROM per_cpu
) u
