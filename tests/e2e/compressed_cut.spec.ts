/**
 * A cut-off download of a compressed trace (the first 70% of a .gz of the
 * kernel's text): it opens with what came before the cut, and the top bar
 * says the file was cut off and where, not "1 line skipped".
 */
import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';

test('a cut-off .gz opens, and the top bar says where it was cut', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const gz = readFileSync('fixtures/compressed/tracefs_gz.bin');
  const cut = Math.floor(gz.length * 0.7);
  await page.goto('/');
  const b64 = gz.subarray(0, cut).toString('base64');
  const dt = await page.evaluateHandle((b64) => {
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const d = new DataTransfer();
    d.items.add(new File([bytes], 'cut-tracefs.txt.gz'));
    return d;
  }, b64);
  const zone = page.getByTestId('drop-zone');
  for (const ev of ['dragenter', 'dragover', 'drop']) await zone.dispatchEvent(ev, { dataTransfer: dt });
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 60_000 });
  const gaps = page.getByTestId('ingest-gaps');
  await expect(gaps).toContainText(`file cut off at compressed byte ${cut.toLocaleString('en')}: the rest is missing`);
  await expect(gaps).not.toContainText('line skipped');
  await expect(gaps).toHaveAttribute('title', /Cut off: corrupt or truncated gzip stream .*unexpected end of file/);
  expect(errors).toEqual([]);
});
