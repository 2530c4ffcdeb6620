/**
 * The app's fleet view API (routes/fleet.ts) on a real dataset: `stallscope
 * batch` over four recordings of the compare pair (vm.vfs_cache_pressure 100
 * and 1000, two runs each), labelled config=vfs100|vfs1000, served with
 * `fleets`; one of the four is also in the server's library.
 *
 * Expected values come from `stallscope analyze --json` on each file, worked
 * here: the per-setting median of super_cache_scan's blocked time, the worst
 * traces' order (critical findings, then impact of top-level findings), which
 * trace the library holds. Only registered names are read: an unknown name,
 * or a path, is a 404.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerFleets } from '../fleet/registry.ts';
import { type RealServer, sha256, startRealServer } from '../../tests/support/api/test_server.ts';
import type { FleetListAnswer, FleetViewAnswer } from '../../shared/contract/fleet.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/compare/', import.meta.url));
const CLI = fileURLToPath(new URL('../../bin/stallscope.mjs', import.meta.url));
const FILES = ['vfs100.1.v7.dat', 'vfs100.2.v7.dat', 'vfs1000.1.v7.dat', 'vfs1000.2.v7.dat'];
const work = mkdtempSync(join(tmpdir(), 'stallscope-fleet-route-'));
const corpus = join(work, 'corpus');
const out = join(work, 'pair');
let s: RealServer;

interface Analysis {
  metrics: { metric: string; key: string | null; value: number }[];
  findings: { severity: string; impact_ns: number; parent_id: number | null }[];
}
const analyses = new Map<string, Analysis>();

function cli(args: string[]): string {
  const r = spawnSync(process.execPath, [CLI, '--data-dir', join(work, 'cli-data'), ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (r.status !== 0) throw new Error(`stallscope ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

beforeAll(async () => {
  mkdirSync(corpus);
  for (const f of FILES) symlinkSync(join(FIXTURES, f), join(corpus, f));
  writeFileSync(join(work, 'labels.csv'), `file,config\n${FILES.map((f) => `${f},${f.split('.')[0]}`).join('\n')}\n`);
  cli(['batch', corpus, '--out', out, '--labels', join(work, 'labels.csv'), '--jobs', '2']);
  for (const f of FILES)
    analyses.set(f, JSON.parse(cli(['analyze', '--json', '--no-saved', join(corpus, f)])) as Analysis);
  s = await startRealServer(join(work, 'data'), { fleets: await registerFleets([out]) });
  await s.library.ingest(join(FIXTURES, 'vfs100.1.v7.dat'), { name: 'vfs100.1.v7.dat' });
}, 300_000);

afterAll(async () => {
  await s?.close();
  rmSync(work, { recursive: true, force: true });
});

async function get<T>(p: string): Promise<{ status: number; body: T }> {
  const r = await fetch(`${s.base}${p}`);
  return { status: r.status, body: (await r.json()) as T };
}

describe('GET /api/fleet', () => {
  it('lists the registered dataset by its directory name, with its traces and labels', async () => {
    const { status, body } = await get<FleetListAnswer>('/api/fleet');
    expect(status).toBe(200);
    expect(body.datasets).toEqual([{ name: 'pair', traces: 4, failures: 0, labels: ['config'] }]);
  });
});

describe('GET /api/fleet/:name', () => {
  it('per setting: the same settings and percentiles across traces as computed from analyze --json', async () => {
    const { status, body } = await get<FleetViewAnswer>('/api/fleet/pair?by=config&baseline=vfs100');
    expect(status).toBe(200);
    expect(body.by).toBe('config');
    expect(body.report.settings.map((x) => [x.value, x.traces.length])).toEqual([
      ['vfs100', 2],
      ['vfs1000', 2],
    ]);
    for (const setting of ['vfs100', 'vfs1000']) {
      const values = FILES.filter((f) => f.startsWith(`${setting}.`)).map(
        (f) =>
          analyses.get(f)!.metrics.find((m) => m.metric === 'shrinker.blocked_ns' && m.key === 'super_cache_scan')
            ?.value ?? 0,
      );
      expect(Math.max(...values)).toBeGreaterThan(0);
      const p = body.report.percentiles.find(
        (x) => x.setting === setting && x.metric === 'shrinker.blocked_ns' && x.key === 'super_cache_scan',
      );
      expect(p?.p50).toBeCloseTo((values[0]! + values[1]!) / 2, 6); // the median of two values
      expect(p?.traces).toBe(2);
    }
    // The comparison: baseline first, one row per metric, as compare's JSON.
    expect(body.report.compare.sides.map((x) => x.label)).toEqual(['vfs100', 'vfs1000']);
    const row = body.report.compare.rows.find(
      (r) => r.metric === 'shrinker.blocked_ns' && r.key === 'super_cache_scan',
    )!;
    const mean = (setting: string) =>
      FILES.filter((f) => f.startsWith(`${setting}.`))
        .map(
          (f) =>
            analyses.get(f)!.metrics.find((m) => m.metric === 'shrinker.blocked_ns' && m.key === 'super_cache_scan')
              ?.value ?? 0,
        )
        .reduce((a, b) => a + b, 0) / 2;
    expect(row.sides[0]!.mean).toBeCloseTo(mean('vfs100'), 3);
    expect(row.sides[1]!.mean).toBeCloseTo(mean('vfs1000'), 3);
  });

  it("the worst traces in fleet-report's order, each saying whether the library holds it and naming its file", async () => {
    const { body } = await get<FleetViewAnswer>('/api/fleet/pair?by=config');
    const expected = FILES.map((f) => {
      const top = analyses.get(f)!.findings.filter((x) => x.parent_id === null);
      return {
        file: join(corpus, f),
        critical: top.filter((x) => x.severity === 'critical').length,
        impact: top.reduce((a, x) => a + x.impact_ns, 0),
        id: sha256(join(FIXTURES, f)),
      };
    }).sort((a, b) => b.critical - a.critical || b.impact - a.impact || (a.file < b.file ? -1 : 1));
    expect(body.worst_traces.map((w) => [w.file, w.trace_id, w.critical, w.impact_ns])).toEqual(
      expected.map((e) => [e.file, e.id, e.critical, e.impact]),
    );
    const inLib = sha256(join(FIXTURES, 'vfs100.1.v7.dat'));
    for (const w of body.worst_traces) expect(w.in_library, w.file).toBe(w.trace_id === inLib);
    expect(JSON.parse(body.worst_traces[0]!.labels)).toHaveProperty('config');
  });

  it('reads only registered datasets: an unknown name or a path is a 404; an unknown label a 400', async () => {
    expect((await get('/api/fleet/nope')).status).toBe(404);
    expect((await fetch(`${s.base}/api/fleet/${encodeURIComponent(out)}`)).status).toBe(404);
    expect((await fetch(`${s.base}/api/fleet/..%2F..%2Ftmp`)).status).toBe(404);
    expect((await get('/api/fleet/pair?by=kernel')).status).toBe(400);
    expect((await get('/api/fleet/pair?by=config&baseline=vfs5')).status).toBe(400);
  });
});
