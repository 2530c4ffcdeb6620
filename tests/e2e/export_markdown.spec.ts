/**
 * Issue 27, hole 6: export.md rendered by a Markdown renderer that allows
 * raw HTML (markdown-it with `html: true` and linkify) in
 * Chromium. Notes carrying HTML, script and link payloads (the ones that
 * got through the old backtick counting among them: an unmatched backtick,
 * a fence line CommonMark rejects, a fence indented four spaces) must render
 * as their own text: nothing runs, no element beyond the export's own
 * structure appears, and the only links are the server's own.
 */
import { expect, test } from '@playwright/test';
import { ingest } from './helpers.ts';

const FIXTURE = 'fixtures/reclaim_kswapd.v7.dat';
const MARKDOWN_IT = 'node_modules/markdown-it/dist/browser/markdown-it.umd.min.js';

const PAYLOADS: string[] = [
  'look <img src=x onerror="window.__pwned=1"> here',
  'an unmatched ` backtick <img src=x onerror="window.__pwned=2">',
  '```a`b\n<img src=x onerror="window.__pwned=3">\n```',
  '    ```\n<img src=x onerror="window.__pwned=4">\n    ```',
  '~~~\n</code><img src=x onerror="window.__pwned=5">\n~~~',
  '`` ` `` <svg onload="window.__pwned=6">',
  '[click](javascript:window.__pwned=7)',
  '[click](JaVaScRiPt:window.__pwned=8 "title")',
  '![img](javascript:window.__pwned=9)',
  '[data](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX19wd25lZD0xMDwvc2NyaXB0Pg==)',
  '<javascript:window.__pwned=11>',
  '[ref]\n\n[ref]: javascript:window.__pwned=12',
  '<a href="javascript:window.__pwned=13">a</a>',
  '<iframe src="javascript:window.__pwned=14"></iframe>',
  '<details open ontoggle="window.__pwned=15">x</details>',
  '<!-- comment --><script>window.__pwned=16</script>',
  '&lt;img src=x onerror="window.__pwned=17"&gt; and &#60;b&#62;',
  '\\<img src=x onerror="window.__pwned=18">',
  '| a | b |\n| - | - |\n| <img src=x onerror="window.__pwned=19"> | x |',
  '# heading <img src=x onerror="window.__pwned=20">\n===\n- list\n1. one\n> quote',
  '<style>body{display:none}</style><math><mi xlink:href="javascript:window.__pwned=21">x</mi></math>',
  '*emph* _under_ **bold** ~~strike~~ http://example.com www.example.com javascript:window.__pwned=22',
  'trailing backslash \\\nnext line\tand a tab\n\n\n    indented four spaces <b>bold?</b>',
  '<form action="javascript:window.__pwned=23"><input type=submit></form>',
];

test('export.md with hostile notes renders as text in markdown-it (html: true): nothing runs, no foreign element or link', async ({
  page,
  request,
  baseURL,
}) => {
  const trace = await ingest(request, FIXTURE);
  const old = (await (await request.get(`/api/traces/${trace}/notes`)).json()).notes as Array<{ id: string }>;
  for (const n of old) await request.delete(`/api/traces/${trace}/notes/${n.id}`);
  for (const [i, text] of PAYLOADS.entries()) {
    const r = await request.post(`/api/traces/${trace}/notes`, {
      data: {
        anchor: { kind: 'range', t0: i * 1000, t1: i * 1000 + 10 },
        text,
        author: `<img src=x onerror="window.__pwned=${100 + i}"> #${i}`,
      },
    });
    expect(r.status(), text).toBe(201);
  }
  const md = await (await request.get(`/api/traces/${trace}/export.md`)).text();

  await page.setContent('<!doctype html><html><body><main id="out"></main></body></html>');
  await page.addScriptTag({ path: MARKDOWN_IT });
  const result = await page.evaluate(async (source) => {
    const w = window as unknown as { markdownit: (o: object) => { render(s: string): string }; __pwned?: number };
    const html = w.markdownit({ html: true, linkify: true }).render(source);
    const out = document.getElementById('out')!;
    out.innerHTML = html; // img onerror and the like fire from here
    await new Promise((r) => setTimeout(r, 500));
    const tags = new Set<string>();
    const attrs: string[] = [];
    const hrefs: string[] = [];
    for (const el of Array.from(out.querySelectorAll('*'))) {
      tags.add(el.tagName.toLowerCase());
      for (const a of Array.from(el.attributes)) {
        if (el.tagName === 'A' && a.name === 'href') hrefs.push(a.value);
        else if (!(el.tagName === 'TH' || el.tagName === 'TD') || a.name !== 'style')
          attrs.push(`${el.tagName.toLowerCase()}[${a.name}]`);
      }
    }
    const quotes = Array.from(out.querySelectorAll(':scope > blockquote')).map((q) => (q as HTMLElement).innerText);
    const headings = Array.from(out.querySelectorAll('h3')).map((h) => h.textContent ?? '');
    return { pwned: w.__pwned ?? null, tags: [...tags].sort(), attrs, hrefs, quotes, headings };
  }, md);

  expect(result.pwned).toBeNull();
  // Only the export's own structure: headings, lists, the findings tables, paragraphs, quotes, breaks, links.
  const allowed = new Set([
    'h1',
    'h2',
    'h3',
    'ul',
    'li',
    'p',
    'blockquote',
    'br',
    'a',
    'code',
    'table',
    'thead',
    'tbody',
    'tr',
    'th',
    'td',
  ]);
  expect(result.tags.filter((t) => !allowed.has(t))).toEqual([]);
  expect(result.attrs).toEqual([]);
  // Links: the server's own share links (one per note, one per finding, the trace's), and plain web
  // addresses a renderer linkifies; never javascript:, data: or anything else from a note.
  const own = result.hrefs.filter((h) => h.startsWith(`${baseURL}/?trace=${trace}`));
  expect(own.length).toBeGreaterThan(PAYLOADS.length);
  for (const h of result.hrefs) expect(h, h).toMatch(/^https?:\/\//);
  for (const h of result.hrefs.filter((x) => !x.startsWith(`${baseURL}/?trace=${trace}`))) {
    expect(['http://example.com', 'http://www.example.com'], h).toContain(h);
  }
  // Each note reads back as exactly what was typed (the renderer's whitespace aside).
  const norm = (s: string) =>
    s
      .replace(/\u00a0/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
  expect(result.quotes.map(norm)).toEqual(PAYLOADS.map(norm));
  for (const [i] of PAYLOADS.entries())
    expect(result.headings.some((h) => h.includes(`<img src=x onerror="window.__pwned=${100 + i}"> #${i}`))).toBe(true);

  for (const n of (await (await request.get(`/api/traces/${trace}/notes`)).json()).notes as Array<{ id: string }>) {
    await request.delete(`/api/traces/${trace}/notes/${n.id}`);
  }
});
