/**
 * Perfetto interop in the browser (issue 33): a real tracebox recording
 * (fixtures/perfetto_reclaim.pftrace) uploads and opens like any trace,
 * with its reclaim findings; "Perfetto trace" downloads the trace with its
 * findings as a Perfetto trace that Perfetto's trace_processor_shell loads;
 * "Open in Perfetto" hands the same file to the UI window with Perfetto's
 * postMessage protocol (PING until PONG, then {perfetto: {buffer, title,
 * url}}). ui.perfetto.dev is not reachable from the test machine, so that
 * origin is answered by a page that speaks the protocol as the UI does and
 * shows what it received.
 */
import { expect, test } from '@playwright/test';
import { ingest } from './helpers.ts';
import { queryTraceProcessor } from '../support/decode/perfetto/test_trace_processor.ts';

const FIXTURE = 'fixtures/perfetto_reclaim.pftrace';

test.describe.configure({ mode: 'serial' });

let trace = '';

test('a tracebox recording opens with its reclaim findings; the Perfetto export downloads and loads in trace_processor', async ({
  page,
  request,
}) => {
  trace = await ingest(request, FIXTURE);
  await page.goto(`/?trace=${trace}`);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  await expect(page.locator('[data-finding-index]').first()).toBeVisible();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-perfetto').click()]);
  expect(download.suggestedFilename()).toMatch(/^stallscope-perfetto_reclaim-[0-9a-f]{12}\.perfetto-trace$/);
  const file = (await download.path())!;
  const { findings } = await (await request.get(`/api/traces/${trace}/findings`)).json();
  const [tracks] = queryTraceProcessor(file, [
    "select t.name as track, count(*) as n from slice s join track t on s.track_id = t.id where t.name like 'stallscope: %' group by 1 order by 1",
  ]);
  const expected: Record<string, number> = {};
  for (const f of findings as { detector: string }[])
    expected[`stallscope: ${f.detector}`] = (expected[`stallscope: ${f.detector}`] ?? 0) + 1;
  expect(Object.fromEntries(tracks!.map((r) => [r.track, Number(r.n)]))).toEqual(expected);
});

test('Open in Perfetto posts the trace to the Perfetto UI window once it answers PING', async ({ page, context }) => {
  await context.route('https://ui.perfetto.dev/**', (route) =>
    route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><title>waiting</title><script>
        addEventListener('message', (e) => {
          if (e.data === 'PING') { e.source.postMessage('PONG', e.origin); return; }
          const p = e.data && e.data.perfetto;
          if (p) document.title = 'received ' + p.buffer.byteLength + ' bytes: ' + p.title + ' from ' + e.origin;
        });
      </script>`,
    }),
  );
  await page.goto(`/?trace=${trace}`);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  const [popup] = await Promise.all([context.waitForEvent('page'), page.getByTestId('open-perfetto').click()]);
  await expect(popup).toHaveTitle(
    /^received \d+ bytes: stallscope: perfetto_reclaim\.pftrace from http:\/\/127\.0\.0\.1:\d+$/,
    { timeout: 30_000 },
  );
  const bytes = Number(/received (\d+) bytes/.exec(await popup.title())![1]);
  const exported = await page.request.get(`/api/traces/${trace}/export.perfetto-trace`);
  expect(bytes).toBe((await exported.body()).length);
  await expect(page.getByTestId('perfetto-status')).toBeHidden();
});
