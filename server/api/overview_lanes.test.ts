/**
 * A thread's timeline parts (its states and its slices) are summarised on two
 * connections at once when the trace has a second one (OpenTrace.beside):
 * the parts are those of one connection, and every state and slice of the
 * thread is counted in them once (the model's own counts). An upload
 * starts them as soon as its detectors have named the threads of its
 * findings (TraceLibrary.ingest onFindingThreads, routes/traces.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceLibrary } from '../ingest/library.ts';
import { Overview } from './overview.ts';
import { type OpenTrace, TraceEngines } from './trace_engines.ts';

const K4X = path.resolve(__dirname, '../../fixtures/handmade/kernel4x_kswapd_escalation.txt');

let dataDir: string;
let library: TraceLibrary;
let id: string;
/** What the ingest's onFindingThreads was called with, and whether findings.json was written by then. */
const named: Array<{ traceId: string; utids: number[]; findingsDone: boolean }> = [];
const findingsFile = (traceId: string) => path.join(dataDir, 'traces', traceId, 'findings.json');

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-ovlanes-'));
  library = await TraceLibrary.open(dataDir);
  id = (
    await library.ingest(K4X, {
      onFindingThreads: (traceId, utids) =>
        named.push({ traceId, utids, findingsDone: fs.existsSync(findingsFile(traceId)) }),
    })
  ).id;
}, 60_000);

afterAll(async () => {
  await library?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('thread parts on two connections', () => {
  it('are the parts one connection makes, and count each state and slice of the thread once', async () => {
    const tr = await new TraceEngines(library).get(id);
    expect(tr.beside).toBeDefined();
    // the same trace without a second connection: both queries on one
    const oneLane: OpenTrace = {
      meta: tr.meta,
      query: (s, p) => tr.query(s, p),
      queryColumns: (s, p) => tr.queryColumns!(s, p),
    };
    const counts = await tr.query<{ utid: number; states: bigint; slices: bigint }>(
      `SELECT t.utid, (SELECT count(*) FROM thread_state s WHERE s.utid = t.utid) AS states,
              (SELECT count(*) FROM slice s WHERE s.utid = t.utid) AS slices
       FROM thread t WHERE t.utid <> 0 ORDER BY t.utid`,
    );
    const utids = counts.filter((c) => c.states > 0n).map((c) => c.utid);
    expect(utids.length).toBeGreaterThan(1);
    const both = await new Overview(tr).threads(utids);
    expect(both).toEqual(await new Overview(oneLane).threads(utids));
    const total = (m: Map<string, Record<string, unknown[]>>, u: number) =>
      ((m.get(String(u))?.n ?? []) as number[]).reduce((s, n) => s + n, 0);
    for (const c of counts.filter((x) => utids.includes(x.utid))) {
      expect(total(both.states, c.utid), `utid ${c.utid} states`).toBe(Number(c.states));
      expect(total(both.slices, c.utid), `utid ${c.utid} slices`).toBe(Number(c.slices));
    }
    expect([...both.slices.values()].some((r) => r.n!.length > 0)).toBe(true);
  });

  it('an ingest names the threads of its findings once, with the trace, before its findings are written', async () => {
    const { findings } = await library.findings(id);
    const utids = [...new Set(findings.map((f) => f.utid).filter((u) => u != null))].sort();
    expect(utids.length).toBeGreaterThan(0);
    expect(named.map((n) => ({ ...n, utids: [...n.utids].sort() }))).toEqual([
      { traceId: id, utids, findingsDone: false },
    ]);
  });
});
