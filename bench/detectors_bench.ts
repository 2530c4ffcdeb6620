/**
 * Detector benchmark helper. `npm run bench` (bench/run.ts) opens a trace
 * model of 10M+ events and calls `benchDetectors(engine)`: every detector
 * (and its summary) is timed on its own, then all together through
 * runDetectors as `stallscope analyze` runs them. Target: all detectors
 * together under 5 s on 10M events.
 *
 * `fillSyntheticReclaimModel(engine, { events })` builds such a model in
 * SQL (no decoding) with the event mix of a heavy reclaim + fsync trace, for
 * when no large recorded trace is at hand:
 *   `npx tsx bench/detectors_bench.ts [events]` runs both.
 */
import type { Engine } from '../server/engine/engine.ts';
import { loadDetectors } from '../server/findings/detector_registry.ts';
import { runDetectors } from '../server/findings/run_detectors.ts';

export interface DetectorBenchRow {
  detector: string;
  /** Detector query, ms. */
  ms: number;
  /** Its summary query, ms (null: no summary). */
  summaryMs: number | null;
  findings: number;
}

export interface DetectorBenchResult {
  rows: DetectorBenchRow[];
  /** One runDetectors() call over all detectors, ms (what `analyze` pays). */
  allTogetherMs: number;
  /** CPU time of that call (all DuckDB threads + JS), ms: steadier than wall time on a shared machine. */
  allTogetherCpuMs: number;
  totalFindings: number;
  /** Events in the model (trace_info events_total, else ftrace_event rows). */
  events: number;
}

async function countEvents(engine: Engine): Promise<number> {
  // The rows of the ftrace_event view (every event: untyped ones in
  // _ftrace_event, typed ones in their tables); `_ftrace_event` alone holds
  // only the untyped events. A database without the view (the synthetic
  // model below: schema.sql tables) falls back to trace_info events_total.
  try {
    const rows = await engine.query<{ n: bigint | number }>('SELECT count(*) AS n FROM ftrace_event');
    return Number(rows[0]?.n ?? 0);
  } catch {
    const rows = await engine.query<{ n: bigint | number | null }>(
      `SELECT TRY_CAST(value AS BIGINT) AS n FROM trace_info WHERE key = 'events_total'`,
    );
    return Number(rows[0]?.n ?? 0);
  }
}

/** The tables derive (queries/model/*.sql) fills. */
export const DERIVED_TABLES = ['sched_slice', 'thread_state', 'slice', 'counter_track', 'counter', 'flow'] as const;

/**
 * A machine-readable fingerprint of what derive and the detectors compute,
 * to check that a SQL change keeps results identical: per derived table
 * `rows:sum(hash(all columns))` (order-independent), and with `detectors`
 * `count:sha256` of runDetectors' findings and of each detector's summary
 * rows (as JSON, in the runner's order).
 *   npx tsx bench/detectors_bench.ts --fingerprint COPY.duckdb [--derive] [--no-detectors]
 * (--derive empties the derived tables and re-runs derive on that file
 * first, with the ingest's 1 GB memory limit: use a copy.)
 */
export async function modelFingerprint(
  engine: Engine,
  opts: { detectors?: boolean } = {},
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const t of DERIVED_TABLES) {
    const cols = await engine.query<{ column_name: string }>(
      `SELECT column_name FROM duckdb_columns() WHERE table_name = '${t}' AND NOT internal ORDER BY column_index`,
    );
    const list = cols.map((c) => `"${c.column_name}"`).join(', ');
    const r = await engine.query<{ n: bigint; h: bigint | null }>(
      `SELECT count(*) AS n, sum(hash(${list})::HUGEINT) AS h FROM ${t}`,
    );
    out[t] = `${r[0]!.n}:${r[0]!.h ?? 0}`;
  }
  if (opts.detectors ?? true) {
    const { createHash } = await import('node:crypto');
    const { toJson } = await import('../server/engine/engine.ts');
    const sha = (v: unknown) => createHash('sha256').update(toJson(v)).digest('hex').slice(0, 16);
    const r = await runDetectors(engine);
    out.findings = `${r.findings.length}:${sha(r.findings)}`;
    for (const [k, v] of Object.entries(r.summaries).sort(([a], [b]) => a.localeCompare(b)))
      out[`summary.${k}`] = `${v.length}:${sha(v)}`;
  }
  return out;
}

/** Times each detector, then all together. Prints nothing; see formatDetectorBench. */
export async function benchDetectors(
  engine: Engine,
  opts: { extraDirs?: string[] } = {},
): Promise<DetectorBenchResult> {
  const dets = await loadDetectors(opts.extraDirs ?? []);
  // warm-up: macros, catalog, file cache
  await runDetectors(engine, { detectors: [dets[0]!.id], extraDirs: opts.extraDirs });
  const rows: DetectorBenchRow[] = [];
  for (const d of dets) {
    const r = await runDetectors(engine, { detectors: [d.id], extraDirs: opts.extraDirs });
    rows.push({
      detector: d.id,
      ms: r.timings[d.id] ?? 0,
      summaryMs: r.timings[`${d.id}.summary`] ?? null,
      findings: r.findings.length,
    });
  }
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const all = await runDetectors(engine, { extraDirs: opts.extraDirs });
  const allTogetherMs = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  return {
    rows,
    allTogetherMs,
    allTogetherCpuMs: (cpu.user + cpu.system) / 1000,
    totalFindings: all.findings.length,
    events: await countEvents(engine),
  };
}

/** A small table for the bench output. */
export function formatDetectorBench(r: DetectorBenchResult): string {
  const lines = [`detectors on ${r.events.toLocaleString('en-US')} events:`];
  for (const row of r.rows) {
    lines.push(
      `  ${row.detector.padEnd(24)} ${row.ms.toFixed(0).padStart(6)} ms` +
        `${row.summaryMs != null ? `  + summary ${row.summaryMs.toFixed(0).padStart(5)} ms` : '                       '}` +
        `  ${row.findings} findings`,
    );
  }
  lines.push(
    `  ${'all together'.padEnd(24)} ${r.allTogetherMs.toFixed(0).padStart(6)} ms  (cpu ${r.allTogetherCpuMs.toFixed(0)} ms)  ` +
      `${r.totalFindings} findings (target < 5000 ms on 10M events)`,
  );
  return `${lines.join('\n')}\n`;
}

/**
 * Fills an empty trace database (queries/schema.sql applied) with about
 * `events` typed events shaped like a heavy reclaim trace on 2 CPUs over
 * 60 s: 2 kswapd threads, 200 tasks in direct reclaim, a few hundred
 * shrinker calls per second, pageout bursts, fsync tasks bouncing between
 * CPUs, kworkers. Deterministic (hash-based, no random()).
 */
export async function fillSyntheticReclaimModel(engine: Engine, opts: { events?: number } = {}): Promise<void> {
  const n = opts.events ?? 10_000_000;
  const share = (f: number) => Math.max(1, Math.round(n * f));
  const T0 = 1_000_000_000_000n; // 1000 s
  const SPAN = 60_000_000_000n; // 60 s
  const at = (count: number) => `(${T0} + (i * ${SPAN}) // ${count})`;
  const h = (salt: number) => `hash(i * 7919 + ${salt})`;
  const counts = {
    switch: share(0.3),
    waking: share(0.2),
    migrate: share(0.03),
    inactive: share(0.15),
    active: share(0.05),
    slab: share(0.04),
    direct: share(0.02),
    kswapd: share(0.0005),
    write: share(0.03),
    wq: share(0.05),
  };
  const sql: string[] = [];
  sql.push(`INSERT INTO trace_info VALUES ('first_ts', '${T0}'), ('last_ts', '${T0 + SPAN}'),
    ('events_total', '${Object.entries(counts).reduce((a, [k, c]) => a + c * (['slab', 'direct', 'kswapd', 'wq'].includes(k) ? 2 : 1), 0)}')`);
  // threads: 1-2 kswapd, 10-209 direct reclaimers, 300-307 fsync tasks, 400-415 kworkers, 1000-2999 others
  sql.push(`INSERT INTO thread (utid, tid, name, upid)
    SELECT utid, 10000 + utid,
      CASE WHEN utid <= 2 THEN 'kswapd' || (utid - 1)
           WHEN utid BETWEEN 10 AND 209 THEN 'stress-ng-vm'
           WHEN utid BETWEEN 300 AND 307 THEN 'fsync-loop'
           WHEN utid BETWEEN 400 AND 415 THEN 'kworker/u8:' || (utid - 400)
           ELSE 'task-' || utid END,
      CASE WHEN utid BETWEEN 10 AND 209 THEN 1 + (utid % 20) END
    FROM range(1, 3000) t(utid)`);
  sql.push(`INSERT INTO process SELECT upid, 20000 + upid, 'stress-ng-vm' FROM range(1, 21) t(upid)`);
  // sched_switch: utid/next cycling over others and fsync tasks
  sql.push(`INSERT INTO sched_switch
    SELECT i, ${at(counts.switch)}, (i % 2)::INTEGER, (1000 + ${h(1)} % 2000)::INTEGER,
      'task', (11000 + ${h(1)} % 2000)::INTEGER, 120, CASE WHEN i % 3 = 0 THEN 'R' ELSE 'S' END,
      'task', (CASE WHEN i % 10 = 0 THEN 10300 + ${h(2)} % 8 ELSE 11000 + ${h(2)} % 2000 END)::INTEGER, 120
    FROM range(${counts.switch}) t(i)`);
  sql.push(`INSERT INTO sched_waking
    SELECT 100000000 + i, ${at(counts.waking)}, (i % 2)::INTEGER, (400 + ${h(3)} % 16)::INTEGER,
      'task', (CASE WHEN i % 10 = 0 THEN 10300 + ${h(4)} % 8 ELSE 11000 + ${h(4)} % 2000 END)::INTEGER, 120, NULL, (i % 2)::INTEGER
    FROM range(${counts.waking}) t(i)`);
  // migrations: fsync tasks ping-pong between CPU 0 and 1 every ~ms, others random
  sql.push(`INSERT INTO sched_migrate_task
    SELECT 200000000 + i, ${at(counts.migrate)}, (i % 2)::INTEGER, (400 + ${h(5)} % 16)::INTEGER, 'fsync-loop',
      (CASE WHEN i % 8 < 6 THEN 10300 + (i // 8) % 8 ELSE 11000 + ${h(6)} % 2000 END)::INTEGER, 120,
      (i % 2)::INTEGER, (1 - i % 2)::INTEGER
    FROM range(${counts.migrate}) t(i)`);
  // LRU passes: 40% by kswapd, the rest by direct reclaimers; priority walks 12 -> 0 in cycles
  sql.push(`INSERT INTO mm_vmscan_lru_shrink_inactive
    SELECT 300000000 + i, ${at(counts.inactive)}, (i % 2)::INTEGER,
      (CASE WHEN i % 5 < 2 THEN 1 + i % 2 ELSE 10 + ${h(7)} % 200 END)::INTEGER, 0, NULL,
      32, ${h(8)} % 33, ${h(9)} % 8, ${h(10)} % 4, 0, 0, 0, 0, 0, 0,
      (12 - CASE WHEN ${h(15)} % 1000 < 990 THEN ${h(16)} % 3 ELSE ${h(16)} % 13 END)::INTEGER, 'RECLAIM_WB_FILE|RECLAIM_WB_ASYNC'
    FROM range(${counts.inactive}) t(i)`);
  sql.push(`INSERT INTO mm_vmscan_lru_shrink_active
    SELECT 400000000 + i, ${at(counts.active)}, (i % 2)::INTEGER,
      (CASE WHEN i % 5 < 2 THEN 1 + i % 2 ELSE 10 + ${h(11)} % 200 END)::INTEGER, 0,
      32, 30, 2, 1, (12 - ${h(17)} % 3)::INTEGER, 'RECLAIM_WB_ANON'
    FROM range(${counts.active}) t(i)`);
  // shrinker calls: start/end pairs per thread, 0.2-20 ms
  sql.push(`INSERT INTO mm_shrink_slab_start
    SELECT 500000000 + 2 * i, ${at(counts.slab)}, (i % 2)::INTEGER,
      (CASE WHEN i % 2 = 0 THEN 1 + (i // 2) % 2 ELSE 10 + (i // 2) % 200 END)::INTEGER,
      '0xffff8881' || (i % 16), CASE WHEN i % 3 = 0 THEN 'super_cache_scan' ELSE 'xfs_buftarg_shrink_scan' END, 0,
      ${h(12)} % 10000, 'GFP_KERNEL', NULL, NULL, 100000 + ${h(13)} % 100000, 100, 1024, (12 - ${h(18)} % 3)::INTEGER
    FROM range(${counts.slab}) t(i)`);
  sql.push(`INSERT INTO mm_shrink_slab_end
    SELECT s.id + 1,
      least(s.ts + 20000 + CASE WHEN hash(s.id) % 100 = 0 THEN hash(s.id) % 20000000 ELSE hash(s.id) % 400000 END,
            coalesce(lead(s.ts) OVER (PARTITION BY s.utid ORDER BY s.ts) - 1, s.ts + 20000000)),
      s.cpu, s.utid, s.shr, s.shrink, 0, 0, 0, 1024, hash(s.id) % 1024
    FROM mm_shrink_slab_start s`);
  // direct reclaim begin/end pairs per task, 10 us - 9 ms
  sql.push(`INSERT INTO mm_vmscan_direct_reclaim_begin
    SELECT 600000000 + 2 * i, ${at(counts.direct)}, (i % 2)::INTEGER, (10 + i % 200)::INTEGER,
      CASE WHEN i % 10 = 0 THEN 'mm_vmscan_memcg_reclaim_begin' ELSE 'mm_vmscan_direct_reclaim_begin' END,
      (i % 4)::INTEGER, 'GFP_HIGHUSER_MOVABLE', NULL
    FROM range(${counts.direct}) t(i)`);
  sql.push(`INSERT INTO mm_vmscan_direct_reclaim_end
    SELECT b.id + 1, b.ts + 10000 + CASE WHEN hash(b.id) % 50 = 0 THEN hash(b.id) % 9000000 ELSE hash(b.id) % 900000 END, b.cpu, b.utid, replace(b.event, '_begin', '_end'), hash(b.id) % 64
    FROM mm_vmscan_direct_reclaim_begin b`);
  sql.push(`INSERT INTO mm_vmscan_kswapd_wake
    SELECT 700000000 + 2 * i, ${at(counts.kswapd)}, (i % 2)::INTEGER, (1 + i % 2)::INTEGER, (i % 2)::INTEGER, 2, 0
    FROM range(${counts.kswapd}) t(i)`);
  sql.push(`INSERT INTO mm_vmscan_kswapd_sleep
    SELECT w.id + 1, w.ts + 5000000 + hash(w.id) % 50000000, w.cpu, w.utid, w.nid
    FROM mm_vmscan_kswapd_wake w`);
  sql.push(`INSERT INTO mm_vmscan_write_folio
    SELECT 800000000 + i, ${at(counts.write)}, (i % 2)::INTEGER,
      (CASE WHEN i % 3 = 0 THEN 1 + i % 2 ELSE 10 + ${h(14)} % 200 END)::INTEGER,
      'mm_vmscan_write_folio', 3000000 + i,
      CASE WHEN i % 3 = 0 THEN 'RECLAIM_WB_FILE|RECLAIM_WB_ASYNC' ELSE 'RECLAIM_WB_ANON|RECLAIM_WB_ASYNC' END
    FROM range(${counts.write}) t(i)`);
  sql.push(`INSERT INTO workqueue_execute_start
    SELECT 900000000 + 2 * i, ${at(counts.wq)}, (i % 2)::INTEGER, (400 + i % 16)::INTEGER,
      '0xffff' || (i % 64), CASE WHEN i % 2 = 0 THEN 'wb_workfn' ELSE 'blk_mq_run_work_fn' END
    FROM range(${counts.wq}) t(i)`);
  sql.push(`INSERT INTO workqueue_execute_end
    SELECT s.id + 1, s.ts + 1000 + hash(s.id) % 100000, s.cpu, s.utid, s.work, s.function
    FROM workqueue_execute_start s`);
  for (const s of sql) await engine.exec(s);
}

// `npx tsx bench/detectors_bench.ts [events]`: synthetic model, then the bench.
// `npx tsx bench/detectors_bench.ts --fingerprint DB [--derive] [--no-detectors]`: see modelFingerprint.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { openDuckDb } = await import('../server/engine/engine.ts');
  const { readFileSync } = await import('node:fs');
  const fp = process.argv.indexOf('--fingerprint');
  if (fp >= 0) {
    const db = process.argv[fp + 1];
    if (!db) throw new Error('--fingerprint needs a database file');
    const derive = process.argv.includes('--derive');
    const engine = await openDuckDb(db, derive ? { memoryLimit: '1GB' } : {});
    const report: Record<string, unknown> = {};
    if (derive) {
      const { deriveModel } = await import('../server/model/derive_model.ts');
      await engine.exec(DERIVED_TABLES.map((t) => `DELETE FROM ${t};`).join('\n'));
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      report.deriveMs = await deriveModel(engine);
      const c = process.cpuUsage(c0);
      report.deriveWallMs = Math.round(performance.now() - t0);
      report.deriveCpuMs = Math.round((c.user + c.system) / 1000);
    }
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    report.fingerprint = await modelFingerprint(engine, { detectors: !process.argv.includes('--no-detectors') });
    const c = process.cpuUsage(c0);
    report.fingerprintWallMs = Math.round(performance.now() - t0);
    report.fingerprintCpuMs = Math.round((c.user + c.system) / 1000);
    report.events = await countEvents(engine);
    process.stdout.write(`${JSON.stringify(report, null, 1)}\n`);
    engine.close();
    process.exit(0);
  }
  const events = Number(process.argv[2] ?? 10_000_000);
  const engine = await openDuckDb(':memory:');
  await engine.exec(readFileSync(new URL('../queries/schema.sql', import.meta.url), 'utf8'));
  let t = performance.now();
  await fillSyntheticReclaimModel(engine, { events });
  process.stdout.write(`synthetic model: ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  if (process.argv.includes('--derive')) {
    t = performance.now();
    await engine.exec(readFileSync(new URL('../queries/model/derive_slices.sql', import.meta.url), 'utf8'));
    process.stdout.write(`derive_slices.sql: ${((performance.now() - t) / 1000).toFixed(2)} s\n`);
  }
  process.stdout.write(formatDetectorBench(await benchDetectors(engine)));
  engine.close();
}
