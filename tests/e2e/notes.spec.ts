/**
 * Notes in the browser (issue 5), on the shared test server: add a note on
 * a finding, see it on the timeline, in the notes list and in the details
 * panel; edit it, lose an edit race and see the conflict, delete it; notes
 * with HTML render as text; shift+drag ranges; copy as text; export.
 *
 * Fixture: fixtures/reclaim_kswapd.v7.dat (a real recording), else
 * STALLSCOPE_E2E_TRACE, else (while the recording is being redone) the
 * handmade kernel 4.x excerpt.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { ingest, SCREENSHOTS, visibleWindow } from './helpers.ts';

const FIXTURE =
  process.env.STALLSCOPE_E2E_TRACE ??
  (existsSync('fixtures/reclaim_kswapd.v7.dat')
    ? 'fixtures/reclaim_kswapd.v7.dat'
    : 'fixtures/handmade/kernel4x_kswapd_escalation.txt');

test.describe.configure({ mode: 'serial' });

async function shot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/** Uploads the fixture through the API (instant when this content is already in the library) and returns its trace id. */

async function clearNotes(request: APIRequestContext, trace: string) {
  const { notes } = await (await request.get(`/api/traces/${trace}/notes`)).json();
  for (const n of notes) await request.delete(`/api/traces/${trace}/notes/${n.id}`);
}

async function openTrace(page: Page, trace: string, query = '') {
  await page.goto(`/?trace=${trace}${query}`);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-painted', 'true', { timeout: 30_000 });
}

/** Writes a note in the open editor (giving the author name the first time). */
async function writeNote(page: Page, text: string, author = 'Ada Lovelace') {
  const editor = page.getByTestId('note-editor');
  await expect(editor).toBeVisible();
  const name = editor.getByTestId('note-author-input');
  if (await name.count()) await name.fill(author);
  await editor.getByTestId('note-text').fill(text);
  await editor.getByTestId('note-save').click();
  await expect(editor).toBeHidden();
}

let trace = '';

test.beforeAll(async ({ request }) => {
  trace = await ingest(request, FIXTURE);
  await clearNotes(request, trace);
});

test('add a note on a finding: on the timeline, in the list and the details; edit, conflict, delete', async ({
  page,
  request,
}) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await openTrace(page, trace);
  const finding = page
    .locator('[data-detector="shrinker_blocking"]')
    .first()
    .or(page.locator('[data-finding-index]').first())
    .first();
  const index = Number(await finding.getAttribute('data-finding-index'));
  await finding.click();
  await expect(page.getByTestId('details-panel')).toHaveAttribute('data-kind', 'finding');

  // N opens the editor on the selected finding; the name is asked once.
  await page.keyboard.press('n');
  await expect(page.getByTestId('note-editor')).toContainText(`finding ${index}`);
  await expect(page.getByTestId('note-editor').getByTestId('note-author-input')).toBeVisible();
  await writeNote(
    page,
    'kswapd is **stuck** in `super_cache_scan` here.\n\n- see the priority drop\n- [lore thread](https://lore.kernel.org/linux-mm/)',
  );

  const card = page.getByTestId('notes-list').locator('.note-card').first();
  await expect(card).toContainText('kswapd is stuck in super_cache_scan here.');
  await expect(card.locator('strong')).toHaveText('stuck');
  await expect(card.locator('code')).toHaveText('super_cache_scan');
  await expect(card.locator('a')).toHaveAttribute('href', 'https://lore.kernel.org/linux-mm/');
  await expect(card.locator('a')).toHaveAttribute('rel', /noopener/);
  await expect(card.getByTestId('note-author')).toHaveText('Ada Lovelace');
  await expect(page.getByTestId('notes-count')).toHaveText('(1)');
  // ...in the details panel of the finding...
  await expect(page.getByTestId('selection-notes')).toContainText('kswapd is stuck');
  // ...and on the timeline: a marker in the ruler whose hover shows the text.
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-notes', '1');
  const noteId = (await card.getAttribute('data-note-id'))!;
  const note = await (await request.get(`/api/traces/${trace}/notes/${noteId}`)).json();
  const w = await visibleWindow(page);
  const ruler = (await page.getByTestId('ruler').boundingBox())!;
  const mid = (note.anchor.t0 + note.anchor.t1) / 2;
  await page.mouse.move(ruler.x + ((mid - w.t0) / (w.t1 - w.t0)) * ruler.width, ruler.y + ruler.height - 3);
  await expect(page.getByTestId('tooltip')).toBeVisible();
  await expect(page.getByTestId('tooltip')).toContainText('Ada Lovelace: kswapd is **stuck**');
  await shot(page, '07-note-on-finding');

  // Clicking the note in the list focuses it (URL note=...).
  await card.locator('.note-anchor').click();
  await expect(page).toHaveURL(new RegExp(`note=${noteId}`));
  await expect(card).toHaveAttribute('data-focused', 'true');

  // Edit.
  await card.getByTestId('note-edit').click();
  await page.getByTestId('note-editor').getByTestId('note-text').fill('kswapd is stuck in super_cache_scan (edited)');
  await page.getByTestId('note-editor').getByTestId('note-save').click();
  await expect(card).toContainText('(edited)');
  await expect(card.locator('.md')).toHaveText('kswapd is stuck in super_cache_scan (edited)');

  // Someone else edits it meanwhile (another browser): our stale edit shows the conflict, nothing is lost.
  await card.getByTestId('note-edit').click();
  const other = await request.patch(`/api/traces/${trace}/notes/${noteId}`, {
    data: { version: 2, text: 'Grace: it is the inode cache' },
  });
  expect(other.status()).toBe(200);
  await page.getByTestId('note-editor').getByTestId('note-text').fill('my stale edit');
  await page.getByTestId('note-editor').getByTestId('note-save').click();
  const conflict = page.getByTestId('note-conflict');
  await expect(conflict).toBeVisible();
  await expect(conflict).toContainText('Grace: it is the inode cache');
  await shot(page, '08-note-edit-conflict');
  await conflict.getByTestId('note-overwrite').click();
  await expect(page.getByTestId('note-editor')).toBeHidden();
  await expect(card.locator('.md')).toHaveText('my stale edit');
  expect((await (await request.get(`/api/traces/${trace}/notes/${noteId}`)).json()).version).toBe(4);

  // Delete.
  await card.getByTestId('note-delete').click();
  await card.getByTestId('note-delete-yes').click();
  await expect(page.getByTestId('notes-count')).toHaveText('(0)');
  expect((await request.get(`/api/traces/${trace}/notes/${noteId}`)).status()).toBe(404);
  expect(errors).toEqual([]);
});

test('a note with HTML in it renders as text and runs nothing', async ({ page, request }) => {
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.addInitScript(() => {
    (window as unknown as { __xss: number }).__xss = 0;
  });
  await openTrace(page, trace);
  await page.locator('[data-finding-index]').first().click();
  await page.getByTestId('add-note').click();
  const evil =
    '<img src=x onerror=alert(1)> <script>window.__xss=1</script> [click](javascript:alert(2)) <b onmouseover=alert(3)>bold?</b>';
  await writeNote(page, evil);
  const card = page.getByTestId('notes-list').locator('.note-card').first();
  await expect(card.locator('.md')).toContainText('<img src=x onerror=alert(1)>');
  await expect(card.locator('.md')).toContainText('<script>window.__xss=1</script>');
  await expect(card.locator('img, script, b, a[href^="javascript"]')).toHaveCount(0);
  await expect(page.getByTestId('selection-notes').locator('img')).toHaveCount(0);
  await card.hover();
  await page.waitForTimeout(500);
  expect(dialogs).toEqual([]);
  expect(await page.evaluate(() => (window as unknown as { __xss: number }).__xss)).toBe(0);
  await shot(page, '09-note-html-as-text');
  // The server stored it verbatim: it is the rendering that is safe.
  const { notes } = await (await request.get(`/api/traces/${trace}/notes`)).json();
  expect(notes.some((n: { text: string }) => n.text === evil)).toBe(true);
  await clearNotes(request, trace);
});

test('shift+drag a range (all tracks, or one track), note it, copy it as text', async ({ page, context, request }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await openTrace(page, trace);
  const ruler = (await page.getByTestId('ruler').boundingBox())!;
  const y = ruler.y + ruler.height / 2;
  // Across all tracks: shift+drag on the ruler.
  await page.keyboard.down('Shift');
  await page.mouse.move(ruler.x + ruler.width * 0.3, y);
  await page.mouse.down();
  await page.mouse.move(ruler.x + ruler.width * 0.45, y, { steps: 5 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await expect(page.getByTestId('range-bar')).toContainText('(all tracks)');
  const before = await visibleWindow(page);
  const r0 = Number(await page.getByTestId('timeline').getAttribute('data-range-t0'));
  const r1 = Number(await page.getByTestId('timeline').getAttribute('data-range-t1'));
  expect(r0).toBeGreaterThan(before.t0);
  expect(r1).toBeLessThan(before.t1);
  expect(r1).toBeGreaterThan(r0);
  await page.keyboard.press('n');
  await writeNote(page, 'reclaim storm window');
  await expect(page.getByTestId('notes-list')).toContainText('(all tracks)');

  await expect(page.getByTestId('range-bar')).toBeHidden();
  // On one track: shift+drag on the first CPU's track.
  const cpuTrack = page.locator('[data-uri^="cpu#"]').first();
  const cpuUri = (await cpuTrack.getAttribute('data-uri'))!;
  const cpuNo = cpuUri.slice(4);
  const cpu = (await cpuTrack.boundingBox())!;
  const area = (await page.getByTestId('track-scroll').boundingBox())!;
  const cy = cpu.y + cpu.height / 2;
  await page.keyboard.down('Shift');
  await page.mouse.move(area.x + 220 + (area.width - 220) * 0.5, cy);
  await page.mouse.down();
  await page.mouse.move(area.x + 220 + (area.width - 220) * 0.6, cy, { steps: 5 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await expect(page.getByTestId('range-bar')).toContainText(`on ${cpuUri}`);
  await shot(page, '10-range-selected-on-track');

  // Copy as text: the range's raw trace lines and a link that opens it.
  await page.keyboard.press('t');
  await expect(page.getByTestId('toast')).toContainText('Copied as text');
  const text = await page.evaluate(() => navigator.clipboard.readText());
  // the range in one plain sentence (no tool tag), then its lines as trace-cmd report prints them
  expect(text).toMatch(new RegExp(`^[\\d,]+ events? on ${cpuUri} from \\d+\\.\\d{6} to \\d+\\.\\d{6} \\(`));
  if (!/^0 events/.test(text))
    expect(text).toMatch(new RegExp(`^\\s*\\S+-\\d+\\s+\\[${cpuNo.padStart(3, '0')}\\] +\\d+\\.\\d{6}: \\w+: `, 'm'));
  expect(text).toMatch(new RegExp(`^Link: http://127\\.0\\.0\\.1:\\d+/\\?trace=${trace}&t0=\\d+&t1=\\d+`, 'm'));
  await page.getByTestId('range-add-note').click();
  await writeNote(page, 'cpu0 only');
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-notes', '2');
  await shot(page, '11-range-notes');
  await clearNotes(request, trace);
});

test('copy a finding as text for an email: trace lines, values, note, link', async ({ page, context, request }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await openTrace(page, trace);
  const finding = page.locator('[data-finding-index]').first();
  const index = await finding.getAttribute('data-finding-index');
  await finding.click();
  await page.keyboard.press('n');
  await writeNote(page, 'Reproduces on 6.1 too.');
  await page.getByTestId('copy-text').click();
  await expect(page.getByTestId('toast')).toContainText('Copied as text');
  const text = await page.evaluate(() => navigator.clipboard.readText());
  const lines = text.split('\n');
  // the finding in one plain sentence with its values; no '[stallscope] warn detector/kind' noise
  expect(lines[0]).toMatch(/, at \d+\.\d{6}( on CPU \d+)?\.$/);
  expect(text).not.toMatch(/\[stallscope\]|=false/);
  expect(text).toMatch(/^Values: /m);
  expect(text).toMatch(/^\s*\S+-\d+\s+\[\d{3}\] +\d+\.\d{6}: \w+: /m);
  expect(text).toContain('Note (Ada Lovelace, ');
  expect(text).toContain('Reproduces on 6.1 too.');
  expect(text).toMatch(
    new RegExp(
      `^Link: http://127\\.0\\.0\\.1:\\d+/\\?trace=${trace}&t0=\\d+&t1=\\d+&sel=finding:${index}&note=[\\w-]{22}#link=v1\\.[\\w-]+$`,
      'm',
    ),
  );
  await clearNotes(request, trace);
});

test('export findings and notes as Markdown and JSON downloads', async ({ page, request }) => {
  await openTrace(page, trace);
  await page.locator('[data-finding-index]').first().click();
  await page.keyboard.press('n');
  await writeNote(page, 'exported note');
  const [md] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-md').click()]);
  expect(md.suggestedFilename()).toMatch(/^stallscope-.*-[0-9a-f]{12}\.md$/);
  const mdText = readFileSync((await md.path())!, 'utf8');
  expect(mdText).toContain('## Findings');
  expect(mdText).toContain('exported note');
  const [json] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-json').click()]);
  const body = JSON.parse(readFileSync((await json.path())!, 'utf8'));
  expect(body.format).toBe('stallscope-export');
  expect(body.notes.map((n: { text: string }) => n.text)).toContain('exported note');
  await clearNotes(request, trace);
});

test('two browsers adding notes at the same time both keep theirs', async ({ browser, request }) => {
  const pages = await Promise.all([0, 1].map(async () => (await browser.newContext()).newPage()));
  await Promise.all(pages.map((p) => openTrace(p, trace)));
  for (const p of pages) await p.locator('[data-finding-index]').first().click();
  await Promise.all(pages.map((p) => p.keyboard.press('n')));
  await Promise.all(
    pages.map(async (p, i) => {
      await p.getByTestId('note-author-input').fill(i ? 'Bob' : 'Alice');
      await p.getByTestId('note-text').fill(`from browser ${i}`);
    }),
  );
  await Promise.all(pages.map((p) => p.getByTestId('note-save').click()));
  for (const p of pages) await expect(p.getByTestId('note-editor')).toBeHidden();
  const { notes } = await (await request.get(`/api/traces/${trace}/notes`)).json();
  expect(notes.map((n: { text: string }) => n.text).sort()).toEqual(['from browser 0', 'from browser 1']);
  // Each sees the other's after coming back to the tab (or reloading).
  await pages[0]!.reload();
  await expect(pages[0]!.getByTestId('notes-list')).toContainText('from browser 1');
  await clearNotes(request, trace);
  for (const p of pages) await p.context().close();
});
