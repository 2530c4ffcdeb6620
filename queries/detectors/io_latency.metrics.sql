-- io_latency metrics: block requests per device (issue -> complete)
-- =================================================================
--
-- The metrics contract: server/findings/METRICS.md. Requests paired by
-- lib/macros.sql ss_block_requests(); latency = complete - issue, for
-- completed requests; percentiles nearest-rank (quantile_disc). Throughput
-- per second: bytes of the requests completed in each whole second from
-- the trace's first event (vmstat's bi/bo, in bytes).
--
-- scope 'trace' (key NULL) and 'device' (key: 'major,minor'):
--   io.requests        count  completed requests
--   io.reads / io.writes   count  completed reads / writes
--   io.read_p50_ns, io.read_p99_ns, io.read_max_ns      ns   read latency   (lower is better)
--   io.write_p50_ns, io.write_p99_ns, io.write_max_ns   ns   write latency  (lower)
--   io.read_bytes / io.write_bytes   bytes  completed
--   io.peak_read_bps / io.peak_write_bps  bytes_per_s busiest second
--   io.slow_reads      count  reads of warn_ns (10 ms) or more   (lower)
WITH
t0 AS (SELECT ss_trace_start((SELECT min(issue_ts) FROM ss_block_requests())) AS t0),
rq AS (
  SELECT device, op, latency_ns, coalesce(bytes, nr_sector * 512) AS bytes,
    (complete_ts - (SELECT t0 FROM t0)) // 1000000000 AS sec
  FROM ss_block_requests() WHERE complete_ts IS NOT NULL
),
per_sec AS (
  SELECT device, GROUPING(device) AS whole, sec,
    sum(bytes) FILTER (WHERE op = 'R') AS rb, sum(bytes) FILTER (WHERE op = 'W') AS wb
  FROM rq GROUP BY GROUPING SETS ((device, sec), (sec))
),
peaks AS (
  SELECT device, whole, max(rb) AS peak_r, max(wb) AS peak_w FROM per_sec GROUP BY device, whole
),
agg AS (
  SELECT device, GROUPING(device) AS whole,
    count(*) AS requests,
    count(*) FILTER (WHERE op = 'R') AS reads,
    count(*) FILTER (WHERE op = 'W') AS writes,
    quantile_disc(latency_ns, 0.50) FILTER (WHERE op = 'R') AS r50,
    quantile_disc(latency_ns, 0.99) FILTER (WHERE op = 'R') AS r99,
    max(latency_ns) FILTER (WHERE op = 'R') AS rmax,
    quantile_disc(latency_ns, 0.50) FILTER (WHERE op = 'W') AS w50,
    quantile_disc(latency_ns, 0.99) FILTER (WHERE op = 'W') AS w99,
    max(latency_ns) FILTER (WHERE op = 'W') AS wmax,
    sum(bytes) FILTER (WHERE op = 'R') AS rbytes,
    sum(bytes) FILTER (WHERE op = 'W') AS wbytes,
    count(*) FILTER (WHERE op = 'R' AND latency_ns >= $warn_ns::BIGINT) AS slow
  FROM rq GROUP BY GROUPING SETS ((device), ())
  HAVING count(*) > 0
)
-- unnested in the inner SELECT list, not joined (FROM agg, unnest(...)): a
-- lateral join is planned as a dependent join (migration_pingpong.metrics.sql)
SELECT 'io.' || u.m.name AS metric, scope, key, u.m.value, u.m.unit, u.m.better
FROM (
  SELECT CASE WHEN a.whole = 1 THEN 'trace' ELSE 'device' END AS scope,
    CASE WHEN a.whole = 1 THEN NULL ELSE a.device END AS key,
    unnest([
      {'name': 'requests', 'value': requests::DOUBLE, 'unit': 'count', 'better': NULL::VARCHAR},
      {'name': 'reads', 'value': reads::DOUBLE, 'unit': 'count', 'better': NULL},
      {'name': 'writes', 'value': writes::DOUBLE, 'unit': 'count', 'better': NULL},
      {'name': 'read_p50_ns', 'value': r50::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'read_p99_ns', 'value': r99::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'read_max_ns', 'value': rmax::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'write_p50_ns', 'value': w50::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'write_p99_ns', 'value': w99::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'write_max_ns', 'value': wmax::DOUBLE, 'unit': 'ns', 'better': 'lower'},
      {'name': 'read_bytes', 'value': rbytes::DOUBLE, 'unit': 'bytes', 'better': NULL},
      {'name': 'write_bytes', 'value': wbytes::DOUBLE, 'unit': 'bytes', 'better': NULL},
      {'name': 'peak_read_bps', 'value': p.peak_r::DOUBLE, 'unit': 'bytes_per_s', 'better': NULL},
      {'name': 'peak_write_bps', 'value': p.peak_w::DOUBLE, 'unit': 'bytes_per_s', 'better': NULL},
      {'name': 'slow_reads', 'value': slow::DOUBLE, 'unit': 'count', 'better': 'lower'}
    ]) AS m
  FROM agg a LEFT JOIN peaks p ON p.whole = a.whole AND p.device IS NOT DISTINCT FROM a.device
) u
WHERE u.m.value IS NOT NULL
