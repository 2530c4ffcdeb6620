-- oom_kill summary: OOM kills per victim name
-- ============================================
--
-- One row per victim name (oom:mark_victim's comm, or the victim thread's
-- name when the event has no comm: before 6.8, Perfetto): how many kills,
-- which pids, the largest sizes the kernel gave (kB, 6.8+), the
-- oom_score_adj values, first and last kill.
--
-- Columns
--   victim VARCHAR               comm of the victims
--   kills BIGINT                 mark_victim events
--   pids VARCHAR                 their pids, in kill order ('11200, 11202')
--   max_total_vm_kb, max_anon_rss_kb, max_file_rss_kb, max_shmem_rss_kb BIGINT   NULL before 6.8
--   oom_score_adj VARCHAR        its distinct values, ascending ('500, 1000'); NULL before 6.8
--   first_ts, last_ts BIGINT     first and last kill
WITH k AS (
  SELECT v.ts, v.id, v.pid, coalesce(v.comm, t.name, '?') AS victim, v.total_vm, v.anon_rss, v.file_rss, v.shmem_rss, v.oom_score_adj
  FROM _event_mark_victim v
  LEFT JOIN thread t ON t.tid = v.pid AND coalesce(t.start_ts, v.ts) <= v.ts
  QUALIFY row_number() OVER (PARTITION BY v.id ORDER BY t.start_ts DESC NULLS LAST, t.utid DESC) = 1
)
SELECT victim, count(*) AS kills,
  string_agg(CAST(pid AS VARCHAR), ', ' ORDER BY ts, id) AS pids,
  max(total_vm) AS max_total_vm_kb, max(anon_rss) AS max_anon_rss_kb,
  max(file_rss) AS max_file_rss_kb, max(shmem_rss) AS max_shmem_rss_kb,
  nullif(array_to_string(list_sort(list(DISTINCT oom_score_adj)), ', '), '') AS oom_score_adj,
  min(ts) AS first_ts, max(ts) AS last_ts
FROM k
GROUP BY victim
ORDER BY kills DESC, first_ts, victim
