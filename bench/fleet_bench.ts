/**
 * Fleet part of `npm run bench`: traces per minute for `stallscope batch`
 * (--jobs 1 and 2) and `stallscope fleet --master local[2]` on the real
 * recordings of fixtures/ (the 24 of tests/golden/fleet.test.ts: 0.1-2.6 MB,
 * trace.dat v6/v7, text, Perfetto), a rerun (nothing to analyse), and the
 * fixed costs: a child's start (`stallscope --help`) and an empty Spark job
 * (one trace). Fleet against batch --jobs 2 is the ratio to watch: both run
 * the same child per trace on the same two cores.
 *
 *   npm run bench -- --only fleet
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FLEET_COMPARE_RUNS, FLEET_OTHER_TRACES } from '../tests/support/fleet/fleet_corpus.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = path.join(ROOT, 'bin', 'stallscope.mjs');
const FIX = path.join(ROOT, 'fixtures');

export const FLEET_BENCH_TRACES = [...FLEET_COMPARE_RUNS, ...FLEET_OTHER_TRACES].map((f) => path.join(FIX, f));

export interface FleetBenchRow {
  what: string;
  traces: number;
  seconds: number;
  tracesPerMinute: number;
  load: string;
}

function timed(what: string, args: string[], traces: number, log: (s: string) => void): FleetBenchRow {
  const t = performance.now();
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const seconds = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`${what}: exit ${r.status}: ${r.stderr.slice(-500)}`);
  const row = {
    what,
    traces,
    seconds,
    tracesPerMinute: (traces / seconds) * 60,
    load: os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' '),
  };
  log(
    `fleet: ${what}: ${traces} traces in ${seconds.toFixed(1)} s = ${row.tracesPerMinute.toFixed(1)} traces/min (load ${row.load})`,
  );
  return row;
}

export async function benchFleet(
  log: (s: string) => void,
): Promise<{ rows: FleetBenchRow[]; perTraceSeconds: number; childStartSeconds: number; sparkFixedSeconds: number }> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'stallscope-fleet-bench-'));
  const n = FLEET_BENCH_TRACES.length;
  try {
    const rows: FleetBenchRow[] = [];
    const start = timed('child start (stallscope --help)', ['--help'], 1, log);
    rows.push(
      timed('batch --jobs 1', ['batch', ...FLEET_BENCH_TRACES, '--out', path.join(work, 'b1'), '--jobs', '1'], n, log),
    );
    rows.push(
      timed('batch --jobs 2', ['batch', ...FLEET_BENCH_TRACES, '--out', path.join(work, 'b2'), '--jobs', '2'], n, log),
    );
    rows.push(
      timed(
        'batch rerun (all done)',
        ['batch', ...FLEET_BENCH_TRACES, '--out', path.join(work, 'b2'), '--jobs', '2'],
        n,
        log,
      ),
    );
    const spark1 = timed(
      'fleet local[2], one trace',
      ['fleet', FLEET_BENCH_TRACES[0]!, '--out', path.join(work, 's1'), '--master', 'local[2]'],
      1,
      log,
    );
    rows.push(spark1);
    rows.push(
      timed(
        'fleet local[2]',
        ['fleet', ...FLEET_BENCH_TRACES, '--out', path.join(work, 's2'), '--master', 'local[2]'],
        n,
        log,
      ),
    );
    const perTrace = rows[0]!.seconds / n;
    return {
      rows,
      perTraceSeconds: perTrace,
      childStartSeconds: start.seconds,
      sparkFixedSeconds: spark1.seconds - perTrace,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatFleetBench(r: Awaited<ReturnType<typeof benchFleet>>): string {
  const lines = [
    '',
    '## fleet: traces per minute (24 real recordings, 0.1-2.6 MB)',
    '',
    '| run | traces | seconds | traces/min | load |',
    '| --- | ---: | ---: | ---: | --- |',
  ];
  for (const x of r.rows)
    lines.push(`| ${x.what} | ${x.traces} | ${x.seconds.toFixed(1)} | ${x.tracesPerMinute.toFixed(1)} | ${x.load} |`);
  const b2 = r.rows.find((x) => x.what === 'batch --jobs 2')!;
  const f2 = r.rows.find((x) => x.what === 'fleet local[2]')!;
  lines.push(
    '',
    `per trace (batch --jobs 1): ${r.perTraceSeconds.toFixed(2)} s, of which a child's start ${r.childStartSeconds.toFixed(2)} s; Spark's fixed cost (one-trace job minus one trace) ${r.sparkFixedSeconds.toFixed(1)} s; fleet local[2] / batch --jobs 2 time: ${(f2.seconds / b2.seconds).toFixed(2)}x`,
    '',
  );
  return lines.join('\n');
}
