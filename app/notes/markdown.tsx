/**
 * Note text as Markdown, rendered safely: markdown-it parses it with raw
 * HTML off (`html: false`), and its tokens become React elements from a
 * fixed list of tags. No HTML string is ever inserted into the page
 * (no dangerouslySetInnerHTML): text stays text, whatever it contains.
 * Links must be http(s) (others are shown as plain text) and open in a new
 * tab without referrer; images are not loaded (shown as `[image: alt]`).
 */
import { Fragment, createElement, type ReactNode } from 'react';
import MarkdownIt, { type Token } from 'markdown-it';

const md = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false });
md.validateLink = (url: string) => safeHref(url) !== null;

/** The URL if it is an absolute http(s) URL, else null. */
export function safeHref(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

const TAGS = new Set([
  'p',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'li',
  'blockquote',
  'em',
  'strong',
  's',
  'code',
  'pre',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'a',
]);

interface Open {
  token: Token;
  children: ReactNode[];
}

function build(tokens: Token[], key: { n: number }): ReactNode[] {
  const root: ReactNode[] = [];
  const stack: Open[] = [];
  const push = (...nodes: ReactNode[]) => (stack.length ? stack[stack.length - 1]!.children : root).push(...nodes);
  for (const t of tokens) {
    if (t.nesting === 1) {
      stack.push({ token: t, children: [] });
      continue;
    }
    if (t.nesting === -1) {
      const open = stack.pop();
      if (open) push(element(open.token, open.children, key.n++));
      continue;
    }
    switch (t.type) {
      case 'inline':
        push(...build(t.children ?? [], key));
        break;
      case 'text':
      case 'html_inline':
      case 'html_block':
        push(t.content);
        break;
      case 'code_inline':
        push(createElement('code', { key: key.n++ }, t.content));
        break;
      case 'softbreak':
      case 'hardbreak':
        push(createElement('br', { key: key.n++ }));
        break;
      case 'fence':
      case 'code_block':
        push(createElement('pre', { key: key.n++ }, createElement('code', null, t.content)));
        break;
      case 'hr':
        push(createElement('hr', { key: key.n++ }));
        break;
      case 'image':
        push(`[image: ${t.content || (t.attrGet('src') ?? '')}]`);
        break;
      default:
        if (t.content) push(t.content);
    }
  }
  // Unclosed tokens (should not happen): keep their text.
  while (stack.length) {
    const open = stack.pop()!;
    push(createElement(Fragment, { key: key.n++ }, ...open.children));
  }
  return root;
}

function element(t: Token, children: ReactNode[], key: number): ReactNode {
  // Paragraphs of tight lists are hidden: their text goes straight into the item.
  const tag = TAGS.has(t.tag) && !t.hidden ? t.tag : null;
  if (!tag) return createElement(Fragment, { key }, ...children);
  if (tag === 'a') {
    const raw = t.attrGet('href');
    const href = safeHref(raw === null ? null : String(raw));
    if (!href) return createElement(Fragment, { key }, ...children);
    return createElement('a', { key, href, target: '_blank', rel: 'noopener noreferrer nofollow' }, ...children);
  }
  if (tag === 'ol') {
    const start = Number(t.attrGet('start'));
    return createElement('ol', { key, start: Number.isSafeInteger(start) ? start : undefined }, ...children);
  }
  return createElement(tag, { key }, ...children);
}

/** React elements for a note's Markdown. */
export function renderMarkdown(text: string): ReactNode[] {
  return build(md.parse(text, {}), { n: 0 });
}

export function Markdown({ text, className }: { text: string; className?: string }) {
  return <div className={`md ${className ?? ''}`}>{renderMarkdown(text)}</div>;
}

/** One line of plain text (for tooltips and titles). */
export function plainPreview(text: string, max = 200): string {
  const s = text.replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
