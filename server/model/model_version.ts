/**
 * The version of the trace model an ingest writes.
 *
 * Why: an ingested trace is reused by its content's sha256, so without a
 * version a library built by an older stallscope would keep serving that
 * stallscope's decoding (call sites without their offset, empty `print`
 * messages, ...) after an upgrade. A trace whose info.json carries another
 * version is rebuilt when its file is ingested again, and the app marks it.
 *
 * Bump it whenever the model built from the same file changes (tables,
 * columns, values). tests/model_version/model_version.test.ts holds digests of the
 * models of a few fixtures under this number and fails when they change
 * while the number did not; `npm run model-digest` records the new ones.
 * (A DuckDB upgrade that prints rows differently changes them too: bump the
 * number then as well, a rebuild does no harm.)
 *
 * History:
 *   0  traces ingested before the model had a version (no `modelVersion`)
 *   1  the first stamped model: untyped events' args in their printed form
 *      (thirteenth session), `model_version` in trace_info
 *   2  compressed trace.dat: ingest_problem reasons say their offsets are in
 *      the decompressed data; a cut-off compressed file keeps what came
 *      before the cut (the fixtures' models are unchanged)
 *   3  `flow` is a view: begin_end flows come from the slices (id = 2 * slice
 *      id), wakeup and migration flows are stored in `_flow` with odd ids
 *   4  trace_printk() / trace_puts() events (bprint, bputs) carry `ip` and
 *      the message as `buf`, from trace.dat (rendered from the packed
 *      arguments) and from trace-cmd report text alike
 *   5  `trace-cmd report --ts-diff` text: its events are read (before, every
 *      line with a `(+ns)` delta was skipped); `report --debug` text: the
 *      `[delta:offset:size]` ending each line is not part of the event's
 *      text (before, sched_switch and shrink_slab lines did not parse); the
 *      kernel's latency format (`19016us!:` timestamps), plain or verbose,
 *      is read (before, not a trace); events printed by their raw fields (`trace-cmd report -R`,
 *      `[FAILED TO PARSE]`, the kernel's options/fields) fill the typed
 *      tables (before, kept unparsed); trace.dat with a TSC2NSEC option
 *      (TSC clock) has its cycles converted to ns as trace-cmd does (before,
 *      kept as cycles); the fixtures' models differ only in trace_info's
 *      model_version
 *   6  a slice whose end event was lost is drawn to the bound its thread's
 *      later events give (the next begin of its kind; for a shrinker call,
 *      the thread's next reclaim event), end_id NULL, instead of dur -1 to
 *      the end of the trace; trace.dat traces record the events the
 *      recording enabled (trace_info meta.events), for the detectors'
 *      "not traced"
 *   7  events without a typed table are stored one row per event in a
 *      table of their shape (`_shape_<n>`, untyped_rows.ts), no longer one
 *      `_args` row per field: `args` and `ftrace_event` read the same rows;
 *      block events' positional text is read into fields (before: none);
 *      trace.dat print formats' unresolved enum names as libtraceevent
 *      reads them (mm_vmscan_throttled reason VMSCAN_THROTTLE_WRITEBACK,
 *      not 0x1; __print_symbolic of a bare name never matches)
 *   8  `block_request` pairs issue -> complete (queries/model/derive_block.sql);
 *      counter tracks 'dirty pages', 'writeback pages', 'dirty threshold',
 *      'background threshold' (global_dirty_state) and 'block R|W latency DEV'
 *   9  flushes (zero-length, rwbs with F) pair issue -> complete by device,
 *      in issue order, not by sector: the kernel completes them at sector
 *      (sector_t)-1 (before: most kept complete_ts NULL)
 *  10  text traces: `ftrace_event.raw` is NULL where the event's fields
 *      print its text back byte for byte as an excerpt renders them
 *      (ftrace_text/kept_raw.ts; before: every event without a typed table
 *      kept its text, stored twice); excerpts are unchanged
 *  11  `_event_writeback_dirty_inode_enqueue` (id, ts, cpu, utid, dev), a
 *      view of that event's shape tables (derive_event_views.ts): io_latency
 *      reads who dirtied a device from it, no longer through `ftrace_event
 *      JOIN args` (every untyped event's fields); tables and values unchanged
 *  12  Perfetto traces whose config lists its ftrace events one by one (no
 *      wildcard) carry them in trace_info meta.events, as trace.dat does, so
 *      an enabled event that never fired is not "not traced"; the fixtures'
 *      models are unchanged (their configs use 'vmscan/*')
 *  13  `_event_mark_victim` (id, ts, cpu, utid, pid, comm, total_vm,
 *      anon_rss, file_rss, shmem_rss, uid, pgtables, oom_score_adj) and
 *      `_event_{wake_reaper,start_task_reaping,finish_task_reaping,
 *      skip_task_reaping}` (id, ts, cpu, utid, pid), views of those events'
 *      shape tables for oom_kill; Perfetto traces import mark_victim
 *      (FtraceEvent 334) instead of reporting it not decoded
 *  14  `_event_source`: each table that stores events with its own branch of
 *      the ftrace_event and args views, for the Perfetto export's reads by
 *      id range per table (issue 33); other tables and values unchanged
 *  15  `_event_writeback_dirty_inode_enqueue` gains `ino`: io_latency weighs
 *      who dirtied a device by the pages written of the inodes each dirtied;
 *      Perfetto traces whose config enables groups ('vmscan/*') or bare
 *      names carry meta.events too ('vmscan:*', '!group:name' for an event
 *      the recorder refused), so a wildcard-enabled event that never fired
 *      is "none happened"
 */
export const MODEL_VERSION = 15;

/** The model version an info.json records (0: written before versions existed). */
export function modelVersionOf(summary: { modelVersion?: number }): number {
  return typeof summary.modelVersion === 'number' ? summary.modelVersion : 0;
}
