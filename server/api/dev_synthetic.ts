/**
 * Writes a synthetic trace database (queries/schema.sql filled by SQL) for
 * developing and benchmarking the web app before/without a real ingest:
 * CPUs running tasks, kswapd with shrinker slices and escalating priority,
 * direct-reclaim stalls, workqueue work, writepage markers, wakeup and
 * migration flows. Event counts scale with `slicesPerCpu` (4 CPUs, ~2 events
 * per slice), so 700k slices/CPU gives > 5M events.
 *
 * Development aid only: real traces come from server/ingest.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openDuckDb } from '../engine/engine.ts';
import type { FindingLike } from './library_contract.ts';

const SCHEMA = fileURLToPath(new URL('../../queries/schema.sql', import.meta.url));

export const SYNTH_BASE_TS = 1_000_000_000_000n; // 1000 s of uptime
const CPUS = 4;

const TASKS = [
  'swapper', 'kswapd0', 'postgres', 'java', 'dd', 'kworker/u8:0', 'kworker/1:2', 'systemd-journal',
  'node', 'rg', 'cc1', 'ld', 'bash', 'sshd', 'kcompactd0', 'xfsaild/loop0', 'kdamond.0', 'python3',
];

export interface SynthOptions {
  slicesPerCpu: number;
}

export async function writeSyntheticTrace(dbPath: string, opts: SynthOptions): Promise<{ events: number; findings: FindingLike[] }> {
  const db = await openDuckDb(dbPath);
  try {
    await db.exec(readFileSync(SCHEMA, 'utf8'));
    const n = opts.slicesPerCpu;
    const base = SYNTH_BASE_TS;
    const threads = TASKS.map((name, i) => `(${i}, ${i === 0 ? 0 : 100 + i * 7}, '${name}', NULL, NULL, NULL, true)`).join(',');
    await db.exec(`INSERT INTO thread VALUES ${threads}`);
    await db.exec(`INSERT INTO _event_name VALUES
      (1,'sched_switch','sched'),(2,'mm_shrink_slab_start','vmscan'),(3,'mm_shrink_slab_end','vmscan'),
      (4,'mm_vmscan_direct_reclaim_begin','vmscan'),(5,'mm_vmscan_direct_reclaim_end','vmscan'),
      (6,'mm_vmscan_write_folio','vmscan'),(7,'sched_waking','sched'),(8,'sched_migrate_task','sched'),
      (9,'mm_vmscan_lru_shrink_inactive','vmscan'),(10,'workqueue_execute_start','workqueue'),(11,'workqueue_execute_end','workqueue')`);
    // Per-CPU consecutive run slices: pseudo-random durations and tasks.
    await db.exec(`
      CREATE TEMP TABLE g AS
      SELECT c.cpu, r.i,
             (3000 + (hash(r.i * 7 + c.cpu) % 120000))::BIGINT AS dur,
             CASE WHEN hash(r.i * 31 + c.cpu) % 5 = 0 THEN 0 ELSE (1 + hash(r.i * 13 + c.cpu * 3) % ${TASKS.length - 1})::INT END AS utid
      FROM range(0, ${CPUS}) c(cpu), range(0, ${n}) r(i);
      CREATE TEMP TABLE s AS
      SELECT cpu, i, utid, dur, ${base} + sum(dur) OVER (PARTITION BY cpu ORDER BY i ROWS UNBOUNDED PRECEDING) - dur AS ts
      FROM g;
      CREATE TEMP TABLE s2 AS SELECT row_number() OVER (ORDER BY ts, cpu) - 1 AS id, * FROM s;
      INSERT INTO sched_slice
        SELECT id, ts, dur, cpu, utid,
               CASE hash(id) % 4 WHEN 0 THEN 'R' WHEN 1 THEN 'D' ELSE 'S' END, 120
        FROM s2;
      INSERT INTO _ftrace_event SELECT id, ts, cpu, utid, 1, 1, 2, NULL, NULL, id FROM s2;
      INSERT INTO sched_switch
        SELECT s2.id, s2.ts, s2.cpu, s2.utid, 'prev', 1, 120, 'S', t.name, t.tid, 120
        FROM s2 JOIN thread t USING (utid);
    `);
    const [{ last }] = await db.query<{ last: bigint }>('SELECT max(ts + dur) AS last FROM sched_slice');
    const span = last - base;
    // Thread states for every thread: running slices and the gaps between them.
    await db.exec(`
      INSERT INTO thread_state
      SELECT row_number() OVER () AS id, ts, dur, cpu, utid, state, NULL, NULL, NULL, NULL FROM (
        SELECT ts, dur, cpu, utid, 'Running' AS state FROM sched_slice WHERE utid > 0
        UNION ALL
        SELECT ts + dur AS ts, nts - (ts + dur) AS dur, NULL, utid,
               CASE WHEN hash(id) % 3 = 0 THEN 'D' WHEN hash(id) % 3 = 1 THEN 'R' ELSE 'S' END
        FROM (SELECT *, lead(ts) OVER (PARTITION BY utid ORDER BY ts) AS nts FROM sched_slice WHERE utid > 0)
        WHERE nts > ts + dur
      );
    `);
    // Slices: shrinker calls on kswapd, direct reclaim on postgres/java, workqueue on kworker.
    const evBase = 10_000_000_000n;
    await db.exec(`
      CREATE TEMP TABLE sl AS
      SELECT ${evBase} + k * 2 AS id, ${base} + (k * ${span / 400n}) + (hash(k) % 1000000)::BIGINT AS ts,
             (20000 + (hash(k * 3) % 3000000) + CASE WHEN k % 37 = 5 THEN 180000000 ELSE 0 END)::BIGINT AS dur,
             1 AS utid, (k % ${CPUS})::INT AS cpu, 'shrinker' AS category,
             CASE k % 3 WHEN 0 THEN 'super_cache_scan' WHEN 1 THEN 'deferred_split_scan' ELSE 'count_shadow_nodes' END AS name
      FROM range(0, 399) r(k)
      UNION ALL
      SELECT ${evBase} + 2000 + k * 2, ${base} + (k * ${span / 60n}) + 5000000, (50000 + (hash(k) % 40000000))::BIGINT,
             CASE WHEN k % 2 = 0 THEN 2 ELSE 3 END, (k % ${CPUS})::INT, 'direct_reclaim', 'direct_reclaim'
      FROM range(0, 59) r(k)
      UNION ALL
      SELECT ${evBase} + 4000 + k * 2, ${base} + (k * ${span / 3000n}), (8000 + (hash(k) % 400000))::BIGINT,
             5, (k % ${CPUS})::INT, 'workqueue', CASE k % 2 WHEN 0 THEN 'wb_workfn' ELSE 'vmstat_update' END
      FROM range(0, 2999) r(k);
      INSERT INTO slice SELECT id, ts, dur, utid, cpu, category, name, 0, id, id + 1 FROM sl;
      INSERT INTO _ftrace_event SELECT id, ts, cpu, utid,
        CASE category WHEN 'shrinker' THEN 2 WHEN 'direct_reclaim' THEN 4 ELSE 10 END, 1, 1, NULL, NULL, id FROM sl;
      INSERT INTO _ftrace_event SELECT id + 1, ts + dur, cpu, utid,
        CASE category WHEN 'shrinker' THEN 3 WHEN 'direct_reclaim' THEN 5 ELSE 11 END, 1, 1, NULL, NULL, id + 1 FROM sl;
      INSERT INTO mm_shrink_slab_start SELECT id, ts, cpu, utid, '0xffff888100a1b000', name, 0, 1024, 'GFP_KERNEL', NULL, NULL,
        100000 + (hash(id) % 50000), 512, 2048, 12 - (id % 12)::INT FROM sl WHERE category = 'shrinker';
      INSERT INTO mm_shrink_slab_end SELECT id + 1, ts + dur, cpu, utid, '0xffff888100a1b000', name, 0, 1024, 0, 2048, 1800 FROM sl WHERE category = 'shrinker';
      INSERT INTO mm_vmscan_direct_reclaim_begin SELECT id, ts, cpu, utid, 'mm_vmscan_direct_reclaim_begin', 0, 'GFP_HIGHUSER_MOVABLE', NULL FROM sl WHERE category = 'direct_reclaim';
      INSERT INTO mm_vmscan_direct_reclaim_end SELECT id + 1, ts + dur, cpu, utid, 'mm_vmscan_direct_reclaim_end', 32 FROM sl WHERE category = 'direct_reclaim';
      INSERT INTO flow SELECT row_number() OVER (), id, id + 1, 'begin_end' FROM sl WHERE category = 'shrinker';
    `);
    // Counters: kswapd priority escalating 12 -> 1 and back, LRU scanned/reclaimed, slab cache items.
    await db.exec(`
      INSERT INTO counter_track VALUES
        (1, 'kswapd priority', 'priority', 1, NULL, 'kswapd scan priority (12 = DEF_PRIORITY)'),
        (2, 'lru nr_scanned', 'pages', NULL, NULL, 'pages scanned per shrink_inactive_list'),
        (3, 'lru nr_reclaimed', 'pages', NULL, NULL, 'pages reclaimed per shrink_inactive_list'),
        (4, 'slab cache_items', 'objects', NULL, NULL, 'objects in the shrunk cache');
      INSERT INTO counter SELECT ${evBase} + 100000 + k, ${base} + k * ${span / 20000n}, 1,
        greatest(1, 12 - abs((k % 4000) - 2000) / 170)::DOUBLE FROM range(0, 20000) r(k);
      INSERT INTO counter SELECT ${evBase} + 200000 + k, ${base} + k * ${span / 20000n}, 2,
        (hash(k) % 4096)::DOUBLE FROM range(0, 20000) r(k);
      INSERT INTO counter SELECT ${evBase} + 300000 + k, ${base} + k * ${span / 20000n}, 3,
        (hash(k * 5) % 2048)::DOUBLE FROM range(0, 20000) r(k);
      INSERT INTO counter SELECT id, ts, 4, cache_items::DOUBLE FROM mm_shrink_slab_start;
    `);
    // Writepage markers and wakeup/migration flows between CPU slices.
    await db.exec(`
      INSERT INTO _ftrace_event SELECT ${evBase} + 500000 + k, ${base} + k * ${span / 5000n}, (k % ${CPUS})::INT, 1, 6, 1, 1, NULL, NULL, 0 FROM range(0, 5000) r(k);
      INSERT INTO mm_vmscan_write_folio SELECT ${evBase} + 500000 + k, ${base} + k * ${span / 5000n}, (k % ${CPUS})::INT, 1, 'mm_vmscan_write_folio', 3000000 + k, 'RECLAIM_WB_ANON|RECLAIM_WB_ASYNC' FROM range(0, 5000) r(k);
      INSERT INTO flow SELECT 100000 + row_number() OVER (), a.id, b.id, CASE WHEN a.id % 2 = 0 THEN 'wakeup' ELSE 'migration' END
      FROM (SELECT id, ts, cpu FROM sched_slice WHERE id % 997 = 0) a
      ASOF JOIN (SELECT id, ts, cpu FROM sched_slice) b ON b.ts > a.ts + 50000 AND (a.cpu + 1) % ${CPUS} = b.cpu;
    `);
    const [{ events }] = await db.query<{ events: bigint }>('SELECT count(*) AS events FROM _ftrace_event');
    await db.exec(`
      INSERT INTO cpu SELECT cpu, cpu, count(*), min(ts), max(ts) FROM _ftrace_event GROUP BY cpu;
      INSERT INTO trace_info VALUES ('format','synthetic'),('format_version','1'),('cpus','${CPUS}'),
        ('first_ts','${base}'),('last_ts','${last}'),('events_total','${events}'),('kernel','6.18.0-synthetic'),('complete','true');
    `);
    // Findings: the longest shrinker calls, the direct reclaim stalls, an escalation window.
    const shr = await db.query<{ id: bigint; ts: bigint; dur: bigint; cpu: number; name: string }>(
      `SELECT id, ts, dur, cpu, name FROM slice WHERE category = 'shrinker' AND dur > 100000000 ORDER BY ts`,
    );
    const dr = await db.query<{ id: bigint; ts: bigint; dur: bigint; cpu: number; utid: number }>(
      `SELECT id, ts, dur, cpu, utid FROM slice WHERE category = 'direct_reclaim' AND dur > 20000000 ORDER BY ts`,
    );
    const findings: FindingLike[] = [];
    for (const s of shr) {
      findings.push({
        detector: 'shrinker_blocking', kind: 'shrinker_blocking', severity: s.dur > 150_000_000n ? 'critical' : 'warn',
        ts_ns: s.ts, dur_ns: s.dur, cpu: s.cpu, tid: 107, comm: 'kswapd0',
        title: `${s.name} blocked kswapd0 for ${(Number(s.dur) / 1e6).toFixed(1)} ms`,
        values: { shrinker: s.name, dur_ms: Number(s.dur) / 1e6, freed: 1800, cache_items: 120000 },
        event_ids: [s.id, s.id + 1n],
      });
    }
    for (const s of dr) {
      findings.push({
        detector: 'direct_reclaim_stall', kind: 'direct_reclaim_stall', severity: s.dur > 30_000_000n ? 'critical' : 'warn',
        ts_ns: s.ts, dur_ns: s.dur, cpu: s.cpu, tid: 100 + s.utid * 7, comm: TASKS[s.utid]!,
        title: `${TASKS[s.utid]} stalled ${(Number(s.dur) / 1e6).toFixed(1)} ms in direct reclaim`,
        values: { dur_ms: Number(s.dur) / 1e6, nr_reclaimed: 32, order: 0 },
        event_ids: [s.id, s.id + 1n],
      });
    }
    findings.push({
      detector: 'kswapd_escalation', kind: 'kswapd_escalation', severity: 'warn',
      ts_ns: base + span / 10n, dur_ns: span / 10n, cpu: null, tid: 107, comm: 'kswapd0',
      title: 'kswapd priority fell from 12 to 1', values: { min_priority: 1, passes: 22 }, event_ids: [],
    });
    return { events: Number(events), findings };
  } finally {
    db.close();
  }
}
