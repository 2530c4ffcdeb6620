/**
 * The Perfetto export (`stallscope export FILE --format perfetto`), what "Open
 * in Perfetto" runs: each 1M-event recording of the corpus is ingested once
 * into a scratch data dir, then exported in its own process under
 * /usr/bin/time (wall, CPU user+sys, peak RSS), `runs` times, medians. The
 * export streams in windows of event ids (export_perfetto.ts), so its peak
 * must stay within issue 29's 350 MB whatever the trace's size.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median, timed } from './corpus_bench.ts';
import { ROOT } from './make_large_traces.ts';

const CLI = path.join(ROOT, 'bin', 'stallscope.mjs');
const FILES = ['sched_wq', 'many_systems', 'kmem', 'reclaim'].map((m) =>
  path.join(ROOT, 'fixtures', 'corpus', `${m}.v7.dat`),
);
export const EXPORT_PEAK_TARGET_MB = 350;

export interface ExportBenchRow {
  file: string;
  events: number;
  wallS: number;
  cpuS: number;
  peakRssMB: number;
  eventsPerS: number;
  load: number;
}

export async function benchExport(opts: { runs?: number; log?: (s: string) => void } = {}): Promise<ExportBenchRow[]> {
  const log = opts.log ?? ((s: string) => process.stdout.write(`${s}\n`));
  const runs = opts.runs ?? 2;
  const rows: ExportBenchRow[] = [];
  for (const file of FILES) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-export-bench-'));
    const out = path.join(dataDir, 'out.perfetto-trace');
    try {
      const ingest = await timed(CLI, ['ingest', file, '--data-dir', dataDir], 'ignore', 10 * 60_000);
      if (ingest.code !== 0) throw new Error(`${file}: ingest failed: ${ingest.stderr.slice(-400)}`);
      const got: Awaited<ReturnType<typeof timed>>[] = [];
      let events = 0;
      for (let i = 0; i < runs; i++) {
        const r = await timed(
          CLI,
          ['export', file, '--format', 'perfetto', '-o', out, '--data-dir', dataDir],
          'ignore',
          10 * 60_000,
        );
        if (r.code !== 0) throw new Error(`${file}: export failed: ${r.stderr.slice(-400)}`);
        events = Number(/: (\d+) events/.exec(r.stderr)?.[1] ?? NaN);
        got.push(r);
      }
      const row: ExportBenchRow = {
        file: path.basename(file),
        events,
        wallS: median(got.map((r) => r.wallS)),
        cpuS: median(got.map((r) => r.cpuS)),
        peakRssMB: Math.max(...got.map((r) => r.peakRssMB)),
        eventsPerS: events / median(got.map((r) => r.wallS)),
        load: median(got.map((r) => r.load)),
      };
      rows.push(row);
      log(
        `${row.file.padEnd(22)} ${(row.events / 1e6).toFixed(2)}M events  export ${row.wallS.toFixed(1)} s (${(row.eventsPerS / 1e3).toFixed(0)}k events/s)  cpu ${row.cpuS.toFixed(1)} s  peak RSS ${row.peakRssMB.toFixed(0)} MB ${row.peakRssMB <= EXPORT_PEAK_TARGET_MB ? '(<= 350: met)' : '(> 350: NOT met)'}  load ${row.load.toFixed(1)}`,
      );
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchExport({ runs: Number(process.argv[2] ?? 2) });
}
