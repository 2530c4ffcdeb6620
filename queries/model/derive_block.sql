-- derive_block: block requests, issue paired with completion
-- ==========================================================
--
-- Run by the ingest (server/model/derive_model.ts) after derive_slices.sql.
-- Fills:
--   block_request  one row per block_rq_issue, with the block_rq_complete
--                  that ended it and the block_rq_insert that queued it
--   counter_track  'dirty pages', 'writeback pages', 'dirty threshold',
--   + counter_source 'background threshold' (global_dirty_state, utid NULL)
--                  'block R latency DEV' / 'block W latency DEV' per device
--                  ('7,2'): each request's issue -> complete latency in ms, at
--                  its completion
--   (the counter view reads the values from the events and block_request)
--
-- The block events have no typed table: their fields come from `args`, read
-- through the _event_block_rq_* views (server/model/derive_event_views.ts)
-- (dev: a dev_t, major << 20 | minor, from trace.dat and text alike; sector,
-- nr_sector, bytes, rwbs, comm, error; 3.x-4.11 call the last `errors`).
-- Pairing (as blktrace-style tools and biolatency do it, without a request
-- pointer, which the tracepoints do not carry):
--   * a completion pairs with the latest issue of the same (dev, sector)
--     before it; of two completions of one issue only the first counts;
--     a request issued again (requeue) is measured from its last issue;
--   * a flush (zero-length, rwbs with F: 'FF' on 5.x+, 'FWS 0 + 0' on
--     2.6.37-4.x) has no sector to key on: the kernel issues the queue's
--     flush_rq at sector 0 and completes it at sector (sector_t)-1, and the
--     empty preflush write it served completes on its own ('WS 0 + 0') with
--     no issue. So flushes pair by device alone: a flush completion pairs
--     with the latest flush issue of its device before it. That is exact
--     because blk-flush keeps at most one flush in flight per flush queue
--     (blk_kick_flush(): "C1. At any given time, only one flush shall be in
--     progress"), so per queue flushes complete in issue order, each before
--     the next is issued; on a multi-queue device with flushes in flight on
--     two queues at once the earlier one keeps complete_ts NULL rather than
--     taking another's completion;
--   * an insert is the request's queueing when it is the latest insert of
--     its (dev, sector) before the issue and after the previous issue of it;
--   * issues without a completion in the trace keep complete_ts NULL;
--     completions of requests issued before the trace are left out.
--   * op from rwbs (blk_fill_rwbs(): an optional F preflush, then W / R / D /
--     E / N, then F FUA, A readahead, S sync, M meta): 'R', 'W', 'D', 'E',
--     'F' (a pure flush, or an empty preflush write 'FWS 0 + 0' as 2.6.37-4.x
--     print blkdev_issue_flush; B barrier before 2.6.37), 'N'.

DELETE FROM block_request;
DELETE FROM counter_source WHERE series IN ('dirty pages', 'writeback pages', 'dirty threshold', 'background threshold', 'block latency');
DELETE FROM counter_track WHERE name IN ('dirty pages', 'writeback pages', 'dirty threshold', 'background threshold') OR name LIKE 'block % latency %';

-- One row per issue (derive_guards.ts: skipped without any, e.g. global_dirty_state alone).
-- @if-rows _event_block_rq_issue
INSERT INTO block_request
WITH
-- The three events' fields, one view each (server/model/derive_event_views.ts):
-- they read the events' shape tables directly. Not a pivot of `args`: that
-- keeps a branch per shape and field of every block event, each with its own
-- hash tables, and grew RSS by ~190 MB for 90k events on many_systems.v7.
-- pair_key: the sector, or -1 for a flush (see the header).
-- prev_issue_ts: the previous issue of the same (dev, pair_key), from one
-- sort of all issues rather than a window PARTITION BY (dev, pair_key): a
-- key is a sector, so nearly every partition holds one or two rows, and
-- DuckDB's per-partition work made that LAG ~115 of the statement's ~280
-- CPU ms on many_systems.v7 (32k issues).
iss AS (
  SELECT * EXCLUDE (prev_dev, prev_key, prev_ts),
    CASE WHEN prev_dev = dev AND prev_key IS NOT DISTINCT FROM pair_key THEN prev_ts END AS prev_issue_ts
  FROM (
    SELECT *, lag(dev) OVER w AS prev_dev, lag(pair_key) OVER w AS prev_key, lag(ts) OVER w AS prev_ts
    FROM (
      SELECT *, CASE WHEN nr_sector = 0 AND contains(coalesce(rwbs, ''), 'F') THEN -1 ELSE sector END AS pair_key
      FROM _event_block_rq_issue WHERE dev IS NOT NULL
    )
    WINDOW w AS (ORDER BY dev, pair_key, ts, id)
  )
),
cmp AS (
  SELECT id, ts, dev, CASE WHEN nr_sector = 0 AND contains(coalesce(rwbs, ''), 'F') THEN -1 ELSE sector END AS pair_key, error
  FROM _event_block_rq_complete WHERE dev IS NOT NULL
),
ins AS (
  SELECT id, ts, dev, CASE WHEN nr_sector = 0 AND contains(coalesce(rwbs, ''), 'F') THEN -1 ELSE sector END AS pair_key
  FROM _event_block_rq_insert WHERE dev IS NOT NULL
),
-- An issue's first completion: the least (ts, id) of those paired with it,
-- by a hash aggregate (a row_number() PARTITION BY the issue had one- and
-- two-row partitions, as above). The ASOF join's c.ts is never NULL.
completed AS (
  SELECT issue_id, first.complete_id, first.complete_ts, first.error
  FROM (
    SELECT i.id AS issue_id, min({'complete_ts': c.ts, 'complete_id': c.id, 'error': c.error}) AS first
    FROM cmp c ASOF JOIN (SELECT id, ts, dev, pair_key FROM iss) i ON c.dev = i.dev AND c.pair_key = i.pair_key AND c.ts >= i.ts
    GROUP BY i.id
  )
),
-- No issues reach the join when the trace has no block_rq_insert (a
-- recording of `-e block:block_rq_issue -e block:block_rq_complete`, as the
-- untuned u3.dat with its 48k issues): DuckDB's ASOF join sorts its left
-- side even when the right one is empty, ~80 CPU ms there for no row.
queued AS (
  SELECT i.id AS issue_id, q.id AS insert_id, q.ts AS insert_ts
  FROM (SELECT id, ts, dev, pair_key, prev_issue_ts FROM iss WHERE EXISTS (SELECT 1 FROM ins)) i
  ASOF JOIN ins q ON q.dev = i.dev AND q.pair_key = i.pair_key AND i.ts >= q.ts
  WHERE i.prev_issue_ts IS NULL OR q.ts > i.prev_issue_ts
)
SELECT
  i.id AS issue_id, c.complete_id, q.insert_id,
  i.dev, i.sector, i.nr_sector, i.bytes,
  -- an empty preflush write ('FWS 0 () 0 + 0', how 2.6.37-4.x print blkdev_issue_flush) is a flush
  i.rwbs,
  CASE WHEN i.rwbs IS NULL THEN '?'
       WHEN i.nr_sector = 0 AND contains(i.rwbs, 'F') THEN 'F'
       WHEN contains(i.rwbs, 'R') THEN 'R'
       WHEN contains(i.rwbs, 'W') THEN 'W'
       WHEN contains(i.rwbs, 'D') THEN 'D'
       WHEN contains(i.rwbs, 'E') THEN 'E'
       WHEN contains(i.rwbs, 'F') OR contains(i.rwbs, 'B') THEN 'F'
       ELSE 'N' END AS op,
  contains(coalesce(i.rwbs, ''), 'S') AS is_sync,
  contains(coalesce(i.rwbs, ''), 'M') AS is_meta,
  contains(coalesce(i.rwbs, ''), 'A') AS is_readahead,
  i.utid, i.comm, i.cpu,
  q.insert_ts, i.ts AS issue_ts, c.complete_ts,
  c.error
FROM iss i
LEFT JOIN completed c ON c.issue_id = i.id
LEFT JOIN queued q ON q.issue_id = i.id
;
-- @end-if

-- Counter tracks: the global dirty state, and the request latency per device and operation.
CREATE TEMP TABLE _ss_wb_tracks AS
WITH wanted AS (
  SELECT name, 'pages' AS unit, NULL AS dev, NULL AS op, description, k FROM (VALUES
    ('dirty pages', 'pages dirty in the page cache, all devices (global_dirty_state dirty)', 1),
    ('writeback pages', 'pages under writeback, all devices (global_dirty_state writeback)', 2),
    ('dirty threshold', 'the dirty limit past which writers are throttled (global_dirty_state thresh)', 3),
    ('background threshold', 'dirty pages past which the flusher writes back in the background (global_dirty_state bg_thresh)', 4)
  ) v(name, description, k)
  WHERE EXISTS (SELECT 1 FROM global_dirty_state)
  UNION ALL
  SELECT DISTINCT 'block ' || op || ' latency ' || CAST(dev >> 20 AS VARCHAR) || ',' || CAST(dev & 1048575 AS VARCHAR), 'ms', dev, op,
    CASE op WHEN 'R' THEN 'reads' ELSE 'writes' END || ' of device ' || CAST(dev >> 20 AS VARCHAR) || ',' || CAST(dev & 1048575 AS VARCHAR)
      || ': each request''s latency, block_rq_issue -> block_rq_complete, at its completion (ms)', 5
  FROM block_request WHERE complete_ts IS NOT NULL AND op IN ('R', 'W')
)
SELECT (coalesce((SELECT max(id) FROM counter_track), 0) + row_number() OVER (ORDER BY k, dev, op))::INTEGER AS id, name, unit, dev, op, description
FROM wanted;

INSERT INTO counter_track (id, name, unit, utid, cpu, description)
SELECT id, name, unit, NULL, NULL, description FROM _ss_wb_tracks;

-- 'block latency' rows name their device and op in sym: 'DEV OP' (the dev_t number, then R or W)
INSERT INTO counter_source (track_id, series, utid, sym)
SELECT id, CASE WHEN dev IS NULL THEN name ELSE 'block latency' END, NULL,
  CASE WHEN dev IS NULL THEN NULL ELSE CAST(dev AS VARCHAR) || ' ' || op END
FROM _ss_wb_tracks;

DROP TABLE _ss_wb_tracks;
