-- io_latency: reads held up behind writeback on the same block device
-- ===================================================================
--
-- @title Reads stuck behind writeback
-- @description Block reads whose issue-to-completion latency reached 10 ms while writes were in flight on the same device, grouped into episodes per device: the reads' latency, the writes in flight, who issued them (the flusher, and why it ran) and which tasks dirtied the pages.
-- @param warn_ns BIGINT 10000000 -- a read taking at least this long (issue to completion, ns) while writes are in flight on its device is a slow read: 10 ms
-- @param critical_ns BIGINT 500000000 -- an episode whose slowest read took at least this long is critical: 500 ms
-- @param gap_ns BIGINT 1000000000 -- slow reads of one device at most this far apart (ns) form one episode: 1 s
-- @requires block:block_rq_issue block:block_rq_complete
-- @impact the slowest read's latency in the episode: how long one reader waited for its data.
-- @severity critical: the episode's slowest read took critical_ns (500 ms) or more; warn: warn_ns (10 ms) or more (every episode has such a read). Reads of a device without writes in flight, or whose writes in flight add up to fewer bytes than the read itself, are not findings (the summary's histograms and the overview show them).
--
-- What it finds
--   Block requests are paired issue -> complete (lib/macros.sql:
--   ss_block_requests(), by device and sector, as biolatency and blktrace
--   tools do; block_rq_insert, where traced, gives the time queued before
--   issue). A read (rwbs with R) whose latency reached warn_ns while at
--   least one write of the same device was in flight (issued before the
--   read completed and not completed before it was issued), and whose
--   writes in flight add up to at least the read's own size, is a slow read
--   behind writes. Slow reads of one device at most gap_ns apart make an
--   episode; one finding per episode names the slowest read's task.
--
-- Why it matters
--   "Make background writeback not suck": a dd of 10 GB starts background
--   writeback at full device bandwidth and a reader on the same device sees
--   latency spikes in the seconds range, because its synchronous reads queue
--   behind a deep queue of large asynchronous writes. Readers (page faults,
--   an editor opening a file, a database) wait; the writer does not notice.
--   The finding says who wrote: the task that queued the writes (the
--   flusher kworker for background writeback, or a task writing
--   synchronously), the reason of
--   the flusher's last writeback_start on that bdi (background, periodic,
--   sync, vmscan, ...) when the flusher queued them (a task's own fsync
--   writes are not 'for vmscan writeback' because the flusher last ran for
--   that; the value flusher_reason keeps it), and the tasks that dirtied
--   the device's pages (writeback_dirty_inode_enqueue, writeback_dirty_folio or
--   balance_dirty_pages on the bdi, where traced), counted per command
--   ('dd (194 tasks)' for a loop of short-lived dd; 'dd[4242]' for one)
--   and ranked by the pages the flusher wrote of the inodes each dirtied
--   where writeback_single_inode is traced ('dd[4242] (51.2k pages)'), by
--   dirtying events otherwise (see dirtier_counts).
--
-- Writes that can explain the wait
--   A read's latency is its own transfer plus whatever the device serves
--   before it. A 4 MiB readahead read takes ~15 ms at 300 MB/s with nothing
--   ahead of it; two 8 KiB writes in flight beside it cannot be why it took
--   15 ms. So a read counts as behind writes only when the writes
--   overlapping it add up to at least its own bytes (sectors x 512, which
--   old kernels fill where `bytes` is 0): then the writes could have held
--   it up for as long as its own transfer took. (On a recording of 4 MiB
--   reads at device speed with 4-8 KiB journal writes around them, every
--   read was 10-25 ms with 1-3 such writes in flight: no finding now.)
--
-- Who queued a request
--   block_rq_issue runs in whatever context dispatches the request: the
--   submitter's, or on blk-mq often kblockd's (`kworker/1:1H`, the per-CPU
--   high-priority workqueue that runs a hardware queue asynchronously), so
--   its comm would name kblockd for requests the flusher or a reader queued.
--   Where block_rq_insert is traced, the request's task (comm and thread)
--   is the insert's, the context that put it on the queue; otherwise the
--   issue's. The slowest read's task (`reader`, the finding's thread) is
--   chosen the same way. When kblockd is still the top writer because
--   block_rq_insert was not traced, the title says so and how to fix it.
--
-- Defaults
--   warn 10 ms: a read from flash or a virtual disk completes in 0.1-1 ms
--   when the device is idle; 10 ms is ten to a hundred times that, time
--   spent queued behind the writes. A rotating disk's random read takes
--   5-15 ms on its own: for one, pass io_latency.warn_ms=30. critical 500 ms: half a second is a
--   user-visible hang, the "seconds range" spikes writeback throttling
--   (blk-wbt) was written to remove. gap 1 s: reads of one stall come
--   milliseconds apart; a second separates stalls.
--
-- Kernel versions
--   block_rq_issue/insert print `dev rwbs bytes (cmd) sector + nr_sector
--   [comm]` since 2.6.31 (bytes was 0 for fs requests before 3.x);
--   6.10+ prints the I/O priority before [comm] (trace-cmd: `0x2,0,4`).
--   block_rq_complete prints `dev rwbs (cmd) sector + nr_sector [error]`;
--   its field is `errors` before 4.12 and `error` after (read alike). Before
--   5.x, a request completed in parts emitted one block_rq_complete per part
--   with a moving sector: only the part at the issue's sector pairs (the
--   request's latency to that part). rwbs letters: W/R/D/N, F flush (B
--   barrier before 2.6.37), S sync, M meta, A readahead, E secure erase
--   (3.x+). writeback_start's reason= exists since 3.2; older kernels give
--   no flusher reason. bdi names are 'major:minor' of the whole disk: reads
--   of a partition (8,1) do not find the disk's bdi (8:0), so no reason.
--
-- values: device, reads (all reads of the device in the episode's span),
-- slow_reads, max_latency_ns, p50_latency_ns (of the slow reads),
-- max_queue_ns (insert -> issue of the slow reads, where traced),
-- writes_in_flight (the most writes overlapping one slow read),
-- write_bytes_in_flight (the most bytes of writes overlapping one slow read),
-- write_bytes (bytes of writes completed in the episode's span),
-- write_issuers ('kworker/u8:0 (1122)': the queuing tasks' comms by count),
-- flusher_reason, dirtied_by ('dd[4242], cat (3 tasks)': the top 3 commands by
-- dirtying events; with writeback_single_inode traced, by pages written of the
-- inodes they dirtied: 'dd[4242] (51.2k pages), cat (3 tasks, 120 pages)'),
-- reader (comm of the slowest read).
-- event_ids: the slowest read's issue and completion, and the first of the
-- other slow reads (at most 20). kind: 'read_behind_writeback'.
WITH
params AS (
  SELECT $warn_ns::BIGINT AS warn_ns, $critical_ns::BIGINT AS critical_ns, $gap_ns::BIGINT AS gap_ns
),
rq AS (
  -- the queuing task where the insert is traced (see "Who queued a request")
  SELECT r.* REPLACE (coalesce(q.comm, r.comm) AS comm, coalesce(q.utid, r.utid) AS utid)
  FROM ss_block_requests() r
  LEFT JOIN _event_block_rq_insert q ON q.id = r.insert_id
  WHERE r.complete_ts IS NOT NULL OR r.op = 'W'
),
slow AS (
  SELECT * FROM rq WHERE op = 'R' AND latency_ns >= (SELECT warn_ns FROM params)
),
writes AS (SELECT dev, issue_ts, complete_ts, comm, bytes, coalesce(nr_sector, 0) * 512 AS size FROM rq WHERE op = 'W'),
-- Writes overlapping a slow read = writes issued by the read's completion
-- minus writes completed before its issue (a write completes after its
-- issue, so the second set lies inside the first). Both are running counts
-- over one time-ordered stream per device: +1 issued at each write's issue,
-- +1 completed at its completion, and the slow reads' two ends read the
-- counts. At equal times issues come before a read's end (issued at or
-- before it counts) and completions after a read's start (completed before
-- it counts). A sort, not a join: joining each slow read to every write of
-- its device took 17 s on 400,000 requests with 12,000 slow reads.
-- Only writes that can change a slow read's count go into that stream: a
-- write issued by the time every slow read ended and completed before any
-- started counts as issued and as completed for each (in flight for none),
-- one issued after every slow read ended and not completed before the last
-- one started counts for none. Both kinds are left out (on many_systems a
-- third of the writes: the sort below is the statement's largest cost).
slow_bounds AS (
  SELECT min(issue_ts) AS lo_issue, min(complete_ts) AS lo_complete,
         max(issue_ts) AS hi_issue, max(complete_ts) AS hi_complete
  FROM slow
),
counted_writes AS (
  SELECT w.dev, w.issue_ts, w.complete_ts, w.size FROM writes w, slow_bounds b
  WHERE NOT coalesce(w.complete_ts < b.lo_issue AND w.issue_ts <= b.lo_complete, false)
    AND NOT coalesce(w.issue_ts > b.hi_complete AND (w.complete_ts IS NULL OR w.complete_ts >= b.hi_issue), false)
),
marks AS (
  SELECT dev, issue_ts AS ts, 1 AS ord, 1 AS issued, 0 AS completed, size AS issued_bytes, 0 AS completed_bytes,
         NULL::BIGINT AS read_id, NULL::BOOLEAN AS read_end FROM counted_writes
  UNION ALL SELECT dev, complete_ts, 3, 0, 1, 0, size, NULL, NULL FROM counted_writes WHERE complete_ts IS NOT NULL
  UNION ALL SELECT dev, issue_ts, 2, 0, 0, 0, 0, issue_id, false FROM slow
  UNION ALL SELECT dev, complete_ts, 2, 0, 0, 0, 0, issue_id, true FROM slow
),
running AS (
  SELECT read_id, read_end,
    sum(issued) OVER w AS n_issued,
    sum(completed) OVER w AS n_completed,
    sum(issued_bytes) OVER w AS bytes_issued,
    sum(completed_bytes) OVER w AS bytes_completed
  FROM marks
  WINDOW w AS (PARTITION BY dev ORDER BY ts, ord ROWS UNBOUNDED PRECEDING)
),
behind AS (
  SELECT read_id AS issue_id,
    (max(n_issued) FILTER (WHERE read_end) - max(n_completed) FILTER (WHERE NOT read_end))::BIGINT AS writes_in_flight,
    (max(bytes_issued) FILTER (WHERE read_end) - max(bytes_completed) FILTER (WHERE NOT read_end))::BIGINT AS write_bytes_in_flight
  FROM running WHERE read_id IS NOT NULL
  GROUP BY read_id
  HAVING writes_in_flight > 0
),
slow_reads AS (
  SELECT s.*, b.writes_in_flight, b.write_bytes_in_flight,
    CASE WHEN s.issue_ts - lag(s.complete_ts) OVER (PARTITION BY s.dev ORDER BY s.issue_ts, s.issue_id) <= (SELECT gap_ns FROM params) THEN 0 ELSE 1 END AS new_ep
  FROM slow s JOIN behind b USING (issue_id)
  -- writes that add up to the read's own size or more (see "Writes that can explain the wait")
  WHERE b.write_bytes_in_flight >= coalesce(s.nr_sector, 0) * 512
),
numbered AS (
  SELECT *, sum(new_ep) OVER (PARTITION BY dev ORDER BY issue_ts, issue_id ROWS UNBOUNDED PRECEDING) AS ep FROM slow_reads
),
episodes AS (
  SELECT dev, ep, any_value(device) AS device,
    min(issue_ts) AS ts, max(complete_ts) AS end_ts,
    count(*) AS slow_reads,
    max(latency_ns) AS max_latency_ns,
    quantile_disc(latency_ns, 0.5) AS p50_latency_ns,
    max(queue_ns) AS max_queue_ns,
    max(writes_in_flight) AS writes_in_flight,
    max(write_bytes_in_flight) AS write_bytes_in_flight,
    arg_max(issue_id, (latency_ns, -issue_ts)) AS worst_issue,
    arg_max(complete_id, (latency_ns, -issue_ts)) AS worst_complete,
    arg_max(utid, (latency_ns, -issue_ts)) AS utid,
    arg_max(cpu, (latency_ns, -issue_ts)) AS cpu,
    arg_max(comm, (latency_ns, -issue_ts)) AS reader,
    list(issue_id ORDER BY issue_ts, issue_id)[1:20] AS read_ids
  FROM numbered GROUP BY dev, ep
),
span_reads AS (
  SELECT e.dev, e.ep, count(*) AS reads
  FROM episodes e JOIN rq r ON r.dev = e.dev AND r.op = 'R' AND r.issue_ts BETWEEN e.ts AND e.end_ts
  GROUP BY e.dev, e.ep
),
span_writes AS (
  SELECT e.dev, e.ep, sum(w.bytes)::BIGINT AS write_bytes,
    string_agg(w.comm || ' (' || w.n || ')', ', ' ORDER BY w.n DESC, w.comm) AS write_issuers
  FROM episodes e
  JOIN (SELECT e2.dev, e2.ep, coalesce(w.comm, '?') AS comm, count(*) AS n, sum(w.bytes) AS bytes
        FROM episodes e2 JOIN writes w ON w.dev = e2.dev AND w.issue_ts <= e2.end_ts AND (w.complete_ts IS NULL OR w.complete_ts >= e2.ts)
        GROUP BY e2.dev, e2.ep, w.comm) w USING (dev, ep)
  GROUP BY dev, ep
),
-- the flusher's last writeback_start on the device's bdi ('7:2') before the episode ended
flusher AS (
  SELECT e.dev, e.ep, arg_max(w.reason, w.ts) AS flusher_reason
  FROM episodes e
  JOIN writeback_work w ON w.event = 'writeback_start' AND w.bdi = replace(e.device, ',', ':') AND w.ts <= e.end_ts
  GROUP BY e.dev, e.ep
),
-- who dirtied the device's pages: tasks dirtying on its bdi up to the episode's end, by inode
-- (balance_dirty_pages names no inode: its events count on their own, NULL inode)
dirtiers_all AS (
  SELECT replace(bdi, ':', ',') AS device, NULL::BIGINT AS ino, false AS folio, utid, ts FROM balance_dirty_pages
  UNION ALL SELECT replace(bdi, ':', ',') AS device, ino, true AS folio, utid, ts FROM writeback_dirty_folio
  UNION ALL
  -- the event's own view (server/model/derive_event_views.ts), not ftrace_event JOIN args: that
  -- join read the fields of every untyped event to find these
  SELECT ss_dev(dev) AS device, ino, false AS folio, utid, ts FROM _event_writeback_dirty_inode_enqueue WHERE dev IS NOT NULL
),
-- each task's dirtying events per inode (grouped by thread key first, named after: far fewer rows
-- to join); kernel threads (kworker) are not dirtiers
dirtier_events AS (
  SELECT a.dev, a.ep, a.ino, coalesce(t.name, '?') AS comm, t.tid, a.n, a.folios
  FROM (
    SELECT e.dev, e.ep, d.ino, d.utid, count(*) AS n, count(*) FILTER (WHERE d.folio) AS folios
    FROM episodes e JOIN dirtiers_all d ON d.device = e.device AND d.ts <= e.end_ts
    GROUP BY e.dev, e.ep, d.ino, d.utid
  ) a
  LEFT JOIN thread t ON t.utid = a.utid
  WHERE NOT starts_with(coalesce(t.name, ''), 'kworker')
),
-- pages the flusher wrote of each inode up to the episode's end (writeback_single_inode's wrote=)
inode_pages AS (
  SELECT e.dev, e.ep, w.ino, sum(w.wrote) AS pages
  FROM episodes e
  JOIN writeback_single_inode w ON w.event = 'writeback_single_inode'
    AND w.bdi = replace(e.device, ',', ':') AND w.ts <= e.end_ts
  GROUP BY e.dev, e.ep, w.ino
),
-- A dirtied folio is 4 KiB to 2 MiB: on 6.x a buffered dd dirties one writeback_dirty_folio
-- per large folio, so ranked by events the 200 events of a dd writing 200 MiB fell below
-- the 6,000 of a script writing 3 KB files. Where the flusher's writes are traced
-- (writeback_single_inode on the device), an inode weighs the pages written of it, at
-- least its dirtied folios (fsync writes it through another path), and its weight goes to
-- the commands that dirtied it by their share of its dirtying events. Without those writes
-- a command weighs its dirtying events, as before.
-- Counted per command, not per task: a shell loop of short-lived writers (`dd ... conv=fsync`
-- run 200 times) is one writer to the reader of the finding, and per task each of its
-- processes ranked below one long-lived task (the tracer writing its own buffers).
dirtier_counts AS (
  SELECT de.dev, de.ep, de.comm,
    sum(de.n) AS n,
    sum(CASE WHEN de.ino IS NULL THEN de.n
             ELSE greatest(coalesce(p.pages, 0), tot.folios) * de.n / tot.n END) AS pages,
    count(DISTINCT de.tid) AS tasks, any_value(de.tid) AS tid
  FROM dirtier_events de
  LEFT JOIN (SELECT dev, ep, ino, sum(n) AS n, sum(folios) AS folios FROM dirtier_events GROUP BY ALL) tot USING (dev, ep, ino)
  LEFT JOIN inode_pages p USING (dev, ep, ino)
  GROUP BY de.dev, de.ep, de.comm
),
-- 'dd[4242]', 'dd (194 tasks)'; with the pages known 'dd[4242] (51.2k pages)', 'dd (194 tasks, 3.1k pages)'
dirtier_labels AS (
  SELECT c.dev, c.ep, CASE WHEN w.paged THEN c.pages ELSE c.n END AS weight,
    CASE WHEN c.tasks > 1 THEN c.comm ELSE ss_task(c.comm, c.tid) END
    || coalesce(' (' || nullif(array_to_string(list_filter([
         CASE WHEN c.tasks > 1 THEN c.tasks || ' tasks' END,
         CASE WHEN w.paged THEN ss_fmt_count(round(c.pages)) || ' pages' END], x -> x IS NOT NULL), ', '), '') || ')', '') AS who
  FROM dirtier_counts c
  LEFT JOIN (SELECT dev, ep, true AS paged FROM inode_pages GROUP BY ALL HAVING sum(pages) > 0) w USING (dev, ep)
),
-- whether the trace has block_rq_insert events: the derived requests' pairing says so (a NOT EXISTS over
-- the event's view, which reads its shape tables, took the read engine over its memory cap on many_systems)
queued AS (SELECT coalesce(bool_or(insert_id IS NOT NULL), false) AS inserts_traced FROM block_request),
dirtiers AS (
  SELECT dev, ep, string_agg(who, ', ' ORDER BY weight DESC, who) AS dirtied_by
  FROM (SELECT *, row_number() OVER (PARTITION BY dev, ep ORDER BY weight DESC, who) AS k FROM dirtier_labels)
  WHERE k <= 3
  GROUP BY dev, ep
)
SELECT
  ss_severity(e.max_latency_ns, p.warn_ns, p.critical_ns, 'warn') AS severity,
  e.ts,
  e.end_ts - e.ts AS dur,
  e.max_latency_ns AS impact,
  e.cpu,
  e.utid,
  'reads on ' || e.device || ' waited up to ' || ss_fmt_dur(e.max_latency_ns) || ' behind writes ('
    || e.slow_reads || ' of ' || coalesce(r.reads, e.slow_reads) || ' reads over ' || ss_fmt_dur(p.warn_ns)
    || ', up to ' || e.writes_in_flight || ' writes in flight'
    || coalesce(', written by ' || split_part(sw.write_issuers, ' (', 1), '')
    -- kblockd named because nothing better was traced: say how to see who queued the writes
    || CASE WHEN regexp_matches(split_part(sw.write_issuers, ' (', 1), '^kworker/[0-9]+:[0-9]+H$')
              AND NOT q.inserts_traced
            THEN ' (kblockd; trace block:block_rq_insert to see who queued them)' ELSE '' END
    -- the flusher's reason only when a flusher worker (kworker/uN:M) queued the most writes
    || CASE WHEN regexp_matches(split_part(sw.write_issuers, ' (', 1), '^kworker/u[0-9]+:[0-9]+$')
            THEN coalesce(' for ' || f.flusher_reason || ' writeback', '') ELSE '' END
    || coalesce('; dirtied by ' || d.dirtied_by, '') || ')' AS title,
  {
    'device': e.device,
    'reads': coalesce(r.reads, e.slow_reads),
    'slow_reads': e.slow_reads,
    'max_latency_ns': e.max_latency_ns,
    'p50_latency_ns': e.p50_latency_ns,
    'max_queue_ns': e.max_queue_ns,
    'writes_in_flight': e.writes_in_flight,
    'write_bytes_in_flight': e.write_bytes_in_flight,
    'write_bytes': sw.write_bytes,
    'write_issuers': sw.write_issuers,
    'flusher_reason': f.flusher_reason,
    'dirtied_by': d.dirtied_by,
    'reader': e.reader
  } AS "values",
  list_filter([e.worst_issue, e.worst_complete], x -> x IS NOT NULL) || list_filter(e.read_ids, x -> x <> e.worst_issue) AS event_ids,
  'read_behind_writeback' AS kind
FROM episodes e
CROSS JOIN params p
CROSS JOIN queued q
LEFT JOIN span_reads r USING (dev, ep)
LEFT JOIN span_writes sw USING (dev, ep)
LEFT JOIN flusher f USING (dev, ep)
LEFT JOIN dirtiers d USING (dev, ep)
ORDER BY ss_severity_rank(severity), e.ts
