/**
 * Note write latency under concurrent clients (issue 27): a real server
 * (in this process, rate limits lifted) on a temporary data directory with
 * fixtures/reclaim_kswapd.v7.dat, CLIENTS clients each POSTing NOTES/CLIENTS
 * notes one after another over HTTP. Prints p50/p95/max latency and the
 * load average. Run it from another checkout to compare stores.
 *
 *   npx tsx bench/notes_writes.ts [NOTES=1000] [CLIENTS=20]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createServer } from '../server/api/create_server.ts';
import type { LibraryLike } from '../server/api/library_contract.ts';
import { TraceLibrary } from '../server/ingest/library.ts';

const NOTES = Number(process.argv[2] ?? 1000);
const CLIENTS = Number(process.argv[3] ?? 20);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-notes-bench-'));
const library = await TraceLibrary.open(dataDir);
const trace = (
  await library.ingest(path.resolve(import.meta.dirname, '../fixtures/reclaim_kswapd.v7.dat'), { name: 'r.dat' })
).id;
const server = await createServer({
  library: library as unknown as LibraryLike,
  port: 0,
  appDir: path.join(dataDir, 'no-app'),
  rateLimits: { writes: { burst: 1e9, perSecond: 1e9 }, reads: { burst: 1e9, perSecond: 1e9 } },
});
const base = server.url.replace(/\/$/, '');
const latencies: number[] = [];
const load0 = os.loadavg()[0]!;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: CLIENTS }, async (_, c) => {
    for (let i = 0; i < NOTES / CLIENTS; i++) {
      const start = performance.now();
      const r = await fetch(`${base}/api/traces/${trace}/notes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          anchor: { kind: 'range', t0: i * 1000, t1: i * 1000 + 10 },
          text: `client ${c} note ${i}: ${'kswapd keeps scanning '.repeat(8)}`,
          author: `client${c}`,
        }),
      });
      if (r.status !== 201) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
      latencies.push(performance.now() - start);
    }
  }),
);
const wall = performance.now() - t0;
latencies.sort((a, b) => a - b);
const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
const files = fs
  .readdirSync(path.join(dataDir, 'notes'))
  .map((n) => `${n} ${fs.statSync(path.join(dataDir, 'notes', n)).size} B`);
console.log(
  JSON.stringify({
    notes: latencies.length,
    clients: CLIENTS,
    p50_ms: +q(0.5).toFixed(1),
    p95_ms: +q(0.95).toFixed(1),
    max_ms: +q(1).toFixed(1),
    wall_s: +(wall / 1000).toFixed(2),
    load_before: +load0.toFixed(2),
    load_after: +os.loadavg()[0]!.toFixed(2),
    files,
  }),
);
await server.close();
await library.close();
fs.rmSync(dataDir, { recursive: true, force: true });
