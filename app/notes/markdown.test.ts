import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { Markdown, safeHref } from './markdown.tsx';

const html = (text: string) => renderToStaticMarkup(createElement(Markdown, { text }));

describe('note Markdown', () => {
  it('renders HTML in notes as text, never as elements', () => {
    const out = html(
      'look <img src=x onerror=alert(1)> here\n\n<script>alert(2)</script>\n\n<a href="javascript:alert(3)">x</a>',
    );
    expect(out).not.toMatch(/<img|<script|<a /);
    expect(out).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(out).toContain('&lt;script&gt;');
  });

  it('keeps Markdown formatting and only http(s) links', () => {
    const out = html(
      '**bold** _it_ `code`\n\n- a\n- b\n\n[ok](https://lore.kernel.org/x) [bad](javascript:alert(1)) [rel](/etc/passwd) ![img](https://x/y.png)',
    );
    expect(out).toContain('<strong>bold</strong>');
    expect(out).toContain('<em>it</em>');
    expect(out).toContain('<code>code</code>');
    expect(out).toContain('<li>a</li>');
    expect(out).toContain(
      '<a href="https://lore.kernel.org/x" target="_blank" rel="noopener noreferrer nofollow">ok</a>',
    );
    expect(out).not.toContain('javascript:alert(1)"');
    expect(out).not.toContain('href="/etc/passwd"');
    expect(out).not.toContain('<img');
    expect(out).toContain('[image: img]');
    expect(safeHref('data:text/html,x')).toBeNull();
    expect(safeHref('HTTPS://a.example/')).toBe('https://a.example/');
  });
});
