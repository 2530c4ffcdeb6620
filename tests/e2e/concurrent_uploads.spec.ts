/**
 * Issue 4: two uploads at once from two browser tabs. The same file dropped in
 * both: both tabs open the same trace, ingested once (one library row). Two
 * different files: both open, both are listed. (Server-side details:
 * server/api/concurrent_uploads.test.ts.)
 */
import { expect, test, type Page } from '@playwright/test';
import { dropFile } from './helpers.ts';
import { ServerProcess, freePort, sha256 } from './server_process.ts';

const A = 'fixtures/reclaim_kswapd.v7.dat';
const B = 'fixtures/swap_writeback.v7.dat';

let server: ServerProcess;
test.beforeAll(async () => {
  server = new ServerProcess(await freePort());
  await server.start();
});
test.afterAll(async () => {
  await server?.dispose();
});

async function opened(page: Page, id: string) {
  await expect(page.getByTestId('trace-view')).toBeVisible({ timeout: 120_000 });
  await expect(page).toHaveURL(new RegExp(`trace=${id}`));
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
}

test('two tabs upload at once: the same file is ingested once, different files both', async ({ context }) => {
  const [p1, p2] = [await context.newPage(), await context.newPage()];
  await Promise.all([p1.goto(`${server.base}/`), p2.goto(`${server.base}/`)]);
  await Promise.all([
    dropFile(p1, p1.getByTestId('drop-zone'), A, 'first.dat'),
    dropFile(p2, p2.getByTestId('drop-zone'), A, 'second.dat'),
  ]);
  await Promise.all([opened(p1, sha256(A)), opened(p2, sha256(A))]);
  expect(server.traceDirs()).toEqual([sha256(A)]);

  await Promise.all([p1.goto(`${server.base}/`), p2.goto(`${server.base}/`)]);
  await Promise.all([
    dropFile(p1, p1.getByTestId('drop-zone'), B),
    dropFile(p2, p2.getByTestId('drop-zone'), 'fixtures/memcg_reclaim.v7.dat'),
  ]);
  await Promise.all([opened(p1, sha256(B)), opened(p2, sha256('fixtures/memcg_reclaim.v7.dat'))]);

  await p1.goto(`${server.base}/`);
  const rows = p1.getByTestId('library-row');
  await expect(rows).toHaveCount(3);
  expect(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-status')))).toEqual([
    'ready',
    'ready',
    'ready',
  ]);
  expect(server.tmpEntries().filter((n) => n.startsWith('upload-'))).toEqual([]);
});
