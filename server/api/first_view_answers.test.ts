/**
 * Issue 29 (time to first view), on a real server (real TraceLibrary,
 * DuckDB): when an upload's job says done, the app's first request for the
 * findings is answered from memory (the job built the answer), and the
 * overview parts the job held back are written after the first view
 * (FIRST_VIEW_WRITES_AFTER_MS), or when the server closes if that is sooner,
 * never after it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FIXTURES,
  startRealServer,
  uploadFile,
  waitJob,
  type RealServer,
} from '../../tests/support/api/test_server.ts';
import { FIRST_VIEW_WRITES_AFTER_MS } from './routes/traces.ts';

const TRACE = path.join(FIXTURES, 'reclaim_kswapd.v7.dat');
/** fixtures/reclaim_kswapd.counts.json: per event name, from `trace-cmd report`. */
const COUNTS = (
  JSON.parse(fs.readFileSync(path.join(FIXTURES, 'reclaim_kswapd.counts.json'), 'utf8')) as {
    events_by_name: Record<string, number>;
  }
).events_by_name;

let s: RealServer | undefined;
afterEach(async () => {
  await s?.close();
  if (s) fs.rmSync(s.dataDir, { recursive: true, force: true });
  s = undefined;
});

/** The overview parts kept beside a model (<traceDir>/overview/v*-res*\/*.bin). */
function keptParts(dataDir: string, id: string): string[] {
  const dir = path.join(dataDir, 'traces', id, 'overview');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.bin'))
    .map((d) => d.name);
}

async function uploadDone(srv: RealServer): Promise<string> {
  const up = await uploadFile(srv.base, TRACE);
  expect(up.status).toBe(202);
  const job = await waitJob(srv.base, up.body.jobId!);
  expect(job.phase).toBe('done');
  return job.traceId!;
}

describe("an upload's first view", () => {
  it('finds the findings answer built at done, the same a fresh server builds from the model', async () => {
    s = await startRealServer();
    const id = await uploadDone(s);
    // Built by the job: in the server's cache before any request for it.
    const cached = s.server.ctx.caches.findingsAnswers.peek(id);
    expect(cached).toBeDefined();
    const text = await cached!.text;
    const served = await (await fetch(`${s.base}/api/traces/${id}/findings`)).text();
    expect(served).toBe(text);
    const answer = JSON.parse(served) as { findings: Array<{ detector: string; values: { shrinker?: string } }> };
    // The fixture's story (fixtures/README.md): super_cache_scan blocking kswapd (its longest call 29 ms).
    expect(
      answer.findings.some((f) => f.detector === 'shrinker_blocking' && f.values.shrinker === 'super_cache_scan'),
    ).toBe(true);
    const record = (await (await fetch(`${s.base}/api/traces/${id}`)).json()) as { eventsTotal: number };
    expect(record.eventsTotal).toBe(Object.values(COUNTS).reduce((a, b) => a + b, 0));

    // The same answer from a server that never saw the upload: built on request from findings.json.
    const dataDir = s.dataDir;
    await s.close();
    fs.rmSync(path.join(dataDir, 'traces', id, 'overview'), { recursive: true, force: true });
    const again = await startRealServer(dataDir);
    s = again;
    expect(again.server.ctx.caches.findingsAnswers.peek(id)).toBeUndefined();
    expect(await (await fetch(`${again.base}/api/traces/${id}/findings`)).text()).toBe(text);
  });

  it('writes the held overview parts after the first view, not at done', async () => {
    s = await startRealServer();
    const id = await uploadDone(s);
    const doneAt = Date.now();
    // The app's first requests come now: no part is encoded or written meanwhile.
    await fetch(`${s.base}/api/traces/${id}/tracks`);
    if (Date.now() - doneAt < FIRST_VIEW_WRITES_AFTER_MS - 500) expect(keptParts(s.dataDir, id)).toEqual([]);
    const dataDir = s.dataDir;
    const deadline = doneAt + FIRST_VIEW_WRITES_AFTER_MS + 10_000;
    // The held parts are written side by side, each appearing when its own write ends: wait for the three, not the first.
    const held = ['cpu.bin', 'slice.bin', 'counter.bin'];
    while (!held.every((f) => keptParts(dataDir, id).includes(f)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(Date.now() - doneAt).toBeGreaterThanOrEqual(FIRST_VIEW_WRITES_AFTER_MS - 100);
    expect(keptParts(dataDir, id)).toEqual(expect.arrayContaining(held));
  });

  it('writes the held parts when the server closes before the first view is over, and nothing after', async () => {
    s = await startRealServer();
    const id = await uploadDone(s);
    const dataDir = s.dataDir;
    await s.close();
    s = undefined;
    const parts = keptParts(dataDir, id);
    expect(parts).toEqual(expect.arrayContaining(['cpu.bin', 'slice.bin', 'counter.bin']));
    // The data directory's owner removes it after close: nothing is written into it again.
    fs.rmSync(dataDir, { recursive: true, force: true });
    await new Promise((r) => setTimeout(r, FIRST_VIEW_WRITES_AFTER_MS + 500));
    expect(fs.existsSync(dataDir)).toBe(false);
  });
});
