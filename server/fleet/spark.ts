/**
 * `stallscope fleet`: starts the PySpark job (fleet/spark/fleet_job.py) with
 * the Python of the Spark virtual environment that scripts/ensure_system_deps.sh
 * makes (~/.cache/stallscope/spark-venv: pyspark, pyarrow; Java from Debian).
 * The job's tasks run this stallscope (bin/stallscope.mjs with this Node).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_PATH } from './batch.ts';
import { FleetError, SCHEMA_FILE } from './dataset.ts';

export const SPARK_JOB = fileURLToPath(new URL('../../fleet/spark/fleet_job.py', import.meta.url));

export function sparkPython(explicit?: string): string {
  const p =
    explicit ??
    process.env.STALLSCOPE_SPARK_PYTHON ??
    path.join(os.homedir(), '.cache', 'stallscope', 'spark-venv', 'bin', 'python');
  if (!existsSync(p)) {
    throw new FleetError(
      `no Python with pyspark at ${p}: run scripts/ensure_system_deps.sh, or pass --python / set STALLSCOPE_SPARK_PYTHON`,
    );
  }
  return p;
}

export interface FleetOptions {
  out: string;
  master: string;
  labels?: string;
  python?: string;
}

/** Runs the Spark job; resolves to its exit status. */
export function runFleet(inputs: string[], opts: FleetOptions): Promise<number> {
  const args = [
    SPARK_JOB,
    '--out',
    opts.out,
    '--master',
    opts.master,
    '--cli',
    CLI_PATH,
    '--node',
    process.execPath,
    '--schema',
    SCHEMA_FILE,
  ];
  if (opts.labels) args.push('--labels', opts.labels);
  args.push('--', ...inputs);
  const child = spawn(sparkPython(opts.python), args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { SPARK_LOCAL_IP: '127.0.0.1', ...process.env, PYSPARK_PYTHON: sparkPython(opts.python) },
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}
