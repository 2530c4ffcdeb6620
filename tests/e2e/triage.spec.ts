/**
 * Triage in the browser (issue 28), on real recordings:
 *   - the overview shows when a trace opens, and its lines select findings;
 *   - sorted by impact, the longest shrinker call comes first (awk over the
 *     fixture's trace-cmd report says which); time order is one click away;
 *   - filters by task (comm) and by severity; a group folds and unfolds;
 *   - `]` steps within the filtered list only;
 *   - "not traced" on a trace without vmscan events;
 *   - the details panel of the largest finding of a real trace lists its
 *     events (3,873 of them: their ids never go into a URL);
 *   - the summary tables sort by a column.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { SCREENSHOTS, ingest } from './helpers.ts';

test.describe.configure({ mode: 'serial' });

async function shot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/** Uploads a fixture through the API (instant when already in the library); its trace id. */

async function openTrace(page: Page, trace: string, query = '') {
  await page.goto(`/?trace=${trace}${query}`);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 60_000 });
}

/** awk over the committed trace-cmd report: the longest completed shrinker call (ns, from the printed us). */
function longestShrinkerCall(report: string): number {
  const out = execFileSync(
    'awk',
    [
      `{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\\.[0-9]+:$/) { ts = substr($i, 1, length($i) - 1); ev = $(i + 1); sub(/:$/, "", ev); break }
       if (!match($0, /-[0-9]+ +\\[/)) next; pid = substr($0, RSTART + 1, RLENGTH - 1); sub(/ .*/, "", pid)
       split(ts, a, "."); t = a[1] * 1000000 + a[2] }
     ev == "mm_shrink_slab_start" { s[pid] = t }
     ev == "mm_shrink_slab_end" && (pid in s) { d = t - s[pid]; if (d > best) best = d; delete s[pid] }
     END { printf "%d\\n", best }`,
      report,
    ],
    { encoding: 'utf8' },
  );
  return Number(out.trim()) * 1000;
}

const RECLAIM = 'fixtures/reclaim_kswapd.v7.dat';
let reclaim = '';

test.beforeAll(async ({ request }) => {
  reclaim = await ingest(request, RECLAIM);
});

test('the overview shows when a trace opens, and its lines select findings', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await openTrace(page, reclaim);
  const overview = page.getByTestId('overview-panel');
  await expect(overview).toBeVisible();
  const shrinkerLine = overview
    .locator('[data-testid="overview-line"][data-overview-detector="shrinker_blocking"]')
    .first();
  await expect(shrinkerLine).toContainText(
    /^warn\s*super_cache_scan: 882 calls, \d+ over 10 ms, worst [\d.]+ ms in kswapd0/,
  );
  await expect(overview.locator('[data-overview-detector="kswapd_escalation"]').first()).toContainText(
    /kswapd0 woke \d+ times?; reached priority 4/,
  );
  await shot(page, 'triage-01-overview');
  const id = await shrinkerLine.getAttribute('data-finding-id');
  await shrinkerLine.getByRole('button').click();
  // the finding is selected, the list filtered to what the line summarises
  await expect(page).toHaveURL(new RegExp(`sel=finding:${id}(&|$)`));
  await expect(page.locator(`[data-finding-index="${id}"]`)).toHaveAttribute('data-selected', 'true');
  await expect(page.getByTestId('filter-shrinker')).toHaveValue('super_cache_scan');
  await expect(page.getByTestId('details-panel')).toHaveAttribute('data-kind', 'finding');
  await expect(page.getByTestId('raw-lines')).toContainText('mm_shrink_slab_start: super_cache_scan+0x0');
  expect(errors).toEqual([]);
});

test('sorted by impact the longest shrinker call comes first; time order is one click away', async ({ page }) => {
  const longest = longestShrinkerCall('fixtures/reclaim_kswapd.report.txt');
  await openTrace(page, reclaim);
  await page.getByTestId('findings-group').uncheck();
  await page.getByTestId('filter-detector').selectOption('shrinker_blocking');
  await expect(page.getByTestId('findings-sort')).toHaveValue('impact');
  const rows = page.locator('[data-finding-index]');
  const first = rows.first();
  // the report prints microseconds: the first row's duration is the longest call to the us
  expect(Math.abs(Number(await first.getAttribute('data-impact')) - longest)).toBeLessThanOrEqual(1000);
  const impacts = await rows.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-impact'))));
  expect(impacts.slice(1).every((x) => x <= impacts[0]!)).toBe(true);
  await page.getByTestId('findings-sort').selectOption('time');
  const ts = await rows.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-ts'))));
  expect(ts).toEqual([...ts].sort((a, b) => a - b));
  await shot(page, 'triage-02-sorted');
});

test('filters by task and by severity; a group folds and unfolds; ] stays within the filter', async ({
  page,
  request,
}) => {
  const all = (await (await request.get(`/api/traces/${reclaim}/findings`)).json()).findings as Array<{
    index: number;
    comm: string | null;
    severity: string;
    parent_id: number | null;
  }>;
  const kswapd = all.filter((f) => f.comm === 'kswapd0' && f.parent_id === null);
  expect(kswapd.length).toBeGreaterThan(2);
  await openTrace(page, reclaim);
  await page.getByTestId('findings-group').uncheck();
  await page.getByTestId('filter-comm').selectOption('kswapd0');
  const rows = page.locator('[data-finding-index]');
  await expect(rows).toHaveCount(kswapd.length);
  expect(new Set(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-comm'))))).toEqual(
    new Set(['kswapd0']),
  );
  await expect(page.getByTestId('findings-shown')).toContainText(
    `${kswapd.length} of ${all.filter((f) => f.parent_id === null).length} shown`,
  );

  // ] from the first: always a kswapd0 finding, wrapping around the filtered list
  await rows.first().click();
  for (let i = 0; i < kswapd.length + 2; i++) {
    await page.keyboard.press(']');
    const sel = Number(/sel=finding:(\d+)/.exec(page.url())![1]);
    expect(
      kswapd.map((f) => f.index),
      `step ${i}`,
    ).toContain(sel);
    await expect(page.locator(`[data-finding-index="${sel}"]`)).toHaveAttribute('data-selected', 'true');
  }

  // severity: the count chip is a toggle
  await page.getByTestId('filter-clear').click();
  const warn = all.filter((f) => f.severity === 'warn' && f.parent_id === null).length;
  await page.getByTestId('filter-sev-warn').click();
  await expect(page.getByTestId('filter-sev-warn')).toHaveAttribute('aria-pressed', 'true');
  await expect(rows).toHaveCount(warn);
  expect(new Set(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-severity'))))).toEqual(
    new Set(['warn']),
  );
  await page.getByTestId('filter-sev-warn').click();

  // grouped: the shrinker group shows its worst call; unfolded, all its calls; folded again, the worst
  await page.getByTestId('findings-group').check();
  const group = page.locator(
    '[data-testid="finding-group-row"][data-group-key^="shrinker_blocking|shrinker:super_cache_scan"]',
  );
  const n = Number(await group.getAttribute('data-count'));
  expect(n).toBeGreaterThan(1);
  await expect(group.locator('[data-finding-index]')).toHaveCount(1);
  await group.getByTestId('group-toggle').click();
  await expect(group.locator('[data-finding-index]')).toHaveCount(n);
  await shot(page, 'triage-03-group-open');
  await group.getByTestId('group-toggle').click();
  await expect(group.locator('[data-finding-index]')).toHaveCount(1);
});

test('"not traced" on a trace without vmscan events', async ({ page, request }) => {
  const trace = await ingest(request, 'fixtures/syscalls.v7.dat');
  await openTrace(page, trace);
  const nt = page.getByTestId('overview-not-traced');
  await expect(
    nt.filter({ hasText: 'Slow shrinkers: not traced: enable vmscan:mm_shrink_slab_start/end' }),
  ).toHaveCount(1);
  await expect(nt.filter({ hasText: 'not traced: enable vmscan:mm_vmscan_direct_reclaim_begin/end' })).toHaveCount(1);
  await expect(page.getByTestId('no-findings')).toContainText('none of the tracepoints the detectors need');
  await shot(page, 'triage-04-not-traced');
});

test('the details panel of the largest finding lists its events, a page at a time', async ({ page, request }) => {
  // 3873 mm_vmscan_write_folio events, counted by awk over trace-cmd report when the fixture was recorded
  const writes = JSON.parse(readFileSync('fixtures/swap_writeback.counts.json', 'utf8')).events_by_name
    .mm_vmscan_write_folio as number;
  const trace = await ingest(request, 'fixtures/swap_writeback.v7.dat');
  const findings = (await (await request.get(`/api/traces/${trace}/findings`)).json()).findings as Array<{
    index: number;
    event_ids: number[];
  }>;
  const largest = findings.reduce((a, b) => (b.event_ids.length > a.event_ids.length ? b : a));
  expect(largest.event_ids.length).toBe(writes);
  const failed: string[] = [];
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url().slice(0, 120)}`);
  });
  await openTrace(page, trace, `&sel=finding:${largest.index}`);
  await expect(page.getByTestId('raw-lines-count')).toHaveText(`(${writes.toLocaleString('en')} events)`);
  const lines = page.getByTestId('raw-lines').locator('.raw-line');
  await expect(lines).toHaveCount(500);
  await expect(lines.first()).toContainText('mm_vmscan_write_folio: page=0x');
  await page.getByTestId('raw-lines-more').click();
  await expect(lines).toHaveCount(1000);
  expect(failed).toEqual([]);
  await shot(page, 'triage-05-largest-finding');
});

test('the summary tables sort by a column', async ({ page }) => {
  await openTrace(page, reclaim);
  await page.getByTestId('tab-summaries').click();
  const table = page.getByTestId('summary-shrinker_blocking');
  await expect(table).toBeVisible();
  await table.getByTestId('summary-th-calls').click();
  const calls = await table
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => Number((tr.children[1] as HTMLElement).innerText.replace(/,/g, ''))));
  expect(calls.length).toBeGreaterThan(1);
  expect(calls).toEqual([...calls].sort((a, b) => b - a));
  await table.getByTestId('summary-th-calls').click();
  const asc = await table
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => Number((tr.children[1] as HTMLElement).innerText.replace(/,/g, ''))));
  expect(asc).toEqual([...calls].reverse());
  await shot(page, 'triage-06-summaries');
});

test('structured values read as tables and links: priority steps; wakers as "comm pid on CPU n" that show the task', async ({
  page,
  request,
}) => {
  const findings = (await (await request.get(`/api/traces/${reclaim}/findings`)).json()).findings as Array<{
    index: number;
    kind: string;
    values: { priority_steps?: unknown[] };
  }>;
  const esc = findings.find((f) => f.kind === 'escalation')!;
  await openTrace(page, reclaim, `&sel=finding:${esc.index}`);
  const steps = page.getByTestId('priority-steps');
  await expect(steps.locator('tbody tr')).toHaveCount(esc.values.priority_steps!.length);
  await expect(steps.locator('tbody tr').last()).toContainText(/^4\s*\+[\d.]+ ms\s*[\d.]+ ms \(\d+\.\d{6} s\)$/);

  const fsync = await ingest(request, 'fixtures/fsync_xfs.v7.dat');
  const f = (await (await request.get(`/api/traces/${fsync}/findings`)).json()).findings[0] as {
    index: number;
    kind: string;
    values: { wakers: Array<{ comm: string; tid: number; cpu: number; utid: number }> };
  };
  expect(f.kind).toBe('wakeup');
  const w = f.values.wakers[0]!;
  await openTrace(page, fsync, `&sel=finding:${f.index}`);
  const link = page.getByTestId('value-wakers').getByTestId('task-link').first();
  await expect(link).toHaveText(`${w.comm} ${w.tid} on CPU ${w.cpu}`);
  await link.click();
  await expect(page.getByTestId('filter-comm')).toHaveValue(w.comm);
  await expect(page).toHaveURL(new RegExp(`pin=([^&]*,)?thread:${w.utid}(,|&|$)`));
  await shot(page, 'triage-07-waker-link');
});
