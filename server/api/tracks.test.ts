/**
 * Every track kind the app draws answers with columns, zoomed out (served
 * from the per-trace overview once it is built) and zoomed in (table scans),
 * on a real ingested trace: the hand-made 4.x excerpt, whose events are
 * listed in fixtures/handmade/README.md (3 kswapd writepage lines 25-27).
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
let app: Awaited<ReturnType<typeof buildApi>>['app'];
let id: string;
let start: number;
let end: number;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-tracks-'));
  library = await TraceLibrary.open(dataDir);
  id = (await library.ingest(K4X)).id;
  ({ app } = await buildApi({ library: library as unknown as LibraryLike, appDir: path.join(dataDir, 'no-app') }));
  const list = (await app.inject({ url: `/api/traces/${id}/tracks` })).json() as { start: number; end: number };
  ({ start, end } = list);
}, 60_000);

afterAll(async () => {
  await app?.close();
  await library?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function track(kind: string, params: string, t0: number, t1: number, px = 800) {
  const r = await app.inject({ url: `/api/traces/${id}/tracks/${kind}?${params}&t0=${t0}&t1=${t1}&px=${px}` });
  expect(r.statusCode).toBe(200);
  return r.json() as { rows: number; cols: Record<string, unknown[]> };
}

describe('track data on a real trace', () => {
  it('lists the tracks the trace has', async () => {
    const list = (await app.inject({ url: `/api/traces/${id}/tracks` })).json() as {
      cpus: { cpu: number }[];
      instants: { name: string; count: number }[];
      sliceCategories: { category: string }[];
    };
    expect(list.cpus.length).toBeGreaterThan(0);
    expect(list.instants).toEqual([{ name: 'writepage', count: 3 }]);
    expect(list.sliceCategories.map((c) => c.category)).toContain('shrinker');
  });

  // Twice: the first answers come from table scans while the overview is
  // built behind them; the second (a few pixels wide, so each pixel spans
  // more than the overview's resolution; another px so no cached answer)
  // from the overview.
  for (const [round, px] of [
    ['first', 4],
    ['second', 5],
  ] as const) {
    it(`writepage markers, whole trace and zoomed in (${round} round)`, async () => {
      if (round === 'second') await new Promise((r) => setTimeout(r, 500));
      const whole = await track('instant', 'name=writepage', 0, end - start, px);
      expect(whole.cols.n!.reduce((a, b) => (a as number) + (b as number), 0)).toBe(3);
      const zoomed = await track('instant', 'name=writepage', 0, (end - start) / 1000);
      expect(zoomed.cols.n).toBeDefined();
    });

    it(`cpu, slice and counter tracks answer with columns (${round} round)`, async () => {
      for (const [kind, params] of [
        ['cpu', 'cpu=1'],
        ['slice', 'category=shrinker'],
      ] as const) {
        const d = await track(kind, params, 0, end - start, px);
        expect(d.cols, `${kind} ${params}`).toBeDefined();
        expect(Object.keys(d.cols).length).toBeGreaterThan(0);
      }
    });
  }
});
