/**
 * Share links (issue 5): copy a link to a view with a finding selected,
 * tracks pinned and hidden, a zoomed window and a note in focus; open it in
 * a fresh browser context and see exactly that view; restart the server and
 * see it again; tampered and stale links open with a clear message and the
 * nearest sensible view.
 *
 * This file starts its own server (not the shared webServer) on a temporary
 * data directory, so it can kill and restart it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, request as pwRequest, test, type APIRequestContext, type Browser, type Page } from '@playwright/test';
import { ingest, SCREENSHOTS, visibleWindow } from './helpers.ts';

const FIXTURE =
  process.env.STALLSCOPE_E2E_TRACE ??
  (existsSync('fixtures/reclaim_kswapd.v7.dat')
    ? 'fixtures/reclaim_kswapd.v7.dat'
    : 'fixtures/handmade/kernel4x_kswapd_escalation.txt');
const PORT = 7433;
const BASE = `http://127.0.0.1:${PORT}`;
const DATA = mkdtempSync(join(tmpdir(), 'stallscope-links-'));

test.describe.configure({ mode: 'serial' });

let server: ChildProcess | null = null;
let api: APIRequestContext;
let trace = '';
/** The link copied in the first test, and what it showed. */
let link = '';
let shown: {
  t0: number;
  t1: number;
  finding: string;
  noteId: string;
  noteText: string;
  pinned: string;
  hiddenTrack: string;
};

async function startServer(): Promise<void> {
  const child = spawn(process.execPath, ['bin/stallscope.mjs', 'serve', '--port', String(PORT), '--data-dir', DATA], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (d) => {
    log += d;
  });
  child.stderr!.on('data', (d) => {
    log += d;
  });
  server = child;
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`server exited: ${log}`);
    try {
      if ((await fetch(`${BASE}/api/traces`)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`server did not start: ${log}`);
}

async function stopServer(): Promise<void> {
  const child = server;
  server = null;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

async function shot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/** A fresh browser context (no storage, no history) with the link open and the timeline painted. */
async function openFresh(browser: Browser, url: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(url);
  return page;
}

async function expectSameView(page: Page, label: string) {
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  // Exactly the same window, selection, tracks and note.
  const w = await visibleWindow(page);
  expect(w, label).toEqual({ t0: shown.t0, t1: shown.t1 });
  await expect(page.locator(`[data-finding-index="${shown.finding}"]`)).toHaveAttribute('data-selected', 'true');
  await expect(page.getByTestId('details-panel')).toHaveAttribute('data-kind', 'finding');
  const note = page.getByTestId(`note-${shown.noteId}`).first();
  await expect(note).toHaveAttribute('data-focused', 'true');
  await expect(note).toContainText(shown.noteText);
  await expect(page.getByTestId('selection-notes')).toContainText(shown.noteText);
  await expect(page.getByTestId('pinned-area').locator(`[data-uri="${shown.pinned}"]`)).toBeVisible();
  await expect(page.locator(`[data-uri="${shown.hiddenTrack}"]`)).toHaveCount(0);
  await expect(page.getByTestId('link-banner')).toHaveCount(0);
  expect(page.url()).toBe(link);
}

test.beforeAll(async () => {
  await startServer();
  api = await pwRequest.newContext({ baseURL: BASE });
  trace = await ingest(api, FIXTURE);
});

test.afterAll(async () => {
  await api?.dispose();
  await stopServer();
});

test('a copied link opens the same view in a fresh browser, and again after a server restart', async ({ browser }) => {
  const context = await browser.newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${BASE}/?trace=${trace}`);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });

  // A view worth sharing: a finding, zoomed in, one track pinned, one hidden, a note.
  const finding = page
    .locator('[data-detector="shrinker_blocking"]')
    .first()
    .or(page.locator('[data-finding-index]').first())
    .first();
  const index = (await finding.getAttribute('data-finding-index'))!;
  await finding.click();
  await expect(finding).toHaveAttribute('data-selected', 'true');
  await page.keyboard.press('w');
  await page.keyboard.press('w');
  const pinned = (await page.locator('[data-uri^="cpu#"]').last().getAttribute('data-uri'))!;
  await page.getByTestId(`track-${pinned}`).hover();
  await page.getByTestId(`pin-${pinned}`).click();
  const hiddenTrack = (await page.locator('[data-uri^="counter#"]').last().getAttribute('data-uri'))!;
  await page.getByTestId(`track-${hiddenTrack}`).hover();
  await page.getByTestId(`track-${hiddenTrack}`).getByRole('button', { name: 'hide track' }).click();
  await expect(page.locator(`[data-uri="${hiddenTrack}"]`)).toHaveCount(0);

  await page.keyboard.press('n');
  await page.getByTestId('note-author-input').fill('Linus');
  const noteText = 'This is the shrinker stall from the v2 review: kswapd waits on super_cache_scan.';
  await page.getByTestId('note-text').fill(noteText);
  await page.getByTestId('note-save').click();
  await expect(page.getByTestId('note-editor')).toBeHidden();
  const noteId = (await page.getByTestId('notes-list').locator('.note-card').first().getAttribute('data-note-id'))!;

  // Copy link (the L key): from the clipboard, and the same link shown in the page.
  await page.keyboard.press('l');
  await expect(page.getByTestId('toast')).toContainText('Link copied');
  link = await page.evaluate(() => navigator.clipboard.readText());
  await expect(page.getByTestId('share-link')).toHaveValue(link);
  const w = await visibleWindow(page);
  shown = { t0: w.t0, t1: w.t1, finding: index, noteId, noteText, pinned, hiddenTrack };
  // Readable and stable: the content hash, integer ns, the selection, tracks, the note.
  const u = new URL(link);
  expect(u.origin).toBe(BASE);
  // The note and the trace's facts also travel in the fragment (issue 37: annotated_links.spec.ts).
  expect(u.hash).toMatch(/^#link=v1\.[\w-]+$/);
  expect(u.searchParams.get('trace')).toBe(trace);
  expect(u.searchParams.get('t0')).toBe(String(w.t0));
  expect(u.searchParams.get('t1')).toBe(String(w.t1));
  expect(u.searchParams.get('sel')).toBe(`finding:${index}`);
  expect(u.searchParams.get('pin')).toBe(pinned.replace('#', ':'));
  expect(u.searchParams.get('hide')).toBe(hiddenTrack.replace('#', ':'));
  expect(u.searchParams.get('note')).toBe(noteId);
  expect(link).toMatch(
    new RegExp(
      `^${BASE}/\\?trace=[0-9a-f]{64}&t0=\\d+&t1=\\d+&sel=finding:\\d+&pin=cpu:\\d+&hide=counter:\\d+&note=[\\w-]{22}#link=v1\\.[\\w-]+$`,
    ),
  );
  await shot(page, '12-share-link-copied');
  await context.close();

  // A fresh browser context: same window, selection, tracks and note.
  const p2 = await openFresh(browser, link);
  await expectSameView(p2, 'fresh context');
  await shot(p2, '13-share-link-opened-fresh-context');
  await p2.context().close();

  // Restart the server (same data directory) and open the link again.
  await stopServer();
  await startServer();
  const p3 = await openFresh(browser, link);
  await expectSameView(p3, 'after restart');
  await shot(p3, '14-share-link-after-server-restart');
  await p3.context().close();
  expect(errors).toEqual([]);
});

test('hand-editing the window in a link works', async ({ browser }) => {
  const u = new URL(link);
  const mid = Math.round((shown.t0 + shown.t1) / 2);
  u.searchParams.set('t0', String(mid - 20_000));
  u.searchParams.set('t1', String(mid + 20_000));
  const page = await openFresh(browser, u.toString().replace(/%3A/g, ':'));
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  expect(await visibleWindow(page)).toEqual({ t0: mid - 20_000, t1: mid + 20_000 });
  await expect(page.getByTestId('link-banner')).toHaveCount(0);
  await page.context().close();
});

test('tampered and stale links open with a clear message and the nearest sensible view', async ({ browser }) => {
  const dialogs: string[] = [];
  const open = async (url: string) => {
    const page = await openFresh(browser, url);
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    return page;
  };

  // Unknown trace: the page that asks for its file, naming it; the fragment's facts are another trace's, so not used.
  const unknown = await open(link.replace(trace, 'f'.repeat(64)));
  await expect(unknown.getByTestId('missing-trace')).toBeVisible();
  await expect(unknown.getByTestId('missing-sha256')).toHaveText('f'.repeat(64));
  await expect(unknown.getByTestId('link-banner')).toContainText('notes in this link are for another trace');
  await unknown.getByTestId('missing-back').click();
  await expect(unknown.getByTestId('library-row').first()).toBeVisible();
  await shot(unknown, '15-link-unknown-trace');
  await unknown.context().close();

  // t0 > t1: the rest of the view, the finding's window.
  const u = new URL(link);
  u.searchParams.set('t0', String(shown.t1));
  u.searchParams.set('t1', String(shown.t0));
  const swapped = await open(u.toString());
  await expect(swapped.getByTestId('link-banner')).toContainText('ends before it starts');
  await expect(swapped.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  await expect(swapped.locator(`[data-finding-index="${shown.finding}"]`)).toHaveAttribute('data-selected', 'true');
  const fw = await visibleWindow(swapped);
  expect(fw.t1).toBeGreaterThan(fw.t0);
  await shot(swapped, '16-link-t0-after-t1');
  await swapped.context().close();

  // Window far outside the trace: clamped into it.
  const far = new URL(link);
  far.searchParams.set('t0', '900000000000000');
  far.searchParams.set('t1', '900000100000000');
  const outside = await open(far.toString());
  await expect(outside.getByTestId('link-banner')).toContainText('is outside this trace');
  await expect(outside.getByTestId('link-banner')).toContainText('showing the selected finding');
  await expect(outside.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  // The selected finding's window (as a click on it gives), inside the trace.
  const sel = outside.locator(`[data-finding-index="${shown.finding}"]`);
  const fts = Number(await sel.getAttribute('data-ts'));
  const fdur = Number(await sel.getAttribute('data-dur'));
  const ow = await visibleWindow(outside);
  expect(ow.t0).toBeLessThanOrEqual(fts);
  expect(ow.t1).toBeGreaterThanOrEqual(fts + fdur);
  expect(ow.t1 - ow.t0).toBeLessThan(Math.max(fdur * 2, 200_000));
  await shot(outside, '16b-link-window-outside-trace');
  await outside.context().close();
  // Without a selection: the whole trace.
  far.searchParams.delete('sel');
  far.searchParams.delete('note');
  const outside2 = await open(far.toString());
  await expect(outside2.getByTestId('link-banner')).toContainText('showing the whole trace');
  await expect(outside2.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  const tracks = await (await api.get(`/api/traces/${trace}/tracks`)).json();
  expect(await visibleWindow(outside2)).toEqual({ t0: Math.floor(tracks.start), t1: Math.ceil(tracks.end) });
  await outside2.context().close();

  // Garbage everywhere: the library, every problem named, nothing executed.
  const garbage = await open(
    `${BASE}/?trace=../../etc/passwd&t0=abc&t1=1&sel=<script>alert(1)</script>&pin=../../x&note=<img src=x onerror=alert(2)>`,
  );
  const banner = garbage.getByTestId('link-banner');
  await expect(banner).toContainText('is not a trace content hash');
  await expect(banner).toContainText('is not two integers');
  await expect(banner).toContainText('is not understood');
  await expect(banner).toContainText('malformed track names');
  await expect(banner).toContainText('note id');
  await expect(banner.locator('img, script')).toHaveCount(0);
  await expect(garbage.getByTestId('start-page')).toBeVisible();
  await shot(garbage, '17-link-garbage');
  await garbage.context().close();

  // The note was deleted since the link was shared: the rest of the view, without it.
  const del = await api.delete(`/api/traces/${trace}/notes/${shown.noteId}`);
  expect(del.status()).toBe(204);
  // (Without the link's fragment: with it, the link itself still carries the note, shown as coming from the link.)
  const carried = await open(link);
  await expect(carried.getByTestId(`note-${shown.noteId}`).first()).toHaveAttribute('data-from-link', 'true');
  await expect(carried.getByTestId('link-banner')).toHaveCount(0);
  await carried.context().close();
  const stale = await open(link.replace(/#.*$/, ''));
  await expect(stale.getByTestId('link-banner')).toContainText('note this link points to has been deleted');
  await expect(stale.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
  expect(await visibleWindow(stale)).toEqual({ t0: shown.t0, t1: shown.t1 });
  await expect(stale.locator(`[data-finding-index="${shown.finding}"]`)).toHaveAttribute('data-selected', 'true');
  await expect(stale).not.toHaveURL(/note=/);
  await shot(stale, '18-link-deleted-note');
  // The banner can be dismissed.
  await stale.getByTestId('link-banner-close').click();
  await expect(stale.getByTestId('link-banner')).toHaveCount(0);
  await stale.context().close();
  expect(dialogs).toEqual([]);
});
