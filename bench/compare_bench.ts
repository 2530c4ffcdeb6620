/**
 * `npm run bench -- --only compare`: `stallscope compare` on two large models
 * (the large v6 and the large v7 trace.dat: the same ≥ 10M events written
 * twice, two models of their own), once both are ingested and their
 * detectors have run (as the library does after an upload; the CLI runs them
 * on first use). Timed as the CLI and GET /api/compare do it:
 *
 *   cold  loadTraceInput for both (metrics from findings.json; the samples
 *         files run on each model: every stall and shrinker call) + compareSides
 *   warm  the same again in the same process (samples kept): compareSides alone
 *   text  formatCompare of the result (table + histograms)
 *
 * Target: cold < 3 s.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dataDirPaths } from '../server/ingest/data_dir.ts';
import { compareSides } from '../server/compare/compare.ts';
import { formatCompare } from '../shared/compare/format_compare.ts';
import { loadTraceInput } from '../server/compare/load_trace.ts';
import { TraceLibrary } from '../server/ingest/library.ts';

export interface CompareBench {
  events: number[];
  coldMs: number;
  warmMs: number;
  noKeptSamplesMs: number;
  /** Detector runs (with samples) per model, ms. */
  findingsMs: number[];
  textMs: number;
  rows: number;
  sampleEvents: number;
  load: [string, string];
}

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

export async function benchCompare(
  models: { dataDir: string; id: string; events: number }[],
  log: (s: string) => void,
): Promise<CompareBench> {
  const kept = (m: { dataDir: string; id: string }, name: string) =>
    path.join(dataDirPaths(m.dataDir).traceDir(m.id), name);
  for (const m of models) for (const f of ['findings.json', 'samples.bin']) fs.rmSync(kept(m, f), { force: true });
  let libs = await Promise.all(models.map((m) => TraceLibrary.open(m.dataDir)));
  const findingsMs: number[] = [];
  try {
    // Ingested and analysed, as after an upload: the detectors' output is on disk before the clock starts.
    for (let i = 0; i < models.length; i++) {
      const t = performance.now();
      await libs[i]!.findings(models[i]!.id);
      findingsMs.push(performance.now() - t);
      log(
        `compare: detectors (with samples) on model ${i + 1}: ${(findingsMs[i]! / 1000).toFixed(1)} s, samples.bin ${(fs.statSync(kept(models[i]!, 'samples.bin')).size / 1e6).toFixed(1)} MB`,
      );
    }
    // As a new process: libraries that have read nothing yet.
    await Promise.all(libs.map((l) => l.close()));
    libs = await Promise.all(models.map((m) => TraceLibrary.open(m.dataDir)));
    const load0 = load();
    const t0 = performance.now();
    const inputs = await Promise.all(models.map((m, i) => loadTraceInput(libs[i]!, m.id, `model ${i + 1}`)));
    const result = compareSides(inputs.map((t) => ({ label: t.name, traces: [t] })));
    const coldMs = performance.now() - t0;
    const t1 = performance.now();
    const again = await Promise.all(models.map((m, i) => loadTraceInput(libs[i]!, m.id, `model ${i + 1}`)));
    compareSides(again.map((t) => ({ label: t.name, traces: [t] })));
    const warmMs = performance.now() - t1;
    const t2 = performance.now();
    const text = formatCompare(result);
    const textMs = performance.now() - t2;
    // Traces analysed by a stallscope that kept no samples: the samples files run on the models.
    for (const m of models) fs.rmSync(kept(m, 'samples.bin'), { force: true });
    await Promise.all(libs.map((l) => l.close()));
    libs = await Promise.all(models.map((m) => TraceLibrary.open(m.dataDir)));
    const t3 = performance.now();
    const fresh = await Promise.all(models.map((m, i) => loadTraceInput(libs[i]!, m.id, `model ${i + 1}`)));
    compareSides(fresh.map((t) => ({ label: t.name, traces: [t] })));
    const noKeptSamplesMs = performance.now() - t3;
    const sampleEvents = inputs.reduce(
      (n, t) =>
        n + [...t.samples.values()].reduce((m, s) => m + [...s.byKey.values()].reduce((k, v) => k + v.length, 0), 0),
      0,
    );
    log(
      `compare: ${result.rows.length} rows, ${result.histograms.length} histograms, ${sampleEvents.toLocaleString('en-US')} per-event samples, ${text.length} characters of text`,
    );
    return {
      events: models.map((m) => m.events),
      coldMs,
      warmMs,
      noKeptSamplesMs,
      findingsMs,
      textMs,
      rows: result.rows.length,
      sampleEvents,
      load: [load0, load()],
    };
  } finally {
    await Promise.all(libs.map((l) => l.close()));
  }
}

export function formatCompareBench(r: CompareBench): string {
  return (
    `compare (${r.events.map((e) => e.toLocaleString('en-US')).join(' + ')} events, ${r.sampleEvents.toLocaleString('en-US')} samples, ${r.rows} rows): ` +
    `cold ${(r.coldMs / 1000).toFixed(2)} s (target < 3 s: ${r.coldMs < 3000 ? 'MET' : 'NOT MET'}), warm ${(r.warmMs / 1000).toFixed(3)} s, text ${(r.textMs / 1000).toFixed(3)} s; ` +
    `without kept samples ${(r.noKeptSamplesMs / 1000).toFixed(2)} s; detectors with samples ${r.findingsMs.map((x) => (x / 1000).toFixed(1)).join(' / ')} s; load ${r.load[0]} -> ${r.load[1]}\n`
  );
}
