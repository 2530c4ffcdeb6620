/**
 * An upload's path to done reads and writes no more files than it must: its
 * record comes from memory, and samples.bin is written after the findings
 * (the done does not wait for it). compare, asking right after the done,
 * gets the whole samples or computes them again, never a half-written file.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTraceInput } from '../compare/load_trace.ts';
import { SAMPLES_FILE, type TraceSamples, decodeSamples, writeSamplesFile } from '../findings/samples.ts';
import { TraceLibrary } from './library.ts';

const FIXTURE = path.resolve(__dirname, '../../fixtures/compare/vfs1000.2.v7.dat');

/**
 * super_cache_scan calls counted in `trace-cmd report`: a task's
 * mm_shrink_slab_start closed by its next shrinker event when that is an end
 * of the same symbol (METRICS.md's pairing).
 */
function superCacheScanCalls(): number {
  const report = execFileSync('trace-cmd', ['report', '-i', FIXTURE], {
    maxBuffer: 1 << 28,
    stdio: ['ignore', 'pipe', 'ignore'],
    encoding: 'utf8',
  });
  const open = new Map<string, string>();
  let calls = 0;
  for (const line of report.split('\n')) {
    const m = /-(\d+) +\[\d+\].*? (mm_shrink_slab_start|mm_shrink_slab_end): +(\S+)/.exec(line);
    if (!m) continue;
    const [, pid, event, where] = m;
    const sym = where!.replace(/\+.*/, '');
    if (event === 'mm_shrink_slab_start') open.set(pid!, sym);
    else {
      if (open.get(pid!) === sym && sym === 'super_cache_scan') calls++;
      open.delete(pid!);
    }
  }
  return calls;
}

const plain = (s: TraceSamples) =>
  Object.fromEntries([...s].map(([id, set]) => [id, Object.fromEntries([...set.byKey].map(([k, v]) => [k, [...v]]))]));

let dataDir: string;
let lib: TraceLibrary;
let traceId: string;
let samplesFile: string;
let stamp: string;
let afterDone: TraceSamples;
let doneRecord: Awaited<ReturnType<TraceLibrary['ingest']>>;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-samples-after-done-'));
  lib = await TraceLibrary.open(dataDir);
  doneRecord = await lib.ingest(FIXTURE);
  traceId = doneRecord.id;
  // compare asks as soon as the job is done, before samples.bin may be in place
  afterDone = (await loadTraceInput(lib, traceId, 'vfs1000.2')).samples;
  await lib.samplesWritten(traceId);
  samplesFile = path.join(dataDir, 'traces', traceId, SAMPLES_FILE);
  stamp = (await lib.findings(traceId)).detectors!;
}, 120_000);

afterAll(async () => {
  await lib?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("the upload's done", () => {
  it('its record, built from memory, is the one the library reads from info.json and findings.json', async () => {
    expect(doneRecord).toEqual(await lib.get(traceId));
    // and its counts are the findings': every finding's severity counted in findings.json as written
    const written = JSON.parse(fs.readFileSync(path.join(dataDir, 'traces', traceId, 'findings.json'), 'utf8')) as {
      findings: { severity: 'info' | 'warn' | 'critical' }[];
    };
    const bySeverity = { info: 0, warn: 0, critical: 0 };
    for (const f of written.findings) bySeverity[f.severity]++;
    expect(doneRecord.findingsBySeverity).toEqual(bySeverity);
    expect(written.findings.length).toBeGreaterThan(0);
  });
});

describe('samples.bin after the job is done', () => {
  it("compare right after the done gets every super_cache_scan call trace-cmd's report shows", () => {
    const calls = afterDone.get('shrinker.call')!.byKey.get('super_cache_scan')!;
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.length).toBe(superCacheScanCalls());
  });

  it('once written, samples.bin holds the same samples, for the findings of the same detectors', () => {
    const kept = decodeSamples(fs.readFileSync(samplesFile), stamp);
    expect(kept).not.toBeNull();
    expect(plain(kept!)).toEqual(plain(afterDone));
  });

  it('a half-written samples.bin is not read: compare computes the samples again and writes the whole file', async () => {
    const whole = fs.readFileSync(samplesFile);
    fs.writeFileSync(samplesFile, whole.subarray(0, whole.length >> 1));
    // A new library over the same directory: nothing cached from the first.
    const fresh = await TraceLibrary.open(dataDir);
    try {
      const again = (await loadTraceInput(fresh, traceId, 'vfs1000.2')).samples;
      expect(plain(again)).toEqual(plain(afterDone));
      expect(fs.readFileSync(samplesFile).equals(whole)).toBe(true);
    } finally {
      await fresh.close();
    }
  }, 60_000);

  it('while a large samples.bin is being written, its name shows the old file or the whole new one', async () => {
    const target = path.join(dataDir, 'big.samples.bin');
    const big: TraceSamples = new Map([
      [
        'shrinker.call',
        {
          id: 'shrinker.call',
          detector: 'shrinker_blocking',
          unit: 'ns',
          scope: 'shrinker',
          byKey: new Map([['super_cache_scan', Float64Array.from({ length: 4_000_000 }, (_, i) => i)]]),
        },
      ],
    ]);
    let writing = true;
    const write = writeSamplesFile(target, big, 'big').finally(() => (writing = false));
    const seen = { absent: 0, whole: 0, other: 0 };
    while (writing) {
      const buf = fs.existsSync(target) ? fs.readFileSync(target) : null;
      if (!buf) seen.absent++;
      else if (decodeSamples(buf, 'big')?.get('shrinker.call')?.byKey.get('super_cache_scan')?.length === 4_000_000)
        seen.whole++;
      else seen.other++;
      await new Promise((r) => setImmediate(r));
    }
    await write;
    expect(seen.other).toBe(0);
    expect(seen.absent).toBeGreaterThan(0);
    expect(
      decodeSamples(fs.readFileSync(target), 'big')!.get('shrinker.call')!.byKey.get('super_cache_scan')!.length,
    ).toBe(4_000_000);
  }, 60_000);
});
