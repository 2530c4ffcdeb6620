/**
 * Issue 4: two uploads at once, on a real server (real TraceLibrary, DuckDB).
 * The same file twice: both jobs end `done` with the same trace, which is
 * ingested once (one trace directory, one library row). Two different files:
 * both are ingested, neither disturbs the other. A bad file next to a good
 * one: the bad one fails with its own name, the good one is ready. Nothing is
 * ever listed as ready before its ingest is complete, and no staged upload or
 * work directory is left behind.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FIXTURES,
  followJobEvents,
  listTraces,
  sha256,
  startRealServer,
  tmpEntries,
  traceDirs,
  uploadFile,
  waitJob,
  type RealServer,
} from '../../tests/support/api/test_server.ts';

const A = path.join(FIXTURES, 'reclaim_kswapd.v7.dat');
const B = path.join(FIXTURES, 'memcg_reclaim.v7.dat');
const NOT_A_TRACE = path.join(FIXTURES, 'handmade', 'bad_binary_not_trace.bin');

let s: RealServer | undefined;
afterEach(async () => {
  await s?.close();
  if (s) fs.rmSync(s.dataDir, { recursive: true, force: true });
  s = undefined;
});

/** Polls the library while jobs run: a trace may only be 'ready' once its directory holds info.json and the model. */
function watchLibrary(srv: RealServer): { stop(): Promise<void>; violations: string[] } {
  const violations: string[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const { traces } = await listTraces(srv.base);
      for (const t of traces.filter((x) => x.status === 'ready')) {
        const dir = path.join(srv.dataDir, 'traces', t.id);
        if (!fs.existsSync(path.join(dir, 'info.json')) || !fs.existsSync(path.join(dir, 'trace.duckdb'))) {
          violations.push(`${t.name} listed ready without a complete model`);
        }
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    violations,
    async stop() {
      running = false;
      await loop;
    },
  };
}

describe('two uploads at once', () => {
  it('the same file twice: both done, one trace, ingested once', async () => {
    s = await startRealServer();
    const watch = watchLibrary(s);
    const [r1, r2] = await Promise.all([uploadFile(s.base, A, 'first.dat'), uploadFile(s.base, A, 'second.dat')]);
    expect([r1.status, r2.status]).toEqual([202, 202]);
    const f1 = followJobEvents(s.base, r1.body.jobId!);
    const f2 = followJobEvents(s.base, r2.body.jobId!);
    const [j1, j2] = await Promise.all([waitJob(s.base, r1.body.jobId!), waitJob(s.base, r2.body.jobId!)]);
    await Promise.all([f1.ended, f2.ended]);
    // Only one of the two decoded the file; the other waited for it and reused the result.
    expect(
      [f1.phases, f2.phases].filter((p) => p.includes('decoding')),
      JSON.stringify([f1.phases, f2.phases]),
    ).toHaveLength(1);
    await watch.stop();
    expect(watch.violations).toEqual([]);
    expect([j1.phase, j2.phase]).toEqual(['done', 'done']);
    expect(j1.traceId).toBe(sha256(A));
    expect(j2.traceId).toBe(sha256(A));
    expect(traceDirs(s.dataDir)).toEqual([sha256(A)]);
    const { traces } = await listTraces(s.base);
    expect(traces.map((t) => [t.id, t.status])).toEqual([[sha256(A), 'ready']]);
    expect(tmpEntries(s.dataDir)).toEqual([]);
  });

  it('two different files: both ingested and listed', async () => {
    s = await startRealServer();
    const watch = watchLibrary(s);
    const [ra, rb] = await Promise.all([uploadFile(s.base, A), uploadFile(s.base, B)]);
    const [ja, jb] = await Promise.all([waitJob(s.base, ra.body.jobId!), waitJob(s.base, rb.body.jobId!)]);
    await watch.stop();
    expect(watch.violations).toEqual([]);
    expect([ja.phase, ja.traceId]).toEqual(['done', sha256(A)]);
    expect([jb.phase, jb.traceId]).toEqual(['done', sha256(B)]);
    const { traces } = await listTraces(s.base);
    expect(
      traces
        .filter((t) => t.status === 'ready')
        .map((t) => t.id)
        .sort(),
    ).toEqual([sha256(A), sha256(B)].sort());
    expect(traces.some((t) => t.status !== 'ready')).toBe(false);
    // Both models answer queries.
    for (const id of [sha256(A), sha256(B)]) {
      const r = await fetch(`${s.base}/api/traces/${id}/tracks`);
      expect(r.status, id).toBe(200);
    }
    expect(tmpEntries(s.dataDir)).toEqual([]);
  });

  it('a file that is not a trace next to a good one: each ends on its own terms', async () => {
    s = await startRealServer();
    const [rg, rb] = await Promise.all([
      uploadFile(s.base, A, 'good.dat'),
      uploadFile(s.base, NOT_A_TRACE, 'photo.bin'),
    ]);
    const [jg, jb] = await Promise.all([waitJob(s.base, rg.body.jobId!), waitJob(s.base, rb.body.jobId!)]);
    expect(jg.phase).toBe('done');
    expect(jb.phase).toBe('failed');
    expect(jb.error).toContain('photo.bin');
    expect(jb.error).not.toContain(path.join(s.dataDir, 'tmp'));
    const { traces } = await listTraces(s.base);
    expect(traces.filter((t) => t.status === 'ready').map((t) => t.id)).toEqual([sha256(A)]);
    const failed = traces.filter((t) => t.status === 'failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.name).toBe('photo.bin');
    expect(tmpEntries(s.dataDir)).toEqual([]);
  });
});
