/**
 * Getting evidence out of stallscope:
 *
 *   GET /api/traces/:id/excerpt?sel=finding:3      text/plain: what to paste into a review email
 *       sel = finding:<index> | event:<id> | sched:<id> | state:<id> | slice:<id>,
 *       or no sel and t0/t1 (ns from the trace start; optional track=cpu#N|thread#U) for a time range.
 *       Optional: note=<noteId> (else the notes attached to the selection), t0/t1/pin/hide (for the link),
 *       max=<lines> (default 200).
 *   GET /api/traces/:id/export.json                 findings + notes as JSON (download)
 *   GET /api/traces/:id/export.md                   the same as Markdown (download)
 *   GET /api/traces/:id/export.perfetto-trace       the trace with its findings and notes as a
 *       Perfetto trace (server/export/perfetto/; the app's "Open in Perfetto")
 *
 * Rate-limited per client like note writes (these read the trace).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { jsSafe } from '../../engine/engine.ts';
import { HttpError, bigParam, intParam, stringParam } from '../http_errors.ts';
import type { ApiContext } from '../context.ts';
import { lookupEvents, type EventInfo } from '../event_lookup.ts';
import type { FindingLike } from '../library_contract.ts';
import { TRACK_URI_RE } from '../../notes/note_input.ts';
import { isNoteId, type Note } from '../../notes/notes_store.ts';
import { formatAbs, formatExcerpt, formatMarkdown, formatNs, measuredLine, type ExportFinding } from '../../notes/excerpt.ts';
import { shareSearch, type LinkView } from '../../notes/share_link.ts';
import { publicBaseUrl } from '../public_url.ts';
import { rateLimited, readyTrace, type ReadyTrace } from './notes.ts';
import { exportPerfetto } from '../../export/perfetto/export_perfetto.ts';

const SEL_RE = /^(finding|event|sched|state|slice):(\d{1,15})$/;
const ROW_TABLE = { sched: 'sched_slice', state: 'thread_state', slice: 'slice' } as const;
const MAX_EXCERPT_EVENTS = 5000;

/** A window with context around [ts, ts+dur], as the app opens a finding (app/state/finding_nav.ts windowFor). */
export function windowAround(ts: number, dur: number): { t0: number; t1: number } {
  const d = Math.max(0, dur);
  const pad = Math.max(d * 0.35, 50_000);
  return { t0: Math.max(0, Math.floor(ts - pad)), t1: Math.ceil(ts + d + pad) };
}

function uriList(q: Record<string, unknown>, key: string): string[] {
  const s = stringParam(q, key, { maxLen: 4000 });
  if (!s) return [];
  return s.split(',').map((u) => u.replace(':', '#')).filter((u) => TRACK_URI_RE.test(u)).slice(0, 200);
}

function noteSel(n: Note): string | null {
  const a = n.anchor;
  if (a.kind === 'finding') return `finding:${a.finding}`;
  if (a.kind === 'event') return `event:${a.event}`;
  return a.ref ?? null;
}

function findingJson(f: FindingLike, index: number, base: bigint) {
  const ts = BigInt(f.ts_ns);
  const dur = BigInt(f.dur_ns ?? 0);
  return {
    ...(jsSafe(f) as Record<string, unknown>),
    index,
    ts_ns: ts.toString(),
    dur_ns: dur.toString(),
    ts: Number(ts - base),
    dur: Number(dur),
    event_ids: f.event_ids.map((e) => Number(e)),
  };
}

function fileName(name: string, id: string, ext: string): string {
  const stem = name.replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '').slice(0, 60) || 'trace';
  return `stallscope-${stem}-${id.slice(0, 12)}.${ext}`;
}

function download(reply: FastifyReply, type: string, name: string, body: string): FastifyReply {
  return reply
    .header('content-type', type)
    .header('content-disposition', `attachment; filename="${name}"`)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .send(body);
}

export async function registerExportRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const readLimit = rateLimited(ctx.limits.reads);

  const exportData = async (t: ReadyTrace, origin: string) => {
    const base = t.tr.meta.base;
    const { findings } = await ctx.library.findings(t.id);
    const notes = await ctx.notes.list(t.id);
    const link = (v: Omit<LinkView, 'trace'>) => `${origin}/${shareSearch({ trace: t.id, ...v })}`;
    const fs = findings.map((f, i) => {
      const j = findingJson(f, i, base);
      return { ...j, link: link({ ...windowAround(j.ts, j.dur), sel: `finding:${i}` }) };
    });
    const ns = notes.map((n) => ({ ...n, link: link({ ...windowAround(n.anchor.t0, n.anchor.t1 - n.anchor.t0), sel: noteSel(n), note: n.id }) }));
    return { findings: fs, notes: ns, link: link({}) };
  };

  app.get('/api/traces/:id/export.json', { onRequest: readLimit }, async (req, reply) => {
    const t = await readyTrace(ctx, req.params);
    const d = await exportData(t, publicBaseUrl(ctx));
    const body = {
      format: 'stallscope-export',
      version: 1,
      exported_at: new Date().toISOString(),
      trace: jsSafe(t.rec),
      link: d.link,
      findings: d.findings,
      notes: d.notes,
    };
    return download(reply, 'application/json; charset=utf-8', fileName(t.rec.name, t.id, 'json'), `${JSON.stringify(body, null, 2)}\n`);
  });

  app.get('/api/traces/:id/export.md', { onRequest: readLimit }, async (req, reply) => {
    const t = await readyTrace(ctx, req.params);
    const d = await exportData(t, publicBaseUrl(ctx));
    const md = formatMarkdown({
      trace: { id: t.id, name: t.rec.name, kernel: t.rec.kernel ?? null, cpus: t.rec.cpus, eventsTotal: t.rec.eventsTotal },
      findings: d.findings as unknown as ExportFinding[],
      notes: d.notes,
      exportedAt: new Date().toISOString(),
      link: d.link,
    });
    return download(reply, 'text/markdown; charset=utf-8', fileName(t.rec.name, t.id, 'md'), md);
  });

  app.get('/api/traces/:id/export.perfetto-trace', { onRequest: readLimit }, async (req, reply) => {
    const t = await readyTrace(ctx, req.params);
    const { findings } = await ctx.library.findings(t.id);
    const notes = await ctx.notes.list(t.id);
    const out = await exportPerfetto({ query: (sql) => t.tr.query(sql), findings, notes });
    return reply
      .header('content-type', 'application/octet-stream')
      .header('content-disposition', `attachment; filename="${fileName(t.rec.name, t.id, 'perfetto-trace')}"`)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-store')
      .send(Buffer.from(out.bytes.buffer, out.bytes.byteOffset, out.bytes.length));
  });

  app.get('/api/traces/:id/excerpt', { onRequest: readLimit }, async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    const selText = stringParam(q, 'sel', { maxLen: 40 });
    const m = selText ? SEL_RE.exec(selText) : null;
    if (selText && !m) throw new HttpError(400, 'sel must be finding:<index>, event:<id>, sched:<id>, state:<id> or slice:<id>');
    const qt0 = bigParam(q, 't0', { min: 0n });
    const qt1 = bigParam(q, 't1', { min: 0n });
    if (qt0 !== undefined && qt1 !== undefined && qt1 <= qt0) throw new HttpError(400, 't1 must be greater than t0');
    if (!m && (qt0 === undefined || qt1 === undefined)) throw new HttpError(400, 'give sel=finding:<index>|event:<id>|... or a time range t0 and t1');
    const noteParam = stringParam(q, 'note', { maxLen: 40 });
    if (noteParam !== undefined && !isNoteId(noteParam)) throw new HttpError(400, 'malformed note id');
    const track = stringParam(q, 'track', { maxLen: 100 });
    if (track !== undefined && !TRACK_URI_RE.test(track.replace(':', '#'))) throw new HttpError(400, 'track must be a track uri like cpu#0');
    const maxLines = intParam(q, 'max', { min: 1, max: MAX_EXCERPT_EVENTS, def: 200 })!;
    const pinned = uriList(q, 'pin');
    const hidden = uriList(q, 'hide');

    const t = await readyTrace(ctx, req.params);
    const base = t.tr.meta.base;
    let headline: string;
    let measured: string | null = null;
    let ids: bigint[] = [];
    let events: EventInfo[] | null = null;
    let win: { t0: number; t1: number };
    const sel = m ? `${m[1]}:${m[2]}` : null;

    if (m && m[1] === 'finding') {
      const { findings } = await ctx.library.findings(t.id);
      const f = findings[Number(m[2])];
      if (!f) throw new HttpError(404, `no finding ${m[2]} in this trace`);
      headline = `${f.severity} ${f.detector}/${f.kind}: ${f.title}`;
      measured = measuredLine({ ...f, values: f.values ?? {} });
      ids = f.event_ids.map((e) => BigInt(e));
      win = windowAround(Number(BigInt(f.ts_ns) - base), Number(f.dur_ns ?? 0));
    } else if (m && m[1] === 'event') {
      const [e] = await lookupEvents(t.tr, [BigInt(m[2]!)]);
      if (!e) throw new HttpError(404, `no event ${m[2]} in this trace`);
      events = [e];
      headline = `event ${e.id}: ${e.name} on CPU ${e.cpu} (${e.comm ?? '?'}-${e.tid ?? '?'})`;
      measured = [`ts=${formatAbs(BigInt(e.ts_ns))}`, `cpu=${e.cpu}`, `task=${e.comm ?? '?'}-${e.tid ?? '?'}`, ...Object.entries(e.fields).map(([k, v]) => `${k}=${String(v)}`)].join(' ');
      win = windowAround(e.ts, 0);
    } else if (m) {
      const table = ROW_TABLE[m[1] as keyof typeof ROW_TABLE];
      if (!t.tr.meta.tables.has(table)) throw new HttpError(404, `this trace has no ${table} table`);
      const [row] = await t.tr.query<Record<string, unknown>>(
        `SELECT r.*, t.tid, t.name AS thread_name FROM ${table} r LEFT JOIN thread t ON t.utid = r.utid WHERE r.id = ${BigInt(m[2]!)} LIMIT 1`,
      );
      if (!row) throw new HttpError(404, `no ${table} row ${m[2]}`);
      const ts = Number((row.ts as bigint) - base);
      const dur = Number(row.dur ?? 0);
      const who = `${String(row.thread_name ?? '?')}-${String(row.tid ?? '?')}`;
      const what = table === 'slice' ? `${String(row.category ?? 'slice')} ${String(row.name ?? '')}` : table === 'sched_slice' ? 'running' : `state ${String(row.state ?? '')}`;
      headline = `${what} of ${who} for ${dur < 0 ? 'the rest of the trace' : formatNs(dur)}`;
      measured = `start=${formatAbs(row.ts as bigint)} dur=${dur < 0 ? 'open' : formatNs(dur)} task=${who}`;
      const refs = table === 'slice' ? [row.begin_id, row.end_id] : table === 'thread_state' ? [row.waker_id] : [row.id];
      ids = refs.filter((v): v is bigint | number => typeof v === 'bigint' || typeof v === 'number').map((v) => BigInt(v));
      win = windowAround(ts, Math.max(0, dur));
    } else {
      const t0 = qt0!;
      const t1 = qt1!;
      let where = `ts >= ${base + t0} AND ts <= ${base + t1}`;
      const tm = track ? /^(cpu|thread)[#:](\d{1,9})$/.exec(track) : null;
      if (tm) where += tm[1] === 'cpu' ? ` AND cpu = ${Number(tm[2])}` : ` AND utid = ${Number(tm[2])}`;
      const rows = await t.tr.query<{ id: bigint }>(`SELECT id FROM ftrace_event WHERE ${where} ORDER BY ts, id LIMIT ${MAX_EXCERPT_EVENTS + 1}`);
      const [cnt] = rows.length > MAX_EXCERPT_EVENTS ? await t.tr.query<{ n: bigint }>(`SELECT count(*) AS n FROM ftrace_event WHERE ${where}`) : [{ n: BigInt(rows.length) }];
      ids = rows.slice(0, MAX_EXCERPT_EVENTS).map((r) => r.id);
      const total = Number(cnt?.n ?? rows.length);
      headline = `${total} events from ${formatNs(Number(t0))} to ${formatNs(Number(t1))} after the trace start${track ? ` on ${track.replace(':', '#')}` : ''} (${formatNs(Number(t1 - t0))})`;
      win = { t0: Number(t0), t1: Number(t1) };
      measured = `start=${formatAbs(base + t0)} end=${formatAbs(base + t1)} dur=${formatNs(Number(t1 - t0))}`;
      events = await lookupEvents(t.tr, ids.slice(0, maxLines));
      const notes = await notesFor(null, noteParam);
      return sendExcerpt(events.map((e) => e.line), total, notes);
    }
    const total = events ? events.length : ids.length;
    events ??= await lookupEvents(t.tr, ids.slice(0, maxLines));
    const notes = await notesFor(sel, noteParam);
    return sendExcerpt(events.map((e) => e.line), total, notes);

    async function notesFor(s: string | null, id: string | undefined): Promise<Note[]> {
      const all = await ctx.notes.list(t.id);
      const chosen = all.filter((n) => (id !== undefined && n.id === id) || (s !== null && noteSel(n) === s));
      if (id !== undefined && !chosen.some((n) => n.id === id)) throw new HttpError(404, `no note ${id} on this trace (it may have been deleted)`);
      return chosen;
    }

    function sendExcerpt(lines: string[], total: number, notes: Note[]) {
      const link = `${publicBaseUrl(ctx)}/${shareSearch({
        trace: t.id,
        t0: qt0 !== undefined ? Number(qt0) : win.t0,
        t1: qt1 !== undefined ? Number(qt1) : win.t1,
        sel,
        pinned,
        hidden,
        note: noteParam ?? (notes.length === 1 ? notes[0]!.id : null),
      })}`;
      const text = formatExcerpt({
        trace: { id: t.id, name: t.rec.name, kernel: t.rec.kernel ?? null, cpus: t.rec.cpus },
        headline,
        measured,
        lines,
        eventsTotal: total,
        notes,
        link,
      });
      return reply.header('content-type', 'text/plain; charset=utf-8').header('x-content-type-options', 'nosniff').send(text);
    }
  });
}
