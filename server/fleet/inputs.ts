/**
 * The inputs of a fleet run: FILE, DIR (every trace below it) or @LIST (a
 * text file of paths, one a line, # comments), and the labels file.
 *
 * A directory gives every regular file below it except hidden ones and the
 * side files that sit beside traces (.json, .md, .csv, .sh, .txt.counts): a
 * file that is not a trace still becomes a `failures` row, so nothing is
 * dropped silently. The Spark job (fleet/spark/fleet_job.py) expands inputs
 * the same way; tests/fleet checks both give the same dataset.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { FleetError } from './dataset.ts';

const SIDE_FILE = /\.(json|md|csv|sh|py|ts|list)$/i;

export async function expandInputs(args: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const a of args) {
    if (a.startsWith('@')) {
      const text = await readFile(a.slice(1), 'utf8').catch((e: Error) => {
        throw new FleetError(`${a.slice(1)}: cannot read the list: ${e.message}`);
      });
      for (const line of text.split('\n')) {
        const p = line.trim();
        if (p && !p.startsWith('#')) out.push(p);
      }
      continue;
    }
    const s = await stat(a).catch((e: Error) => {
      throw new FleetError(`${a}: ${e.message}`);
    });
    if (s.isDirectory()) out.push(...(await walk(a)));
    else out.push(a);
  }
  return [...new Set(out)].sort();
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p)));
    else if ((e.isFile() || e.isSymbolicLink()) && !SIDE_FILE.test(e.name)) out.push(p);
  }
  return out;
}

/** sha256 (hex) of a file's bytes: the trace id stallscope's ingest gives it (server/ingest/content_hash.ts). */
export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(file)
      .on('data', (b) => h.update(b))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}

/**
 * labels.csv: a header `file,<name>,<name>...` (e.g. file,kernel,config,host,iteration),
 * then one line per trace. `file` matches an input as given, its absolute path, or its base name.
 * Plain CSV: no quoted commas.
 */
export type Labels = Map<string, Record<string, string>>;

export async function readLabels(file: string | undefined): Promise<Labels> {
  const out: Labels = new Map();
  if (!file) return out;
  const lines = (await readFile(file, 'utf8')).split(/\r?\n/).filter((l) => l.trim() && !l.startsWith('#'));
  const head =
    lines
      .shift()
      ?.split(',')
      .map((s) => s.trim()) ?? [];
  if (head[0] !== 'file')
    throw new FleetError(`${file}: line 1: the first column must be "file", got ${head[0] ?? 'nothing'}`);
  for (const line of lines) {
    const cells = line.split(',').map((s) => s.trim());
    const rec: Record<string, string> = {};
    head.slice(1).forEach((name, i) => {
      if (cells[i + 1]) rec[name] = cells[i + 1]!;
    });
    out.set(cells[0]!, rec);
  }
  return out;
}

export function labelsFor(labels: Labels, file: string): Record<string, string> {
  return labels.get(file) ?? labels.get(path.resolve(file)) ?? labels.get(path.basename(file)) ?? {};
}
