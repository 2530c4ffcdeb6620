/**
 * What an excerpt is of: a finding, an event, a row of a derived table, or a
 * time range (optionally on one track), resolved against a trace into the
 * sentence that describes it, its values, its event ids and the window its
 * link opens. Shared by GET /api/traces/:id/excerpt and `stallscope excerpt`.
 *
 * Selections are written as in share links: `finding:<id>`, `event:<id>`,
 * `sched:<id>`, `state:<id>`, `slice:<id>`, or a range t0/t1 (ns from the
 * trace's first event).
 */
import { lookupEvents, type EventInfo } from '../api/event_lookup.ts';
import { findingById, type FindingLike } from '../api/library_contract.ts';
import type { OpenTrace } from '../api/trace_engines.ts';
import { findingSentence, formatAbs, formatNs, valuesInWords } from './excerpt.ts';

export const SEL_RE = /^(finding|event|sched|state|slice):(\d{1,15})$/;
const ROW_TABLE = { sched: 'sched_slice', state: 'thread_state', slice: 'slice' } as const;
export const MAX_EXCERPT_EVENTS = 5000;

export type Selection =
  | { kind: 'finding' | 'event' | 'sched' | 'state' | 'slice'; id: number }
  | { kind: 'range'; t0: bigint; t1: bigint; track?: string };

export interface Resolved {
  /** `finding:3` etc. for the link (null for a range). */
  sel: string | null;
  sentence: string;
  values: string | null;
  /** The event lines (at most maxLines). */
  lines: string[];
  /** Events the selection has (lines may be fewer). */
  total: number;
  /** Window the link opens, ns from the trace start. */
  window: { t0: number; t1: number };
}

/** Raised for a selection the trace does not have (the API answers 404). */
export class SelectionNotFound extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SelectionNotFound';
  }
}

/** A window with context around [ts, ts+dur], as the app opens a finding (app/state/finding_nav.ts windowFor). */
export function windowAround(ts: number, dur: number): { t0: number; t1: number } {
  const d = Math.max(0, dur);
  const pad = Math.max(d * 0.35, 50_000);
  return { t0: Math.max(0, Math.floor(ts - pad)), t1: Math.ceil(ts + d + pad) };
}

export async function resolveSelection(
  tr: OpenTrace,
  findings: readonly FindingLike[],
  s: Selection,
  maxLines: number,
): Promise<Resolved> {
  const base = tr.meta.base;
  const linesOf = async (ids: bigint[]) => (await lookupEvents(tr, ids.slice(0, maxLines))).map((e) => e.line);
  if (s.kind === 'finding') {
    const f = findingById(findings, s.id);
    if (!f) throw new SelectionNotFound(`no finding ${s.id} in this trace`);
    const ids = f.event_ids.map((e) => BigInt(e));
    return {
      sel: `finding:${s.id}`,
      sentence: findingSentence({ title: f.title, ts_ns: f.ts_ns, cpu: f.cpu }),
      values: valuesInWords(f.values ?? {}) || null,
      lines: await linesOf(ids),
      total: ids.length,
      window: windowAround(Number(BigInt(f.ts_ns) - base), Number(f.dur_ns ?? 0)),
    };
  }
  if (s.kind === 'event') {
    const [e] = await lookupEvents(tr, [BigInt(s.id)]);
    if (!e) throw new SelectionNotFound(`no event ${s.id} in this trace`);
    return {
      sel: `event:${s.id}`,
      sentence: eventSentence(e),
      values: null,
      lines: [e.line],
      total: 1,
      window: windowAround(e.ts, 0),
    };
  }
  if (s.kind === 'range') {
    let where = `ts >= ${base + s.t0} AND ts <= ${base + s.t1}`;
    const tm = s.track ? /^(cpu|thread)[#:](\d{1,9})$/.exec(s.track) : null;
    if (tm) where += tm[1] === 'cpu' ? ` AND cpu = ${Number(tm[2])}` : ` AND utid = ${Number(tm[2])}`;
    const rows = await tr.query<{ id: bigint }>(
      `SELECT id FROM ftrace_event WHERE ${where} ORDER BY ts, id LIMIT ${Math.min(maxLines, MAX_EXCERPT_EVENTS) + 1}`,
    );
    const [cnt] =
      rows.length > Math.min(maxLines, MAX_EXCERPT_EVENTS)
        ? await tr.query<{ n: bigint }>(`SELECT count(*) AS n FROM ftrace_event WHERE ${where}`)
        : [{ n: BigInt(rows.length) }];
    const total = Number(cnt?.n ?? rows.length);
    const on = s.track ? ` on ${s.track.replace(':', '#')}` : '';
    return {
      sel: null,
      sentence: `${total.toLocaleString('en')} event${total === 1 ? '' : 's'}${on} from ${formatAbs(base + s.t0)} to ${formatAbs(base + s.t1)} (${formatNs(Number(s.t1 - s.t0))}).`,
      values: null,
      lines: await linesOf(rows.map((r) => r.id)),
      total,
      window: { t0: Number(s.t0), t1: Number(s.t1) },
    };
  }
  const table = ROW_TABLE[s.kind];
  if (!tr.meta.tables.has(table)) throw new SelectionNotFound(`this trace has no ${table} table`);
  const [row] = await tr.query<Record<string, unknown>>(
    `SELECT r.*, t.tid, t.name AS thread_name FROM ${table} r LEFT JOIN thread t ON t.utid = r.utid WHERE r.id = ${BigInt(s.id)} LIMIT 1`,
  );
  if (!row) throw new SelectionNotFound(`no ${table} row ${s.id}`);
  const ts = Number((row.ts as bigint) - base);
  const dur = Number(row.dur ?? 0);
  const who = `${String(row.thread_name ?? '?')} ${String(row.tid ?? '?')}`;
  const what =
    table === 'slice'
      ? `${String(row.name ?? '')} (${String(row.category ?? 'slice')})`
      : table === 'sched_slice'
        ? 'running'
        : `in state ${String(row.state ?? '')}`;
  const refs = table === 'slice' ? [row.begin_id, row.end_id] : table === 'thread_state' ? [row.waker_id] : [row.id];
  const ids = refs
    .filter((v): v is bigint | number => typeof v === 'bigint' || typeof v === 'number')
    .map((v) => BigInt(v));
  return {
    sel: `${s.kind}:${s.id}`,
    sentence: `${who} ${what} for ${dur < 0 ? 'the rest of the trace' : formatNs(dur)}, from ${formatAbs(row.ts as bigint)}${row.cpu !== undefined && row.cpu !== null ? ` on CPU ${String(row.cpu)}` : ''}.`,
    values: null,
    lines: await linesOf(ids),
    total: ids.length,
    window: windowAround(ts, Math.max(0, dur)),
  };
}

function eventSentence(e: EventInfo): string {
  return `${e.name} by ${e.comm ?? '?'} ${e.tid ?? '?'} on CPU ${e.cpu}, at ${formatAbs(BigInt(e.ts_ns))}.`;
}
