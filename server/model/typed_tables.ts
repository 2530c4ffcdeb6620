/**
 * Which events get a typed table, and how field names from different kernels
 * map onto its columns.
 *
 * The columns themselves are defined once, in queries/schema.sql; the writer
 * reads them from the database. A column is filled from the event field of
 * the same name, else from the first alias listed here that the event has.
 * Aliases cover renamed fields across kernel versions and the difference
 * between a format file's field names and the names the kernel prints.
 */

/** Event name -> typed table, for events whose table is not named after them. */
export const EVENT_TABLE: Record<string, string> = {
  mm_vmscan_memcg_reclaim_begin: 'mm_vmscan_direct_reclaim_begin',
  mm_vmscan_memcg_softlimit_reclaim_begin: 'mm_vmscan_direct_reclaim_begin',
  mm_vmscan_node_reclaim_begin: 'mm_vmscan_direct_reclaim_begin',
  mm_vmscan_memcg_reclaim_end: 'mm_vmscan_direct_reclaim_end',
  mm_vmscan_memcg_softlimit_reclaim_end: 'mm_vmscan_direct_reclaim_end',
  mm_vmscan_node_reclaim_end: 'mm_vmscan_direct_reclaim_end',
  mm_vmscan_writepage: 'mm_vmscan_write_folio',
  writeback_dirty_page: 'writeback_dirty_folio',
  writeback_queue: 'writeback_work',
  writeback_exec: 'writeback_work',
  writeback_start: 'writeback_work',
  writeback_written: 'writeback_work',
  writeback_wait: 'writeback_work',
  writeback_single_inode_start: 'writeback_single_inode',
  sched_process_free: 'sched_process_wait',
};

/** Tables that are typed event tables (the rest of schema.sql is model or derived). */
export const TYPED_TABLES = [
  'mm_vmscan_kswapd_sleep',
  'mm_vmscan_kswapd_wake',
  'mm_vmscan_wakeup_kswapd',
  'mm_vmscan_direct_reclaim_begin',
  'mm_vmscan_direct_reclaim_end',
  'mm_vmscan_lru_shrink_inactive',
  'mm_vmscan_lru_shrink_active',
  'mm_vmscan_lru_isolate',
  'mm_shrink_slab_start',
  'mm_shrink_slab_end',
  'mm_vmscan_write_folio',
  'mm_vmscan_throttled',
  'sched_switch',
  'sched_waking',
  'sched_wakeup',
  'sched_wakeup_new',
  'sched_migrate_task',
  'sched_process_fork',
  'sched_process_exit',
  'sched_stat_runtime',
  'sched_process_exec',
  'sched_process_wait',
  'workqueue_queue_work',
  'workqueue_activate_work',
  'workqueue_execute_start',
  'workqueue_execute_end',
  'writeback_dirty_folio',
  'writeback_work',
  'balance_dirty_pages',
  'global_dirty_state',
  'writeback_single_inode',
] as const;

/** Table -> column -> other field names that fill it, in order of preference. */
export const FIELD_ALIASES: Record<string, Record<string, string[]>> = {
  mm_vmscan_lru_shrink_inactive: {
    nr_activate_anon: ['nr_activate0'],
    nr_activate_file: ['nr_activate1'],
    reclaim_flags: ['flags'],
  },
  mm_vmscan_lru_shrink_active: { reclaim_flags: ['flags'] },
  mm_vmscan_write_folio: { reclaim_flags: ['flags'] },
  mm_vmscan_lru_isolate: {
    highest_zoneidx: ['classzone_idx', 'classzone'],
  },
  mm_vmscan_throttled: { usec_delayed: ['usect_delayed'] },
  mm_shrink_slab_start: {
    nr_objects_to_shrink: ['objects_to_shrink'],
  },
  mm_shrink_slab_end: {
    unused_scan: ['unused_scan_cnt'],
    new_scan: ['new_scan_cnt'],
    retval: ['shrinker_retval'],
  },
  workqueue_queue_work: { cpu_target: ['cpu'] },
  // writeback events name the backing device field `name` and print it as `bdi`.
  writeback_dirty_folio: { bdi: ['name'] },
  writeback_work: { bdi: ['name'], kupdate: ['for_kupdate'], background: ['for_background'] },
  global_dirty_state: { dirty: ['nr_dirty'], writeback: ['nr_writeback'] },
  writeback_single_inode: {
    bdi: ['name'],
    index: ['writeback_index'],
    to_write: ['nr_to_write'],
  },
  balance_dirty_pages: {
    bdi_setpoint: ['wb_setpoint'],
    bdi_dirty: ['wb_dirty'],
  },
};

/** The typed table an event's fields go to, or null if it is kept generically. */
export function typedTableFor(eventName: string): string | null {
  const mapped = EVENT_TABLE[eventName];
  if (mapped) return mapped;
  return (TYPED_TABLES as readonly string[]).includes(eventName) ? eventName : null;
}
