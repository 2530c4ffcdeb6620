/**
 * Where ingested traces live. One directory per trace, named by the sha256
 * of its content, so the same file is never ingested twice and a link can
 * name a trace by content rather than by path.
 *
 *   <dataDir>/traces/<sha256>/trace.duckdb   the model (complete traces only)
 *   <dataDir>/traces/<sha256>/info.json      summary; written last
 *   <dataDir>/traces/<sha256>/findings.json  detector output cache
 *   <dataDir>/traces/<sha256>/samples.bin    per-event samples of the same run, for compare (server/findings/samples.ts)
 *   <dataDir>/traces/<sha256>/overview/      the server's first-view caches (meta,
 *                                            track list, zoomed-out summaries)
 *   <dataDir>/tmp/                           traces being built, uploads in flight
 *   <dataDir>/jobs/<id>.json                 the server's ingest jobs, so a restart
 *                                            can say which ones were interrupted
 *   <dataDir>/notes/                         annotations (server/notes/)
 *   <dataDir>/detectors/<id>.sql             detectors saved from the query page
 *                                            (server/query/user_detectors.ts)
 *
 * Everything under traces/<sha256>/ besides trace.duckdb and info.json is a
 * cache that may be deleted at any time.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** --data-dir, else $STALLSCOPE_DATA_DIR, else $XDG_DATA_HOME/stallscope (~/.local/share/stallscope). */
export function resolveDataDir(explicit?: string): string {
  if (explicit) return path.resolve(explicit);
  if (process.env.STALLSCOPE_DATA_DIR) return path.resolve(process.env.STALLSCOPE_DATA_DIR);
  const xdg = process.env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share');
  return path.join(xdg, 'stallscope');
}

export interface DataDirPaths {
  root: string;
  traces: string;
  tmp: string;
  traceDir(id: string): string;
}

import { TRACE_ID_RE as TRACE_ID } from '../../shared/contract/trace_id.ts';

export function isTraceId(id: string): boolean {
  return TRACE_ID.test(id);
}

export function dataDirPaths(root: string): DataDirPaths {
  const traces = path.join(root, 'traces');
  return {
    root,
    traces,
    tmp: path.join(root, 'tmp'),
    traceDir(id: string) {
      // Ids come from URLs: only a sha256 hex string may become a path.
      if (!isTraceId(id)) throw new Error(`not a trace id: ${JSON.stringify(id).slice(0, 80)}`);
      return path.join(traces, id);
    },
  };
}

/**
 * Removes leftovers of ingests whose process is gone (killed, crashed,
 * machine restarted): their work directories carry the owner's pid.
 */
export async function removeStaleWork(root: string): Promise<string[]> {
  const tmp = dataDirPaths(root).tmp;
  const removed: string[] = [];
  let entries: string[] = [];
  try {
    entries = await fs.readdir(tmp);
  } catch {
    return removed;
  }
  for (const name of entries) {
    const m = /-(\d+)-[^-]*$/.exec(name);
    const pid = m ? Number(m[1]) : NaN;
    if (Number.isFinite(pid) && pid !== process.pid && !processAlive(pid)) {
      await fs.rm(path.join(tmp, name), { recursive: true, force: true });
      removed.push(name);
    }
  }
  return removed;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
