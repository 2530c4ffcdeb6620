/**
 * Plain-text excerpts and exports: what a kernel developer pastes into a
 * review email (`Copy as text`, GET /api/traces/:id/excerpt, `stallscope
 * excerpt FILE SEL`) and the findings + notes of a trace as Markdown
 * (GET /api/traces/:id/export.md).
 *
 * Excerpt layout:
 *
 *   super_cache_scan blocked kswapd0 for 312.4 ms (freed 1.2k of 8.2k objects to scan), at 5201.066521 on CPU 0.
 *   Values: shrinker super_cache_scan, context kswapd, priority 4, objects to shrink 3,220, ...
 *   Trace: reclaim_kswapd.v7.dat (Linux 6.18.44, 2 CPUs), sha256 e962771d9db3...
 *
 *   <the events' lines exactly as `trace-cmd report` prints them (server/notes/report_line.ts)>
 *
 *   Note (alice, 2025-11-22 08:31 UTC):
 *   <note text>
 *
 *   Link: http://127.0.0.1:7420/?trace=...&t0=...&t1=...&sel=finding:183405219980422
 *
 * No tool noise: no severity tags, no detector/kind ids, no false flags.
 */
import type { Note } from './notes_store.ts';

export interface ExcerptTrace {
  id: string;
  name: string;
  kernel?: string | null;
  cpus?: number | null;
}

export interface ExcerptInput {
  trace: ExcerptTrace;
  /** The selection in one plain sentence (a finding's title with where and when). */
  sentence: string;
  /** Its measured values in words, one line (without `Values: `), or null. */
  values: string | null;
  lines: string[];
  /** How many events the selection has (lines may be capped). */
  eventsTotal: number;
  notes: Note[];
  link: string;
}

export function formatExcerpt(x: ExcerptInput): string {
  const out: string[] = [];
  out.push(oneLine(x.sentence));
  if (x.values) out.push(`Values: ${oneLine(x.values)}`);
  const facts = [x.trace.kernel ? x.trace.kernel : null, x.trace.cpus ? `${x.trace.cpus} CPUs` : null].filter(Boolean);
  out.push(
    `Trace: ${x.trace.name}${facts.length ? ` (${facts.join(', ')})` : ''}, sha256 ${x.trace.id.slice(0, 12)}...`,
  );
  out.push('');
  if (x.lines.length) {
    out.push(...x.lines);
    if (x.eventsTotal > x.lines.length) out.push(`  ... ${x.eventsTotal - x.lines.length} more events (see the link)`);
  } else {
    out.push('  (no trace events recorded for this selection)');
  }
  for (const n of x.notes) {
    out.push('', `Note (${oneLine(n.author)}, ${formatWhen(n.updated_at)}):`, n.text.trimEnd());
  }
  out.push('', `Link: ${x.link}`, '');
  return out.join('\n');
}

/** A finding as one plain sentence: its title, then when and where. */
export function findingSentence(f: { title: string; ts_ns: string | bigint | number; cpu: number | null }): string {
  const title = f.title.replace(/[.\s]+$/, '');
  return `${title}, at ${formatAbs(BigInt(f.ts_ns))}${f.cpu !== null ? ` on CPU ${f.cpu}` : ''}.`;
}

/** `k=v` pairs of a finding's measured values, one line (the Markdown export's column); ns durations get units. */
export function measuredLine(f: {
  ts_ns: string | bigint | number;
  dur_ns: string | bigint | number;
  cpu: number | null;
  tid: number | null;
  comm: string | null;
  values: Record<string, unknown>;
}): string {
  const parts = [`start=${formatAbs(BigInt(f.ts_ns))}`, `dur=${formatNs(Number(f.dur_ns))}`];
  if (f.cpu !== null) parts.push(`cpu=${f.cpu}`);
  if (f.comm !== null || f.tid !== null) parts.push(`task=${f.comm ?? '?'}-${f.tid ?? '?'}`);
  for (const [k, v] of Object.entries(f.values)) {
    if (v === null || v === undefined || v === false) continue;
    const s =
      /_ns$/.test(k) && (typeof v === 'number' || typeof v === 'bigint' || /^\d+$/.test(String(v)))
        ? formatNs(Number(v))
        : typeof v === 'object'
          ? JSON.stringify(v)
          : String(v);
    parts.push(`${k}=${/\s/.test(s) ? JSON.stringify(s) : s}`);
  }
  return parts.join(' ');
}

/** A task named in values ({tid, comm, cpu, count}) as "comm pid on CPU n". */
export function taskWords(t: Record<string, unknown>): string {
  const who = `${t.comm ?? '?'} ${t.tid ?? '?'}`;
  const cpu = t.cpu !== undefined && t.cpu !== null ? ` on CPU ${t.cpu}` : '';
  const n = typeof t.count === 'number' || typeof t.count === 'bigint' ? ` (${t.count}x)` : '';
  return `${who}${cpu}${n}`;
}

/**
 * A finding's values in words, for a mail: "shrinker super_cache_scan,
 * priority 4, objects to shrink 3,220, ...". Durations (`*_ns`) get units,
 * counts thousands separators, flags that are false are left out and true
 * ones named ("end lost"), priority steps and movers / wakers read as text.
 */
export function valuesInWords(values: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(values)) {
    if (v === null || v === undefined || v === false) continue;
    const name = k.replace(/_ns$/, '').replace(/_/g, ' ');
    if (v === true) {
      parts.push(name);
      continue;
    }
    if (k === 'priority_steps' && Array.isArray(v)) {
      parts.push(
        `priority steps ${v.map((x: { priority?: unknown; at_ns?: unknown }) => `${x.priority} at +${formatNs(Number(x.at_ns))}`).join(', ')}`,
      );
      continue;
    }
    if (Array.isArray(v) && v.every((x) => x && typeof x === 'object' && 'comm' in (x as object))) {
      parts.push(`${name} ${v.map((x) => taskWords(x as Record<string, unknown>)).join(', ')}`);
      continue;
    }
    if (Array.isArray(v)) {
      parts.push(`${name} ${v.map(String).join(',')}`);
      continue;
    }
    if (/_ns$/.test(k) && (typeof v === 'number' || typeof v === 'bigint' || /^-?\d+$/.test(String(v)))) {
      parts.push(`${name} ${formatNs(Number(v))}`);
      continue;
    }
    if (typeof v === 'number' || typeof v === 'bigint') {
      parts.push(
        `${name} ${typeof v === 'number' && !Number.isInteger(v) ? String(v) : BigInt(v).toLocaleString('en')}`,
      );
      continue;
    }
    if (typeof v === 'object') {
      parts.push(`${name} ${JSON.stringify(v)}`);
      continue;
    }
    parts.push(`${name} ${String(v)}`);
  }
  return parts.join(', ');
}

/** Absolute trace clock as trace-cmd prints it: seconds with 6 decimals. */
export function formatAbs(ns: bigint): string {
  return `${ns / 1_000_000_000n}.${((ns % 1_000_000_000n) / 1000n).toString().padStart(6, '0')}`;
}

/** ns as a short duration with a unit: 312.400ms, 45.200us, 1.500s, 800ns. */
export function formatNs(ns: number): string {
  const a = Math.abs(ns);
  if (a >= 1e9) return `${(ns / 1e9).toFixed(3)}s`;
  if (a >= 1e6) return `${(ns / 1e6).toFixed(3)}ms`;
  if (a >= 1e3) return `${(ns / 1e3).toFixed(3)}us`;
  return `${ns}ns`;
}

function formatWhen(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ');
}

// ---- Markdown export --------------------------------------------------

export interface ExportFinding {
  index: number;
  detector: string;
  kind: string;
  severity: string;
  ts: number;
  dur: number;
  ts_ns: string;
  dur_ns: string;
  cpu: number | null;
  tid: number | null;
  comm: string | null;
  title: string;
  values: Record<string, unknown>;
  link: string;
}

export interface ExportNote extends Note {
  link: string;
}

export function formatMarkdown(x: {
  trace: ExcerptTrace & { eventsTotal?: number };
  findings: ExportFinding[];
  notes: ExportNote[];
  exportedAt: string;
  link: string;
}): string {
  const out: string[] = [];
  out.push(`# stallscope: ${mdInline(x.trace.name)}`, '');
  out.push(`- trace: \`${x.trace.id}\``);
  if (x.trace.kernel) out.push(`- kernel: ${mdInline(x.trace.kernel)}`);
  if (x.trace.cpus) out.push(`- CPUs: ${x.trace.cpus}`);
  if (x.trace.eventsTotal !== undefined) out.push(`- events: ${x.trace.eventsTotal}`);
  out.push(`- exported: ${x.exportedAt}`, `- open: <${x.link}>`, '');
  out.push(`## Findings (${x.findings.length})`, '');
  if (!x.findings.length) out.push('No findings.', '');
  const byDetector = new Map<string, ExportFinding[]>();
  for (const f of x.findings) byDetector.set(f.detector, [...(byDetector.get(f.detector) ?? []), f]);
  for (const [detector, list] of byDetector) {
    out.push(`### ${mdInline(detector)} (${list.length})`, '');
    out.push('| # | severity | start | duration | finding | measured |', '| --: | --- | --: | --: | --- | --- |');
    for (const f of list) {
      out.push(
        `| [${f.index}](${f.link}) | ${f.severity} | ${formatAbs(BigInt(f.ts_ns))} | ${formatNs(f.dur)} | ${mdCell(f.title)} | ${mdCell(
          measuredLine({ ...f, ts_ns: f.ts_ns, dur_ns: f.dur_ns })
            .split(' ')
            .slice(2)
            .join(' '),
        )} |`,
      );
    }
    out.push('');
  }
  out.push(`## Notes (${x.notes.length})`, '');
  if (!x.notes.length) out.push('No notes.', '');
  for (const n of x.notes) {
    out.push(`### ${mdInline(anchorLabel(n))} — ${mdInline(n.author)}, ${formatWhen(n.updated_at)}`, '');
    out.push(`[open](${n.link})`, '');
    out.push(...quoteMarkdown(n.text), '');
  }
  return out.join('\n');
}

export function anchorLabel(n: Note): string {
  const a = n.anchor;
  const where = a.track ? ` on ${a.track}` : '';
  if (a.kind === 'finding') return `finding ${a.finding}`;
  if (a.kind === 'event') return `event ${a.event}${where}`;
  return `${a.ref ? `${a.ref}, ` : ''}${formatNs(a.t0)} to ${formatNs(a.t1)}${where}`;
}

/**
 * Text that a CommonMark renderer shows as exactly this text, whatever it
 * holds: every character that can start inline syntax (code spans,
 * emphasis, links and images, autolinks, raw HTML, entities, tables,
 * strikethrough) is backslash-escaped, and so is a line's first character
 * when it could start a block (heading, quote, list, fence, thematic break,
 * setext underline). Nothing is counted or matched (backticks were, and
 * CommonMark disagreed: an unmatched backtick, a fence line it rejects, an
 * indented fence all let raw HTML through), so nothing can be miscounted.
 * Without `<` (written `&lt;`) no HTML and no autolink can form; without
 * `[` no link or image, so no `javascript:` or `data:` target.
 */
export function escapeMarkdownText(line: string): string {
  // `<` as an entity (text in every renderer; a backslash would leave `<img` in the file for naive filters).
  let s = line.replace(/[\\`*_[\]&|~]/g, (c) => `\\${c}`).replace(/</g, '&lt;');
  // Block starts: only at the beginning of a line (after any indentation).
  s = s.replace(/^(\s*)([#>+\-=:!])/, '$1\\$2').replace(/^(\s*\d{1,9})([.)])/, '$1\\$2');
  // Indentation would make an indented code block (shown raw, backslashes and all): keep it as spaces that are text.
  return s.replace(/^[ \t]+/, (ws) => '&nbsp;'.repeat(ws.replace(/\t/g, '    ').length));
}

/** Running text on one line (headings, table cells). */
function mdInline(s: string): string {
  return escapeMarkdownText(oneLine(s));
}

function mdCell(s: string): string {
  return mdInline(s);
}

/**
 * A note, as a block quote of its text: each line escaped
 * (escapeMarkdownText), lines kept apart with hard breaks. The note's own
 * Markdown is shown as the characters the author typed, not rendered: an
 * export may be viewed by any renderer, many of which allow HTML.
 */
function quoteMarkdown(text: string): string[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  return lines.map((line, i) => {
    if (line.trim() === '') return '>';
    const next = lines[i + 1];
    const hardBreak = next !== undefined && next.trim() !== '' ? '\\' : '';
    return `> ${escapeMarkdownText(line.replace(/\s+$/, ''))}${hardBreak}`;
  });
}
