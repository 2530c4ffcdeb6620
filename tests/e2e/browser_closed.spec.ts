/**
 * Issue 4: the browser is closed during an ingest. Closed once the server has
 * the whole file: the ingest goes on, and the trace shows up in the library
 * on the next visit, never listed as ready before it is complete. Closed while
 * the file is still uploading: nothing is added, the partial upload is
 * removed, and uploading again works.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { dropFile } from './helpers.ts';
import { sha256, useServerBehindProxy } from './server_process.ts';

// 148k events: ingest takes seconds, long enough to close the tab in the middle.
const FIXTURE = 'fixtures/fsync_xfs.full.v7.dat';
const ID = sha256(FIXTURE);

test.describe.configure({ mode: 'serial' });
const env = useServerBehindProxy();

test('closed while uploading: nothing added, the partial upload removed, uploading again works', async ({
  browser,
}) => {
  const { server, proxy, base } = env;
  const ctx1 = await browser.newContext();
  const page = await ctx1.newPage();
  await page.goto(`${base}/`);
  proxy.mode = 'hold';
  proxy.cutAfter = Math.floor(readFileSync(FIXTURE).length / 2);
  await dropFile(page, page.getByTestId('drop-zone'), FIXTURE);
  await expect(page.getByTestId('ingest-progress')).toHaveAttribute('data-phase', 'uploading');
  await expect
    .poll(
      () =>
        server.tmpEntries().filter((n) => n.startsWith('upload-') && statSync(join(server.dataDir, 'tmp', n)).size > 0)
          .length,
    )
    .toBe(1);
  await ctx1.close(); // the browser window goes away mid-upload

  await expect.poll(() => server.tmpEntries()).toEqual([]);
  expect(server.traceDirs()).toEqual([]);

  proxy.cutAfter = null;
  proxy.mode = 'cut';
  const ctx2 = await browser.newContext();
  const again = await ctx2.newPage();
  await again.goto(`${base}/`);
  await expect(again.getByTestId('library')).toContainText('No traces yet');
  await dropFile(again, again.getByTestId('drop-zone'), FIXTURE);
  await expect(again.getByTestId('trace-view')).toBeVisible({ timeout: 120_000 });
  await expect(again).toHaveURL(new RegExp(`trace=${ID}`));
  await ctx2.close();
});

test('closed while the server ingests: the ingest finishes and the trace is in the library on the next visit', async ({
  browser,
}) => {
  const { server, base } = env;
  // Another recording than the first test's, so this one is ingested from scratch.
  const other = 'fixtures/memcg_reclaim.full.v7.dat';
  const otherId = sha256(other);
  const ctx1 = await browser.newContext();
  const page = await ctx1.newPage();
  await page.goto(`${base}/`);
  await dropFile(page, page.getByTestId('drop-zone'), other);
  await expect(page.getByTestId('ingest-progress')).toHaveAttribute(
    'data-phase',
    /hashing|decompressing|decoding|deriving/,
  );
  expect(existsSync(join(server.dataDir, 'traces', otherId, 'info.json'))).toBe(false);
  await ctx1.close(); // the browser window goes away while the server ingests

  const ctx2 = await browser.newContext();
  const next = await ctx2.newPage();
  await next.goto(`${base}/`);
  const row = next.locator(`[data-testid="library-row"][data-trace-id="${otherId}"]`);
  // Until it is complete, it is not listed as ready (at most as ingesting); then it is.
  await expect
    .poll(
      async () => {
        await next.reload();
        await next.getByTestId('library').waitFor();
        const status = await row.getAttribute('data-status', { timeout: 1000 }).catch(() => null);
        if (status === 'ready') expect(existsSync(join(server.dataDir, 'traces', otherId, 'info.json'))).toBe(true);
        return status;
      },
      { timeout: 120_000, intervals: [300] },
    )
    .toBe('ready');
  await expect(next.locator('[data-testid="library-row"][data-status="failed"]')).toHaveCount(0);
  await row.click();
  await expect(next.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  expect(server.tmpEntries().filter((n) => n.startsWith('upload-'))).toEqual([]);
  await ctx2.close();
});
