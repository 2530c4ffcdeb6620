/**
 * Issue 29: a server that opened one trace gives its read engine back while
 * the next upload ingests (TraceLibrary.releaseIdleEngines), and the first
 * trace opens again afterwards with the same answers. Real server, real
 * library and DuckDB; expected counts from the fixture's counts.json (made
 * with trace-cmd when the fixture was recorded).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FIXTURES,
  sha256,
  startRealServer,
  uploadFile,
  waitJob,
  type RealServer,
} from '../../tests/support/api/test_server.ts';
import { reportEvents } from '../../tests/query/report_text.ts';

const A = path.join(FIXTURES, 'reclaim_kswapd.v7.dat');
const B = path.join(FIXTURES, 'memcg_reclaim.v7.dat');
const A_COUNTS = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'reclaim_kswapd.counts.json'), 'utf8')) as {
  events_total: number;
  cpus: number;
};

let s: RealServer | undefined;
afterEach(async () => {
  await s?.close();
  if (s) fs.rmSync(s.dataDir, { recursive: true, force: true });
  s = undefined;
});

/** Descriptors this process (the server runs in it) holds on a file. */
function openDescriptors(file: string): number {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
    } catch {
      // closed since it was listed
    }
  }
  return n;
}

interface Tracks {
  cpus: Array<{ cpu: number; events: number }>;
  threadsOfInterest: Array<{ name: string | null; reason: string }>;
}

async function getJson<T>(url: string): Promise<T> {
  const r = await fetch(url);
  expect(r.status, url).toBe(200);
  return (await r.json()) as T;
}

describe('two traces in one server', () => {
  it.runIf(process.platform === 'linux')(
    "the first trace's engine is given back while the second ingests, and the first opens again with the same answers",
    async () => {
      s = await startRealServer();
      const idA = sha256(A);
      const dbA = path.join(s.dataDir, 'traces', idA, 'trace.duckdb');
      const upA = await uploadFile(s.base, A);
      expect((await waitJob(s.base, upA.body.jobId!)).phase).toBe('done');
      // Opened as the app opens a trace: its tracks and findings.
      const tracksBefore = await getJson<Tracks>(`${s.base}/api/traces/${idA}/tracks`);
      const findingsBefore = await getJson<unknown>(`${s.base}/api/traces/${idA}/findings`);
      expect(openDescriptors(dbA)).toBeGreaterThan(0);

      const upB = await uploadFile(s.base, B);
      const jobB = await waitJob(s.base, upB.body.jobId!);
      expect([jobB.phase, jobB.traceId]).toEqual(['done', sha256(B)]);
      // Nobody asked for A since: its database is closed.
      expect(openDescriptors(dbA)).toBe(0);

      // A answers again, from its reopened model (the overview and answers cached before are not
      // what is checked: a query the caches never saw goes to the model).
      const tracks = await getJson<Tracks>(`${s.base}/api/traces/${idA}/tracks`);
      expect(tracks.cpus).toHaveLength(A_COUNTS.cpus);
      expect(tracks.cpus.reduce((n, c) => n + c.events, 0)).toBe(A_COUNTS.events_total);
      expect(tracks.threadsOfInterest.some((t) => t.reason === 'kswapd' && /^kswapd/.test(t.name ?? ''))).toBe(true);
      expect(tracks).toEqual(tracksBefore);
      expect(await getJson<unknown>(`${s.base}/api/traces/${idA}/findings`)).toEqual(findingsBefore);
      // Events the findings name, looked up in the reopened model, are events of the file as trace-cmd reads it.
      const ids = [
        ...new Set(
          (findingsBefore as { findings: Array<{ event_ids: number[] }> }).findings.flatMap((f) => f.event_ids),
        ),
      ].slice(0, 50);
      expect(ids.length).toBeGreaterThan(0);
      const { events } = await getJson<{ events: Array<{ ts_ns: string; cpu: number; name: string }> }>(
        `${s.base}/api/traces/${idA}/events?ids=${ids.join(',')}`,
      );
      expect(events).toHaveLength(ids.length);
      const inReport = new Set(reportEvents(A).map((e) => `${e.ts} ${e.cpu} ${e.name}`));
      for (const e of events) expect(inReport.has(`${e.ts_ns} ${e.cpu} ${e.name}`), JSON.stringify(e)).toBe(true);
      expect(openDescriptors(dbA)).toBeGreaterThan(0);
    },
    180_000,
  );
});
