/**
 * The first view's caches kept beside a model (<traceDir>/overview/: trace
 * meta, track list, findings answer, overview parts) answer exactly what a
 * server without them computes, survive a restart (a new API on the same data
 * directory reads them instead of scanning), and are rebuilt when damaged.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceLibrary } from '../ingest/library.ts';
import { buildApi } from './create_server.ts';
import type { LibraryLike } from './library_contract.ts';

const K4X = path.resolve(__dirname, '../../fixtures/handmade/kernel4x_kswapd_escalation.txt');

let dataDir: string;
let library: TraceLibrary;
let id: string;
const apps: Array<{ close(): Promise<unknown> }> = [];

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-ovcache-'));
  library = await TraceLibrary.open(dataDir);
  id = (await library.ingest(K4X)).id;
}, 60_000);

afterAll(async () => {
  for (const a of apps) await a.close();
  await library?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A fresh API (as after a restart); `cached: false` hides the data directory, so nothing is kept. */
async function api(cached: boolean) {
  const lib = cached
    ? library
    : new Proxy(library, {
        get: (t, k) => {
          if (k === 'paths') return undefined;
          const v = Reflect.get(t, k, t);
          return typeof v === 'function' ? v.bind(t) : v;
        },
      });
  const { app, ctx } = await buildApi({ library: lib as unknown as LibraryLike, appDir: path.join(dataDir, 'no-app') });
  apps.push(app);
  return { app, ctx };
}

/** Zoomed-out answers of every kind the overview serves, plus the list and findings. */
async function answers(app: Awaited<ReturnType<typeof api>>['app']): Promise<Record<string, string>> {
  const list = (await app.inject({ url: `/api/traces/${id}/tracks` })).json() as {
    end: number;
    cpus: Array<{ cpu: number }>;
    threadsOfInterest: Array<{ utid: number }>;
    counters: Array<{ id: number }>;
    sliceCategories: Array<{ category: string }>;
    instants: unknown[];
  };
  const w = `t0=0&t1=${list.end + 1}&px=300`;
  const urls = [
    `/api/traces/${id}/tracks`,
    `/api/traces/${id}/findings`,
    `/api/traces/${id}/tracks/cpu?${w}&cpu=${list.cpus.map((c) => c.cpu).join(',')}`,
    `/api/traces/${id}/tracks/thread?${w}&utid=${list.threadsOfInterest.map((t) => t.utid).join(',')}`,
    `/api/traces/${id}/tracks/counter?${w}&track=${list.counters.map((c) => c.id).join(',')}`,
    `/api/traces/${id}/tracks/slice?${w}&category=${list.sliceCategories.map((c) => c.category).join(',')}`,
  ];
  expect(list.threadsOfInterest.length).toBeGreaterThan(0);
  expect(list.counters.length).toBeGreaterThan(0);
  const out: Record<string, string> = {};
  for (const u of urls) {
    const r = await app.inject({ url: u });
    expect(r.statusCode, u).toBe(200);
    out[u] = r.body;
  }
  return out;
}

const overviewDir = () => path.join(dataDir, 'traces', id, 'overview');
const files = (dir: string): string[] =>
  fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.relative(dir, path.join(d.parentPath, d.name)))
    .sort();

describe('first-view caches beside the model', () => {
  it('answers the same with and without them, and after a restart from them', async () => {
    const plain = await answers((await api(false)).app);
    expect(fs.existsSync(overviewDir())).toBe(false); // nothing kept without a data directory

    const first = await api(true);
    await import('./routes/tracks.ts').then((m) => m.warmTrace(first.ctx, id));
    expect(await answers(first.app)).toEqual(plain);
    await new Promise((r) => setTimeout(r, 200)); // writes are not awaited by requests
    const kept = files(overviewDir());
    expect(kept).toEqual(expect.arrayContaining(['findings-v2.json', 'meta-v1.json', 'tracks-v2.json']));
    expect(kept.some((f) => /^v\d+-res\d+\/cpu\.bin$/.test(f))).toBe(true);
    expect(kept.some((f) => /^v\d+-res\d+\/state-\d+\.bin$/.test(f))).toBe(true);

    // A restart: a new API reads what was kept; the overview parts are served without a scan.
    const second = await api(true);
    const ov = second.ctx.overviews.get(id, await second.ctx.engines.get(id));
    expect(ov.isReady('cpu')).toBe(false);
    expect(ov.isReadySoon('cpu')).toBe(true);
    expect(await answers(second.app)).toEqual(plain);
  });

  it('rebuilds damaged or truncated parts instead of serving them', async () => {
    const dir = overviewDir();
    for (const f of files(dir).filter((x) => x.endsWith('.bin'))) {
      const p = path.join(dir, f);
      fs.writeFileSync(p, fs.readFileSync(p).subarray(0, 10));
    }
    fs.writeFileSync(path.join(dir, 'tracks-v2.json'), '{"start":');
    const plain = await answers((await api(false)).app);
    expect(await answers((await api(true)).app)).toEqual(plain);
  });

  it('holds part writes back until released (an upload first view), then keeps the same parts', async () => {
    const dir = overviewDir();
    await new Promise((r) => setTimeout(r, 300)); // the previous test's rebuilt parts land on disk first
    for (const f of files(dir).filter((x) => x.endsWith('.bin'))) fs.rmSync(path.join(dir, f));
    const plain = await answers((await api(false)).app);
    const { ctx } = await api(true);
    const tr = await ctx.engines.get(id);
    const ov = ctx.overviews.get(id, tr);
    ov.holdWrites();
    const list = (await import('./routes/tracks.ts').then((m) => m.trackList(ctx, id, tr))).threadsOfInterest;
    await Promise.all([ov.cpu(), ov.slice(), ov.counter(), ov.threads(list.map((t) => t.utid))]);
    await new Promise((r) => setTimeout(r, 200));
    expect(files(dir).filter((x) => x.endsWith('.bin'))).toEqual([]);
    ov.releaseWrites();
    await new Promise((r) => setTimeout(r, 300));
    const bins = files(dir).filter((x) => x.endsWith('.bin'));
    expect(bins.some((f) => /\/cpu\.bin$/.test(f))).toBe(true);
    expect(bins.filter((f) => /\/state-\d+\.bin$/.test(f))).toHaveLength(list.length);
    // after a restart the kept parts answer as a server without them
    expect(await answers((await api(true)).app)).toEqual(plain);
  });

  it('drops from memory only the overviews whose parts are all on disk, and answers the same after', async () => {
    const plain = await answers((await api(false)).app);
    const { app, ctx } = await api(true);
    const tr = await ctx.engines.get(id);
    const ov = ctx.overviews.get(id, tr);
    ov.holdWrites();
    await ov.cpu();
    // parts held back from disk (an upload first view): the overview may be the only place they are kept
    expect(ov.keptOnDisk).toBe(false);
    expect(ctx.overviews.dropKeptOnDisk()).toBe(0);
    expect(ctx.overviews.bytes).toBeGreaterThan(0);
    ov.releaseWrites();
    const building = ov.slice();
    // a part under way is not on disk yet either
    expect(ov.keptOnDisk).toBe(false);
    await building;
    await new Promise((r) => setTimeout(r, 300)); // the released writes land
    expect(ov.keptOnDisk).toBe(true);
    expect(ctx.overviews.dropKeptOnDisk()).toBe(1);
    expect(ctx.overviews.bytes).toBe(0);
    // the next view gets a new overview, its parts read back from the files
    const again = ctx.overviews.get(id, tr);
    expect(again).not.toBe(ov);
    expect(again.isReady('cpu')).toBe(false);
    expect(again.isReadySoon('cpu')).toBe(true);
    expect(await answers(app)).toEqual(plain);
  });
});
