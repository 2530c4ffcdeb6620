/**
 * The query page's results table and the event list, in Chromium against a
 * running server (bench/run.ts `--only query` serves the 10M-event model):
 *
 *   - a 100,000-row result: time until its rows show, then frame intervals
 *     while wheel-scrolling it and while jumping its scrollbar around;
 *   - the event list of the whole trace (every event): time until the first
 *     rows show, frame intervals while wheel-scrolling, and after each jump
 *     to a random place, the time until the rows in view are filled.
 *
 * Frame intervals are requestAnimationFrame timestamps in the page (as
 * bench/ui_bench.ts measures the timeline); smooth is a p95 under 33 ms.
 *
 *   npx tsx bench/query_ui_bench.ts --url http://127.0.0.1:7420 --trace <sha256>
 */
import { chromium, type Page } from '@playwright/test';

export interface FrameStats {
  frames: number;
  medianMs: number;
  p95Ms: number;
  maxMs: number;
}

export interface QueryUiBenchResult {
  results: { rows: number; shownMs: number; wheel: FrameStats; jumps: FrameStats };
  eventList: {
    rows: number;
    firstRowsMs: number;
    wheel: FrameStats;
    jumpFilledMs: { medianMs: number; p95Ms: number; maxMs: number };
  };
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

const round = (x: number) => Math.round(x * 10) / 10;

function stats(xs: number[]): FrameStats {
  if (!xs.length) return { frames: 0, medianMs: NaN, p95Ms: NaN, maxMs: NaN };
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return { frames: s.length, medianMs: round(q(0.5)), p95Ms: round(q(0.95)), maxMs: round(s[s.length - 1]!) };
}

/** Frame intervals (ms) while `action` runs. */
async function measure(page: Page, action: () => Promise<void>): Promise<number[]> {
  // A string, not a function: tsx would wrap a named closure in a helper the page lacks.
  await page.evaluate(`(() => {
    window.__qbench = { stamps: [], run: true };
    function loop(t) { if (!window.__qbench.run) return; window.__qbench.stamps.push(t); requestAnimationFrame(loop); }
    requestAnimationFrame(loop);
  })()`);
  await action();
  const stamps = (await page.evaluate(
    '(() => { window.__qbench.run = false; return window.__qbench.stamps; })()',
  )) as number[];
  const out: number[] = [];
  for (let i = 1; i < stamps.length; i++) out.push(stamps[i]! - stamps[i - 1]!);
  return out;
}

/** Positions in [0, 1) for scrollbar jumps (deterministic). */
function jumps(n: number): number[] {
  const out: number[] = [];
  let x = 7;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out.push(x / 2 ** 32);
  }
  return out;
}

export async function runQueryUiBench(opts: {
  baseUrl: string;
  traceId: string;
  executablePath?: string;
}): Promise<QueryUiBenchResult> {
  const browser = await chromium.launch({
    executablePath: opts.executablePath ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    await page.goto(`${opts.baseUrl.replace(/\/$/, '')}/?trace=${opts.traceId}`);
    await page.locator('[data-testid="timeline"][data-painted="true"]').waitFor({ timeout: 180_000 });

    // ---- a 100k-row result
    await page.getByTestId('tab-query').click();
    await page.locator('[data-testid="sql-editor"][data-schema="ready"]').waitFor({ timeout: 120_000 });
    await page.locator('.cm-content').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText('SELECT id, ts, cpu, utid, name, source_where FROM ftrace_event LIMIT 100000');
    const t0 = performance.now();
    await page.keyboard.press('Control+Enter');
    // 100,000 rows on a model that has them (the 10M-event bench model does).
    await page.getByTestId('query-row').first().waitFor({ timeout: 120_000 });
    const shownMs = performance.now() - t0;
    const res = page.getByTestId('query-results');
    const resultRows = Number(await res.getAttribute('data-rows'));
    const rb = (await res.boundingBox())!;
    await page.mouse.move(rb.x + rb.width / 2, rb.y + rb.height / 2);
    const wheel = await measure(page, async () => {
      for (let i = 0; i < 60; i++) {
        await page.mouse.wheel(0, 600);
        await page.waitForTimeout(16);
      }
    });
    const jumpFrames = await measure(page, async () => {
      for (const f of jumps(20)) {
        await res.evaluate((el, f) => {
          el.scrollTop = f * (el.scrollHeight - el.clientHeight);
        }, f);
        await page.waitForTimeout(50);
      }
    });

    // ---- the event list of the whole trace
    await page.getByTestId('zoom-fit').click();
    const e0 = performance.now();
    await page.getByTestId('tab-events').click();
    await page.locator('[data-testid="event-count"]:not([data-total=""])').waitFor({ timeout: 180_000 });
    await page.locator('[data-testid="event-row"][data-index="0"]:not([data-id=""])').waitFor({ timeout: 180_000 });
    const firstRowsMs = performance.now() - e0;
    const rows = Number(await page.getByTestId('event-count').getAttribute('data-total'));
    const list = page.locator('.event-rows');
    const lb = (await list.boundingBox())!;
    await page.mouse.move(lb.x + lb.width / 2, lb.y + lb.height / 2);
    const listWheel = await measure(page, async () => {
      for (let i = 0; i < 60; i++) {
        await page.mouse.wheel(0, 600);
        await page.waitForTimeout(16);
      }
    });
    const filled: number[] = [];
    for (const f of jumps(15)) {
      await list.evaluate((el, f) => {
        el.scrollTop = f * (el.scrollHeight - el.clientHeight);
      }, f);
      const s = performance.now();
      // Filled: every row in view has its event (no "…" placeholder).
      await page.waitForFunction(
        () => {
          const el = document.querySelector('.event-rows');
          if (!el) return false;
          const box = el.getBoundingClientRect();
          const rowsInView = [...el.querySelectorAll('[data-testid="event-row"]')].filter((r) => {
            const b = r.getBoundingClientRect();
            return b.bottom > box.top + 20 && b.top < box.bottom;
          });
          return rowsInView.length > 0 && rowsInView.every((r) => r.getAttribute('data-id') !== '');
        },
        undefined,
        { timeout: 60_000, polling: 10 },
      );
      filled.push(performance.now() - s);
    }
    const fs = stats(filled);
    return {
      results: { rows: resultRows, shownMs: round(shownMs), wheel: stats(wheel), jumps: stats(jumpFrames) },
      eventList: {
        rows,
        firstRowsMs: round(firstRowsMs),
        wheel: stats(listWheel),
        jumpFilledMs: { medianMs: fs.medianMs, p95Ms: fs.p95Ms, maxMs: fs.maxMs },
      },
    };
  } finally {
    await browser.close();
  }
}

export function formatQueryUiBench(r: QueryUiBenchResult): string {
  const f = (s: FrameStats) => `median ${s.medianMs} / p95 ${s.p95Ms} / max ${s.maxMs} ms over ${s.frames} frames`;
  return [
    `results table, ${r.results.rows.toLocaleString('en-US')} rows: shown ${r.results.shownMs} ms after Ctrl+Enter; wheel-scrolling frames ${f(r.results.wheel)} (smooth: p95 < 33 ms: ${r.results.wheel.p95Ms < 33 ? 'MET' : 'NOT MET'}); scrollbar jumps frames ${f(r.results.jumps)}`,
    `event list, ${r.eventList.rows.toLocaleString('en-US')} rows (whole trace): first rows ${r.eventList.firstRowsMs} ms; wheel-scrolling frames ${f(r.eventList.wheel)} (p95 < 33 ms: ${r.eventList.wheel.p95Ms < 33 ? 'MET' : 'NOT MET'}); after a scrollbar jump, rows filled in median ${r.eventList.jumpFilledMs.medianMs} / p95 ${r.eventList.jumpFilledMs.p95Ms} ms`,
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (k: string) => {
    const i = process.argv.indexOf(k);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const url = arg('--url');
  const trace = arg('--trace');
  if (!url || !trace)
    throw new Error('usage: npx tsx bench/query_ui_bench.ts --url http://127.0.0.1:7420 --trace <sha256>');
  process.stdout.write(formatQueryUiBench(await runQueryUiBench({ baseUrl: url, traceId: trace })));
}
