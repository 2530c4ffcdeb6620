/**
 * Samples: the per-event values behind a detector's percentile metrics
 * (every completed stall's duration, every shrinker call's), from its
 * `<id>.samples.sql` (METRICS.md, "Samples"). The library keeps them beside
 * findings.json (`samples.bin`, written after the detectors' findings, which
 * do not wait for it: server/ingest/library.ts keepSamples) so that
 * comparing traces (server/compare/) does not run SQL over the models again.
 * When run_detectors is asked for samples (the library asks), each samples
 * file runs while that run's @per_run tables are still there.
 *
 * samples.bin: a u32 length, that many bytes of JSON header
 *   {version, stamp, sets: [{id, detector, unit, scope, keys: [[key, n], ...]}]}
 * padded to 8 bytes, then every set's keys' values as float64, in header order.
 */
import fs from 'node:fs/promises';
import type { Engine } from '../engine/engine.ts';
import type { DetectorDef, ParamValue } from './detector_registry.ts';
import { inlineParams } from './inline_params.ts';

export interface SampleSet {
  /** e.g. 'reclaim_stall.memcg.stall' */
  id: string;
  detector: string;
  unit: string;
  /** The scope of the keys ('process', 'shrinker', ...). */
  scope: string;
  /** Values per key, each sorted ascending. */
  byKey: Map<string, Float64Array>;
}

export type TraceSamples = Map<string, SampleSet>;

/** Its name in a trace's directory, beside findings.json. */
export const SAMPLES_FILE = 'samples.bin';

const ID_RE = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/;

/** Runs one detector's samples statement (macros loaded by the caller) and adds its rows to `out`. */
export async function querySamples(
  engine: Engine,
  det: DetectorDef,
  values: Record<string, ParamValue>,
  out: TraceSamples,
): Promise<void> {
  const { sql, params } = inlineParams(det.samplesSql!, values);
  // One row per (samples, key) with its values as a list: a 10M-event trace has a million calls, and a row object each costs ~1 us.
  const rows = await engine.query<{
    samples: string;
    scope: string;
    key: string | null;
    unit: string;
    vals: (number | null)[];
  }>(
    `SELECT samples, scope, key, unit, list(value ORDER BY value) AS vals FROM (${sql}) GROUP BY ALL ORDER BY samples, key`,
    Object.keys(params).length ? params : undefined,
  );
  for (const r of rows) {
    if (typeof r.samples !== 'string' || !ID_RE.test(r.samples)) {
      throw new Error(`${det.samplesFile}: samples must be an id like area.name, got ${JSON.stringify(r.samples)}`);
    }
    let set = out.get(r.samples);
    if (!set)
      out.set(
        r.samples,
        (set = { id: r.samples, detector: det.id, unit: String(r.unit), scope: String(r.scope), byKey: new Map() }),
      );
    set.byKey.set(r.key ?? '?', Float64Array.from(r.vals.filter((v): v is number => v !== null && Number.isFinite(v))));
  }
}

const VERSION = 1;

export function encodeSamples(samples: TraceSamples, stamp: string): Buffer {
  const sets = [...samples.values()].map((s) => ({
    id: s.id,
    detector: s.detector,
    unit: s.unit,
    scope: s.scope,
    keys: [...s.byKey].map(([k, v]) => [k, v.length]),
  }));
  const header = Buffer.from(JSON.stringify({ version: VERSION, stamp, sets }), 'utf8');
  const start = Math.ceil((4 + header.length) / 8) * 8;
  const n = [...samples.values()].reduce((a, s) => a + [...s.byKey.values()].reduce((b, v) => b + v.length, 0), 0);
  const buf = Buffer.alloc(start + n * 8);
  buf.writeUInt32LE(header.length, 0);
  header.copy(buf, 4);
  const vals = new Float64Array(buf.buffer, buf.byteOffset + start, n);
  let o = 0;
  for (const s of samples.values())
    for (const v of s.byKey.values()) {
      vals.set(v, o);
      o += v.length;
    }
  return buf;
}

/** The samples of a file written for `stamp`, or null (no file, another stamp, damaged). */
export function decodeSamples(buf: Buffer, stamp: string): TraceSamples | null {
  try {
    const len = buf.readUInt32LE(0);
    const header = JSON.parse(buf.subarray(4, 4 + len).toString('utf8')) as {
      version: number;
      stamp: string;
      sets: { id: string; detector: string; unit: string; scope: string; keys: [string, number][] }[];
    };
    if (header.version !== VERSION || header.stamp !== stamp) return null;
    const start = Math.ceil((4 + len) / 8) * 8;
    const all = new Float64Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length));
    const out: TraceSamples = new Map();
    let o = 0;
    for (const s of header.sets) {
      const byKey = new Map<string, Float64Array>();
      for (const [k, n] of s.keys) {
        if (o + n > all.length) return null;
        byKey.set(k, all.subarray(o, o + n));
        o += n;
      }
      out.set(s.id, { id: s.id, detector: s.detector, unit: s.unit, scope: s.scope, byKey });
    }
    return o === all.length ? out : null;
  } catch {
    return null;
  }
}

export async function writeSamplesFile(file: string, samples: TraceSamples, stamp: string): Promise<void> {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await fs.writeFile(tmp, encodeSamples(samples, stamp));
  await fs.rename(tmp, file);
}

export async function readSamplesFile(file: string, stamp: string): Promise<TraceSamples | null> {
  const buf = await fs.readFile(file).catch(() => null);
  return buf ? decodeSamples(buf, stamp) : null;
}
