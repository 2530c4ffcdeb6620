/**
 * CLI start time: `stallscope --help` and `stallscope analyze --json` on the smallest fixture, against
 * `node -e 0` in the same run (the floor: Node's own start on this machine, under this load). Runs
 * alternate (node, help, analyze, …) so load changes hit all three alike; medians are reported and
 * the ratios to `node -e 0` are the figures to compare across sessions.
 * - `bin` is what a checkout runs (bin/stallscope.mjs: the cached esbuild bundle; the cache is warmed first).
 * - `dist` is what an installed package runs (dist/cli/cli.js from `npm run build`), when present.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './make_large_traces.ts';

export interface CliStartRow {
  what: string;
  command: string;
  medianMs: number;
  ratioToNode: number;
  runsMs: number[];
}

/** The fixture: hand-made, 23 events (fixtures/handmade/README.md). */
const FIXTURE = path.join(ROOT, 'fixtures', 'handmade', 'kernel4x_writeback_io.txt');

function timeOnce(args: string[], env: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')}: rc ${r.status}: ${r.stderr.slice(0, 400)}`);
  return ms;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export function benchCliStart(opts: { runs: number; log: (s: string) => void }): CliStartRow[] {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-cli-bench-'));
  const env: NodeJS.ProcessEnv = { ...process.env, STALLSCOPE_DATA_DIR: dataDir };
  delete env.STALLSCOPE_CLI_TSX;
  const bin = path.join(ROOT, 'bin', 'stallscope.mjs');
  const dist = path.join(ROOT, 'dist', 'cli', 'cli.js');
  const cases: { what: string; args: string[] }[] = [
    { what: 'node -e 0', args: ['-e', '0'] },
    { what: 'bin --help', args: [bin, '--help'] },
    { what: 'bin analyze --json (23 events)', args: [bin, 'analyze', '--json', FIXTURE] },
  ];
  if (fs.existsSync(dist)) {
    cases.push({ what: 'dist --help', args: [dist, '--help'] });
    cases.push({ what: 'dist analyze --json (23 events)', args: [dist, 'analyze', '--json', FIXTURE] });
  } else opts.log('cli: dist/cli/cli.js missing (npm run build writes it): installed-package rows skipped');
  try {
    // Warm-up: the checkout's bundle cache, the analyzed trace's model (later analyzes reuse it: start cost, not ingest).
    for (const c of cases) timeOnce(c.args, env);
    const runs = cases.map(() => [] as number[]);
    for (let i = 0; i < opts.runs; i++) cases.forEach((c, j) => runs[j]!.push(timeOnce(c.args, env)));
    const nodeMs = median(runs[0]!);
    const rows = cases.map((c, j) => ({
      what: c.what,
      command: `node ${c.args.map((a) => path.relative(ROOT, a) || a).join(' ')}`,
      medianMs: median(runs[j]!),
      ratioToNode: median(runs[j]!) / nodeMs,
      runsMs: runs[j]!.map((x) => Math.round(x)),
    }));
    for (const r of rows)
      opts.log(
        `cli: ${r.what.padEnd(34)} median ${r.medianMs.toFixed(0).padStart(5)} ms  x${r.ratioToNode.toFixed(2)} of node -e 0  (${r.runsMs.join(', ')})`,
      );
    return rows;
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
