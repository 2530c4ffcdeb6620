/**
 * A cut-off download of a compressed trace (the first 70% of a .gz of the
 * kernel's text): it opens with what came before the cut, and the top bar
 * says the file was cut off and where, not "1 line skipped".
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { dropFile } from './helpers.ts';

test('a cut-off .gz opens, and the top bar says where it was cut', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const gz = readFileSync('fixtures/compressed/tracefs_gz.bin');
  const cut = Math.floor(gz.length * 0.7);
  const dir = mkdtempSync(join(tmpdir(), 'stallscope-cut-'));
  const file = join(dir, 'cut-tracefs.txt.gz');
  writeFileSync(file, gz.subarray(0, cut));
  await page.goto('/');
  await dropFile(page, page.getByTestId('drop-zone'), file);
  rmSync(dir, { recursive: true, force: true });
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 60_000 });
  const gaps = page.getByTestId('ingest-gaps');
  await expect(gaps).toContainText(`file cut off at compressed byte ${cut.toLocaleString('en')}: the rest is missing`);
  await expect(gaps).not.toContainText('line skipped');
  await expect(gaps).toHaveAttribute('title', /Cut off: corrupt or truncated gzip stream .*unexpected end of file/);
  expect(errors).toEqual([]);
});
