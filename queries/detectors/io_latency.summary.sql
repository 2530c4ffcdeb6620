-- io_latency summary: log2 latency histograms per device and operation
-- =====================================================================
--
-- biolatency's histogram as rows: per device and operation (R read, W
-- write, D discard, F flush, ...; sync writes apart as 'W sync'), the
-- completed requests whose issue -> complete latency fell in each power-of-2
-- bucket of microseconds (bucket [2^k, 2^(k+1)) us; the first holds 0-1 us),
-- with biolatency's star bar (40 stars for the fullest bucket of the
-- device and operation). Requests paired by ss_block_requests().
--
-- Columns
--   device VARCHAR ('7,2'), op VARCHAR ('R', 'W', 'W sync', 'F', ...)
--   usecs_from, usecs_to BIGINT   the bucket, inclusive: '4 -> 7' as biolatency prints it
--   count BIGINT
--   distribution VARCHAR          the bar
--   requests BIGINT, p50_ns, p99_ns, max_ns BIGINT   of the device and operation (repeated on each row)
WITH
rq AS (
  SELECT device, op || CASE WHEN op = 'W' AND is_sync THEN ' sync' ELSE '' END AS op, latency_ns, ss_log2_us(latency_ns) AS b
  FROM ss_block_requests() WHERE complete_ts IS NOT NULL AND latency_ns >= 0
),
per_op AS (
  SELECT device, op, count(*) AS requests, quantile_disc(latency_ns, 0.5) AS p50_ns, quantile_disc(latency_ns, 0.99) AS p99_ns,
    max(latency_ns) AS max_ns
  FROM rq GROUP BY device, op
),
buckets AS (SELECT device, op, b, count(*) AS n FROM rq GROUP BY device, op, b),
peak AS (SELECT device, op, max(n) AS top FROM buckets GROUP BY device, op)
SELECT b.device, b.op, b.b AS usecs_from, CASE WHEN b.b = 0 THEN 1 ELSE 2 * b.b - 1 END AS usecs_to, b.n AS count,
  repeat('*', CAST(ceil(40.0 * b.n / p.top) AS INTEGER)) AS distribution,
  o.requests, o.p50_ns, o.p99_ns, o.max_ns
FROM buckets b JOIN peak p USING (device, op) JOIN per_op o USING (device, op)
ORDER BY b.device, b.op, b.b
