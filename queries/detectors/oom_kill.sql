-- oom_kill: processes the OOM killer killed (oom:mark_victim), and the reclaim that failed before it
-- ==============================================================================================
--
-- @title OOM kills
-- @description One finding per process the OOM killer chose (oom:mark_victim): who, how big (total-vm, anon/file/shmem rss, page tables, oom_score_adj on 6.8+), the reclaim the killing task and the victim did before it (passes, time, pages reclaimed, how long since the episode's first pass), the reaper's work and the victim's exit.
-- @param window_ns BIGINT 10000000000 -- reclaim passes ending at most this long (ns) before the kill are counted: 10 s
-- @param gap_ns BIGINT 1000000000 -- the episode that led to the kill: the passes back from the kill with no pause longer than this (ns) between them: 1 s
-- @requires oom:mark_victim
-- @impact the episode: from its first reclaim pass to the kill (0 when no reclaim of the tasks involved came within gap_ns of the kill).
-- @severity always critical: a process was killed.
-- @rank loss -- kills rank before every stall of their severity, then among themselves by impact.
--
-- What it finds
--   When reclaim cannot free enough memory for an allocation, the page
--   allocator (global OOM: __alloc_pages_may_oom) or the memory cgroup's
--   charge path (memcg OOM: mem_cgroup_out_of_memory, a cgroup over its
--   memory.limit_in_bytes / memory.max) calls out_of_memory(), which picks
--   the task with the largest oom_badness() (rss + page tables + swap,
--   scaled by oom_score_adj) and kills it: mark_oom_victim() emits
--   oom:mark_victim with the victim's pid, and on 6.8+ its comm, total_vm,
--   anon_rss, file_rss, shmem_rss (kB), uid, pgtables (kB) and
--   oom_score_adj. One finding per mark_victim.
--
-- Why it matters
--   It is the worst outcome of memory pressure: work was lost. The question
--   a developer asks next is what the kernel tried first: how long the task
--   that ran the OOM killer (the event's task: the allocating or charging
--   task) and the victim's threads spent in reclaim before it, whether
--   their last passes reclaimed nothing (an OOM after reclaim failed, not
--   after a bounded timeout), and whether the victim then exited by itself
--   or the oom_reaper had to unmap its memory.
--
-- Reclaim before the kill
--   The passes (ss_reclaim_windows: direct, memcg and node reclaim; soft-
--   limit reclaim, which runs inside the others, is left out) of the tasks
--   involved: the task that emitted mark_victim and every thread of the
--   victim (thread.upid; on traces without process info its thread alone).
--   Counted when they end within window_ns before the kill; a pass still
--   open at the kill counts up to the kill. The episode is the run of those
--   passes back from the kill in which no pause between one pass's end and
--   the next pass's start (or the kill) exceeds gap_ns. Reclaim of other
--   tasks in the same memory cgroup is not counted: the reclaim events
--   carry no cgroup, and a task's cgroup is known only if the recording
--   caught its attach (cgroup:cgroup_attach_task).
--
-- Kernel versions
--   oom:mark_victim exists since 4.11 with the pid alone (so in Perfetto's
--   MarkVictimFtraceEvent); the other fields since 6.8 (values here are
--   NULL without them: the victim's name then comes from the thread table).
--   Before 4.11 the kill has no tracepoint; a victim's sched_process_exit
--   alone does not say the OOM killer sent the SIGKILL, so such traces give
--   "not traced", not a guess. wake_reaper / start_task_reaping /
--   finish_task_reaping / skip_task_reaping (4.14+) fire only when the
--   victim did not exit by itself in time (OOM_REAPER_DELAY, 2 s on 6.x).
--
-- Kinds: 'memcg' (the episode's reclaim was memcg reclaim: a cgroup's
-- limit), 'global' (direct or node reclaim), 'unknown' (no reclaim of the
-- tasks involved in the episode: reclaim not traced, or a kill that no
-- reclaim of these tasks preceded).
-- values: pid, victim (comm), total_vm_kb, anon_rss_kb, file_rss_kb,
-- shmem_rss_kb, pgtables_kb, uid, oom_score_adj, killer (the task that ran
-- the OOM killer, when not the victim), reclaim_passes, reclaim_ns,
-- reclaim_zero_passes (passes that reclaimed no page), nr_reclaimed,
-- first_reclaim_to_kill_ns (the episode), window_passes, window_reclaim_ns
-- (all passes in window_ns), reaper ('reaped', 'skipped', 'woken'),
-- reaping_ns, kill_to_exit_ns (mark_victim to the victim's
-- sched_process_exit). event_ids: the mark_victim, the begin/end of the
-- episode's last 24 passes, the reaper's events and the victim's exit.
WITH
params AS (
  SELECT $window_ns::BIGINT AS window_ns, $gap_ns::BIGINT AS gap_ns
),
kills AS (
  SELECT id, ts, cpu, utid AS killer_utid, pid, comm, total_vm, anon_rss, file_rss, shmem_rss, uid, pgtables, oom_score_adj
  FROM _event_mark_victim
),
victim_thread AS (
  -- the victim's thread: tid = pid, the latest one started by the kill (pids are reused)
  SELECT k.id AS kill_id, t.utid, t.upid, t.name
  FROM kills k JOIN thread t ON t.tid = k.pid AND coalesce(t.start_ts, k.ts) <= k.ts
  QUALIFY row_number() OVER (PARTITION BY k.id ORDER BY t.start_ts DESC NULLS LAST, t.utid DESC) = 1
),
involved AS (
  SELECT id AS kill_id, killer_utid AS utid FROM kills
  UNION
  SELECT v.kill_id, t.utid FROM victim_thread v JOIN thread t ON t.utid = v.utid OR (v.upid IS NOT NULL AND t.upid = v.upid)
),
passes AS (
  SELECT i.kill_id, k.ts AS kill_ts, w.begin_id, w.end_id, w.family, w.ts AS p_ts, w.nr_reclaimed,
    least(coalesce(w.end_ts, w.next_ts, k.ts), k.ts) AS p_end
  FROM involved i
  JOIN kills k ON k.id = i.kill_id
  JOIN ss_reclaim_windows() w ON w.utid = i.utid
  CROSS JOIN params p
  WHERE w.family <> 'memcg_softlimit' AND w.ts < k.ts
    AND least(coalesce(w.end_ts, w.next_ts, k.ts), k.ts) >= k.ts - p.window_ns
),
gaps AS (
  -- the pause after each pass: to the next pass's start (or the kill), from the latest end so far (passes of
  -- several threads overlap)
  SELECT *,
    coalesce(lead(p_ts) OVER w, kill_ts) - max(p_end) OVER (w ROWS UNBOUNDED PRECEDING) AS gap_after
  FROM passes
  WINDOW w AS (PARTITION BY kill_id ORDER BY p_ts, begin_id)
),
episode_marked AS (
  SELECT *,
    max(gap_after) OVER (PARTITION BY kill_id ORDER BY p_ts DESC, begin_id DESC ROWS UNBOUNDED PRECEDING)
      <= (SELECT gap_ns FROM params) AS in_episode
  FROM gaps
),
reclaim AS (
  SELECT kill_id,
    count(*) AS window_passes,
    sum(p_end - greatest(p_ts, kill_ts - (SELECT window_ns FROM params)))::BIGINT AS window_reclaim_ns,
    count(*) FILTER (WHERE in_episode) AS passes,
    coalesce(sum(p_end - p_ts) FILTER (WHERE in_episode), 0)::BIGINT AS reclaim_ns,
    count(*) FILTER (WHERE in_episode AND nr_reclaimed = 0) AS zero_passes,
    sum(nr_reclaimed) FILTER (WHERE in_episode)::BIGINT AS nr_reclaimed,
    min(p_ts) FILTER (WHERE in_episode) AS episode_ts,
    count(*) FILTER (WHERE in_episode AND family = 'memcg') AS memcg_passes,
    list_filter(flatten(list([begin_id, end_id] ORDER BY p_ts DESC, begin_id DESC) FILTER (WHERE in_episode))[1:48],
      x -> x IS NOT NULL) AS ids
  FROM episode_marked
  GROUP BY kill_id
),
reaping AS (
  -- the reaper's events for the victim's pid after the kill (before a later kill of the same pid)
  SELECT k.id AS kill_id,
    min(r.ts) FILTER (WHERE r.what = 'start') AS start_ts,
    min(r.ts) FILTER (WHERE r.what = 'finish') AS finish_ts,
    bool_or(r.what = 'skip') AS skipped,
    list(r.id ORDER BY r.ts) AS ids
  FROM kills k
  JOIN (
    SELECT id, ts, pid, 'wake' AS what FROM _event_wake_reaper
    UNION ALL SELECT id, ts, pid, 'start' FROM _event_start_task_reaping
    UNION ALL SELECT id, ts, pid, 'finish' FROM _event_finish_task_reaping
    UNION ALL SELECT id, ts, pid, 'skip' FROM _event_skip_task_reaping
  ) r ON r.pid = k.pid AND r.ts >= k.ts
  WHERE NOT EXISTS (SELECT 1 FROM kills k2 WHERE k2.pid = k.pid AND k2.ts > k.ts AND k2.ts <= r.ts)
  GROUP BY k.id
),
exits AS (
  SELECT k.id AS kill_id, arg_min(x.id, x.ts) AS exit_id, min(x.ts) AS exit_ts
  FROM kills k JOIN sched_process_exit x ON x.pid = k.pid AND x.ts >= k.ts
  GROUP BY k.id
),
found AS (
  SELECT k.*, coalesce(k.comm, v.name) AS victim, v.utid AS victim_utid,
    kt.tid AS killer_tid, kt.name AS killer_name,
    coalesce(r.passes, 0) AS passes, coalesce(r.reclaim_ns, 0) AS reclaim_ns, coalesce(r.zero_passes, 0) AS zero_passes,
    r.nr_reclaimed, r.episode_ts, r.memcg_passes, r.window_passes, r.window_reclaim_ns, coalesce(r.ids, []) AS reclaim_ids,
    CASE WHEN coalesce(r.passes, 0) = 0 THEN 'unknown' WHEN r.memcg_passes * 2 >= r.passes THEN 'memcg' ELSE 'global' END AS kind,
    rp.start_ts AS reap_start_ts, rp.finish_ts AS reap_finish_ts, rp.skipped, coalesce(rp.ids, []) AS reap_ids,
    x.exit_id, x.exit_ts
  FROM kills k
  LEFT JOIN victim_thread v ON v.kill_id = k.id
  LEFT JOIN thread kt ON kt.utid = k.killer_utid
  LEFT JOIN reclaim r ON r.kill_id = k.id
  LEFT JOIN reaping rp ON rp.kill_id = k.id
  LEFT JOIN exits x ON x.kill_id = k.id
)
SELECT
  'critical' AS severity,
  coalesce(episode_ts, ts) AS ts,
  ts - coalesce(episode_ts, ts) AS dur,
  ts - coalesce(episode_ts, ts) AS impact,
  cpu,
  coalesce(victim_utid, killer_utid) AS utid,
  CASE kind WHEN 'memcg' THEN 'memcg OOM' WHEN 'global' THEN 'OOM' ELSE 'OOM' END
    || ' killed ' || ss_task(victim, pid)
    || CASE WHEN anon_rss IS NOT NULL
            THEN ' (anon-rss ' || anon_rss || ' kB, file-rss ' || coalesce(CAST(file_rss AS VARCHAR), '?')
              || ' kB, shmem-rss ' || coalesce(CAST(shmem_rss AS VARCHAR), '?') || ' kB'
              || coalesce(', oom_score_adj ' || oom_score_adj, '') || ')'
            ELSE '' END
    || CASE WHEN passes > 0
            THEN ' after ' || ss_fmt_dur(ts - episode_ts) || ' of '
              || CASE kind WHEN 'memcg' THEN 'memcg reclaim' ELSE 'direct reclaim' END
              || CASE WHEN killer_utid IS DISTINCT FROM victim_utid THEN ' by ' || ss_task(killer_name, killer_tid) ELSE '' END
              || ' (' || passes || CASE WHEN passes = 1 THEN ' pass, ' ELSE ' passes, ' END
              || ss_fmt_dur(reclaim_ns) || ' in reclaim'
              || CASE WHEN zero_passes > 0 THEN ', ' || zero_passes || ' reclaimed nothing' ELSE '' END || ')'
            ELSE CASE WHEN killer_utid IS DISTINCT FROM victim_utid THEN ' (OOM killer run by ' || ss_task(killer_name, killer_tid) || ')' ELSE '' END
              || ', no reclaim of these tasks traced before it' END
    || CASE WHEN skipped THEN '; oom_reaper skipped it'
            WHEN reap_finish_ts IS NOT NULL AND reap_start_ts IS NOT NULL THEN '; oom_reaper took ' || ss_fmt_dur(reap_finish_ts - reap_start_ts)
            ELSE '' END AS title,
  {
    'pid': pid,
    'victim': victim,
    'total_vm_kb': total_vm,
    'anon_rss_kb': anon_rss,
    'file_rss_kb': file_rss,
    'shmem_rss_kb': shmem_rss,
    'pgtables_kb': pgtables,
    'uid': uid,
    'oom_score_adj': oom_score_adj,
    'killer': CASE WHEN killer_utid IS DISTINCT FROM victim_utid THEN ss_task(killer_name, killer_tid) END,
    'reclaim_passes': passes,
    'reclaim_ns': reclaim_ns,
    'reclaim_zero_passes': zero_passes,
    'nr_reclaimed': nr_reclaimed,
    'first_reclaim_to_kill_ns': ts - episode_ts,
    'window_passes': window_passes,
    'window_reclaim_ns': window_reclaim_ns,
    'reaper': CASE WHEN skipped THEN 'skipped' WHEN reap_finish_ts IS NOT NULL THEN 'reaped' WHEN len(reap_ids) > 0 THEN 'woken' END,
    'reaping_ns': reap_finish_ts - reap_start_ts,
    'kill_to_exit_ns': exit_ts - ts
  } AS "values",
  list_concat([id], reclaim_ids, reap_ids, list_filter([exit_id], x -> x IS NOT NULL)) AS event_ids,
  kind
FROM found
ORDER BY ts, id
