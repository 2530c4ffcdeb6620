-- Trace-level metrics (server/findings/METRICS.md), scope 'trace':
--   trace.duration_ns  ns     last - first event
--   trace.events       count  events in the trace
--   trace.cpus         count  CPUs the trace covers
--   trace.lost_events  count  events the kernel reported lost (ring buffer overruns)  (lower is better)
-- From trace_info (the ingest's facts); a fact the ingest did not record is no row.
WITH info AS (
  SELECT
    max(CASE WHEN key = 'first_ts' THEN TRY_CAST(value AS DOUBLE) END) AS first_ts,
    max(CASE WHEN key = 'last_ts' THEN TRY_CAST(value AS DOUBLE) END) AS last_ts,
    max(CASE WHEN key = 'events_total' THEN TRY_CAST(value AS DOUBLE) END) AS events,
    max(CASE WHEN key = 'cpus' THEN TRY_CAST(value AS DOUBLE) END) AS cpus,
    max(CASE WHEN key = 'lost_events' THEN TRY_CAST(value AS DOUBLE) END) AS lost
  FROM trace_info
)
-- unnested in the inner SELECT list, not joined (FROM info, unnest(...)): a
-- lateral join is planned as a dependent join (migration_pingpong.metrics.sql)
SELECT u.m.metric, 'trace' AS scope, NULL::VARCHAR AS key, u.m.value, u.m.unit, u.m.better
FROM (
  SELECT unnest([
    {'metric': 'trace.duration_ns', 'value': last_ts - first_ts, 'unit': 'ns', 'better': NULL::VARCHAR},
    {'metric': 'trace.events', 'value': events, 'unit': 'count', 'better': NULL},
    {'metric': 'trace.cpus', 'value': cpus, 'unit': 'count', 'better': NULL},
    {'metric': 'trace.lost_events', 'value': lost, 'unit': 'count', 'better': 'lower'}
  ]) AS m
  FROM info
) u
WHERE u.m.value IS NOT NULL
