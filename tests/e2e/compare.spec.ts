/**
 * Compare in the browser (issue 32), on fixture 17 (vm.vfs_cache_pressure
 * 100 against 1000, fixtures/compare): pick two traces in the library, read
 * the table, see both histograms and a chart with two lines, zoom one
 * timeline and see the other follow, copy the table as text, reopen the
 * comparison from its link. Expected numbers from awk over `trace-cmd report -t`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { SCREENSHOTS, ingest } from './helpers.ts';
import { FIXTURES, awkFacts } from './compare_facts.ts';

const FILES = ['vfs100.1.v7.dat', 'vfs1000.1.v7.dat'];

test('compare two traces from the library: table, histograms, a chart with two lines, synchronised timelines, copy, share link', async ({
  page,
  request,
  context,
}) => {
  const ids = [];
  for (const f of FILES) ids.push(await ingest(request, join(FIXTURES, f)));
  const facts = FILES.map(awkFacts);

  await page.goto('/');
  for (const id of ids) {
    await page.locator(`[data-testid="library-row"][data-trace-id="${id}"] [data-testid="compare-pick"]`).check();
  }
  await page.getByTestId('compare-selected').click();
  await expect(page).toHaveURL(new RegExp(`compare=${ids[0]},${ids[1]}`));
  await expect(page.getByTestId('compare-view')).toBeVisible();

  // the table: super_cache_scan freed nothing at 100, what awk sums at 1000
  const freed = page.locator(
    '[data-testid="compare-row"][data-metric="shrinker.freed"][data-key="super_cache_scan"] [data-testid="compare-cell"]',
  );
  await expect(freed).toHaveCount(2);
  await expect(freed.nth(0)).toHaveText(facts[0]!.freed.toLocaleString('en'));
  await expect(freed.nth(1)).toContainText(facts[1]!.freed.toLocaleString('en'));
  expect(facts[1]!.freed).toBeGreaterThan(0);

  // both histograms of super_cache_scan's calls, each side with the calls awk pairs
  const hist = page.locator(
    '[data-testid="compare-histogram"][data-samples="shrinker.call"][data-key="super_cache_scan"]',
  );
  const sides = hist.getByTestId('histogram-side');
  await expect(sides).toHaveCount(2);
  await expect(sides.nth(0)).toHaveAttribute('data-events', String(facts[0]!.calls));
  await expect(sides.nth(1)).toHaveAttribute('data-events', String(facts[1]!.calls));
  await expect(hist.getByTestId('cdf-line')).toHaveCount(2);

  // a time series with a line per trace
  const chart = page.locator('[data-testid="compare-series"][data-series="shrinker.cache_items [super_cache_scan]"]');
  await expect(chart.getByTestId('series-line')).toHaveCount(2);

  // zoom the first timeline: the second follows
  const rows = page.getByTestId('compare-timeline');
  await expect(rows).toHaveCount(2);
  const before = Number(await rows.nth(1).getAttribute('data-t1'));
  await rows.nth(1).scrollIntoViewIfNeeded();
  const box = (await rows.nth(0).locator('canvas').boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  for (let i = 0; i < 5; i++) await page.mouse.wheel(0, -200);
  await expect
    .poll(
      async () => Number(await rows.nth(1).getAttribute('data-t1')) - Number(await rows.nth(1).getAttribute('data-t0')),
    )
    .toBeLessThan(before / 2);
  const win = [await rows.nth(0).getAttribute('data-t0'), await rows.nth(0).getAttribute('data-t1')];
  expect([await rows.nth(1).getAttribute('data-t0'), await rows.nth(1).getAttribute('data-t1')]).toEqual(win);
  // drag the second: the first pans with it
  const box2 = (await rows.nth(1).locator('canvas').boundingBox())!;
  await page.mouse.move(box2.x + box2.width / 2, box2.y + 10);
  await page.mouse.down();
  await page.mouse.move(box2.x + box2.width / 2 - 150, box2.y + 10, { steps: 5 });
  await page.mouse.up();
  await expect.poll(async () => rows.nth(0).getAttribute('data-t0')).not.toBe(win[0]);
  const moved = [await rows.nth(1).getAttribute('data-t0'), await rows.nth(1).getAttribute('data-t1')];
  expect([await rows.nth(0).getAttribute('data-t0'), await rows.nth(0).getAttribute('data-t1')]).toEqual(moved);
  await expect(page).toHaveURL(new RegExp(`ct0=${moved[0]}&ct1=${moved[1]}`));

  // copy the table as text: aligned columns, as the CLI prints it
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.getByTestId('compare-copy-table').click();
  const text: string = await page.evaluate(() => navigator.clipboard.readText());
  const line = text.split('\n').find((l) => l.startsWith('shrinker.freed [super_cache_scan]'))!;
  expect(line).toMatch(
    new RegExp(`^shrinker\\.freed \\[super_cache_scan\\] +0 +${facts[1]!.freed.toLocaleString('en')} \\(new\\)$`),
  );
  const widths = new Set(
    text
      .split('\n')
      .filter((l) => l.startsWith('shrinker.'))
      .map((l) => l.length),
  );
  expect(widths.size).toBe(1);

  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, 'compare.png'), fullPage: true });

  // the share link reopens the comparison at the same window
  const link = page.url();
  const again = await context.newPage();
  await again.goto(link);
  await expect(
    again.locator('[data-testid="compare-row"][data-metric="shrinker.freed"][data-key="super_cache_scan"]'),
  ).toBeVisible();
  await expect(again.getByTestId('compare-timeline').nth(0)).toHaveAttribute('data-t0', moved[0]!);
  await expect(again.getByTestId('compare-timeline').nth(1)).toHaveAttribute('data-t1', moved[1]!);
  // back to the library
  await again.getByTestId('compare-home').click();
  await expect(again.getByTestId('library')).toBeVisible();
});

/** From trace-cmd report -t: seconds from the first event to the first mm_vmscan_memcg_reclaim_begin. */
function awkAlignOffsetS(file: string): number {
  const report = execFileSync('trace-cmd', ['report', '-t', '-i', join(FIXTURES, file)], {
    maxBuffer: 1 << 28,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  // -t prints "[001] 13921.946261034:" or, on these traces' clock, "[001]13879853205740:" (ns)
  const out = execFileSync(
    'awk',
    [
      `match($0, /\\] ?[0-9]+(\\.[0-9]+)?: /) { t = substr($0, RSTART + 1, RLENGTH - 3); sub(/^ /, "", t)
         if (index(t, ".")) { split(t, p, "."); ns = p[1] * 1000000000 + p[2] } else ns = t + 0 }
       t0 == "" { t0 = ns }
       / mm_vmscan_memcg_reclaim_begin: / && first == "" { first = ns - t0 }
       END { print first }`,
    ],
    { input: report, encoding: 'utf8' },
  );
  return Number(out.trim()) / 1e9;
}

test('compare: align the charts on a picked event, kept in the share link', async ({ page, request }) => {
  const ids = [];
  for (const f of FILES) ids.push(await ingest(request, join(FIXTURES, f)));
  await page.goto(`/?compare=${ids.join(',')}`);
  await expect(page.getByTestId('compare-series').first()).toBeVisible({ timeout: 60_000 });
  await page.getByTestId('compare-align').fill('mm_vmscan_memcg_reclaim_begin');
  await page.getByRole('button', { name: 'Align' }).click();
  await expect(page).toHaveURL(/align=mm_vmscan_memcg_reclaim_begin/);
  const offsets = page.getByTestId('compare-align-offsets');
  await expect(offsets).toBeVisible({ timeout: 60_000 });
  const text = (await offsets.textContent()) ?? '';
  FILES.forEach((f) => {
    const m = new RegExp(`${f.replace(/\./g, '\\.')}: \\+([0-9.]+) s`).exec(text);
    expect(m, text).not.toBeNull();
    expect(Number(m![1])).toBeCloseTo(awkAlignOffsetS(f), 5);
  });
  await expect(page.getByTestId('compare-series').first().locator('figcaption')).toContainText(
    'first mm_vmscan_memcg_reclaim_begin',
  );
  // the link reopens aligned
  await page.goto(page.url());
  await expect(page.getByTestId('compare-align-offsets')).toBeVisible({ timeout: 60_000 });
});
