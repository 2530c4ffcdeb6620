/**
 * Issue 4: an upload cut off half-way, in the browser. The page talks to the
 * server through a TCP proxy that drops the connection once half the file has
 * gone through (what a dropped network does to a long upload; both the real
 * browser and the real server see a reset connection). The page says which
 * file, what happened and offers a retry; the server removed the partial file,
 * listed nothing and keeps working; the retry opens the trace.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { dropFile } from './helpers.ts';
import { sha256, useServerBehindProxy } from './server_process.ts';

const FIXTURE = 'fixtures/reclaim_kswapd.v7.dat';
const SIZE = readFileSync(FIXTURE).length;

const env = useServerBehindProxy();

test('an upload cut off half-way: clear error, nothing added, retry works', async ({ page }) => {
  const { server, proxy, base } = env;
  await page.goto(`${base}/`);
  await expect(page.getByTestId('start-page')).toBeVisible();

  proxy.cutAfter = Math.floor(SIZE / 2);
  await dropFile(page, page.getByTestId('drop-zone'), FIXTURE);
  const err = page.getByTestId('ingest-error');
  await expect(err).toBeVisible();
  // (Chromium may resend a request whose reused connection was reset: each attempt is cut.)
  expect(proxy.cuts.length).toBeGreaterThanOrEqual(1);
  await expect(err).toContainText('Could not add reclaim_kswapd.v7.dat');
  await expect(err).toContainText(/upload was cut off/);
  await expect(err).toContainText('nothing was added to the library');
  await expect(page.getByTestId('retry-upload')).toHaveText('Retry reclaim_kswapd.v7.dat');

  // Server side: the partial file is gone, nothing is listed, and it still answers.
  await expect.poll(() => server.tmpEntries()).toEqual([]);
  expect(server.traceDirs()).toEqual([]);
  const list = (await (await fetch(`${server.base}/api/traces`)).json()) as { traces: unknown[]; jobs: unknown[] };
  expect(list).toEqual({ traces: [], jobs: [] });
  await expect(page.getByTestId('library')).toContainText('No traces yet');

  // The network is back: Retry sends the same file again, and the trace opens.
  proxy.cutAfter = null;
  await page.getByTestId('retry-upload').click();
  await expect(page.getByTestId('trace-view')).toBeVisible({ timeout: 120_000 });
  await expect(page).toHaveURL(new RegExp(`trace=${sha256(FIXTURE)}`));
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  expect(server.traceDirs()).toEqual([sha256(FIXTURE)]);
  expect(server.tmpEntries().filter((n) => statSync(join(server.dataDir, 'tmp', n)).isFile())).toEqual([]);
});
