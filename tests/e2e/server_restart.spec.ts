/**
 * Issue 4: the server is killed in the middle of an ingest (by its PID, like
 * a crash) and started again on the same data directory while the page stays
 * open. The page waits for the server, then says which file and what
 * happened, and offers a retry; the library lists the upload as failed (not
 * as a trace), the half-built work is gone, and the retry opens the trace.
 */
import { expect, test } from '@playwright/test';
import { dropFile } from './helpers.ts';
import { ServerProcess, freePort, sha256 } from './server_process.ts';

// 1M events: decoding and deriving take 1-2 s, a window the page's progress
// cannot miss (a 148k-event file's ~0.3 s went from hashing to detecting
// between two of its updates once the decoders got faster), so the kill
// lands in the middle of the ingest.
const FIXTURE = 'fixtures/corpus/sched_wq.v7.dat';
const ID = sha256(FIXTURE);

let server: ServerProcess;
test.beforeAll(async () => {
  server = new ServerProcess(await freePort());
  await server.start();
});
test.afterAll(async () => {
  await server?.dispose();
});

test('server killed mid-ingest and restarted: clear error, nothing half-listed, retry works', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${server.base}/`);
  await dropFile(page, page.getByTestId('drop-zone'), FIXTURE);
  const progress = page.getByTestId('ingest-progress');
  await expect(progress).toHaveAttribute('data-phase', /decoding|deriving/, { timeout: 60_000 });

  await server.kill('SIGKILL');
  expect(server.traceDirs()).toEqual([]); // nothing complete
  expect(server.tmpEntries().length).toBeGreaterThan(0); // the staged upload and the half-built model
  await expect(progress).toHaveAttribute('data-phase', 'reconnecting');
  await expect(progress).toContainText('Lost the connection to the server');

  await server.start(); // same port, same data directory
  expect(server.tmpEntries()).toEqual([]); // stale work removed at start
  const err = page.getByTestId('ingest-error');
  await expect(err).toBeVisible({ timeout: 30_000 });
  await expect(err).toContainText('Could not add sched_wq.v7.dat');
  await expect(err).toContainText(/the server stopped \(while (decoding|deriving)\) before the ingest finished/);
  await expect(err).toContainText('nothing was added to the library');

  // The library shows the attempt as failed, with why; not as a trace.
  const rows = page.getByTestId('library-row');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toHaveAttribute('data-status', 'failed');
  await expect(rows.first()).toContainText(/sched_wq\.v7\.dat.*server stopped/);
  await expect(page.locator(`[data-testid="library-row"][data-trace-id="${ID}"]`)).toHaveCount(0);

  await page.getByTestId('retry-upload').click();
  await expect(page.getByTestId('trace-view')).toBeVisible({ timeout: 120_000 });
  await expect(page).toHaveURL(new RegExp(`trace=${ID}`));
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });

  // Back in the library: the trace, and no stale failure next to it.
  await page.goBack();
  await expect(page.getByTestId('library-row')).toHaveCount(1);
  await expect(page.getByTestId('library-row').first()).toHaveAttribute('data-status', 'ready');
  expect(errors).toEqual([]);
});
