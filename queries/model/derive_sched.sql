-- Derives sched_slice and thread_state from the scheduler events.
-- Runs once per trace, after decoding (server/model/derive_model.ts).
-- Depends on: sched_switch, sched_waking, sched_wakeup, sched_wakeup_new, thread.

-- sched_slice: one row per period a thread ran on a CPU. A slice starts at a
-- sched_switch (next_pid switches in) and ends at the next sched_switch on the
-- same CPU, whose prev_state is the state the thread left in.
INSERT INTO sched_slice
SELECT
  s.id,
  s.ts,
  COALESCE(LEAD(s.ts) OVER w - s.ts, -1) AS dur,
  s.cpu,
  COALESCE(t.utid, 0) AS utid,
  LEAD(s.prev_state) OVER w AS end_state,
  s.next_prio AS priority
FROM sched_switch s
LEFT JOIN thread t ON t.tid = s.next_pid
WINDOW w AS (PARTITION BY s.cpu ORDER BY s.ts, s.id);

-- thread_state: per thread, a sequence of states built from three kinds of
-- moments: switched out (enters prev_state: S, D, ... or R/R+ if preempted),
-- woken (enters R, runnable), switched in (Running). A wakeup only counts if
-- the thread was blocked (its previous moment is a switch-out in a non-R
-- state): sched_waking and sched_wakeup for the same wakeup must not make two
-- rows. sched_wakeup is used only when the trace has no sched_waking.
-- The idle task (utid 0) has no thread_state, as in Perfetto.
INSERT INTO thread_state
WITH
wakeups AS (
  SELECT id, ts, pid, target_cpu, utid AS waker_utid FROM sched_waking
  UNION ALL
  SELECT id, ts, pid, target_cpu, utid FROM sched_wakeup
  WHERE NOT EXISTS (SELECT 1 FROM sched_waking)
  UNION ALL
  SELECT id, ts, pid, target_cpu, utid FROM sched_wakeup_new
),
moments AS (
  -- order within one ts: switch-out (0) before wakeup (1) before switch-in (2)
  -- blocks: a switch-out into a non-R state (the thread sleeps until woken).
  SELECT tp.utid, s.ts, 0 AS kind, s.id, NULL::INTEGER AS cpu, s.prev_state AS state, NULL::INTEGER AS waker_utid,
         coalesce(s.prev_state NOT LIKE 'R%', false) AS blocks
  FROM sched_switch s JOIN thread tp ON tp.tid = s.prev_pid
  UNION ALL
  SELECT tw.utid, w.ts, 1, w.id, w.target_cpu, 'R', w.waker_utid, false
  FROM wakeups w JOIN thread tw ON tw.tid = w.pid
  UNION ALL
  SELECT tn.utid, s.ts, 2, s.id, s.cpu, 'Running', NULL, false
  FROM sched_switch s JOIN thread tn ON tn.tid = s.next_pid
),
-- One sort: LAG gives whether the previous moment blocked (so a wakeup is
-- kept); the next kept moment's ts (dur) comes from the same window. The
-- moment after a kept one is dropped only if it is a wakeup not preceded by a
-- blocking switch-out, and then every wakeup up to the next switch is dropped
-- too, so the next kept ts is the next switch's (LEAD ... IGNORE NULLS).
-- So a blocking moment ends at the next moment, any other at the next
-- switch: when that next moment is a switch itself, both are its ts (NULL
-- ts sort last: a switch whose ts is NULL has only NULLs after it). Three
-- window functions, not a fourth for the next moment's kind: each costs
-- ~30-50 CPU ms over sched_wq's 445k moments, and `blocks` is computed
-- before the sort rather than from `state` in it.
ordered AS (
  SELECT *,
    LAG(blocks) OVER w AS prev_blocks,
    LEAD(ts) OVER w AS next_ts,
    LEAD(CASE WHEN kind <> 1 THEN ts END IGNORE NULLS) OVER w AS next_switch_ts
  FROM moments
  WHERE utid <> 0
  WINDOW w AS (PARTITION BY utid ORDER BY ts, kind, id)
)
SELECT
  -- Unique without a global sort: each moment comes from one event, and one
  -- sched_switch gives at most one moment of each kind.
  id * 3 + kind AS id,
  ts,
  COALESCE(CASE WHEN blocks THEN next_ts ELSE next_switch_ts END - ts, -1) AS dur,
  cpu,
  utid,
  state,
  NULL AS io_wait,
  NULL AS blocked_function,
  waker_utid,
  CASE WHEN kind = 1 THEN id END AS waker_id
FROM ordered
-- a wakeup counts only if the thread was blocked (previous moment a
-- switch-out in a non-R state)
WHERE kind <> 1 OR prev_blocks;
