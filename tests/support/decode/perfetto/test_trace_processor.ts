/**
 * Perfetto's trace_processor_shell, for the tests that compare stallscope
 * with it and for the bench: found in `../shared/tools/perfetto/` beside
 * the repository (where CI puts it), else /work/shared/tools/perfetto.
 * Never shipped; a missing tool fails the tests that need it (no skip).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const REPO = path.resolve(import.meta.dirname, '../../../..');

export function perfettoToolDir(): string {
  const candidates = [path.join(REPO, '../shared/tools/perfetto'), '/work/shared/tools/perfetto'];
  for (const c of candidates) if (existsSync(path.join(c, 'trace_processor_shell'))) return c;
  throw new Error(
    `trace_processor_shell not found in ${candidates.join(' or ')}: the Perfetto reference tools are needed for this test ` +
      '(see /work/shared/tools/perfetto/README.md; it needs libprotobuf32 and libsqlite3-0, scripts/ensure_system_deps.sh installs them)',
  );
}

export function traceProcessorShell(): string {
  return path.join(perfettoToolDir(), 'trace_processor_shell');
}

export type TpRow = Record<string, string | number | null>;

/** Parses trace_processor_shell's CSV output: one block of rows per statement, blocks separated by blank lines. */
export function parseTpCsv(text: string): TpRow[][] {
  const blocks: TpRow[][] = [];
  let header: string[] | null = null;
  let rows: TpRow[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      if (header) blocks.push(rows);
      header = null;
      rows = [];
      continue;
    }
    const cells = splitCsv(line);
    if (!header) header = cells.map((c) => String(c));
    else rows.push(Object.fromEntries(header.map((h, i) => [h, cells[i] ?? null])));
  }
  if (header) blocks.push(rows);
  return blocks;
}

function splitCsv(line: string): (string | number | null)[] {
  const out: (string | number | null)[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let s = '';
      i++;
      for (;;) {
        if (i >= line.length) break;
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            s += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        s += line[i++];
      }
      out.push(s === '[NULL]' ? null : s);
      i++; // comma
    } else {
      let j = line.indexOf(',', i);
      if (j < 0) j = line.length;
      const cell = line.slice(i, j);
      out.push(
        cell === '[NULL]' || cell === '' ? null : /^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(cell) ? Number(cell) : cell,
      );
      i = j + 1;
    }
  }
  return out;
}

/** Runs SQL statements over a trace with trace_processor_shell; returns one row list per statement that gives rows. */
export function queryTraceProcessor(trace: string, statements: string[]): TpRow[][] {
  const dir = mkdtempSync(path.join(tmpdir(), 'stallscope-tp-'));
  try {
    const q = path.join(dir, 'q.sql');
    writeFileSync(q, statements.map((s) => s.trim().replace(/;$/, '') + ';\n').join(''));
    const out = execFileSync(traceProcessorShell(), ['-q', q, trace], {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return parseTpCsv(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
