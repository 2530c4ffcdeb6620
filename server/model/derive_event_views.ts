/**
 * Events without a typed table whose fields the derive SQL (queries/model/)
 * or a detector (queries/detectors/) reads, and which fields: the writer makes each a private view
 * `_event_<name>` (id, ts, cpu, utid, then one column per field here),
 * which reads its shape tables directly (model_store.ts
 * createEventFieldViews), plus the events of that name kept in `_args`.
 *
 * Why not `args`: `args` is a branch per shape and field, and a query that
 * pivots fields out of it runs one pipeline per branch it keeps, each with
 * its own hash tables. derive_block's pivot of 8 fields of the 3 block_rq
 * events kept the branches of every shape with such a field (every block_*
 * event: ~190 on many_systems.v7) and its RSS grew by 186 MB for 90k events,
 * outside DuckDB's memory_limit (a 64MB limit still grew 160 MB). Through
 * these views the same rows cost a branch per shape of the 3 events.
 *
 * Each column reads as the pivot over `args` did: an 'int' column is the
 * field's int_value (NULL when stored as text), a 'text' column its
 * string_value, or its int_value as text. A view exists, empty, when the
 * trace has no such events, so the derive SQL needs no guard.
 */
export type EventFieldKind = 'int' | 'text';

export interface EventFieldColumn {
  /** Column name in the view. */
  name: string;
  kind: EventFieldKind;
  /** Field names that fill it, first present wins (kernels renamed some). */
  keys: string[];
}

export interface DeriveEventView {
  event: string;
  columns: EventFieldColumn[];
}

const int = (name: string, ...alias: string[]): EventFieldColumn => ({ name, kind: 'int', keys: [name, ...alias] });
const text = (name: string): EventFieldColumn => ({ name, kind: 'text', keys: [name] });

/** include/trace/events/block.h; `errors` is 3.x-4.11's name of `error`. */
const BLOCK_RQ = [
  int('dev'),
  int('sector'),
  int('nr_sector'),
  int('bytes'),
  text('rwbs'),
  text('comm'),
  int('error', 'errors'),
];

export const DERIVE_EVENT_VIEWS: DeriveEventView[] = [
  { event: 'block_rq_insert', columns: BLOCK_RQ },
  { event: 'block_rq_issue', columns: BLOCK_RQ },
  { event: 'block_rq_complete', columns: BLOCK_RQ },
  // io_latency's dirtiers: which device a task dirtied an inode of. Through
  // `ftrace_event JOIN args` it read every untyped event's fields to find
  // these (~400 of io_latency's 764 ms on a 6.7M-event recording).
  // The inode too: io_latency weighs a dirtier by the pages written of the inodes it dirtied.
  { event: 'writeback_dirty_inode_enqueue', columns: [int('dev'), int('ino')] },
  // oom_kill's victims (include/trace/events/oom.h). The pid alone before
  // 6.8 (and in Perfetto's MarkVictimFtraceEvent); 6.8+ add the rest, the
  // sizes in kB as the kernel prints them.
  {
    event: 'mark_victim',
    columns: [
      int('pid'),
      text('comm'),
      int('total_vm'),
      int('anon_rss'),
      int('file_rss'),
      int('shmem_rss'),
      int('uid'),
      int('pgtables'),
      int('oom_score_adj'),
    ],
  },
  // oom_kill's reaper: the oom_reaper thread unmapping a victim's memory
  // (mm/oom_kill.c oom_reap_task) when it did not exit by itself.
  { event: 'wake_reaper', columns: [int('pid')] },
  { event: 'start_task_reaping', columns: [int('pid')] },
  { event: 'finish_task_reaping', columns: [int('pid')] },
  { event: 'skip_task_reaping', columns: [int('pid')] },
];

/** The view's name: `_event_<event>` (event names are C identifiers). */
export function eventViewName(event: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(event)) throw new Error(`derive_event_views: not an event name: ${event}`);
  return `_event_${event}`;
}
