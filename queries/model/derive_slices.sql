-- derive_slices: slices, counters and flows from the typed event tables
-- ===================================================================
--
-- Run by the ingest (server/model/derive_model.ts) after decoding and after
-- derive_sched.sql (wakeup and migration flows read its sched_slice and
-- thread_state). Fills, for the timeline and the findings view:
--
--   slice          'shrinker'       mm_shrink_slab_start -> end, named by the shrinker symbol
--                  'direct_reclaim' mm_vmscan_direct_reclaim_begin -> end ('direct reclaim')
--                  'memcg_reclaim'  mm_vmscan_memcg_reclaim_begin -> end ('memcg reclaim') and
--                                   memcg_softlimit_reclaim ('memcg soft-limit reclaim')
--                  'node_reclaim'   mm_vmscan_node_reclaim_begin -> end ('node reclaim')
--                  'workqueue'      workqueue_execute_start -> end, named by the work function
--   counter_track  'kswapd priority'   per kswapd thread: priority of each shrink_inactive_list() pass
--   + counter_source 'lru nr_scanned'  per thread: pages scanned by each shrink_inactive_list() pass
--   (the counter view reads the values from the events)
--                  'lru nr_reclaimed'  per thread: pages reclaimed by each pass
--                  'slab cache_items'  per shrinker symbol (utid NULL; `description` starts with
--                                      the symbol): objects in the cache at each shrinker call
--   _flow          'wakeup'     sched_waking -> the wakee's next switch-in
--                  'migration'  sched_migrate_task -> the task's next switch-in on dest_cpu
--   (the flow view adds 'begin_end', shrinker and reclaim begin -> end, from
--   the slices' begin_id / end_id: see schema.sql)
--
-- Pairing rules (same as the detectors, see queries/detectors/*.sql):
--   * A begin pairs with the next event of its kind on the same thread when
--     that is an end: shrinker calls per thread (and same symbol when both
--     have one), reclaim per thread and family (soft-limit reclaim nests in
--     direct reclaim), workqueue items per worker (and same work pointer when
--     both have one). Otherwise its end was lost or it is still running:
--     end_id NULL, and dur runs to the bound the thread's later events give
--     (as the detectors do): the thread's next begin of its kind (a lost
--     end); for a shrinker call with no later shrinker event, the thread's
--     next reclaim event (mm_vmscan_*: the call had returned by then, a task
--     in a shrinker emits none). With no such event the slice is open: dur =
--     -1 (drawn to the end of the trace). Ends without a begin make no slice.
--   * depth: slices of all categories on one thread nest by time; an open
--     slice is taken to end at the thread's next begin of its kind (or never).
--   * Counter values: counter.id is the source event id.
--   * Flow ids: 2 * row number (by slice_in, kind, slice_out) + 1 here;
--     the view's begin_end flows have 2 * the slice's id, so ids never meet.
--   * wakeup: the waking that made a blocked thread runnable (thread_state's
--     waker_id, as derive_sched.sql decides it) -> the switch-in ending that
--     runnable period. Switch-ins after preemption have none.
--   * migration: a migration -> the task's next switch-in, when that is on
--     the migration's dest_cpu.
-- Set-based throughout (window functions, hash joins; one sort per input).
-- Why begin_end flows are not stored: they repeat the slices' begin_id and
-- end_id; writing them cost 0.22-0.28 s of a 10M-event trace.dat's derive.
-- Shrinker symbols lose a '+0x../0x..' offset suffix (text inputs): symbol_name(), schema.sql.
-- Re-running replaces what this file wrote before.

DELETE FROM slice WHERE category IN ('shrinker', 'direct_reclaim', 'memcg_reclaim', 'node_reclaim', 'workqueue');
DELETE FROM _flow;
DELETE FROM counter_source WHERE series IN ('kswapd priority', 'lru nr_scanned', 'lru nr_reclaimed', 'slab cache_items');
DELETE FROM counter_track WHERE name IN ('kswapd priority', 'lru nr_scanned', 'lru nr_reclaimed', 'slab cache_items');

-- ---------------------------------------------------------------------------
-- Begin/end pairs
-- ---------------------------------------------------------------------------

-- Nesting depth per thread: +1 at each begin, -1 at each end (an open slice
-- ends at the next begin of its kind on the thread, for depth only).
-- The depth at a begin is the running sum of those edges on its thread
-- before it: with begin_no = begins up to and including it and edge_no =
-- edges (begins and ends) up to and including it, that sum is
-- begin_no - (edge_no - begin_no), minus 1 for the begin itself.
-- Two row_number()s instead of a running sum(): DuckDB evaluates a running
-- sum() over a few huge threads ~10x slower (PARTITION BY) or ~2x slower
-- (one unpartitioned window) than row_number() (3M edges: ~0.4 s CPU).
-- Edges are strictly ordered by (ts, event id, end before begin): each end
-- event closes at most one begin.
-- The pairs are a CTE that DuckDB inlines where it is used: as a temporary
-- table (written once, read three times) or MATERIALIZED, the same derive of
-- a 10M-event trace.dat took 0.3-0.5 s longer.
-- A slice is a begin event of one of these (derive_guards.ts: skipped when all are empty).
-- @if-rows mm_shrink_slab_start, mm_vmscan_direct_reclaim_begin, workqueue_execute_start
INSERT INTO slice (id, ts, dur, utid, cpu, category, name, depth, begin_id, end_id)
WITH
shr AS (
  SELECT id, ts, cpu, utid, true AS is_begin,
         symbol_name(shrink) AS sym
  FROM mm_shrink_slab_start
  UNION ALL
  SELECT id, ts, cpu, utid, false, symbol_name(shrink)
  FROM mm_shrink_slab_end
),
shr_seq AS (
  SELECT *, lead(is_begin) OVER w AS n_is_begin, lead(id) OVER w AS n_id, lead(ts) OVER w AS n_ts, lead(sym) OVER w AS n_sym
  FROM shr WINDOW w AS (PARTITION BY utid ORDER BY ts, id)
),
rec AS (
  SELECT id, ts, cpu, utid, true AS is_begin,
         coalesce(nullif(regexp_extract(event, '^mm_vmscan_(.*)_reclaim_(begin|end)$', 1), ''), 'direct') AS family
  FROM mm_vmscan_direct_reclaim_begin
  UNION ALL
  SELECT id, ts, cpu, utid, false,
         coalesce(nullif(regexp_extract(event, '^mm_vmscan_(.*)_reclaim_(begin|end)$', 1), ''), 'direct')
  FROM mm_vmscan_direct_reclaim_end
),
rec_seq AS (
  SELECT *, lead(is_begin) OVER w AS n_is_begin, lead(id) OVER w AS n_id, lead(ts) OVER w AS n_ts
  FROM rec WINDOW w AS (PARTITION BY utid, family ORDER BY ts, id)
),
wq AS (
  SELECT id, ts, cpu, utid, true AS is_begin, work, function FROM workqueue_execute_start
  UNION ALL
  SELECT id, ts, cpu, utid, false, work, function FROM workqueue_execute_end
),
wq_seq AS (
  SELECT *, lead(is_begin) OVER w AS n_is_begin, lead(id) OVER w AS n_id, lead(ts) OVER w AS n_ts, lead(work) OVER w AS n_work
  FROM wq WINDOW w AS (PARTITION BY utid ORDER BY ts, id)
),
-- A shrinker start with no later shrinker event on its thread (at most one
-- per thread): the thread's next reclaim event bounds it.
shr_open AS (
  SELECT id, ts, utid FROM shr_seq WHERE is_begin AND n_is_begin IS NULL
),
shr_returned AS (
  SELECT o.id, min(r.ts) AS bound_ts
  FROM shr_open o
  JOIN (
    SELECT utid, ts FROM mm_vmscan_lru_shrink_inactive WHERE utid IN (SELECT utid FROM shr_open)
    UNION ALL SELECT utid, ts FROM mm_vmscan_lru_shrink_active WHERE utid IN (SELECT utid FROM shr_open)
    UNION ALL SELECT utid, ts FROM mm_vmscan_lru_isolate WHERE utid IN (SELECT utid FROM shr_open)
    UNION ALL SELECT utid, ts FROM mm_vmscan_kswapd_sleep WHERE utid IN (SELECT utid FROM shr_open)
    UNION ALL SELECT utid, ts FROM mm_vmscan_kswapd_wake WHERE utid IN (SELECT utid FROM shr_open)
    UNION ALL SELECT utid, ts FROM mm_vmscan_wakeup_kswapd WHERE utid IN (SELECT utid FROM shr_open)
    UNION ALL SELECT utid, ts FROM mm_vmscan_direct_reclaim_begin WHERE utid IN (SELECT utid FROM shr_open)
    UNION ALL SELECT utid, ts FROM mm_vmscan_direct_reclaim_end WHERE utid IN (SELECT utid FROM shr_open)
    UNION ALL SELECT utid, ts FROM mm_vmscan_write_folio WHERE utid IN (SELECT utid FROM shr_open)
  ) r ON r.utid = o.utid AND r.ts > o.ts
  GROUP BY o.id
),
pairs AS (
SELECT s.id, s.ts, s.cpu, s.utid, 'shrinker' AS category, coalesce(s.sym, 'shrinker') AS name,
       CASE WHEN s.closes THEN s.n_id END AS end_id,
       CASE WHEN s.closes THEN s.n_ts END AS end_ts,
       s.n_ts AS next_ts, s.n_id AS next_id,
       coalesce(s.n_ts, r.bound_ts) AS bound_ts
FROM (SELECT *, coalesce(NOT n_is_begin AND (sym IS NULL OR n_sym IS NULL OR sym = n_sym), false) AS closes
      FROM shr_seq WHERE is_begin) s
LEFT JOIN shr_returned r ON r.id = s.id
UNION ALL
SELECT id, ts, cpu, utid,
       CASE family WHEN 'direct' THEN 'direct_reclaim' WHEN 'node' THEN 'node_reclaim' ELSE 'memcg_reclaim' END,
       CASE family WHEN 'direct' THEN 'direct reclaim' WHEN 'node' THEN 'node reclaim'
                   WHEN 'memcg_softlimit' THEN 'memcg soft-limit reclaim' ELSE replace(family, '_', ' ') || ' reclaim' END,
       CASE WHEN NOT n_is_begin THEN n_id END,
       CASE WHEN NOT n_is_begin THEN n_ts END,
       n_ts, n_id, n_ts
FROM rec_seq WHERE is_begin
UNION ALL
SELECT id, ts, cpu, utid, 'workqueue', coalesce(function, 'work ' || work),
       CASE WHEN closes THEN n_id END,
       CASE WHEN closes THEN n_ts END,
       n_ts, n_id, n_ts
FROM (SELECT *, coalesce(NOT n_is_begin AND (work IS NULL OR n_work IS NULL OR work = n_work), false) AS closes
      FROM wq_seq WHERE is_begin)
),
-- Slices of one pairing group (shrinker; reclaim of one family; workqueue)
-- on one thread never overlap: each ends, for depth, at or before the
-- group's next begin there (its end or that begin itself, and an end sorts
-- before a begin at the same event). So only a thread with begins of two or
-- more groups can nest slices, and only its slices need the edge sort below;
-- every other slice has depth 0 (the edges would give 0 too). On the corpus
-- no thread but a direct reclaimer's mixes groups.
nesting AS (
  SELECT utid FROM (
    SELECT DISTINCT utid, 'shrinker' AS grp FROM mm_shrink_slab_start
    UNION ALL
    SELECT DISTINCT utid, family FROM rec WHERE is_begin
    UNION ALL
    SELECT DISTINCT utid, 'workqueue' FROM workqueue_execute_start
  )
  GROUP BY utid HAVING count(*) > 1
),
_ss_pairs AS (
  SELECT p.*, n.utid IS NOT NULL AS nests
  FROM pairs p LEFT JOIN nesting n ON n.utid IS NOT DISTINCT FROM p.utid
),
-- begin_no: the slice's rank among all begins on its thread (for depth below)
nested AS (
  SELECT *, row_number() OVER (PARTITION BY utid ORDER BY ts, id) AS begin_no FROM _ss_pairs WHERE nests
),
edges AS (
  SELECT utid, ts, id AS ord_id, 1 AS delta FROM nested
  UNION ALL
  SELECT utid, coalesce(end_ts, next_ts), coalesce(end_id, next_id), -1
  FROM nested WHERE coalesce(end_ts, next_ts) IS NOT NULL
),
numbered AS (
  SELECT ord_id, delta, row_number() OVER (PARTITION BY utid ORDER BY ts, ord_id, delta) AS edge_no
  FROM edges
),
depths AS (
  SELECT p.*, greatest(2 * p.begin_no - e.edge_no - 1, 0)::INTEGER AS depth
  FROM nested p JOIN numbered e ON e.ord_id = p.id AND e.delta = 1
  UNION ALL BY NAME
  SELECT *, 0::INTEGER AS depth FROM _ss_pairs WHERE NOT nests
)
SELECT p.id, p.ts, CASE WHEN p.end_ts IS NOT NULL THEN p.end_ts - p.ts WHEN p.bound_ts IS NOT NULL THEN p.bound_ts - p.ts ELSE -1 END, p.utid, p.cpu,
       p.category, p.name, p.depth, p.id, p.end_id
FROM depths p;
-- @end-if

-- ---------------------------------------------------------------------------
-- Counters
-- ---------------------------------------------------------------------------

-- Every track is one of these events' (_ss_kswapd only narrows the first).
-- @if-rows mm_vmscan_lru_shrink_inactive, mm_shrink_slab_start
CREATE OR REPLACE TEMP TABLE _ss_kswapd AS
SELECT utid FROM thread WHERE regexp_matches(coalesce(name, ''), '^kswapd[0-9]+(:[0-9]+)?$')
UNION SELECT utid FROM mm_vmscan_kswapd_wake
UNION SELECT utid FROM mm_vmscan_kswapd_sleep;

CREATE OR REPLACE TEMP TABLE _ss_tracks AS
WITH wanted AS (
  SELECT DISTINCT 'kswapd priority' AS name, 'priority' AS unit, utid, NULL::VARCHAR AS sym
  FROM mm_vmscan_lru_shrink_inactive WHERE utid IN (SELECT utid FROM _ss_kswapd)
  UNION ALL
  SELECT DISTINCT 'lru nr_scanned', 'pages', utid, NULL FROM mm_vmscan_lru_shrink_inactive
  UNION ALL
  SELECT DISTINCT 'lru nr_reclaimed', 'pages', utid, NULL FROM mm_vmscan_lru_shrink_inactive
  UNION ALL
  SELECT DISTINCT 'slab cache_items', 'objects', NULL::INTEGER,
         coalesce(symbol_name(shrink), '?')
  FROM mm_shrink_slab_start WHERE cache_items IS NOT NULL
)
SELECT
  (coalesce((SELECT max(id) FROM counter_track), 0) + row_number() OVER (ORDER BY name, utid, sym))::INTEGER AS id,
  name, unit, utid, sym,
  CASE name
    WHEN 'kswapd priority' THEN 'scan priority of each shrink_inactive_list() pass by this kswapd (12 = DEF_PRIORITY; each step lower scans twice as much)'
    WHEN 'lru nr_scanned' THEN 'pages scanned by each shrink_inactive_list() pass of this thread (mm_vmscan_lru_shrink_inactive)'
    WHEN 'lru nr_reclaimed' THEN 'pages reclaimed by each shrink_inactive_list() pass of this thread (mm_vmscan_lru_shrink_inactive)'
    ELSE sym || ': objects in the cache at each call of this shrinker, all callers (mm_shrink_slab_start cache_items)'
  END AS description
FROM wanted;

INSERT INTO counter_track (id, name, unit, utid, cpu, description)
SELECT id, name, unit, utid, NULL, description FROM _ss_tracks;

INSERT INTO counter_source (track_id, series, utid, sym)
SELECT id, name, utid, sym FROM _ss_tracks;

DROP TABLE _ss_tracks;
DROP TABLE _ss_kswapd;
-- @end-if

-- ---------------------------------------------------------------------------
-- Wakeup and migration flows, from the scheduler model derive_sched.sql built
-- (sched_slice, thread_state): hash joins and one small ASOF join, no pass
-- over the raw scheduler events.
--   wakeup: a thread_state 'R' row started by a wakeup (waker_id: the
--     sched_waking, or sched_wakeup when the trace has no waking, that made a
--     blocked thread runnable) -> the sched_switch that ends it by switching
--     the thread in (the sched_slice starting at that ts).
--   migration: each sched_migrate_task -> the task's next switch-in, when it
--     is on dest_cpu (a task moved again before it ran gets no arrow for the
--     earlier move).
-- ---------------------------------------------------------------------------

-- Both kinds end at a sched_slice (inner joins).
-- @if-rows sched_slice
INSERT INTO _flow (id, slice_out, slice_in, kind)
WITH
-- No DISTINCT: `thread` has one row per tid (ModelBuilder.threadOf), so a
-- waking is one thread_state row and a switch one sched_slice row, and each
-- (out, in) pair comes once; the two DISTINCTs cost ~10% of the statement.
-- kind is sorted as a number (migration 0 < wakeup 1, as the names sort):
-- cheaper than comparing the strings.
wakeup AS (
  SELECT r.waker_id AS out_id, s.id AS in_id, 1 AS kind_no
  FROM thread_state r
  JOIN sched_slice s ON s.utid = r.utid AND s.ts = r.ts + r.dur
  WHERE r.waker_id IS NOT NULL AND r.dur >= 0 AND r.state LIKE 'R%'
),
mig AS (
  SELECT m.id, m.ts, m.dest_cpu, t.utid
  FROM sched_migrate_task m JOIN thread t ON t.tid = m.pid
  WHERE m.pid <> 0
),
migration AS (
  SELECT m.id AS out_id, s.id AS in_id, 0 AS kind_no
  FROM mig m
  ASOF JOIN (SELECT id, ts, cpu, utid FROM sched_slice WHERE utid IN (SELECT utid FROM mig)) s
    ON s.utid = m.utid AND s.ts >= m.ts
  WHERE s.cpu = m.dest_cpu
)
SELECT 2 * row_number() OVER (ORDER BY in_id, kind_no, out_id) + 1, out_id, in_id,
       CASE kind_no WHEN 1 THEN 'wakeup' ELSE 'migration' END
FROM (SELECT * FROM wakeup UNION ALL SELECT * FROM migration);
-- @end-if
