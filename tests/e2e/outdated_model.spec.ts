/**
 * A library that an older stallscope filled (its info.json has no model
 * version): the app marks the trace "older model" in the library and in the
 * trace's top bar, and dropping the file again rebuilds it with this
 * version's decoding, after which the mark is gone. A trace the command
 * line ingested has no findings until it is opened: the library says so
 * rather than "none".
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, test } from '@playwright/test';
import { dropFile } from './helpers.ts';
import { ServerProcess, freePort, sha256 } from './server_process.ts';

const FIXTURE = 'fixtures/handmade/kernel4x_kswapd_escalation.txt';
const ID = sha256(FIXTURE);

let server: ServerProcess;
test.beforeAll(async () => {
  server = new ServerProcess(await freePort());
  execFileSync(
    process.execPath,
    [resolve('bin/stallscope.mjs'), 'ingest', FIXTURE, '--quiet', '--data-dir', server.dataDir],
    { stdio: 'pipe' },
  );
  const infoFile = join(server.dataDir, 'traces', ID, 'info.json');
  const { modelVersion, ...older } = JSON.parse(readFileSync(infoFile, 'utf8'));
  expect(modelVersion).toBeGreaterThan(0);
  writeFileSync(infoFile, JSON.stringify(older));
  await server.start();
});
test.afterAll(async () => {
  await server?.dispose();
});

test('an outdated trace is marked, and dropping its file again rebuilds it', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${server.base}/`);
  const row = page.locator(`[data-testid="library-row"][data-trace-id="${ID}"]`);
  await expect(row.getByTestId('model-outdated')).toContainText('older model: drop the file again to rebuild');
  await expect(row.getByTestId('findings-not-run')).toHaveText('not run yet');

  await row.click();
  await expect(page.getByTestId('trace-view')).toBeVisible();
  await expect(page.getByTestId('model-outdated')).toBeVisible();
  await expect(page.getByTestId('model-outdated')).toHaveAttribute('title', /model version 0/);

  await page.getByTestId('home').click();
  await dropFile(page, page.getByTestId('drop-zone'), FIXTURE);
  await expect(page.getByTestId('trace-view')).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  await expect(page.getByTestId('model-outdated')).toHaveCount(0);
  const rebuilt = JSON.parse(readFileSync(join(server.dataDir, 'traces', ID, 'info.json'), 'utf8'));
  expect(rebuilt.modelVersion).toBeGreaterThan(0);

  await page.getByTestId('home').click();
  await expect(row).toBeVisible();
  await expect(row.getByTestId('model-outdated')).toHaveCount(0);
  await expect(row.getByTestId('findings-not-run')).toHaveCount(0);
  await expect(row.getByTestId('count-warn')).toBeVisible(); // kswapd escalation: fixtures/handmade/README.md
  expect(errors).toEqual([]);
});
