/**
 * Browser tests in real Chromium (Debian's /usr/bin/chromium, see
 * shared STACK-NOTES): the real server on a fresh temporary data directory,
 * serving the built app (run `npx vite build` first; `npm test` does).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from '@playwright/test';

// STALLSCOPE_E2E_PORT lets two checkouts run their browser tests at once.
export const E2E_PORT = Number(process.env.STALLSCOPE_E2E_PORT ?? 7431);
// Computed once in the runner and inherited by workers through the environment.
process.env.STALLSCOPE_E2E_DATA ??= mkdtempSync(join(tmpdir(), 'stallscope-e2e-'));

export default defineConfig({
  testDir: 'tests/e2e',
  timeout: 180_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [['list']],
  outputDir: 'test-results/artifacts',
  use: {
    baseURL: `http://127.0.0.1:${E2E_PORT}`,
    viewport: { width: 1500, height: 900 },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  webServer: {
    command: `node bin/stallscope.mjs serve --port ${E2E_PORT} --data-dir ${process.env.STALLSCOPE_E2E_DATA}`,
    url: `http://127.0.0.1:${E2E_PORT}/api/traces`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'pipe',
    stderr: 'pipe',
  },
});
