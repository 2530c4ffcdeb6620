/**
 * One ingested trace as a compare input: its metrics (the library's cached
 * findings.json) and its samples (the detectors' samples files, run on its
 * model once per library and kept).
 */
import { existsSync } from 'node:fs';
import type { Engine } from '../engine/engine.ts';
import type { Metric } from '../findings/metrics.ts';
import { userDetectorDir } from '../query/user_detectors.ts';
import type { TraceInput } from './compare.ts';
import { type TraceSamples, loadSamples } from './samples.ts';

/** What compare needs of a library (server/ingest/library.ts TraceLibrary, the API's LibraryLike). */
export interface CompareLibrary {
  findings(id: string): Promise<{ metrics?: unknown[]; runs?: unknown[] }> | { metrics?: unknown[]; runs?: unknown[] };
  openEngine(id: string): Promise<Engine>;
  readonly paths?: { root: string };
}

const samplesCache = new WeakMap<object, Map<string, Promise<TraceSamples>>>();

export async function loadTraceInput(lib: CompareLibrary, id: string, name: string): Promise<TraceInput> {
  const findings = await lib.findings(id);
  let perLib = samplesCache.get(lib);
  if (!perLib) samplesCache.set(lib, (perLib = new Map()));
  let samples = perLib.get(id);
  if (!samples) {
    const userDir = lib.paths ? userDetectorDir(lib.paths.root) : null;
    samples = lib.openEngine(id).then((engine) => loadSamples(engine, { extraDirs: userDir && existsSync(userDir) ? [userDir] : [] }));
    samples.catch(() => perLib!.delete(id));
    perLib.set(id, samples);
  }
  const runs = (findings.runs ?? []) as { id: string; status: string }[];
  const ran = new Set(['trace', ...runs.filter((r) => r.status === 'ok').map((r) => r.id)]);
  return { name, id, metrics: (findings.metrics ?? []) as Metric[], samples: await samples, ran };
}

/** Forget a trace's samples (its model was replaced). */
export function forgetSamples(lib: object, id: string): void {
  samplesCache.get(lib)?.delete(id);
}
