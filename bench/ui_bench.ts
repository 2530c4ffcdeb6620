/**
 * UI benchmark, driven by Playwright in Chromium against a running server:
 *
 *  - first paint: ms from navigation start to the first timeline frame in
 *    which every visible track has its data (the app sets
 *    window.__stallscope.firstPaintMs and data-painted on the timeline);
 *  - frame times while zooming (W/S held, Ctrl+wheel) and panning (A/D held,
 *    mouse drag): intervals between requestAnimationFrame timestamps collected
 *    in the page, median and p95 per interaction.
 *
 * Targets (issue 4): first timeline < 2 s after ingest; p95 frame < 33 ms.
 *
 *   import { runUiBench } from './ui_bench.ts';
 *   const r = await runUiBench({ baseUrl: 'http://127.0.0.1:7420', traceId });
 *
 * or on its own: `npx tsx bench/ui_bench.ts --url http://127.0.0.1:7420 [--trace <sha256>]`
 * (without --trace: the library's trace with the most events).
 */
import { chromium, type Page } from '@playwright/test';

export interface UiBenchOptions {
  /** Server root, e.g. http://127.0.0.1:7420 */
  baseUrl: string;
  /** A ready trace (ideally >= 5M events). */
  traceId: string;
  /** How long each key is held, ms (default 1500). */
  holdMs?: number;
  viewport?: { width: number; height: number };
  /** Chromium binary (default /usr/bin/chromium). */
  executablePath?: string;
  /** Access token if the server needs one. */
  token?: string;
}

export interface FrameStats {
  frames: number;
  medianMs: number;
  p95Ms: number;
  maxMs: number;
}

export interface UiBenchResult {
  traceId: string;
  events: number | null;
  /** ms from navigation start to the first fully painted timeline. */
  firstPaintMs: number;
  /** ms from navigation start to DOMContentLoaded, for reference. */
  domContentLoadedMs: number;
  zoom: FrameStats;
  pan: FrameStats;
  /** All interaction frames together. */
  all: FrameStats;
  /** Time spent in the timeline's draw() per frame during the interactions (ms). */
  draw: FrameStats;
  /** Track data requests made during the interactions. */
  trackRequests: number;
  targets: { firstPaintUnder2s: boolean; p95Under33ms: boolean };
}

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function runUiBench(opts: UiBenchOptions): Promise<UiBenchResult> {
  const base = opts.baseUrl.replace(/\/$/, '');
  const holdMs = opts.holdMs ?? 1500;
  const browser = await chromium.launch({
    executablePath: opts.executablePath ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
  try {
    const page = await browser.newPage({ viewport: opts.viewport ?? { width: 1600, height: 1000 } });
    let trackRequests = 0;
    page.on('request', (r) => {
      if (r.url().includes('/tracks/')) trackRequests++;
    });
    const token = opts.token ? `&token=${encodeURIComponent(opts.token)}` : '';
    await page.goto(`${base}/?trace=${opts.traceId}${token}`);
    await page.locator('[data-testid="timeline"][data-painted="true"]').waitFor({ timeout: 120_000 });
    const firstPaintMs = await page.evaluate(() => window.__stallscope?.firstPaintMs ?? NaN);
    const domContentLoadedMs = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
      return nav ? nav.domContentLoadedEventEnd : NaN;
    });
    const events = await page.evaluate(async (id) => {
      const r = await fetch(`/api/traces/${id}`, {
        headers: { 'x-stallscope-token': sessionStorage.getItem('stallscope.token') ?? '' },
      });
      return r.ok ? ((await r.json()) as { eventsTotal: number }).eventsTotal : null;
    }, opts.traceId);
    trackRequests = 0;
    await page.evaluate(() => {
      if (window.__stallscope) window.__stallscope.drawMs = [];
    });

    const box = (await page.getByTestId('track-scroll').boundingBox())!;
    const cx = box.x + 220 + (box.width - 220) / 2;
    const cy = box.y + Math.min(150, box.height / 3);
    await page.mouse.move(cx, cy);

    const zoomFrames: number[] = [];
    const panFrames: number[] = [];
    // Zoom: hold W (in), then S (out), then Ctrl+wheel both ways.
    zoomFrames.push(...(await measure(page, async () => holdKey(page, 'w', holdMs))));
    zoomFrames.push(...(await measure(page, async () => holdKey(page, 's', holdMs))));
    zoomFrames.push(
      ...(await measure(page, async () => {
        await page.keyboard.down('Control');
        for (let i = 0; i < 20; i++) {
          await page.mouse.wheel(0, -120);
          await page.waitForTimeout(30);
        }
        for (let i = 0; i < 20; i++) {
          await page.mouse.wheel(0, 120);
          await page.waitForTimeout(30);
        }
        await page.keyboard.up('Control');
      })),
    );
    // Pan: zoom in a little first so there is room, then hold D, A, and drag.
    for (let i = 0; i < 3; i++) await page.keyboard.press('w');
    panFrames.push(...(await measure(page, async () => holdKey(page, 'd', holdMs))));
    panFrames.push(...(await measure(page, async () => holdKey(page, 'a', holdMs))));
    panFrames.push(
      ...(await measure(page, async () => {
        await page.mouse.move(cx, cy);
        await page.mouse.down();
        for (let i = 1; i <= 30; i++) {
          await page.mouse.move(cx - i * 12, cy);
          await page.waitForTimeout(16);
        }
        for (let i = 29; i >= -30; i--) {
          await page.mouse.move(cx - i * 12, cy);
          await page.waitForTimeout(16);
        }
        await page.mouse.up();
      })),
    );
    const zoom = stats(zoomFrames);
    const pan = stats(panFrames);
    const all = stats([...zoomFrames, ...panFrames]);
    const draw = stats(await page.evaluate(() => window.__stallscope?.drawMs ?? []));
    return {
      traceId: opts.traceId,
      events,
      firstPaintMs,
      domContentLoadedMs,
      zoom,
      pan,
      all,
      draw,
      trackRequests,
      targets: { firstPaintUnder2s: firstPaintMs < 2000, p95Under33ms: all.p95Ms < 33 },
    };
  } finally {
    await browser.close();
  }
}

async function holdKey(page: Page, key: string, ms: number): Promise<void> {
  await page.keyboard.down(key);
  await page.waitForTimeout(ms);
  await page.keyboard.up(key);
}

/** Frame intervals (ms) between requestAnimationFrame callbacks while `action` runs. */
async function measure(page: Page, action: () => Promise<void>): Promise<number[]> {
  // A string, not a function: tsx/esbuild would wrap named closures in a `__name` helper the page lacks.
  await page.evaluate(`(() => {
    window.__bench = { stamps: [], run: true };
    function loop(t) {
      if (!window.__bench.run) return;
      window.__bench.stamps.push(t);
      requestAnimationFrame(loop);
    }
    requestAnimationFrame(loop);
  })()`);
  await action();
  const stamps = await page.evaluate(() => {
    const w = window as unknown as { __bench: { stamps: number[]; run: boolean } };
    w.__bench.run = false;
    return w.__bench.stamps;
  });
  const out: number[] = [];
  for (let i = 1; i < stamps.length; i++) out.push(stamps[i]! - stamps[i - 1]!);
  return out;
}

function stats(xs: number[]): FrameStats {
  if (!xs.length) return { frames: 0, medianMs: NaN, p95Ms: NaN, maxMs: NaN };
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return { frames: s.length, medianMs: round(q(0.5)), p95Ms: round(q(0.95)), maxMs: round(s[s.length - 1]!) };
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}

/** Median of the finite values. */
function median(xs: number[]): number {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return round(s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2);
}

/**
 * Runs the bench `runs` times, each against a freshly started (cold) server
 * process on `dataDir` (opened as it is: nothing is ingested or deleted), and
 * reports every run plus the medians.
 */
export async function runColdUiBench(opts: {
  dataDir: string;
  runs: number;
  traceId?: string;
  holdMs?: number;
}): Promise<{
  runs: UiBenchResult[];
  median: {
    firstPaintMs: number;
    p95Ms: number;
    zoomP95Ms: number;
    panP95Ms: number;
    medianMs: number;
    drawP95Ms: number;
    trackRequests: number;
  };
}> {
  const { spawn } = await import('node:child_process');
  const net = await import('node:net');
  const path = await import('node:path');
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
  const runs: UiBenchResult[] = [];
  for (let i = 0; i < opts.runs; i++) {
    const port = await new Promise<number>((res) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => res(p));
      });
    });
    const child = spawn(
      process.execPath,
      [path.join(root, 'bin/stallscope.mjs'), 'serve', '--port', String(port), '--data-dir', opts.dataDir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    try {
      const end = Date.now() + 60_000;
      while (!/is running at/.test(out)) {
        if (child.exitCode !== null || Date.now() > end) throw new Error(`server did not start: ${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const baseUrl = `http://127.0.0.1:${port}`;
      const traceId = opts.traceId ?? (await largestTrace(baseUrl));
      const r = await runUiBench({ baseUrl, traceId, holdMs: opts.holdMs });
      runs.push(r);
      process.stderr.write(
        `run ${i + 1}/${opts.runs}: first paint ${r.firstPaintMs.toFixed(0)} ms, frames median ${r.all.medianMs} / p95 ${r.all.p95Ms} ms (zoom p95 ${r.zoom.p95Ms}, pan p95 ${r.pan.p95Ms}), draw p95 ${r.draw.p95Ms} ms, ${r.trackRequests} track requests\n`,
      );
    } finally {
      const gone = new Promise((r) => child.once('exit', r));
      if (child.exitCode === null) process.kill(child.pid!, 'SIGTERM');
      await gone;
    }
  }
  return {
    runs,
    median: {
      firstPaintMs: median(runs.map((r) => r.firstPaintMs)),
      p95Ms: median(runs.map((r) => r.all.p95Ms)),
      zoomP95Ms: median(runs.map((r) => r.zoom.p95Ms)),
      panP95Ms: median(runs.map((r) => r.pan.p95Ms)),
      medianMs: median(runs.map((r) => r.all.medianMs)),
      drawP95Ms: median(runs.map((r) => r.draw.p95Ms)),
      trackRequests: median(runs.map((r) => r.trackRequests)),
    },
  };
}

async function largestTrace(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/traces`);
  const { traces } = (await res.json()) as { traces: Array<{ id: string; status: string; eventsTotal: number }> };
  const ready = traces.filter((t) => t.status === 'ready').sort((a, b) => b.eventsTotal - a.eventsTotal);
  if (!ready[0]) throw new Error(`no ready trace at ${baseUrl}`);
  return ready[0].id;
}

// Run on its own:
//   npx tsx bench/ui_bench.ts --url http://127.0.0.1:7420 [--trace <sha256>]     against a running server
//   npx tsx bench/ui_bench.ts --serve bench/out/model --runs 5 [--trace <sha256>]  cold server per run, medians
if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (n: string) => {
    const i = process.argv.indexOf(n);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const serveDir = arg('--serve');
  if (serveDir) {
    const r = await runColdUiBench({ dataDir: serveDir, runs: Number(arg('--runs') ?? 5), traceId: arg('--trace') });
    console.log(
      JSON.stringify(
        process.argv.includes('--all')
          ? r
          : { median: r.median, firstPaints: r.runs.map((x) => x.firstPaintMs), p95s: r.runs.map((x) => x.all.p95Ms) },
        null,
        2,
      ),
    );
  } else {
    const baseUrl = arg('--url') ?? 'http://127.0.0.1:7420';
    const traceId = arg('--trace') ?? (await largestTrace(baseUrl));
    console.log(JSON.stringify(await runUiBench({ baseUrl, traceId }), null, 2));
  }
}
