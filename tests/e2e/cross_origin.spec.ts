/**
 * Issue 27, holes 2 and 3 from a real browser: a page served by a second
 * local server (another origin: `localhost:<other port>`, which is another
 * site than 127.0.0.1, and `127.0.0.1:<other port>`, the same site) tries
 *
 * - no-cors uploads of a real trace (raw, form-encoded, multipart, text),
 * - a DNS-rebinding-style request: Chromium resolves `rebound.test` to
 *   127.0.0.1 (--host-resolver-rules), so the requests reach stallscope with
 *   `Host: rebound.test:<port>`, as they would once an attacker's name
 *   rebinds,
 * - framing the app;
 *
 * and every one is refused: nothing is uploaded, the rebound name gets no
 * answer, the frame stays empty.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from '@playwright/test';
import config, { E2E_PORT } from '../../playwright.config.ts';

const FIXTURE = 'fixtures/reclaim_kswapd.v7.dat';
const TARGET = `http://127.0.0.1:${E2E_PORT}`;

test.use({
  launchOptions: {
    ...config.use?.launchOptions,
    args: [...(config.use?.launchOptions?.args ?? []), '--host-resolver-rules=MAP rebound.test 127.0.0.1'],
  },
});

/** The attacker's page: it fires every attempt, then sets window.done. */
function attackerPage(target: string): string {
  return `<!doctype html><title>attacker</title>
<iframe id="frame" src="${target}/" width="400" height="300"></iframe>
<script>
(async () => {
  const trace = await (await fetch('/trace.bin')).arrayBuffer();
  const tries = [];
  const post = (url, init) => tries.push(fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include', ...init }).catch(() => null));
  post('${target}/api/traces?name=evil-raw.dat', { body: new Blob([trace], { type: 'application/octet-stream' }) });
  post('${target}/api/traces?name=evil-text.dat', { body: new Blob([trace], { type: 'text/plain' }) });
  const form = new FormData();
  form.append('file', new Blob([trace]), 'evil-multipart.dat');
  post('${target}/api/traces', { body: form });
  post('${target}/api/traces?name=evil-form.dat', { body: new URLSearchParams({ a: 'b' }) });
  // A form posted in a hidden frame: a navigation, not a fetch.
  const f = document.createElement('form');
  f.method = 'POST'; f.enctype = 'multipart/form-data'; f.target = 'sink'; f.action = '${target}/api/traces?name=evil-navigation.dat';
  const sink = document.createElement('iframe'); sink.name = 'sink'; document.body.append(sink, f);
  f.submit();
  // Reads through the rebound name (same port as stallscope, the attacker's name in Host).
  const rebound = '${target.replace('127.0.0.1', 'rebound.test')}';
  window.reboundStatus = await fetch(rebound + '/api/traces', { mode: 'no-cors' }).then((r) => r.type).catch((e) => 'error');
  await Promise.all(tries);
  await new Promise((r) => setTimeout(r, 1500));
  window.done = true;
})();
</script>`;
}

let attacker: http.Server;
let attackerPort = 0;

test.beforeAll(async () => {
  const trace = readFileSync(FIXTURE);
  attacker = http.createServer((req, res) => {
    if (req.url === '/trace.bin') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(trace);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(attackerPage(TARGET));
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerPort = (attacker.address() as AddressInfo).port;
});

test.afterAll(async () => {
  await new Promise((r) => attacker.close(r));
});

for (const host of ['localhost', '127.0.0.1']) {
  test(`a page on http://${host}:<other port> can neither upload, nor read through a rebound name, nor frame the app`, async ({
    page,
    request,
  }) => {
    const before = await (await request.get('/api/traces')).json();
    const consoleErrors: string[] = [];
    page.on('console', (m) => consoleErrors.push(m.text()));
    await page.goto(`http://${host}:${attackerPort}/`);
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { done?: boolean }).done === true), { timeout: 30_000 })
      .toBe(true);

    // Nothing was uploaded: no job, no trace beyond those there before.
    await new Promise((r) => setTimeout(r, 1000));
    const after = await (await request.get('/api/traces')).json();
    const names = [...after.jobs, ...after.traces].map((x: { name: string }) => x.name);
    expect(names.filter((n: string) => /evil/.test(n))).toEqual([]);
    expect(after.traces.length).toBe(before.traces.length);

    // The frame shows no part of the app (frame-ancestors 'none').
    const framed = page.frames().filter((f) => f !== page.mainFrame() && f.url().includes(String(E2E_PORT)));
    for (const f of framed)
      expect(
        await f
          .locator('#root')
          .count()
          .catch(() => 0),
      ).toBe(0);
    expect(consoleErrors.some((t) => /frame-ancestors|X-Frame-Options|Refused to (display|frame)/i.test(t))).toBe(true);
  });
}

test('a rebound name reaching stallscope gets nothing: not the app, not the API', async ({ page }) => {
  const resp = await page.goto(`http://rebound.test:${E2E_PORT}/`);
  expect(resp?.status()).toBe(421);
  expect(await page.locator('#root').count()).toBe(0);
  const api = await page.goto(`http://rebound.test:${E2E_PORT}/api/traces`);
  expect(api?.status()).toBe(421);
  expect(await page.content()).not.toContain('"traces"');
  // The same server by its own name answers (the refusal is about the name).
  expect((await page.goto(`${TARGET}/api/traces`))?.status()).toBe(200);
});
