/**
 * Looking past the findings (issue 30), in Chromium on a real recording
 * (fixtures/reclaim_kswapd.v7.dat), on a server of the spec's own (saving a
 * detector changes every trace's findings: the shared server's other specs
 * must not see it). Expected values come from `trace-cmd report -t -N` of
 * the same file (tests/query/report_text.ts), never from stallscope:
 *   type a query and see its rows; show it as a track and find it drawn;
 *   click a row and the timeline moves there; save it as a detector and see
 *   its findings; filter the event list and follow a row; a timeline
 *   selection scrolls the list; search a worker thread that had no track,
 *   add it and see its states; shift+drag a range over a shrinker call and
 *   read kswapd's thread-state breakdown; the range survives a reload.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { SCREENSHOTS, visibleWindow } from './helpers.ts';
import { ServerProcess, freePort } from './server_process.ts';
import { reportEvents, shrinkerCalls, threadStateTimes, type ReportEvent } from '../query/report_text.ts';

const FIXTURE = 'fixtures/reclaim_kswapd.v7.dat';

test.describe.configure({ mode: 'serial' });

let server: ServerProcess;
let trace: string;
let events: ReportEvent[];
let base: bigint;
let last: bigint;
const rel = (ns: bigint) => Number(ns - base);

async function shot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

test.beforeAll(async () => {
  server = new ServerProcess(await freePort());
  await server.start();
  const r = await fetch(`${server.base}/api/traces?name=${encodeURIComponent(basename(FIXTURE))}`, {
    method: 'POST',
    body: readFileSync(FIXTURE),
    headers: { 'content-type': 'application/octet-stream' },
  });
  const { jobId } = (await r.json()) as { jobId: string };
  for (let i = 0; ; i++) {
    const s = (await (await fetch(`${server.base}/api/jobs/${jobId}`)).json()) as {
      phase: string;
      traceId?: string;
      error?: string;
    };
    if (s.phase === 'done') {
      trace = s.traceId!;
      break;
    }
    if (s.phase === 'failed' || i > 600) throw new Error(`ingest failed: ${s.error}`);
    await new Promise((res) => setTimeout(res, 250));
  }
  events = reportEvents(FIXTURE);
  base = events.reduce((m, e) => (e.ts < m ? e.ts : m), events[0]!.ts);
  last = events.reduce((m, e) => (e.ts > m ? e.ts : m), events[0]!.ts);
});

test.afterAll(async () => {
  await server?.dispose();
});

async function openTrace(page: Page, query = '') {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${server.base}/?trace=${trace}${query}`);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  return errors;
}

/** Types SQL into the editor (replacing what is there) and runs it with Ctrl+Enter. */
async function runQuery(page: Page, sql: string) {
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(sql);
  await page.keyboard.press('Control+Enter');
  await expect(page.getByTestId('query-status')).toHaveAttribute('data-state', /done|error/, { timeout: 30_000 });
}

/** x (page px) of a timeline time on the scrolling tracks' canvas. */
async function xOf(page: Page, ts: number): Promise<number> {
  const w = await visibleWindow(page);
  const c = (await page.locator('.track-canvas.sticky').boundingBox())!;
  return c.x + ((ts - w.t0) / (w.t1 - w.t0)) * c.width;
}

/** The colour drawn at a page point of a canvas (r, g, b). */
async function pixel(page: Page, selector: string, x: number, y: number): Promise<[number, number, number]> {
  return page.evaluate(
    ({ selector, x, y }) => {
      const c = document.querySelector(selector) as HTMLCanvasElement;
      const r = c.getBoundingClientRect();
      const k = c.width / r.width;
      const d = c.getContext('2d')!.getImageData(Math.round((x - r.left) * k), Math.round((y - r.top) * k), 1, 1).data;
      return [d[0]!, d[1]!, d[2]!] as [number, number, number];
    },
    { selector, x, y },
  );
}

/**
 * A track header's box once the layout has settled: tracks grow as their data arrives (slice
 * depths), so the box must hold still over two reads with no track in view still loading.
 */
async function settledBox(header: Locator): Promise<{ x: number; y: number; width: number; height: number }> {
  const timeline = header.page().getByTestId('timeline');
  // No box before the first poll: that poll runs at once, and a box read just before it would
  // compare equal whatever the layout was about to do.
  const last: { box: { x: number; y: number; width: number; height: number } | null } = { box: null };
  await expect
    .poll(
      async () => {
        await header.scrollIntoViewIfNeeded();
        const now = (await header.boundingBox())!;
        const loading = await timeline.getAttribute('data-loading');
        const box = last.box;
        last.box = now;
        return box !== null && now.y === box.y && now.height === box.height && loading === 'false';
      },
      { intervals: [500] },
    )
    .toBe(true);
  return last.box!;
}

/** A drawn colour, not the white background or a grey grid line. */
const saturated = ([r, g, b]: [number, number, number]) => Math.max(r, g, b) - Math.min(r, g, b) > 40;

const longestKswapdCall = () => {
  const kswapd = events.find((e) => e.comm.startsWith('kswapd'))!.tid;
  return shrinkerCalls(events)
    .filter((c) => c.tid === kswapd)
    .sort((a, b) => Number(b.end - b.start - (a.end - a.start)))[0]!;
};

test('type a query, see its rows; show it as a track; click a row and the timeline moves there', async ({ page }) => {
  const errors = await openTrace(page);
  await page.getByTestId('tab-query').click();
  await expect(page.getByTestId('sql-editor')).toHaveAttribute('data-schema', 'ready');

  // Completion offers the model's tables.
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.type('SELECT name, count(*) AS n FROM ftrace_ev');
  await expect(page.locator('.cm-tooltip-autocomplete')).toContainText('ftrace_event');
  // CodeMirror ignores Enter for a moment after the list opens (so typing on is not taken as a choice).
  await page.waitForTimeout(300);
  await page.keyboard.press('Enter');
  await page.keyboard.type(' GROUP BY 1 ORDER BY 2 DESC, 1');
  await page.keyboard.press('Control+Enter');
  await expect(page.getByTestId('query-status')).toHaveAttribute('data-state', 'done');
  const counts = new Map<string, number>();
  for (const e of events) counts.set(e.name, (counts.get(e.name) ?? 0) + 1);
  const byCount = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  await expect(page.getByTestId('query-results')).toHaveAttribute('data-rows', String(counts.size));
  await expect(page.getByTestId('query-row').first()).toContainText(byCount[0]![0]);
  await expect(page.getByTestId('query-row').first()).toContainText(String(byCount[0]![1]));
  await shot(page, '30-query-rows');

  // A SQL error is marked where it is.
  await runQuery(page, 'SELECT nmae FROM thread');
  await expect(page.getByTestId('query-error')).toContainText('nmae');
  await expect(page.getByTestId('query-error')).toContainText('line 1, column 8');
  await expect(page.locator('.cm-lintRange-error')).toHaveText('nmae');
  // The sandbox's refusal reads as a rule.
  await runQuery(page, "COPY thread TO '/tmp/stallscope-e2e-copy.csv'");
  await expect(page.getByTestId('query-error')).toContainText('COPY reads or writes files');

  // The shrinker calls, longest first: as a track, and the first row clicked.
  const call = longestKswapdCall();
  await runQuery(
    page,
    "SELECT ts, dur, utid, name, id FROM slice WHERE category = 'shrinker' ORDER BY dur DESC LIMIT 50",
  );
  await expect(page.getByTestId('query-results')).toHaveAttribute('data-rows', '50');
  await page.getByTestId('query-show-track').click();
  const header = page.locator('[data-uri="query#1"]');
  await expect(header).toBeVisible();
  await expect(page.getByTestId('group-Queries')).toBeVisible();

  await page.getByTestId('query-row').first().click();
  await expect
    .poll(async () => {
      const w = await visibleWindow(page);
      return w.t0 <= rel(call.start) && w.t1 >= rel(call.end);
    })
    .toBe(true);
  const begin = events.find((e) => e.name === 'mm_shrink_slab_start' && e.ts === call.start)!;
  await expect(page).toHaveURL(new RegExp(`sel=event:\\d+`));
  // The track draws the call where it is: a coloured slice in the query track's row, at the call's middle.
  await page.waitForTimeout(300);
  const box = (await header.boundingBox())!;
  const mid = await xOf(page, rel(call.start + (call.end - call.start) / 2n));
  const kswapdLaneY = box.y + 3 + 6;
  const rgbs = await Promise.all(
    [0, 1, 2, 3, 4].map((k) => pixel(page, '.track-canvas.sticky', mid, kswapdLaneY + k * 14)),
  );
  expect(rgbs.some(saturated), `query track pixels ${JSON.stringify(rgbs)}`).toBe(true);
  // The selected event is the call's mm_shrink_slab_start, whatever its id: the details say so.
  await page.getByTestId('tab-details').click();
  await expect(page.getByTestId('details-panel')).toHaveAttribute('data-kind', 'event');
  const usec = `${begin.ts / 1_000_000_000n}.${String((begin.ts % 1_000_000_000n) / 1000n).padStart(6, '0')}`;
  await expect(page.getByTestId('raw-lines')).toContainText(`${usec}: mm_shrink_slab_start: ${call.sym} `);
  await shot(page, '31-query-track-row-selected');
  expect(errors).toEqual([]);
});

test('a query saved as a detector: its findings appear in the findings list', async ({ page }) => {
  await openTrace(page);
  await page.getByTestId('tab-query').click();
  await runQuery(page, "SELECT ts, dur, utid, cpu, name, id FROM slice WHERE category = 'shrinker' AND dur > 20000000");
  await page.getByTestId('query-save-detector').click();
  const dialog = page.getByTestId('save-detector-dialog');
  await dialog.getByTestId('detector-id').fill('e2e_slow_shrinks');
  await dialog.getByTestId('detector-title').fill('Shrinker call over 20 ms');
  await dialog.getByTestId('detector-severity').selectOption('critical');
  await dialog.getByTestId('detector-save').click();
  await expect(page.getByTestId('toast')).toContainText('Detector e2e_slow_shrinks saved');
  const want = shrinkerCalls(events).filter((c) => c.end - c.start > 20_000_000n);
  // One row per finding (the list groups a detector's findings per task by default).
  await page.getByTestId('findings-group').uncheck();
  const rows = page.locator('[data-detector="e2e_slow_shrinks"]');
  await expect(rows).toHaveCount(want.length);
  // Critical: first in the list; each at its call's time.
  const ts = await rows.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-ts'))));
  expect(ts.sort((a, b) => a - b)).toEqual(want.map((c) => rel(c.start)).sort((a, b) => a - b));
  const file = readFileSync(join(server.dataDir, 'detectors', 'e2e_slow_shrinks.sql'), 'utf8');
  expect(file).toMatch(/^-- e2e_slow_shrinks: Shrinker call over 20 ms/);
  await shot(page, '32-saved-detector-findings');
});

test('filter the event list and follow a row; a timeline selection scrolls the list', async ({ page }) => {
  await openTrace(page);
  await page.getByTestId('tab-events').click();
  // The whole trace is in view: every event is listed.
  await expect(page.getByTestId('event-count')).toHaveAttribute('data-total', String(events.length), {
    timeout: 30_000,
  });

  await page.getByTestId('filter-expr').fill('nr_reclaimed < 10');
  await page.getByTestId('filter-apply').click();
  const want = events.filter((e) => e.fields.nr_reclaimed !== undefined && Number(e.fields.nr_reclaimed) < 10);
  await expect(page.getByTestId('event-count')).toHaveAttribute('data-total', String(want.length));
  const row = page.locator('[data-testid="event-row"][data-index="2"]');
  await expect(row).toContainText(want[2]!.name);
  await row.click();
  const id = await row.getAttribute('data-id');
  await expect(page).toHaveURL(new RegExp(`sel=event:${id}(&|$)`));
  await expect(row).toHaveClass(/selected/);
  // Its details are the event's.
  await page.getByTestId('tab-details').click();
  await expect(page.getByTestId('raw-lines')).toContainText(`${want[2]!.name}: `);
  await expect(page.getByTestId('raw-lines')).toContainText(`nr_reclaimed=${want[2]!.fields.nr_reclaimed}`);

  // A bad expression says where.
  await page.getByTestId('tab-events').click();
  await page.getByTestId('filter-expr').fill('nr_reclaimed <');
  await page.getByTestId('filter-apply').click();
  await expect(page.getByTestId('event-list-error')).toContainText('expected a value after nr_reclaimed <');

  // Names and CPU filters; then a slice clicked on the timeline scrolls the list to its first event.
  await page.getByTestId('filter-expr').fill('');
  await page.getByTestId('filter-names').fill('mm_shrink_slab_start,mm_shrink_slab_end');
  await page.getByTestId('filter-apply').click();
  const slab = events.filter((e) => e.name === 'mm_shrink_slab_start' || e.name === 'mm_shrink_slab_end');
  await expect(page.getByTestId('event-count')).toHaveAttribute('data-total', String(slab.length));
  const call = longestKswapdCall();
  const pad = (call.end - call.start) / 2n;
  await page.goto(`${server.base}/?trace=${trace}&t0=${rel(call.start - pad)}&t1=${rel(call.end + pad)}`);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true');
  await page.getByTestId('tab-events').click();
  await page.getByTestId('filter-names').fill('mm_shrink_slab_start,mm_shrink_slab_end');
  await page.getByTestId('filter-apply').click();
  const inWindow = slab.filter((e) => e.ts >= call.start - pad && e.ts <= call.end + pad);
  await expect(page.getByTestId('event-count')).toHaveAttribute('data-total', String(inWindow.length));
  const tb = await settledBox(page.locator('[data-uri="slice#shrinker"]'));
  await page.mouse.click(await xOf(page, rel(call.start + (call.end - call.start) / 2n)), tb.y + tb.height / 2);
  await expect(page).toHaveURL(/sel=slice:\d+/);
  // The slice starts at its mm_shrink_slab_start: the list's row for it is selected.
  const index = inWindow.findIndex((e) => e.ts >= call.start);
  await expect(page.locator(`[data-testid="event-row"][data-index="${index}"]`)).toHaveClass(/selected/);
  await expect(page.locator(`[data-testid="event-row"][data-index="${index}"]`)).toContainText('mm_shrink_slab_start');
  await shot(page, '33-event-list-follows');

  // Tasks named in fields are links: the woken task of a sched_waking gets a track.
  await page.getByTestId('filter-names').fill('sched_waking');
  await page.getByTestId('filter-apply').click();
  const wakings = events.filter((e) => e.name === 'sched_waking' && e.ts >= call.start - pad && e.ts <= call.end + pad);
  await expect(page.getByTestId('event-count')).toHaveAttribute('data-total', String(wakings.length));
  // The selected slice still scrolls the new list to its place (first waking at or after its
  // start): wait for that, then use that row, which stays put (row 0 may scroll away mid-click).
  const followed = wakings.findIndex((e) => e.ts >= call.start);
  expect(followed).toBeGreaterThanOrEqual(0);
  const followedRow = page.locator(`[data-testid="event-row"][data-index="${followed}"]`);
  await expect(followedRow).toHaveClass(/selected/);
  const pid = Number(wakings[followed]!.fields.pid);
  const tracks = (await (await fetch(`${server.base}/api/traces/${trace}/tracks`)).json()) as {
    threads: Array<{ utid: number; tid: number; name: string }>;
  };
  const woken = tracks.threads.find((t) => t.tid === pid)!;
  await followedRow
    .getByTestId('field-task-link')
    .filter({ hasText: `pid=${pid}` })
    .click();
  await expect(page.locator(`[data-uri="thread#${woken.utid}"]`)).toBeVisible();
  await expect(page).toHaveURL(new RegExp(`add=(thread:\\d+,)*thread:${woken.utid}`));
});

test('search a worker thread that had no track, add it, see its states', async ({ page }) => {
  await openTrace(page);
  // A kworker with runs in the trace that is not among the threads of interest.
  const runs = new Map<number, ReportEvent[]>();
  for (const e of events)
    if (e.name === 'sched_switch' && /^kworker/.test(e.fields.next_comm ?? ''))
      runs.set(Number(e.fields.next_pid), [...(runs.get(Number(e.fields.next_pid)) ?? []), e]);
  const tracks = (await (await fetch(`${server.base}/api/traces/${trace}/tracks`)).json()) as {
    threadsOfInterest: Array<{ tid: number }>;
    threads: Array<{ utid: number; tid: number; name: string }>;
  };
  const [tid, switchIns] = [...runs]
    .filter(([t]) => !tracks.threadsOfInterest.some((x) => x.tid === t))
    .sort((a, b) => b[1].length - a[1].length)[0]!;
  const name = switchIns[0]!.fields.next_comm!;
  const utid = tracks.threads.find((t) => t.tid === tid && t.name === name)!.utid;
  await expect(page.locator(`[data-uri="thread#${utid}"]`)).toHaveCount(0);

  await page.keyboard.press('/');
  await expect(page.getByTestId('search-input')).toBeFocused();
  await page.keyboard.type(name);
  const item = page.locator(`[data-testid="search-item-thread"][data-label="${name} ${tid}"]`);
  await expect(item).toBeVisible();
  await page.keyboard.press('Enter'); // the first hit: this thread (exact tid and name first)
  const header = page.locator(`[data-uri="thread#${utid}"]`);
  await expect(header).toBeVisible();
  await expect(page).toHaveURL(new RegExp(`add=thread:${utid}`));
  // Stepping through its runs: the first run is selected, the window is on it, the count is the report's.
  await expect(page.getByTestId('search-position')).toHaveText(`1 / ${switchIns.length}`);
  await expect(page).toHaveURL(/sel=sched:\d+/);
  await expect(page.getByTestId('details-panel')).toHaveAttribute('data-kind', 'sched_slice');
  await expect(page.getByTestId('details-panel')).toContainText(`${name} (${tid})`);
  await page.getByTestId('search-input').press('Enter');
  await expect(page.getByTestId('search-position')).toHaveText(`2 / ${switchIns.length}`);
  const second = switchIns[1]!;
  await expect
    .poll(async () => {
      const w = await visibleWindow(page);
      return w.t0 <= rel(second.ts) && w.t1 >= rel(second.ts);
    })
    .toBe(true);
  // Its track draws its states: zoomed in on that run (a link to it, which keeps the added track), the Running colour.
  const run = (await (
    await fetch(`${server.base}/api/traces/${trace}/search/matches?kind=thread&utid=${utid}`)
  ).json()) as { matches: Array<{ ts: number; dur: number }> };
  const { ts: runTs, dur: runDur } = run.matches[1]!;
  expect(runTs).toBe(rel(second.ts));
  const url = new URL(page.url());
  url.searchParams.set('t0', String(Math.floor(runTs - runDur)));
  url.searchParams.set('t1', String(Math.ceil(runTs + 2 * runDur)));
  await page.goto(url.toString());
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true');
  await expect(header).toBeVisible();
  await page.waitForTimeout(500);
  const hb = (await header.boundingBox())!;
  const x = await xOf(page, runTs + runDur / 2);
  const rgb = await pixel(page, '.pinned-area canvas', x, hb.y + 7);
  expect(rgb, 'the Running colour (#188038) where the run is').toEqual([0x18, 0x80, 0x38]);
  await shot(page, '34-search-thread-added');
});

test("shift+drag a range over a shrinker call: kswapd's time per state, kept in the link", async ({ page }) => {
  const call = longestKswapdCall();
  const span = call.end - call.start;
  await openTrace(page, `&t0=${rel(call.start - span / 4n)}&t1=${rel(call.end + span / 4n)}`);
  const kswapd = page
    .locator('[data-uri^="thread#"]', { has: page.locator('.track-title', { hasText: /^kswapd0 \d+$/ }) })
    .first();
  const utid = Number((await kswapd.getAttribute('data-uri'))!.slice('thread#'.length));
  const kb = await settledBox(kswapd);
  const y = kb.y + 6;
  await page.keyboard.down('Shift');
  await page.mouse.move(await xOf(page, rel(call.start - span / 20n)), y);
  await page.mouse.down();
  await page.mouse.move(await xOf(page, rel(call.end + span / 20n)), y, { steps: 6 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  const panel = page.getByTestId('range-panel');
  await expect(page.getByTestId('drawer')).toHaveAttribute('data-tab', 'range');
  await expect(panel.getByTestId('range-states')).toBeVisible();
  const r0 = BigInt((await panel.getAttribute('data-t0'))!);
  const r1 = BigInt((await panel.getAttribute('data-t1'))!);
  expect(r0 < BigInt(rel(call.start)) && r1 > BigInt(rel(call.end))).toBe(true);
  const want = threadStateTimes(events, call.tid, base + r0, base + r1, last);
  expect(want.size).toBeGreaterThan(0);
  for (const [state, ns] of want) {
    await expect(panel.getByTestId(`range-state-${utid}-${state}`)).toHaveAttribute('data-ns', String(ns));
  }
  expect(await panel.locator(`[data-testid^="range-state-${utid}-"][data-ns]:not([data-ns="0"])`).count()).toBe(
    want.size,
  );
  // The call itself is among the slices in the range, at its length.
  await expect(panel.getByTestId('range-slice-shrinker').locator('[data-ns]')).toHaveAttribute(
    'data-ns',
    String(call.end - call.start),
  );
  await shot(page, '35-range-states');

  // The range is in the link: a reload shows the same aggregates.
  await expect(page).toHaveURL(new RegExp(`r0=${r0}&r1=${r1}&rtrack=thread:${utid}`));
  await page.reload();
  await expect(page.getByTestId('drawer')).toHaveAttribute('data-tab', 'range');
  const [state, ns] = [...want][0]!;
  await expect(page.getByTestId('range-panel').getByTestId(`range-state-${utid}-${state}`)).toHaveAttribute(
    'data-ns',
    String(ns),
  );
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-range-t0', String(r0));
});

test('a long query can be cancelled from the page', async ({ page }) => {
  await openTrace(page);
  await page.getByTestId('tab-query').click();
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText('SELECT count(*) FROM range(100000000000)');
  await page.keyboard.press('Control+Enter');
  await expect(page.getByTestId('query-status')).toHaveAttribute('data-state', 'running');
  await page.getByTestId('query-cancel').click();
  await expect(page.getByTestId('query-error')).toContainText('cancelled');
});
