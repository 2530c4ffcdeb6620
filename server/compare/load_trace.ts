/**
 * One ingested trace as a compare input: its metrics (the library's cached
 * findings.json) and its samples (the detectors' samples files, run on its
 * model once per library and kept).
 */
import { existsSync } from 'node:fs';
import type { TraceLibrary } from '../ingest/library.ts';
import type { TraceInput } from './compare.ts';
import { type TraceSamples, loadSamples } from './samples.ts';

const samplesCache = new WeakMap<TraceLibrary, Map<string, Promise<TraceSamples>>>();

export async function loadTraceInput(lib: TraceLibrary, id: string, name: string): Promise<TraceInput> {
  const findings = await lib.findings(id);
  let perLib = samplesCache.get(lib);
  if (!perLib) samplesCache.set(lib, (perLib = new Map()));
  let samples = perLib.get(id);
  if (!samples) {
    const userDir = lib.userDetectorDir;
    samples = lib.openEngine(id).then((engine) => loadSamples(engine, { extraDirs: existsSync(userDir) ? [userDir] : [] }));
    samples.catch(() => perLib!.delete(id));
    perLib.set(id, samples);
  }
  const ran = new Set(['trace', ...(findings.runs ?? []).filter((r) => r.status === 'ok').map((r) => r.id)]);
  return { name, id, metrics: findings.metrics ?? [], samples: await samples, ran };
}
