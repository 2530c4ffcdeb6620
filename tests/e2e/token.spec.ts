/**
 * Issue 27: a server with an access token. The URL it prints (`?token=`) is
 * opened once: the server answers with an HttpOnly SameSite=Strict cookie,
 * the app takes the token out of the address bar at once (history too), and
 * every request after that (library, trace, notes) is authorised by the
 * cookie. A browser without it gets a clear message and no data.
 */
import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { ServerProcess, freePort } from './server_process.ts';

const TOKEN = 'e2e-token-5f1c0a';
const FIXTURE = 'fixtures/reclaim_kswapd.v7.dat';
let server: ServerProcess;

test.beforeAll(async ({ request }) => {
  server = new ServerProcess(await freePort(), undefined, ['--token', TOKEN]);
  await server.start();
  expect(server.output()).toContain(`/?token=${TOKEN}`);
  const r = await request.post(`${server.base}/api/traces?name=reclaim.dat`, {
    data: readFileSync(FIXTURE),
    headers: { 'content-type': 'application/octet-stream', authorization: `Bearer ${TOKEN}` },
  });
  expect(r.status()).toBe(202);
  const { jobId } = await r.json();
  await expect
    .poll(
      async () =>
        (
          await (
            await request.get(`${server.base}/api/jobs/${jobId}`, { headers: { authorization: `Bearer ${TOKEN}` } })
          ).json()
        ).phase,
      { timeout: 60_000 },
    )
    .toBe('done');
});

test.afterAll(async () => {
  await server?.dispose();
});

test('the printed URL is opened once: token to an HttpOnly cookie, out of the address bar and history; the app works on the cookie', async ({
  page,
  context,
}) => {
  await page.goto(`${server.base}/?token=${TOKEN}`);
  await expect(page.getByTestId('library-row')).toHaveCount(1);
  expect(page.url()).toBe(`${server.base}/`);
  const cookies = await context.cookies(server.base);
  const c = cookies.find((x) => x.name === `stallscope_token_${server.port}`);
  expect(c).toMatchObject({ value: TOKEN, httpOnly: true, sameSite: 'Strict' });
  // Nothing the page's scripts can read holds the token.
  const visible = await page.evaluate(() =>
    [
      document.cookie,
      JSON.stringify(sessionStorage),
      JSON.stringify(localStorage),
      location.href,
      document.referrer,
    ].join(' '),
  );
  expect(visible).not.toContain(TOKEN);
  // Back in history is not the token URL either.
  expect(await page.evaluate(() => history.length)).toBe(2);
  await page.goBack();
  expect(page.url()).not.toContain(TOKEN);
  await page.goForward();
  // The trace opens (tracks, findings) on the cookie alone.
  await page.getByTestId('library-row').first().click();
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  expect(page.url()).not.toContain('token');
});

test('a browser without the cookie gets a clear message and no trace data', async ({ browser }) => {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(`${server.base}/`);
  await expect(page.getByTestId('library')).toContainText('needs an access token');
  await expect(page.getByTestId('library-row')).toHaveCount(0);
  await ctx.close();
});
