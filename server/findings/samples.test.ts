/**
 * samples.bin: what the library keeps of the detectors' samples, read back
 * only for the detectors it was written for; and the detector run's samples
 * agree with the samples files run on their own (no per-run tables).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDuckDb } from '../engine/engine.ts';
import { ingestFile } from '../ingest/ingest_file.ts';
import { loadSamples } from '../compare/samples.ts';
import { runDetectors } from './run_detectors.ts';
import { type TraceSamples, decodeSamples, encodeSamples } from './samples.ts';

const FIXTURE = path.resolve(__dirname, '../../fixtures/compare/vfs1000.2.v7.dat');

const plain = (s: TraceSamples) =>
  Object.fromEntries(
    [...s].map(([id, set]) => [id, { ...set, byKey: Object.fromEntries([...set.byKey].map(([k, v]) => [k, [...v]])) }]),
  );

describe('samples', () => {
  it('round trip through samples.bin; another stamp or a damaged file reads as none', () => {
    const s: TraceSamples = new Map([
      [
        'shrinker.call',
        {
          id: 'shrinker.call',
          detector: 'shrinker_blocking',
          unit: 'ns',
          scope: 'shrinker',
          byKey: new Map([
            ['a', Float64Array.of(1, 2.5, 3)],
            ['b', Float64Array.of()],
          ]),
        },
      ],
      [
        'reclaim_stall.memcg.stall',
        {
          id: 'reclaim_stall.memcg.stall',
          detector: 'direct_reclaim_stall',
          unit: 'ns',
          scope: 'process',
          byKey: new Map([['cat', Float64Array.of(9)]]),
        },
      ],
    ]);
    const buf = encodeSamples(s, 'stamp1');
    expect(plain(decodeSamples(buf, 'stamp1')!)).toEqual(plain(s));
    expect(decodeSamples(buf, 'stamp2')).toBeNull();
    expect(decodeSamples(buf.subarray(0, buf.length - 8), 'stamp1')).toBeNull();
    expect(decodeSamples(Buffer.from('garbage'), 'stamp1')).toBeNull();
  });

  it("a detector run's samples (per-run tables) equal the samples files run alone", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-samples-'));
    try {
      const { dbPath } = await ingestFile(FIXTURE, { dataDir });
      const engine = await openDuckDb(dbPath, { readOnly: true });
      try {
        const run = await runDetectors(engine, { samples: true });
        const alone = await loadSamples(engine);
        expect(run.samples!.size).toBeGreaterThan(0);
        expect(plain(run.samples!)).toEqual(plain(alone));
        // and they back the metrics: the largest super_cache_scan call is the metric's max
        const calls = run.samples!.get('shrinker.call')!.byKey.get('super_cache_scan')!;
        expect(
          run.metrics.find((m) => m.metric === 'shrinker.call_max_ns' && m.key === 'super_cache_scan')!.value,
        ).toBe(calls[calls.length - 1]);
        expect(run.metrics.find((m) => m.metric === 'shrinker.calls' && m.key === 'super_cache_scan')!.value).toBe(
          calls.length,
        );
      } finally {
        engine.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
