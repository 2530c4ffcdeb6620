/**
 * The fleet corpus: the real recordings (paths under fixtures/) that the fleet
 * test (tests/golden/fleet.test.ts) and the fleet bench (bench/fleet_bench.ts)
 * both run batch and fleet over, so the bench measures what the test checks.
 */

/** The compare pair: four runs each at vfs_cache_pressure 100 and 1000 (labelled by config and iteration). */
export const FLEET_COMPARE_RUNS = [1, 2, 3, 4].flatMap((i) => [
  `compare/vfs100.${i}.v7.dat`,
  `compare/vfs1000.${i}.v7.dat`,
]);

/** Other recordings of other workloads, formats and producers (unlabelled). */
export const FLEET_OTHER_TRACES = [
  'build_balance.v7.dat',
  'dirty_throttle.v7.dat',
  'fsync_xfs.v7.dat',
  'memcg_escalation.v7.dat',
  'memcg_reclaim.v7.dat',
  'memcg_writer.v7.dat',
  'multi_instance.dat',
  'perfetto_reclaim.pftrace',
  'reclaim_kswapd.v6.dat',
  'swap_writeback.v7.dat',
  'syscalls.v7.dat',
  'tracefs_plain.txt',
  'writeback_flood.v7.dat',
  'printed_args.report.txt',
  'perfetto_compact.pftrace.gz',
  'latency_format.tracefs.txt',
];
