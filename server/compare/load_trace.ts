/**
 * One ingested trace as a compare input: its metrics (the library's cached
 * findings.json) and its samples (the detectors' samples files, run on its
 * model once per library and kept).
 */
import { existsSync } from 'node:fs';
import type { Engine } from '../engine/engine.ts';
import type { Metric } from '../findings/metrics.ts';
import { userDetectorDir } from '../query/user_detectors.ts';
import { dataDirPaths } from '../ingest/data_dir.ts';
import { SAMPLES_FILE, readSamplesFile, writeSamplesFile } from '../findings/samples.ts';
import type { TraceInput } from './compare.ts';
import { type TraceSamples, loadSamples } from './samples.ts';

/** What compare needs of a library (server/ingest/library.ts TraceLibrary, the API's LibraryLike). */
export interface CompareLibrary {
  findings(id: string): Promise<FindingsLike> | FindingsLike;
  openEngine(id: string): Promise<Engine>;
  readonly paths?: { root: string };
  /** Optional: settles when the samples.bin of the trace's last detector run is in place (written after its findings). */
  samplesWritten?(id: string): Promise<void>;
}

/** What compare reads of findings.json: metrics, which detectors ran, the detectors' stamp (its samples.bin's). */
interface FindingsLike {
  metrics?: unknown[];
  runs?: unknown[];
  detectors?: string;
}

const samplesCache = new WeakMap<object, Map<string, Promise<TraceSamples>>>();

export async function loadTraceInput(lib: CompareLibrary, id: string, name: string): Promise<TraceInput> {
  const findings = await lib.findings(id);
  let perLib = samplesCache.get(lib);
  if (!perLib) samplesCache.set(lib, (perLib = new Map()));
  let samples = perLib.get(id);
  if (!samples) {
    samples = keptOrComputed(lib, id, findings.detectors ?? null);
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

/**
 * The samples the library kept when the detectors ran (samples.bin, for the
 * same detectors as findings.json), else computed on the model now and kept.
 */
async function keptOrComputed(lib: CompareLibrary, id: string, stamp: string | null): Promise<TraceSamples> {
  const file = lib.paths && stamp ? `${dataDirPaths(lib.paths.root).traceDir(id)}/${SAMPLES_FILE}` : null;
  if (file) {
    await lib.samplesWritten?.(id);
    const kept = await readSamplesFile(file, stamp!);
    if (kept) return kept;
  }
  const userDir = lib.paths ? userDetectorDir(lib.paths.root) : null;
  const computed = await loadSamples(await lib.openEngine(id), {
    extraDirs: userDir && existsSync(userDir) ? [userDir] : [],
  });
  if (file) await writeSamplesFile(file, computed, stamp!).catch(() => undefined);
  return computed;
}
