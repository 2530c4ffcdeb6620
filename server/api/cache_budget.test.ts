/**
 * Issue 27, hole 7: the server's caches are bounded in bytes (byte_lru.ts,
 * DEFAULT_CACHE_BUDGETS), not in entries. 450 distinct track windows of a
 * few MB each used to stay in memory (400 entries, whatever their size).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ByteLru } from './byte_lru.ts';
import { DEFAULT_CACHE_BUDGETS } from './create_server.ts';
import {
  FIXTURES,
  freePort,
  sha256,
  startRealServer,
  until,
  type RealServer,
} from '../../tests/support/api/test_server.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const cleanup: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const c of cleanup.splice(0)) await c();
});

describe('ByteLru', () => {
  it('keeps the most recently used entries within its budget in bytes, and nothing bigger than the budget', () => {
    const evicted: string[] = [];
    const c = new ByteLru<string, string>(100, (k) => evicted.push(k));
    c.set('a', 'A', 40);
    c.set('b', 'B', 40);
    expect(c.get('a')).toBe('A'); // a is now the most recent
    c.set('c', 'C', 40); // 120 > 100: b (least recent) goes
    expect(evicted).toEqual(['b']);
    expect([c.has('a'), c.has('b'), c.has('c')]).toEqual([true, false, true]);
    expect(c.bytes).toBe(80);
    c.set('huge', 'H', 101);
    expect(c.has('huge')).toBe(false);
    expect(c.bytes).toBe(80);
    c.get('c');
    c.resize('a', 90); // a grew past the budget with c: a, the least recent, goes
    expect([c.has('a'), c.has('c')]).toEqual([false, true]);
    expect(c.bytes).toBe(40);
  });

  it('a lower budget evicts the least recently used at once; a higher one keeps what is left', () => {
    const evicted: string[] = [];
    const c = new ByteLru<string, string>(100, (k) => evicted.push(k));
    c.set('a', 'A', 30);
    c.set('b', 'B', 30);
    c.set('c', 'C', 30);
    c.get('a'); // order now b, c, a
    c.setBudget(50); // 90 > 50: b then c go
    expect(evicted).toEqual(['b', 'c']);
    expect([c.bytes, c.maxBytes]).toEqual([30, 50]);
    c.set('d', 'D', 40); // 70 > 50: a goes
    expect(evicted).toEqual(['b', 'c', 'a']);
    c.setBudget(100);
    c.set('e', 'E', 50);
    expect([c.has('d'), c.has('e'), c.bytes]).toEqual([true, true, 90]);
  });
});

describe('caches of a real server', () => {
  it('track answers, overviews and findings answers stay within their budgets over many distinct requests', async () => {
    const budgets = { trackAnswers: 256 << 10, overviews: 64 << 10, findingsAnswers: 8 << 10 };
    const s: RealServer = await startRealServer(undefined, { cacheBudgets: budgets });
    cleanup.push(async () => {
      await s.close();
      fs.rmSync(s.dataDir, { recursive: true, force: true });
    });
    const ids: string[] = [];
    for (const f of ['reclaim_kswapd.v7.dat', 'fsync_xfs.v7.dat', 'memcg_reclaim.v7.dat']) {
      const rec = await s.library.ingest(path.join(FIXTURES, f), { name: f });
      ids.push(rec.id);
    }
    const ctx = s.server.ctx;
    let answered = 0;
    for (const id of ids) {
      expect((await fetch(`${s.base}/api/traces/${id}/findings`)).status).toBe(200);
      expect(ctx.caches.findingsAnswers.bytes).toBeLessThanOrEqual(budgets.findingsAnswers);
      for (let i = 0; i < 60; i++) {
        const r = await fetch(
          `${s.base}/api/traces/${id}/tracks/cpu?cpu=0,1&t0=0&t1=${2_000_000_000 + i}&px=${2000 + i}`,
        );
        expect(r.status).toBe(200);
        answered += (await r.text()).length;
        expect(ctx.caches.trackAnswers.bytes).toBeLessThanOrEqual(budgets.trackAnswers);
        expect(ctx.overviews.bytes).toBeLessThanOrEqual(budgets.overviews);
      }
    }
    // Far more was answered than kept, and what is kept is the most recent.
    expect(answered).toBeGreaterThan(4 * budgets.trackAnswers);
    expect(ctx.caches.trackAnswers.bytes).toBeGreaterThan(0);
    const last = `${ids[2]}|/tracks/cpu?cpu=0,1&t0=0&t1=${2_000_000_000 + 59}&px=${2000 + 59}`;
    expect(ctx.caches.trackAnswers.peek(last)).toBeDefined();
    // Answers from the cache are the same as fresh ones.
    const again = await (
      await fetch(`${s.base}/api/traces/${ids[2]}/tracks/cpu?cpu=0,1&t0=0&t1=${2_000_000_000 + 59}&px=${2000 + 59}`)
    ).text();
    expect(again).toBe(ctx.caches.trackAnswers.peek(last));
  }, 180_000);

  it(`the issue's case in a server process: many distinct 2 MB track windows keep at most the budget (${DEFAULT_CACHE_BUDGETS.trackAnswers >> 20} MiB) alive`, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-cache-'));
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        path.join(import.meta.dirname, 'test_heap_probe.mjs'),
        path.join(ROOT, 'bin/stallscope.mjs'),
        'serve',
        '--port',
        String(port),
        '--data-dir',
        dataDir,
      ],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    cleanup.push(() => {
      child.kill();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    await until('the server to start', () => /is running at/.test(out), 60_000);
    const base = `http://127.0.0.1:${port}`;
    const file = path.join(FIXTURES, 'fsync_xfs.full.v7.dat');
    const up = await fetch(`${base}/api/traces?name=x.dat`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: fs.readFileSync(file),
    });
    const { jobId } = (await up.json()) as { jobId: string };
    await until(
      'the ingest',
      async () => ((await (await fetch(`${base}/api/jobs/${jobId}`)).json()) as { phase: string }).phase === 'done',
      120_000,
    );
    const id = sha256(file);
    const liveHeapMB = async () => {
      const before = out.length;
      child.kill('SIGUSR2');
      await until('the heap probe', () => /LIVE_HEAP_KB=\d+/.test(out.slice(before)), 10_000);
      return Number(/LIVE_HEAP_KB=(\d+)/.exec(out.slice(before))![1]) / 1024;
    };
    const utids = Array.from({ length: 200 }, (_, i) => i + 1).join(',');
    const window = (i: number) =>
      `${base}/api/traces/${id}/tracks/thread?utid=${utids}&t0=0&t1=${2_000_000_000 + i}&px=20000`;
    expect((await (await fetch(window(0))).text()).length).toBeGreaterThan(1_000_000); // each answer is MBs
    const baseline = await liveHeapMB();
    let bytes = 0;
    for (let i = 1; i <= 120; i++) bytes += (await (await fetch(window(i))).text()).length;
    const after = await liveHeapMB();
    console.log(
      `live heap ${baseline.toFixed(0)} MB before, ${after.toFixed(0)} MB after ${(bytes / 2 ** 20).toFixed(0)} MB of answers`,
    );
    expect(bytes).toBeGreaterThan(150 << 20); // far more than the budget went out
    expect(after - baseline).toBeLessThan((DEFAULT_CACHE_BUDGETS.trackAnswers >> 20) + 40);
  }, 300_000);
});
