/**
 * One ingest of a file in its own child process (ingest_bench.ts --child),
 * so that its peak RSS is its own (it includes DuckDB's native memory), as
 * a printed line: shared by memory_check.ts and memory_check_text.ts.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { runChild } from './ingest_bench.ts';
import { OUT_DIR } from './make_large_traces.ts';

export async function ingestPeakRssLine(file: string): Promise<string> {
  const dataDir = path.join(OUT_DIR, `tmp-memory-${process.pid}`);
  await fsp.rm(dataDir, { recursive: true, force: true });
  const r = await runChild(['ingest', file, dataDir], 30 * 60_000);
  await fsp.rm(dataDir, { recursive: true, force: true });
  if (!r.ok || !r.summary) throw new Error(`${file}: ${r.error}`);
  return (
    `${path.basename(file).padEnd(24)} ${(fs.statSync(file).size / 1e6).toFixed(0).padStart(6)} MB  ` +
    `${(r.summary.eventsTotal / 1e6).toFixed(2).padStart(6)}M events  ingest ${r.wallS.toFixed(1).padStart(5)} s  peak RSS ${(r.maxRssKB / 1024).toFixed(0)} MB`
  );
}
