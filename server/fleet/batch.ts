/**
 * `stallscope batch FILE|DIR|@LIST... --out DIR`: many traces on one machine.
 *
 * Each trace runs in its own child process (`stallscope fleet-task`, the
 * analysis of `analyze --json` as rows), N at a time, each with its own
 * data directory (removed after, unless --data-dir keeps the models), so a
 * crash or a runaway trace costs one trace, and memory is N children's.
 *
 * Resumable: every finished trace leaves `<out>/.work/done/<sha256>.ndjson`;
 * a rerun hashes its inputs and starts children only for contents without
 * one. Failures are kept in `.work/failed/` and retried by every rerun. The
 * dataset (dataset.ts) is rewritten from those files at the end of each run,
 * so it always holds exactly the inputs of the last run.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type InputResult, assembleLines, lineTable, writeDataset } from './dataset.ts';
import { expandInputs, labelsFor, readLabels, sha256File } from './inputs.ts';

export const CLI_PATH = fileURLToPath(new URL('../../bin/stallscope.mjs', import.meta.url));

export interface BatchOptions {
  out: string;
  labels?: string;
  jobs?: number;
  /** Keep the ingested models here (default: a temporary directory per trace, removed after). */
  dataDir?: string;
  queries?: string[];
  log?: (line: string) => void;
}

export interface BatchSummary {
  inputs: number;
  analysed: number;
  reused: number;
  failed: number;
  seconds: number;
}

export async function runBatch(args: string[], opts: BatchOptions): Promise<BatchSummary> {
  const started = performance.now();
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const files = await expandInputs(args);
  const labels = await readLabels(opts.labels);
  const work = path.join(opts.out, '.work');
  const doneDir = path.join(work, 'done');
  const failedDir = path.join(work, 'failed');
  await mkdir(doneDir, { recursive: true });
  await mkdir(failedDir, { recursive: true });

  const results: InputResult[] = [];
  const todo: { file: string; traceId: string; result: InputResult }[] = [];
  let reused = 0;
  for (const file of files) {
    const result: InputResult = { file, traceId: null, lines: [], labels: labelsFor(labels, file) };
    results.push(result);
    try {
      result.traceId = await sha256File(file);
    } catch (e) {
      result.lines = [failureLine('read', (e as Error).message)];
      continue;
    }
    const done = await readFile(path.join(doneDir, `${result.traceId}.ndjson`), 'utf8').catch(() => null);
    if (done !== null) {
      result.lines = splitLines(done);
      reused++;
    } else {
      todo.push({ file, traceId: result.traceId, result });
    }
  }
  // Same content twice: analyse it once.
  const byId = new Map<string, (typeof todo)[number]>();
  for (const t of todo) if (!byId.has(t.traceId)) byId.set(t.traceId, t);
  const queue = [...byId.values()];
  const jobs = Math.max(1, opts.jobs ?? Math.max(1, os.availableParallelism?.() ?? os.cpus().length));
  log(`batch: ${files.length} inputs, ${reused} already analysed, ${queue.length} to analyse with ${jobs} job(s)`);

  let finished = 0;
  const worker = async () => {
    for (let t = queue.shift(); t; t = queue.shift()) {
      const t0 = performance.now();
      const lines = await runTask(t.file, opts);
      const isFailure = lines.length === 1 && lineTable(lines[0]!) === 'failures';
      const text = lines.join('\n');
      if (isFailure) {
        await writeFile(path.join(failedDir, `${t.traceId}.ndjson`), `${text}\n`);
      } else {
        await rm(path.join(failedDir, `${t.traceId}.ndjson`), { force: true });
        const tmp = path.join(doneDir, `${t.traceId}.ndjson.tmp-${process.pid}`);
        await writeFile(tmp, `${text}\n`);
        await rename(tmp, path.join(doneDir, `${t.traceId}.ndjson`));
      }
      t.result.lines = lines;
      finished++;
      const f = isFailure ? (JSON.parse(lines[0]!) as { row: { stage: string; message: string } }).row : null;
      const what = f ? `FAILED (${f.stage}: ${f.message.slice(0, 160)})` : 'ok';
      log(`[${finished}/${byId.size}] ${t.file}: ${what} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  for (const r of results) {
    if (r.lines.length === 0 && r.traceId !== null) r.lines = byId.get(r.traceId)?.result.lines ?? [];
  }
  await writeDataset(opts.out, assembleLines(results), work);
  const failures = results.filter((r) => r.lines.some((l) => lineTable(l) === 'failures')).length;
  const seconds = (performance.now() - started) / 1000;
  log(`batch: wrote ${opts.out} (${files.length - failures} traces, ${failures} failures) in ${seconds.toFixed(1)} s`);
  return { inputs: files.length, analysed: byId.size, reused, failed: failures, seconds };
}

export function splitLines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim());
}

export function failureLine(stage: string, message: string): string {
  return JSON.stringify({ table: 'failures', row: { stage, message } });
}

/** Runs `stallscope fleet-task FILE` in a child process and returns its rows (or one failures row). */
export async function runTask(file: string, opts: Pick<BatchOptions, 'dataDir' | 'queries'>): Promise<string[]> {
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'stallscope-fleet-')));
  try {
    const args = [
      CLI_PATH,
      '--data-dir',
      dataDir,
      'fleet-task',
      file,
      ...(opts.queries ?? []).flatMap((q) => ['--queries', q]),
    ];
    const { status, stdout, stderr } = await new Promise<{ status: number | null; stdout: string; stderr: string }>(
      (resolve) => {
        const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        child.stdout.on('data', (b: Buffer) => out.push(b));
        child.stderr.on('data', (b: Buffer) => err.push(b));
        child.on('close', (code, signal) =>
          resolve({
            status: code ?? (signal ? 128 : null),
            stdout: Buffer.concat(out).toString('utf8'),
            stderr: Buffer.concat(err).toString('utf8'),
          }),
        );
      },
    );
    if (status !== 0) return [failureLine('task', taskFailureMessage(status, stderr))];
    return splitLines(stdout);
  } finally {
    if (!opts.dataDir) await rm(dataDir, { recursive: true, force: true });
  }
}

/** The message of a child that died without a result (the Spark job words it the same way). */
export function taskFailureMessage(status: number | null, stderr: string): string {
  const last = stderr.trim().split('\n').pop() ?? '';
  return `stallscope fleet-task exited with status ${status}: ${last}`;
}
