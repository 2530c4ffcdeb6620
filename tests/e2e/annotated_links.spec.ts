/**
 * Annotated links for a reviewer who does not share your server (issue 37):
 * two servers on two data directories, two people. Alice ingests a real
 * recording, notes a finding and copies the link; Bob, whose stallscope has
 * never seen the trace, opens it, is asked for the file (a wrong one is
 * refused with both hashes), drops the right one, sees the view and Alice's
 * note marked as coming from the link, keeps it, and still has it after a
 * restart. Tampered and oversized fragments give a message and the view.
 * The notes file goes from Bob's server back to Alice's.
 *
 * Expected facts come from the files (size, sha256 by node:crypto; the
 * kernel from `trace-cmd dump --options`), never from the app's output.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { SCREENSHOTS, dropFile, visibleWindow } from './helpers.ts';
import { ServerProcess, freePort, sha256 } from './server_process.ts';

const TRACE = 'fixtures/reclaim_kswapd.full.v7.dat';
const WRONG = 'fixtures/memcg_reclaim.v7.dat';
const TRACE_SHA = sha256(TRACE);
const WRONG_SHA = sha256(WRONG);
/** The kernel the recording names (its UNAME option), as trace-cmd reads it. */
const KERNEL = (() => {
  const dump = execFileSync('trace-cmd', ['dump', '--options', TRACE], { encoding: 'utf8' });
  const m = /Option UNAME[^\n]*\n([^\n]+)/.exec(dump);
  if (!m) throw new Error(`no UNAME option in ${TRACE}`);
  return m[1]!.trim();
})();

test.describe.configure({ mode: 'serial' });

let alice: ServerProcess;
let bob: ServerProcess;
/** The link Alice copied, and what it showed. */
let link = '';
let shown: { t0: number; t1: number; finding: string; noteId: string };
const NOTE_TEXT =
  'kswapd **escalates** here: priority drops while `shrink_slab` runs. <img src=x onerror="window.__pwned=1"> [do not](javascript:window.__pwned=2) [lore](https://lore.kernel.org/linux-mm/)';

async function shot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

async function fresh(browser: Browser): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  (page as Page & { errors?: string[] }).errors = errors;
  return page;
}

function errorsOf(page: Page): string[] {
  return (page as Page & { errors?: string[] }).errors ?? [];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tests read whatever JSON each route returns
async function apiJson(base: string, path: string): Promise<any> {
  const r = await fetch(`${base}${path}`);
  return r.json();
}

/** The link opened on Bob's server: its query and fragment, his origin. */
function onBob(url: string): string {
  const u = new URL(url);
  return `${bob.base}/${u.search}${u.hash}`;
}

test.beforeAll(async () => {
  alice = new ServerProcess(await freePort());
  bob = new ServerProcess(await freePort());
  await alice.start();
  await bob.start();
});

test.afterAll(async () => {
  await alice?.dispose();
  await bob?.dispose();
});

test("Alice notes a finding and copies a link that carries the note and the file's facts", async ({ browser }) => {
  const page = await fresh(browser);
  await page.goto(alice.base);
  await dropFile(page, page.getByTestId('drop-zone'), TRACE);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 60_000 });
  expect(new URL(page.url()).searchParams.get('trace')).toBe(TRACE_SHA);

  const finding = page
    .locator('[data-detector="kswapd_escalation"]')
    .first()
    .or(page.locator('[data-finding-index]').first())
    .first();
  const index = (await finding.getAttribute('data-finding-index'))!;
  await finding.click();
  await expect(finding).toHaveAttribute('data-selected', 'true');
  await page.keyboard.press('n');
  await page.getByTestId('note-author-input').fill('Alice');
  await page.getByTestId('note-text').fill(NOTE_TEXT);
  await page.getByTestId('note-save').click();
  await expect(page.getByTestId('note-editor')).toBeHidden();
  const noteId = (await page.getByTestId('notes-list').locator('.note-card').first().getAttribute('data-note-id'))!;

  await page.keyboard.press('l');
  await expect(page.getByTestId('toast')).toContainText('Link copied');
  link = await page.getByTestId('share-link').inputValue();
  const w = await visibleWindow(page);
  shown = { t0: w.t0, t1: w.t1, finding: index, noteId };
  const u = new URL(link);
  expect(u.origin).toBe(alice.base);
  expect(u.searchParams.get('trace')).toBe(TRACE_SHA);
  expect(u.searchParams.get('sel')).toBe(`finding:${index}`);
  expect(u.searchParams.get('note')).toBe(noteId);
  // The notes travel in the fragment (never sent to a server), versioned, within 8 KB.
  expect(u.hash).toMatch(/^#link=v1\.[A-Za-z0-9_-]+$/);
  expect(link.length).toBeLessThanOrEqual(8192);
  expect(link).not.toContain('escalates');
  await shot(page, '37-01-alice-link-copied');
  expect(errorsOf(page)).toEqual([]);
  await page.context().close();
});

test('Bob, who has never seen the trace, is asked for exactly that file; a wrong one is refused', async ({
  browser,
}) => {
  expect(link).not.toBe('');
  const page = await fresh(browser);
  // Bob pastes Alice's link into his own stallscope.
  await page.goto(bob.base);
  await page.getByTestId('open-link-input').fill(link);
  await page.getByTestId('open-link-go').click();
  const missing = page.getByTestId('missing-trace');
  await expect(missing).toBeVisible();
  expect(new URL(page.url()).origin).toBe(bob.base);
  expect(new URL(page.url()).hash).toBe(new URL(link).hash);
  await expect(page.getByTestId('missing-name')).toHaveText(basename(TRACE));
  await expect(page.getByTestId('missing-size')).toContainText(`${statSync(TRACE).size.toLocaleString('en')} bytes`);
  await expect(page.getByTestId('missing-sha256')).toHaveText(TRACE_SHA);
  await expect(page.getByTestId('missing-kernel')).toHaveText(KERNEL);
  await expect(page.getByTestId('missing-recorded')).toContainText('not known');
  await shot(page, '37-02-bob-asked-for-the-file');

  // The wrong file: refused with both hashes, nothing added to Bob's library.
  await dropFile(page, page.getByTestId('missing-drop-zone'), WRONG);
  await expect(page.getByTestId('missing-refused')).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId('refused-actual')).toHaveText(WRONG_SHA);
  await expect(page.getByTestId('refused-expected')).toHaveText(TRACE_SHA);
  expect((await apiJson(bob.base, '/api/traces')).traces).toEqual([]);
  await shot(page, '37-03-bob-wrong-file-refused');

  // The right file (by the file picker this time): the linked view, with Alice's note from the link.
  await page.getByTestId('missing-file-input').setInputFiles(TRACE);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 60_000 });
  expect(await visibleWindow(page)).toEqual({ t0: shown.t0, t1: shown.t1 });
  await expect(page.locator(`[data-finding-index="${shown.finding}"]`)).toHaveAttribute('data-selected', 'true');
  const card = page.getByTestId('link-notes').getByTestId(`note-${shown.noteId}`);
  await expect(card).toHaveAttribute('data-from-link', 'true');
  await expect(card).toHaveAttribute('data-focused', 'true');
  await expect(card.getByTestId('from-link-badge')).toBeVisible();
  await expect(card.getByTestId('note-author')).toHaveText('Alice');
  await expect(card).toContainText('kswapd escalates here');
  await expect(page.getByTestId('selection-notes')).toContainText('kswapd escalates here');
  // Rendered as any note: Markdown, no HTML, no javascript: link.
  await expect(card.locator('strong')).toHaveText('escalates');
  await expect(card.locator('img, script')).toHaveCount(0);
  await expect(card.locator('a')).toHaveCount(1);
  await expect(card.locator('a')).toHaveAttribute('href', 'https://lore.kernel.org/linux-mm/');
  expect(await page.evaluate(() => (window as Window & { __pwned?: number }).__pwned)).toBeUndefined();
  // Not Bob's yet: his server has no notes.
  expect((await apiJson(bob.base, `/api/traces/${TRACE_SHA}/notes`)).notes).toEqual([]);
  await shot(page, '37-04-bob-linked-view-with-note');

  // Keep these notes: they are Bob's now, with Alice's id, name and time.
  await page.getByTestId('keep-link-notes').click();
  await expect(page.getByTestId('toast')).toContainText('1 note added from the link');
  await expect(page.getByTestId('link-notes')).toHaveCount(0);
  await expect(page.getByTestId('notes-list').getByTestId(`note-${shown.noteId}`)).toHaveAttribute(
    'data-from-link',
    'false',
  );
  expect(new URL(page.url()).hash).toBe('');
  const alices = await apiJson(alice.base, `/api/traces/${TRACE_SHA}/notes/${shown.noteId}`);
  const bobs = await apiJson(bob.base, `/api/traces/${TRACE_SHA}/notes/${shown.noteId}`);
  expect({ ...bobs, trace: undefined }).toEqual({ ...alices, trace: undefined });
  expect(bobs).toMatchObject({ author: 'Alice', created_at: alices.created_at, text: NOTE_TEXT });
  // Opening the link again shows it as Bob's own: nothing from the link left to keep.
  await page.goto(onBob(link));
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 60_000 });
  await expect(page.getByTestId(`note-${shown.noteId}`).first()).toHaveAttribute('data-from-link', 'false');
  await expect(page.getByTestId('link-notes')).toHaveCount(0);
  expect(errorsOf(page)).toEqual([]);
  await page.context().close();

  // Bob's server restarts: the note is still there.
  await bob.kill('SIGTERM');
  await bob.start();
  const after = await fresh(browser);
  await after.goto(`${bob.base}/?trace=${TRACE_SHA}`);
  await expect(after.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 60_000 });
  await expect(after.getByTestId('notes-list').getByTestId(`note-${shown.noteId}`)).toContainText(
    'kswapd escalates here',
  );
  await shot(after, '37-05-bob-after-restart');
  await after.context().close();
});

test('a tampered or oversized fragment: a clear message and the nearest sensible view', async ({ browser }) => {
  const u = new URL(onBob(link));
  const cases: Array<[string, string, RegExp]> = [
    // One character of the compressed notes changed.
    [
      'tampered',
      `${u.origin}/${u.search}${u.hash.slice(0, 40)}${u.hash[40] === 'A' ? 'B' : 'A'}${u.hash.slice(41)}`,
      /notes in this link are damaged|notes in this link are for another trace/,
    ],
    // Cut short (a mail client wrapped it).
    [
      'cut',
      `${u.origin}/${u.search}${u.hash.slice(0, 60)}`,
      /notes in this link are damaged \(.*(corrupt or cut short|cannot be base64url)/,
    ],
    [
      'oversized',
      `${u.origin}/${u.search}#link=v1.${'A'.repeat(9000)}`,
      /too large to read \(9,\d{3} characters, at most 8,192\)/,
    ],
    ['newer', `${u.origin}/${u.search}#link=v9.abc`, /newer stallscope \(link format v9; this one reads v1\)/],
  ];
  for (const [what, url, message] of cases) {
    const page = await fresh(browser);
    await page.goto(url);
    await expect(page.getByTestId('link-banner'), what).toContainText(message);
    // The view of the link's query: its window and finding, without the link's notes.
    await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 60_000 });
    expect(await visibleWindow(page), what).toEqual({ t0: shown.t0, t1: shown.t1 });
    await expect(page.locator(`[data-finding-index="${shown.finding}"]`)).toHaveAttribute('data-selected', 'true');
    await expect(page.getByTestId('link-notes')).toHaveCount(0);
    expect(new URL(page.url()).hash, what).toBe('');
    if (what === 'oversized') await shot(page, '37-06-oversized-fragment');
    expect(errorsOf(page), what).toEqual([]);
    await page.context().close();
  }
});

test("the notes file goes from Bob's server to Alice's, merged by note id", async ({ browser }) => {
  // Bob adds a note of his own, then downloads the trace's notes file.
  const page = await fresh(browser);
  await page.goto(`${bob.base}/?trace=${TRACE_SHA}`);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 60_000 });
  await page.locator('[data-finding-index]').last().click();
  await page.keyboard.press('n');
  await page.getByTestId('note-author-input').fill('Bob');
  await page.getByTestId('note-text').fill('Bob: the same escalation on the second node');
  await page.getByTestId('note-save').click();
  await expect(page.getByTestId('notes-count')).toHaveText('(2)');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-annotations').click()]);
  expect(download.suggestedFilename()).toBe(`${basename(TRACE)}.stallscope-notes.json`);
  const file = join(test.info().outputDir, download.suggestedFilename());
  await download.saveAs(file);
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  expect(doc).toMatchObject({
    format: 'stallscope-annotations',
    version: 1,
    trace: { sha256: TRACE_SHA, name: basename(TRACE), size: statSync(TRACE).size },
  });
  expect(doc.notes).toHaveLength(2);
  const bobsNote = doc.notes.find((n: { author: string }) => n.author === 'Bob');
  await page.context().close();

  // Alice imports it: Bob's note is added, hers (already there) is not duplicated.
  const a = await fresh(browser);
  await a.goto(`${alice.base}/?trace=${TRACE_SHA}`);
  await expect(a.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 60_000 });
  await expect(a.getByTestId('notes-count')).toHaveText('(1)');
  await a.getByTestId('import-annotations-input').setInputFiles(file);
  await expect(a.getByTestId('toast')).toContainText('1 note added from the file; 1 already here');
  await expect(a.getByTestId('notes-count')).toHaveText('(2)');
  await expect(a.getByTestId(`note-${bobsNote.id}`)).toContainText('the same escalation on the second node');
  const alicesNotes = (await apiJson(alice.base, `/api/traces/${TRACE_SHA}/notes`)).notes;
  expect(alicesNotes.find((n: { id: string }) => n.id === bobsNote.id)).toMatchObject({
    author: 'Bob',
    created_at: bobsNote.created_at,
  });

  // A file for another trace, and a file that is not one, are refused with a message.
  const other = join(test.info().outputDir, 'other.stallscope-notes.json');
  writeFileSync(other, JSON.stringify({ ...doc, trace: { ...doc.trace, sha256: WRONG_SHA, name: basename(WRONG) } }));
  await a.getByTestId('import-annotations-input').setInputFiles(other);
  await expect(a.getByTestId('toast')).toContainText(
    `holds notes for another trace: ${basename(WRONG)} (sha256 ${WRONG_SHA})`,
  );
  const junk = join(test.info().outputDir, 'junk.json');
  writeFileSync(junk, JSON.stringify({ ...doc, version: 7 }));
  await a.getByTestId('import-annotations-input').setInputFiles(junk);
  await expect(a.getByTestId('toast')).toContainText('written by a newer stallscope (version 7');
  await expect(a.getByTestId('notes-count')).toHaveText('(2)');
  await shot(a, '37-07-alice-imported-notes-file');
  expect(errorsOf(a)).toEqual([]);
  await a.context().close();
});

test("notes too long for a link: the link keeps the view and the file's facts, and offers the notes file", async ({
  browser,
}) => {
  const page = await fresh(browser);
  await page.goto(`${alice.base}/?trace=${TRACE_SHA}`);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 60_000 });
  await page.locator(`[data-finding-index="${shown.finding}"]`).click();
  await page.keyboard.press('n');
  // 12,000 characters that do not compress: past what fits in 8 KB of link.
  let x = 7;
  const text = Array.from({ length: 12_000 }, () => {
    x = (x * 1103515245 + 12345) >>> 0;
    return String.fromCharCode(48 + ((x >>> 16) % 74));
  }).join('');
  await page.getByTestId('note-author-input').fill('Alice');
  await page.getByTestId('note-text').fill(text);
  await page.getByTestId('note-save').click();
  await expect(page.getByTestId('note-editor')).toBeHidden();
  await page.keyboard.press('l');
  // The long note (in focus) is left out; Alice's first note on the same finding still fits.
  await expect(page.getByTestId('toast')).toContainText('without 1 of its 2 notes');
  await expect(page.getByTestId('toast')).toContainText('Send the notes file with it');
  const long = await page.getByTestId('share-link').inputValue();
  expect(long.length).toBeLessThanOrEqual(8192);
  expect(new URL(long).hash).toMatch(/^#link=v1\./);
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('toast-download-annotations').click(),
  ]);
  expect(download.suggestedFilename()).toBe(`${basename(TRACE)}.stallscope-notes.json`);
  await page.context().close();

  // Opened elsewhere, the link says a note did not fit.
  const b = await fresh(browser);
  await b.goto(onBob(long));
  await expect(b.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 60_000 });
  await expect(b.getByTestId('link-notes-omitted')).toContainText('1 more did not fit in the link');
  await expect(b.getByTestId('link-notes')).toContainText('its note is already in your notes');
  await b.context().close();
});
