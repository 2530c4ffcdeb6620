/**
 * Writeback and block I/O in the browser (issue 34), on the real page-cache
 * flood recording (fixtures/writeback_flood.v7.dat: a dd writer, the flusher
 * writing back, a dd reader on the same XFS loop device 7,2):
 *   - the overview has a line per device; the one for 7,2 says how many
 *     requests completed (awk over `trace-cmd report` pairs them) and links
 *     to the io_latency finding;
 *   - clicking it selects the finding, whose details name the device, the
 *     slowest read (its latency from awk), and list the block_rq events;
 *   - the timeline has the dirty / writeback counter tracks and a read and a
 *     write latency track per device.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { SCREENSHOTS, ingest } from './helpers.ts';

test.describe.configure({ mode: 'serial' });

const FLOOD = 'fixtures/writeback_flood.v7.dat';

/**
 * awk over `trace-cmd report -t`: block requests paired issue -> complete by (dev, sector), a flush
 * (zero length, rwbs with F: issued at sector 0, completed at (sector_t)-1) with its device's open flush;
 * per device, completed requests and the slowest read (ns).
 */
function blockFacts(): Map<string, { requests: number; maxRead: number }> {
  const report = execFileSync('trace-cmd', ['report', '-t', '-i', FLOOD], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const out = execFileSync(
    'awk',
    [
      `{ ev = ""; for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\\.[0-9]+:$/) { ts = substr($i, 1, length($i) - 1); ev = $(i + 1); j = i + 1; break }
         if (ev == "") next; sub(/:$/, "", ev); split(ts, a, "."); t = a[1] * 1000000000 + a[2] }
       ev == "block_rq_issue" { k = $(j + 1) " " (($(j + 7) == 0 && $(j + 2) ~ /F/) ? "flush" : $(j + 5)); it[k] = t; rd[k] = ($(j + 2) ~ /R/) }
       ev == "block_rq_complete" { d = $(j + 1); k = d " " (($(j + 6) == 0 && $(j + 2) ~ /F/) ? "flush" : $(j + 4)); if (k in it) { n[d]++; if (rd[k] && t - it[k] > m[d]) m[d] = t - it[k]; delete it[k] } }
       END { for (d in n) print d, n[d], m[d] + 0 }`,
    ],
    { input: report, encoding: 'utf8' },
  );
  return new Map(
    out
      .trim()
      .split('\n')
      .map((l) => {
        const [d, n, m] = l.split(' ');
        return [d!, { requests: Number(n), maxRead: Number(m) }];
      }),
  );
}

let trace = '';
test.beforeAll(async ({ request }) => {
  trace = await ingest(request, FLOOD);
});

async function openTrace(page: Page) {
  await page.goto(`/?trace=${trace}`);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 60_000 });
}

test('an I/O latency overview line leads to its finding: the device, the slowest read, the block events', async ({
  page,
}) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const facts = blockFacts();
  const loop = facts.get('7,2')!;
  expect(loop.requests).toBeGreaterThan(1000);
  await openTrace(page);
  const overview = page.getByTestId('overview-panel');
  const line = overview.locator('[data-testid="overview-line"][data-overview-detector="io_latency"]', {
    hasText: '7,2:',
  });
  await expect(line).toHaveCount(1);
  await expect(line).toContainText(`7,2: ${loop.requests.toLocaleString('en')} requests`);
  await expect(line).toContainText(/^warn/);
  const id = await line.getAttribute('data-finding-id');
  expect(id).not.toBeNull();
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, 'writeback-io-01-overview.png') });
  await line.getByRole('button').click();
  await expect(page.locator(`[data-finding-index="${id}"]`)).toHaveAttribute('data-selected', 'true');
  const details = page.getByTestId('details-panel');
  await expect(details).toHaveAttribute('data-kind', 'finding');
  // the title as the detector words it, with the slowest read's latency from awk
  await expect(details).toContainText(`reads on 7,2 waited up to ${(loop.maxRead / 1e6).toFixed(1)} ms behind writes`);
  await expect(details).toContainText('dirtied by dd[');
  await expect(page.getByTestId('raw-lines')).toContainText(/block_rq_issue: +7,2 R/);
  await expect(page.getByTestId('raw-lines')).toContainText(/block_rq_complete: +7,2 R/);
  await page.screenshot({ path: join(SCREENSHOTS, 'writeback-io-02-finding.png') });
  expect(errors).toEqual([]);
});

test('the timeline has dirty / writeback counter tracks and a read and a write latency track per device', async ({
  page,
}) => {
  await openTrace(page);
  await page.getByTestId('track-filter').fill('latency');
  for (const name of ['block R latency 7,2', 'block W latency 7,2', 'block R latency 254,0', 'block W latency 254,0']) {
    await expect(page.locator('.track-title').getByText(name, { exact: true })).toHaveCount(1);
  }
  await page.getByTestId('track-filter').fill('pages');
  await expect(page.locator('.track-title').getByText('dirty pages', { exact: true })).toHaveCount(1);
  await expect(page.locator('.track-title').getByText('writeback pages', { exact: true })).toHaveCount(1);
  await page.screenshot({ path: join(SCREENSHOTS, 'writeback-io-03-tracks.png') });
});
