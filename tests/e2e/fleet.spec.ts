/**
 * The fleet view: a server started with `serve --fleet DIR` on a dataset
 * that `stallscope batch` made of the compare pair's runs (config=vfs100 /
 * vfs1000, three each); one run is also in the server's library.
 *
 * The start page lists the dataset; its page shows the two settings, and
 * the median across traces of super_cache_scan's blocked time per setting,
 * computed here from `stallscope analyze --json` of each file; the address
 * survives a reload; a worst trace the library holds opens in the trace
 * view, one it does not hold names its file.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, test } from '@playwright/test';
import { ServerProcess, freePort } from './server_process.ts';

const FIXTURES = resolve('fixtures/compare');
const FILES = [1, 2, 3].flatMap((i) => [`vfs100.${i}.v7.dat`, `vfs1000.${i}.v7.dat`]);
const IN_LIBRARY = 'vfs1000.1.v7.dat';
const work = mkdtempSync(join(tmpdir(), 'stallscope-e2e-fleet-'));
const corpus = join(work, 'corpus');
const dataset = join(work, 'pair');
const blocked = new Map<string, number>(); // file -> super_cache_scan blocked ns (analyze --json)
let server: ServerProcess;

function cli(args: string[]): string {
  const r = spawnSync(
    process.execPath,
    [resolve('bin/stallscope.mjs'), '--data-dir', join(work, 'cli-data'), ...args],
    { encoding: 'utf8', maxBuffer: 1 << 28 },
  );
  if (r.status !== 0) throw new Error(`stallscope ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const sha = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');

test.beforeAll(async ({ request }) => {
  test.setTimeout(600_000);
  mkdirSync(corpus);
  for (const f of FILES) symlinkSync(join(FIXTURES, f), join(corpus, f));
  writeFileSync(join(work, 'labels.csv'), `file,config\n${FILES.map((f) => `${f},${f.split('.')[0]}`).join('\n')}\n`);
  cli(['batch', corpus, '--out', dataset, '--labels', join(work, 'labels.csv'), '--jobs', '2']);
  for (const f of FILES) {
    const a = JSON.parse(cli(['analyze', '--json', '--no-saved', join(corpus, f)])) as {
      metrics: { metric: string; key: string | null; value: number }[];
    };
    blocked.set(
      f,
      a.metrics.find((m) => m.metric === 'shrinker.blocked_ns' && m.key === 'super_cache_scan')?.value ?? 0,
    );
  }
  server = new ServerProcess(await freePort(), undefined, ['--fleet', dataset]);
  await server.start();
  const r = await request.post(`${server.base}/api/traces?name=${IN_LIBRARY}`, {
    data: readFileSync(join(FIXTURES, IN_LIBRARY)),
    headers: { 'content-type': 'application/octet-stream' },
  });
  expect(r.status()).toBe(202);
  const { jobId } = await r.json();
  await expect
    .poll(async () => (await (await request.get(`${server.base}/api/jobs/${jobId}`)).json()).phase, {
      timeout: 120_000,
    })
    .toBe('done');
});

test.afterAll(async () => {
  await server?.dispose();
  rmSync(work, { recursive: true, force: true });
});

test('a fleet dataset: per-setting table with medians across traces, reload, a worst trace opens in the trace view', async ({
  page,
}) => {
  await page.goto(`${server.base}/`);
  await page.getByTestId('fleet-dataset').filter({ hasText: 'pair' }).click();
  await expect(page).toHaveURL(/\?fleet=pair$/);
  await expect(page.getByTestId('fleet-setting')).toHaveText(['vfs100 (baseline)', 'vfs1000']);
  await page.getByTestId('fleet-all').check();
  const row = page.locator('[data-testid="fleet-row"][data-metric="shrinker.blocked_ns"][data-key="super_cache_scan"]');
  await expect(row).toHaveCount(1);
  for (const setting of ['vfs100', 'vfs1000']) {
    const expected = median(FILES.filter((f) => f.startsWith(`${setting}.`)).map((f) => blocked.get(f)!));
    expect(expected).toBeGreaterThan(0);
    const shown = Number(await row.locator(`td[data-setting="${setting}"]`).getAttribute('data-p50'));
    expect(Math.abs(shown - expected)).toBeLessThanOrEqual(1e-6 * expected);
  }
  // More super_cache_scan blocking at vfs_cache_pressure=1000: a change, marked worse.
  await expect(row.locator('td[data-setting="vfs1000"] [data-testid="fleet-change"]')).toContainText(/^\+\d/);

  await page.reload();
  await expect(page.getByTestId('fleet-setting')).toHaveText(['vfs100 (baseline)', 'vfs1000']);

  const worst = page.getByTestId('fleet-worst-row');
  await expect(worst).toHaveCount(FILES.length);
  const inLib = sha(join(FIXTURES, IN_LIBRARY));
  for (const f of FILES.filter((x) => x !== IN_LIBRARY)) {
    await expect(
      page.locator(
        `[data-testid="fleet-worst-row"][data-trace="${sha(join(FIXTURES, f))}"] [data-testid="fleet-not-in-library"]`,
      ),
    ).toContainText(join(corpus, f));
  }
  await page.locator(`[data-testid="fleet-worst-row"][data-trace="${inLib}"] [data-testid="fleet-open"]`).click();
  await expect(page).toHaveURL(new RegExp(`\\?trace=${inLib}`));
  await expect(page.getByTestId('trace-view')).toHaveAttribute('data-trace-id', inLib);
  await expect(page.getByTestId('trace-name')).toHaveText(IN_LIBRARY);
  await page.goBack();
  await expect(page.getByTestId('fleet-view')).toBeVisible();
});
