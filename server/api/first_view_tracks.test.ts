/**
 * Issue 29 (time to first view), on a real server (real TraceLibrary,
 * DuckDB): an upload's job builds the first view's track answers (CPUs,
 * slice categories, threads of interest, counters) before it says done
 * (first_view_tracks.ts), for the windows the app asks at the usual
 * timeline widths; served, they are byte for byte what a server
 * that never saw the upload builds per request. And the re-aggregation those
 * answers run (overview.ts reaggSlices, rewritten for speed) gives what the
 * code it replaced gave, on every track of a real trace and many windows.
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
import { bufferedBounds } from '../../shared/contract/buffered_bounds.ts';
import type { TrackList } from '../../shared/contract/api.ts';
import { FIRST_VIEW_WIDTHS, firstViewWindows } from './first_view_tracks.ts';
import { reaggSlices } from './overview.ts';
import type { Columns, Window } from './track_queries.ts';

const TRACE = path.join(FIXTURES, 'reclaim_kswapd.v7.dat');

let s: RealServer | undefined;
afterEach(async () => {
  await s?.close();
  if (s) fs.rmSync(s.dataDir, { recursive: true, force: true });
  s = undefined;
});

async function uploadDone(srv: RealServer): Promise<string> {
  const up = await uploadFile(srv.base, TRACE);
  expect(up.status).toBe(202);
  const job = await waitJob(srv.base, up.body.jobId!);
  expect(job.phase).toBe('done');
  return job.traceId!;
}

/** The app's first-view requests for a timeline `width` px wide (app/api/client.ts batches one per kind). */
function firstViewUrls(id: string, list: TrackList, width: number): string[] {
  const b = bufferedBounds(0, Math.max(list.end, list.start + 1000), width);
  const win = `t0=${b.t0}&t1=${b.t1}&px=${b.px}`;
  const list_ = (v: number[]) => encodeURIComponent(v.join(','));
  return [
    `/api/traces/${id}/tracks/thread?${win}&utid=${list_(list.threadsOfInterest.map((t) => t.utid))}`,
    `/api/traces/${id}/tracks/counter?${win}&track=${list_(list.counters.map((c) => c.id))}`,
    `/api/traces/${id}/tracks/cpu?${win}&cpu=${list_(list.cpus.map((c) => c.cpu))}`,
    `/api/traces/${id}/tracks/slice?${win}&category=${encodeURIComponent(list.sliceCategories.map((c) => c.category).join(','))}`,
    // One track alone is answered unbatched.
    `/api/traces/${id}/tracks/thread?${win}&utid=${list.threadsOfInterest[0]!.utid}`,
  ];
}

describe("an upload's first view: track answers built before done", () => {
  it('covers the windows the app asks at the usual widths, and serves what a fresh server builds', async () => {
    s = await startRealServer();
    const id = await uploadDone(s);
    const list = (await (await fetch(`${s.base}/api/traces/${id}/tracks`)).json()) as TrackList;
    // The fixture (fixtures/README.md) has kswapd0 and the threads its findings name; and counters.
    expect(list.threadsOfInterest.some((t) => t.name === 'kswapd0')).toBe(true);
    expect(list.counters.length).toBeGreaterThan(0);
    expect(list.sliceCategories.length).toBeGreaterThan(0);

    const windows = firstViewWindows(list.end);
    expect(windows.length).toBeGreaterThanOrEqual(1);
    const widths = [FIRST_VIEW_WIDTHS.min, 1210, 1500, FIRST_VIEW_WIDTHS.max];
    const tr = await s.server.ctx.engines.get(id);
    const ov = s.server.ctx.overviews.get(id, tr);
    for (const width of widths) {
      const b = bufferedBounds(0, Math.max(list.end, 1000), width);
      const w: Window = { t0: BigInt(b.t0), t1: BigInt(b.t1), px: b.px };
      expect(windows).toContainEqual(w);
      for (const t of list.threadsOfInterest) expect(ov.firstViewAnswer('thread', t.utid, w)).toBeDefined();
      for (const c of list.counters) expect(ov.firstViewAnswer('counter', c.id, w)).toBeDefined();
      for (const c of list.cpus) expect(ov.firstViewAnswer('cpu', c.cpu, w)).toBeDefined();
      for (const c of list.sliceCategories) expect(ov.firstViewAnswer('slice', c.category, w)).toBeDefined();
    }

    const served = new Map<string, string>();
    for (const width of widths)
      for (const url of firstViewUrls(id, list, width)) served.set(url, await (await fetch(s.base + url)).text());
    // A thread's states count its thread_state rows in the window: kswapd0 has some.
    const kswapd = list.threadsOfInterest.find((t) => t.name === 'kswapd0')!.utid;
    const batch = JSON.parse(served.get(firstViewUrls(id, list, 1500)[0]!)!) as {
      batch: Record<string, { rows: number; cols: Columns }>;
    };
    expect(batch.batch[String(kswapd)]!.rows).toBeGreaterThan(0);
    // The kswapd priority counter has a value per mm_vmscan_lru_shrink_inactive of kswapd0: `grep
    // mm_vmscan_lru_shrink_inactive: fixtures/reclaim_kswapd.report.txt` counts 4662 on kswapd0-45. The first
    // view's window holds the whole trace, so its columns' counts add up to all of them.
    const priority = list.counters.find((c) => c.name === 'kswapd priority')!;
    const counters = JSON.parse(served.get(firstViewUrls(id, list, 1500)[1]!)!) as {
      batch: Record<string, { cols: Columns }>;
    };
    const n = counters.batch[String(priority.id)]!.cols.n as number[];
    expect(n.reduce((a, b) => a + b, 0)).toBe(4662);

    // A server that never saw the upload (no overview kept on disk): built per request from the model.
    const dataDir = s.dataDir;
    await s.close();
    fs.rmSync(path.join(dataDir, 'traces', id, 'overview'), { recursive: true, force: true });
    s = await startRealServer(dataDir);
    const fresh = s.server.ctx.overviews.get(id, await s.server.ctx.engines.get(id));
    // Its overview built as a request would (the first zoomed-out request starts it), with nothing built ahead.
    const utids = list.threadsOfInterest.map((t) => t.utid);
    await Promise.all([fresh.threads(utids), fresh.counter(), fresh.cpu(), fresh.slice()]);
    for (const w of windows) expect(fresh.firstViewAnswer('thread', utids[0]!, w)).toBeUndefined();
    for (const [url, text] of served) expect(await (await fetch(s.base + url)).text()).toBe(text);
  });
});

/** reaggSlices as it was before the rewrite (9d2fa59..a4e74f3), verbatim but for names: the reference. */
function referenceReagg(
  r: Record<string, Array<number | string | null>> | undefined,
  w: Window,
  payload: string[],
  groupCol?: string,
): { cols: Columns; rows: number } {
  type Cell = number | string | null;
  const t0 = Number(w.t0);
  const t1 = Number(w.t1);
  const res = Math.max(1, Number((w.t1 - w.t0) / BigInt(w.px)));
  const cols: Columns = Object.fromEntries(['id', 'ts', 'dur', 'n', ...payload].map((c) => [c, [] as Cell[]]));
  if (!r) return { cols, rows: 0 };
  type Acc = { ts: number; end: number; n: number; best: number; i: number; id: Cell };
  const accs = new Map<string, Acc>();
  const raw: number[] = [];
  const ts = r.ts as number[];
  const dur = r.dur as number[];
  const n = r.n as number[];
  const maxdur = r.maxdur as number[];
  for (let i = 0; i < ts.length; i++) {
    const st = ts[i]!;
    const e = st + dur[i]!;
    if (e <= t0 || st >= t1) continue;
    if (n[i] === 1 && dur[i]! >= res) {
      raw.push(i);
      continue;
    }
    const key = `${Math.floor((st - t0) / res)}${groupCol ? `|${r[groupCol]![i]}` : ''}`;
    const a = accs.get(key);
    if (!a) accs.set(key, { ts: st, end: e, n: n[i]!, best: maxdur[i]!, i, id: n[i] === 1 ? r.id![i]! : null });
    else {
      a.end = Math.max(a.end, e);
      a.n += n[i]!;
      a.id = null;
      if (maxdur[i]! > a.best) {
        a.best = maxdur[i]!;
        a.i = i;
      }
    }
  }
  const items: Array<{ ts: number; row: () => void }> = [];
  const push = (id: Cell, st: number, du: number, nn: number, src: number, keepIds: boolean) => {
    cols.id!.push(id);
    cols.ts!.push(st);
    cols.dur!.push(du);
    cols.n!.push(nn);
    for (const p of payload) {
      const v = r[p]![src] ?? null;
      cols[p]!.push(!keepIds && (p === 'begin_id' || p === 'end_id') ? null : v);
    }
  };
  for (const i of raw) items.push({ ts: ts[i]!, row: () => push(r.id![i]!, ts[i]!, dur[i]!, 1, i, true) });
  for (const a of accs.values())
    items.push({ ts: a.ts, row: () => push(a.id, a.ts, Math.max(1, a.end - a.ts), a.n, a.i, a.n === 1) });
  items.sort((x, y) => x.ts - y.ts);
  for (const it of items) it.row();
  return { cols, rows: items.length };
}

describe('reaggSlices', () => {
  it('gives what the code it replaced gave, on every summarised track of a real trace', async () => {
    s = await startRealServer();
    const id = await uploadDone(s);
    const list = (await (await fetch(`${s.base}/api/traces/${id}/tracks`)).json()) as TrackList;
    const tr = await s.server.ctx.engines.get(id);
    const ov = s.server.ctx.overviews.get(id, tr);
    const allUtids = list.threads.map((t) => t.utid).filter((u) => u !== 0);
    const { states, slices } = await ov.threads(allUtids);
    const cpu = await ov.cpu();
    const slice = await ov.slice();
    const res = Number(ov.res);
    const end = list.end;
    // Windows from the base resolution up, some padded past the trace, some inside it at odd offsets.
    const windows: Window[] = [];
    for (const mult of [1, 2, 3, 16, 64, 1024])
      for (const [a, b] of [
        [0, end + 1],
        [-end / 2, end * 1.5],
        [end / 3, end / 3 + (end / 7) * 2],
        [end * 0.9, end],
      ] as const) {
        const t0 = Math.floor(a);
        const t1 = Math.ceil(Math.max(b, t0 + res * mult));
        const px = Math.max(1, Math.floor((t1 - t0) / (res * mult)));
        windows.push({ t0: BigInt(t0), t1: BigInt(t1), px });
      }
    let rows = 0;
    for (const w of windows) {
      for (const m of [states]) for (const r of m.values()) rows += check(r, w, ['state']);
      for (const r of slices.values())
        rows += check(r, w, ['name', 'category', 'depth', 'begin_id', 'end_id'], 'depth');
      for (const r of cpu.values()) rows += check(r, w, ['utid']);
      for (const r of slice.values()) rows += check(r, w, ['name', 'utid', 'depth', 'begin_id', 'end_id']);
    }
    // Not a vacuous comparison: the tracks have rows in the windows.
    expect(rows).toBeGreaterThan(10_000);
  });
});

function check(
  r: Record<string, Array<number | string | null>>,
  w: Window,
  payload: string[],
  groupCol?: string,
): number {
  const got = reaggSlices(r, w, payload, groupCol);
  expect(JSON.stringify(got)).toBe(JSON.stringify(referenceReagg(r, w, payload, groupCol)));
  return got.rows;
}
