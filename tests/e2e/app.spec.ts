/**
 * The first minute of a user: drop a real recorded trace, wait for ingest,
 * see the findings, click through them on the linked timeline.
 * Fixture: fixtures/reclaim_kswapd.v7.dat (trace-cmd 3.1 record, zstd, 2 CPUs,
 * kswapd escalating and super_cache_scan blocking it; see fixtures/).
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { SCREENSHOTS, dropFile, visibleWindow } from './helpers.ts';

/** Override with STALLSCOPE_E2E_TRACE to run on another recording. */
const FIXTURE = process.env.STALLSCOPE_E2E_TRACE ?? 'fixtures/reclaim_kswapd.v7.dat';

test.describe.configure({ mode: 'serial' });

async function shot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

test('drop a trace, see findings, click through them on the timeline', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));

  await page.goto('/');
  await expect(page.getByTestId('start-page')).toBeVisible();
  await shot(page, '01-start-page');

  await dropFile(page, page.getByTestId('drop-zone'), FIXTURE);
  // Progress shows while the server ingests; then the trace opens by itself.
  await expect(page.getByTestId('ingest-progress').or(page.getByTestId('trace-view'))).toBeVisible();
  await expect(page.getByTestId('trace-view')).toBeVisible({ timeout: 150_000 });
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  await expect(page).toHaveURL(/[?&]trace=[0-9a-f]{64}/);

  // Findings, grouped by detector, with counts per severity.
  const rows = page.locator('[data-finding-index]');
  await expect(rows.first()).toBeVisible();
  expect(await rows.count()).toBeGreaterThan(1);
  await expect(page.getByTestId('findings-counts')).toContainText(/critical|warn|info/);
  await shot(page, '02-trace-overview');

  // Click a shrinker finding: the window moves to contain it, details show its duration.
  const shrinker = page.locator('[data-detector="shrinker_blocking"]').first();
  await expect(shrinker).toBeVisible();
  const ts = Number(await shrinker.getAttribute('data-ts'));
  const dur = Number(await shrinker.getAttribute('data-dur'));
  const durText = (await shrinker.locator('.finding-meta b').textContent())!.trim();
  await shrinker.click();
  await expect(shrinker).toHaveAttribute('data-selected', 'true');
  await expect
    .poll(async () => {
      const w = await visibleWindow(page);
      return w.t0 <= ts && w.t1 >= ts + dur && w.t1 - w.t0 < (dur + 1) * 4;
    })
    .toBe(true);
  await expect(page.getByTestId('details-duration')).toHaveText(durText);
  await expect(page.getByTestId('raw-lines')).toContainText('mm_shrink_slab_start');
  await expect(page.getByTestId('raw-lines')).toContainText('mm_shrink_slab_end');
  await expect(page).toHaveURL(/sel=finding:\d+/);
  await shot(page, '03-shrinker-finding-selected');

  // `]` selects the next finding in the list.
  const order = await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-finding-index')));
  const selectedIndex = await shrinker.getAttribute('data-finding-index');
  const expected = order[(order.indexOf(selectedIndex) + 1) % order.length];
  await page.keyboard.press(']');
  await expect(page.locator(`[data-finding-index="${expected}"]`)).toHaveAttribute('data-selected', 'true');
  await expect(shrinker).toHaveAttribute('data-selected', 'false');
  await expect(page).toHaveURL(new RegExp(`sel=finding:${expected}(&|$)`));
  // ...and `[` goes back.
  await page.keyboard.press('[');
  await expect(shrinker).toHaveAttribute('data-selected', 'true');

  // Clicking the shrinker call on kswapd's thread track selects that slice and shows its fields.
  // (Track heights can still grow as data arrives, so aim again until the tooltip names the slice.)
  const thread = page.locator('[data-uri^="thread#"]').first();
  const area = (await page.getByTestId('track-scroll').boundingBox())!;
  const x = area.x + 220 + (area.width - 220 - 16) / 2;
  let y = 0;
  // Tracks that load late (counter tracks) can move the thread between the hover and the click,
  // so hover, check the tooltip and click as one step, retried until the click lands on the slice.
  await expect
    .poll(
      async () => {
        y = (await thread.boundingBox())!.y + 21;
        await page.mouse.move(x, y);
        const tip = (await page.getByTestId('tooltip').textContent()) ?? '';
        if (!/shrinker|scan/.test(tip)) return `tooltip: ${tip}`;
        await page.mouse.click(x, y);
        // Every selection is a history entry: wait for this click's, then judge it by the link.
        await expect(page)
          .not.toHaveURL(/sel=finding:/, { timeout: 5_000 })
          .catch(() => undefined);
        if (/sel=slice:/.test(page.url())) return 'slice';
        // It landed on something else (the track moved): undo that entry, so Back below returns to the finding.
        if (!/sel=finding:/.test(page.url())) {
          await page.goBack();
          await expect(page).toHaveURL(/sel=finding:\d+/);
        }
        return `clicked: ${page.url()}`;
      },
      { timeout: 30_000 },
    )
    .toBe('slice');
  await expect(page.getByTestId('details-panel')).toHaveAttribute('data-kind', 'slice');
  await expect(page.getByTestId('details-duration')).toHaveText(durText);
  await expect(page).toHaveURL(/sel=slice:\d+/);
  await shot(page, '03b-slice-selected');
  await page.goBack();
  await expect(shrinker).toHaveAttribute('data-selected', 'true');

  // Keyboard zoom changes the window and the ruler.
  const ruler = page.getByTestId('ruler');
  const ticksBefore = await ruler.getAttribute('data-ticks');
  const before = await visibleWindow(page);
  for (let i = 0; i < 4; i++) await page.keyboard.press('w');
  await expect
    .poll(async () => (await visibleWindow(page)).t1 - (await visibleWindow(page)).t0)
    .toBeLessThan((before.t1 - before.t0) * 0.5);
  await expect(ruler).not.toHaveAttribute('data-ticks', ticksBefore!);
  await shot(page, '04-zoomed-in');
  const zoomedTicks = await ruler.getAttribute('data-ticks');
  for (let i = 0; i < 8; i++) await page.keyboard.press('s');
  await expect(ruler).not.toHaveAttribute('data-ticks', zoomedTicks!);
  // A/D pan.
  const beforePan = await visibleWindow(page);
  await page.keyboard.press('d');
  await expect.poll(async () => (await visibleWindow(page)).t0).toBeGreaterThan(beforePan.t0);

  // The URL carries the view: reloading restores the window and the selection.
  await page.waitForTimeout(400);
  const url = page.url();
  const w = await visibleWindow(page);
  await page.goto(url);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true');
  const w2 = await visibleWindow(page);
  expect(Math.abs(w2.t0 - w.t0)).toBeLessThanOrEqual(1);
  expect(Math.abs(w2.t1 - w.t1)).toBeLessThanOrEqual(1);
  await expect(page.locator(`[data-finding-index="${selectedIndex}"]`)).toHaveAttribute('data-selected', 'true');

  // Clicking a slice on the timeline selects it and shows its fields.
  await page.getByTestId('track-slice#shrinker').waitFor();
  expect(errors).toEqual([]);
});

test('track filter, collapse and pin', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('library-row').first().click();
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  await page.getByTestId('track-filter').fill('kswapd');
  await expect(page.getByTestId('track-cpu#0')).toHaveCount(0);
  await expect(page.locator('[data-uri^="thread#"]').first()).toBeVisible();
  await page.getByTestId('track-filter').fill('');
  await page.getByTestId('track-cpu#1').hover();
  await page.getByTestId('pin-cpu#1').click();
  await expect(page.getByTestId('pinned-area').getByTestId('track-cpu#1')).toBeVisible();
  await expect(page).toHaveURL(/pin=cpu:1(&|$)/);
  await shot(page, '05-pinned-track');
});

test('a file that is not a trace shows a clear error', async ({ page }) => {
  await page.goto('/');
  const bogus = join(process.env.STALLSCOPE_E2E_DATA ?? '/tmp', 'notes.txt');
  writeFileSync(bogus, 'These are my meeting notes.\nNothing to see here.\n');
  await dropFile(page, page.getByTestId('drop-zone'), bogus, 'notes.txt', 'text/plain');
  const err = page.getByTestId('ingest-error');
  await expect(err).toBeVisible({ timeout: 30_000 });
  await expect(err).toContainText('notes.txt');
  await expect(err).toContainText(/not a trace/i);
  await expect(err).not.toContainText('/tmp/');
  // Sending the same file again cannot help: no Retry, only another file.
  await expect(page.getByTestId('retry-upload')).toHaveCount(0);
  await expect(page.getByTestId('choose-another')).toBeVisible();
  await shot(page, '06-not-a-trace');
});

test('a trace with skipped lines says so where it is named', async ({ page }) => {
  await page.goto('/');
  // two garbage lines between real events (fixtures/handmade/README.md)
  await dropFile(
    page,
    page.getByTestId('drop-zone'),
    'fixtures/handmade/bad_garbage_middle.txt',
    'bad_garbage_middle.txt',
    'text/plain',
  );
  await expect(page.getByTestId('trace-view')).toBeVisible({ timeout: 60_000 });
  const gaps = page.getByTestId('ingest-gaps');
  await expect(gaps).toHaveText('2 lines skipped');
  await expect(gaps).toHaveAttribute('title', /ingest_problem/);
  // the tooltip names them
  await expect(gaps).toHaveAttribute('title', /line 5: not an ftrace event line\nline 6: not an ftrace event line/);
  await shot(page, '07-ingest-gaps');
});

test('a kernel text whose ring buffer overwrote events says events were lost', async ({ page }) => {
  await page.goto('/');
  // a real capture in overwrite mode: `##### CPU 0 buffer started ####` gives no count (fixtures/README.md, fixture 2)
  await dropFile(page, page.getByTestId('drop-zone'), 'fixtures/tracefs_tgid.txt', 'tracefs_tgid.txt', 'text/plain');
  await expect(page.getByTestId('trace-view')).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('ingest-gaps')).toHaveText('events lost by the kernel (count not recorded)');
});
