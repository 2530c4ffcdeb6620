/**
 * Compare by dropping files (issue 32): several trace files dropped on the
 * start page at once are each ingested, then their comparison opens in the
 * order dropped (the first is the baseline); the user can pick another
 * baseline before (a radio per file) or after (the view's "make baseline").
 * A file that is not a trace is reported by name and the others still land.
 * Fixture 17 (fixtures/compare); expected numbers from awk over
 * `trace-cmd report -t` (compare_facts.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { dropFiles } from './helpers.ts';
import { FIXTURES, awkFacts } from './compare_facts.ts';

const VANILLA = 'vfs100.1.v7.dat';
const PRESSED = 'vfs1000.1.v7.dat';

const freedCells = (page: Page) =>
  page.locator(
    '[data-testid="compare-row"][data-metric="shrinker.freed"][data-key="super_cache_scan"] [data-testid="compare-cell"]',
  );

function notATrace(name: string): string {
  const path = join(process.env.STALLSCOPE_E2E_DATA ?? '/tmp', name);
  writeFileSync(path, 'Minutes of the reclaim meeting.\nNo events here.\n');
  return path;
}

test('dropping two traces opens their comparison, the first dropped as the baseline; make baseline swaps them', async ({
  page,
}) => {
  const [vanilla, pressed] = [VANILLA, PRESSED].map(awkFacts);
  expect(vanilla!.freed).toBe(0);
  expect(pressed!.freed).toBeGreaterThan(0);

  await page.goto('/');
  await dropFiles(page, page.getByTestId('drop-zone'), [join(FIXTURES, VANILLA), join(FIXTURES, PRESSED)]);
  // each file gets its own progress line, in the order dropped
  const files = page.getByTestId('compare-batch-file');
  await expect(files).toHaveCount(2);
  await expect(files.nth(0)).toHaveAttribute('data-name', VANILLA);
  await expect(files.nth(1)).toHaveAttribute('data-name', PRESSED);

  await expect(page.getByTestId('compare-view')).toBeVisible({ timeout: 120_000 });
  await expect(page).toHaveURL(/[?&]compare=[0-9a-f]+,[0-9a-f]+/);
  const sides = page.getByTestId('compare-side');
  await expect(sides.nth(0)).toContainText('baseline');
  await expect(sides.nth(0)).toContainText('vfs100.1');
  const cells = freedCells(page);
  await expect(cells).toHaveCount(2);
  await expect(cells.nth(0)).toHaveText(vanilla!.freed.toLocaleString('en'));
  await expect(cells.nth(1)).toContainText(pressed!.freed.toLocaleString('en'));

  // after: the second becomes the baseline; its cell comes first, and Back undoes it
  const before = page.url();
  await page.getByTestId('compare-make-baseline').first().click();
  await expect(sides.nth(0)).toContainText('vfs1000.1');
  await expect(cells.nth(0)).toHaveText(pressed!.freed.toLocaleString('en'));
  await expect(cells.nth(1)).toContainText(vanilla!.freed.toLocaleString('en'));
  const ids = new URL(before).searchParams.get('compare')!.split(',');
  expect(new URL(page.url()).searchParams.get('compare')).toBe(`${ids[1]},${ids[0]}`);
  await page.goBack();
  await expect(cells.nth(0)).toHaveText(vanilla!.freed.toLocaleString('en'));
});

test('a bad file among two: an error naming it, the good one still added, no comparison', async ({ page }) => {
  await page.goto('/');
  await dropFiles(page, page.getByTestId('drop-zone'), [
    join(FIXTURES, VANILLA),
    { path: notATrace('minutes.txt'), type: 'text/plain' },
  ]);
  const files = page.getByTestId('compare-batch-file');
  const err = files.nth(1).getByTestId('ingest-error');
  await expect(err).toBeVisible({ timeout: 120_000 });
  await expect(err).toContainText('minutes.txt');
  await expect(err).toContainText(/not a trace/i);
  await expect(files.nth(0)).toHaveAttribute('data-trace-id', /^[0-9a-f]{64}$/);
  const id = await files.nth(0).getAttribute('data-trace-id');
  await expect(page.getByTestId('compare-batch-short')).toContainText(`${VANILLA} is in the library`);
  await expect(page.locator(`[data-testid="library-row"][data-trace-id="${id}"]`)).toHaveAttribute(
    'data-status',
    'ready',
  );
  await expect(page.getByTestId('compare-view')).toHaveCount(0);
});

test('three dropped, one bad: pick the baseline, then compare the two that were added', async ({ page }) => {
  const [vanilla, pressed] = [VANILLA, PRESSED].map(awkFacts);
  await page.goto('/');
  await dropFiles(page, page.getByTestId('drop-zone'), [
    join(FIXTURES, VANILLA),
    { path: notATrace('agenda.txt'), type: 'text/plain' },
    join(FIXTURES, PRESSED),
  ]);
  const files = page.getByTestId('compare-batch-file');
  await expect(files.nth(1).getByTestId('ingest-error')).toContainText('agenda.txt', { timeout: 120_000 });
  const open = page.getByTestId('compare-batch-open');
  await expect(open).toHaveText('Compare the 2 that were added', { timeout: 120_000 });
  // the failed file cannot be the baseline; the third can
  await expect(files.nth(1).getByTestId('compare-batch-baseline')).toBeDisabled();
  await files.nth(2).getByTestId('compare-batch-baseline').check();
  await open.click();
  await expect(page.getByTestId('compare-side').nth(0)).toContainText('vfs1000.1');
  const cells = freedCells(page);
  await expect(cells.nth(0)).toHaveText(pressed!.freed.toLocaleString('en'));
  await expect(cells.nth(1)).toContainText(vanilla!.freed.toLocaleString('en'));
});
