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
import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { jsSafe } from '../../engine/engine.ts';
import { HttpError, bigParam, intParam, stringParam } from '../http_errors.ts';
import type { ApiContext } from '../context.ts';
import type { FindingLike } from '../library_contract.ts';
import { TRACK_URI_RE } from '../../notes/note_input.ts';
import { isNoteId, type Note } from '../../notes/notes_store.ts';
import { formatExcerpt, formatMarkdown, type ExportFinding } from '../../notes/excerpt.ts';
import {
  MAX_EXCERPT_EVENTS,
  SEL_RE,
  SelectionNotFound,
  resolveSelection,
  windowAround,
  type Resolved,
  type Selection,
} from '../../notes/excerpt_selection.ts';
import { shareSearch, withLinkFragment, type LinkView } from '../../notes/share_link.ts';
import { publicBaseUrl } from '../public_url.ts';
import { rateLimited, readyTrace, type ReadyTrace } from './notes.ts';
import { exportPerfettoToStream } from '../../export/perfetto/export_perfetto.ts';

export { windowAround };

function uriList(q: Record<string, unknown>, key: string): string[] {
  const s = stringParam(q, key, { maxLen: 4000 });
  if (!s) return [];
  return s
    .split(',')
    .map((u) => u.replace(':', '#'))
    .filter((u) => TRACK_URI_RE.test(u))
    .slice(0, 200);
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
    index: f.id ?? index,
    ts_ns: ts.toString(),
    dur_ns: dur.toString(),
    ts: Number(ts - base),
    dur: Number(dur),
    event_ids: f.event_ids.map((e) => Number(e)),
  };
}

function fileName(name: string, id: string, ext: string): string {
  const stem =
    name
      .replace(/\.[^.]*$/, '')
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .replace(/^[._]+/, '')
      .slice(0, 60) || 'trace';
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
      return { ...j, link: link({ ...windowAround(j.ts, j.dur), sel: `finding:${j.index}` }) };
    });
    const ns = notes.map((n) => ({
      ...n,
      link: link({ ...windowAround(n.anchor.t0, n.anchor.t1 - n.anchor.t0), sel: noteSel(n), note: n.id }),
    }));
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
    return download(
      reply,
      'application/json; charset=utf-8',
      fileName(t.rec.name, t.id, 'json'),
      `${JSON.stringify(body, null, 2)}\n`,
    );
  });

  app.get('/api/traces/:id/export.md', { onRequest: readLimit }, async (req, reply) => {
    const t = await readyTrace(ctx, req.params);
    const d = await exportData(t, publicBaseUrl(ctx));
    const md = formatMarkdown({
      trace: {
        id: t.id,
        name: t.rec.name,
        kernel: t.rec.kernel ?? null,
        cpus: t.rec.cpus,
        eventsTotal: t.rec.eventsTotal,
      },
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
    // Streamed as it is made (export_perfetto.ts): an error midway cuts the download off.
    const body = new PassThrough();
    exportPerfettoToStream(body, {
      query: (sql) => t.tr.query(sql),
      queryColumns: (sql) =>
        t.tr.queryColumns
          ? t.tr.queryColumns(sql)
          : Promise.reject(new Error('perfetto export: this trace is not open on an engine that reads columns')),
      findings,
      notes,
    }).catch((err: unknown) => req.log.error(err));
    return reply
      .header('content-type', 'application/octet-stream')
      .header('content-disposition', `attachment; filename="${fileName(t.rec.name, t.id, 'perfetto-trace')}"`)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-store')
      .send(body);
  });

  app.get('/api/traces/:id/excerpt', { onRequest: readLimit }, async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    const selText = stringParam(q, 'sel', { maxLen: 40 });
    const m = selText ? SEL_RE.exec(selText) : null;
    if (selText && !m)
      throw new HttpError(400, 'sel must be finding:<id>, event:<id>, sched:<id>, state:<id> or slice:<id>');
    const qt0 = bigParam(q, 't0', { min: 0n });
    const qt1 = bigParam(q, 't1', { min: 0n });
    if (qt0 !== undefined && qt1 !== undefined && qt1 <= qt0) throw new HttpError(400, 't1 must be greater than t0');
    if (!m && (qt0 === undefined || qt1 === undefined))
      throw new HttpError(400, 'give sel=finding:<id>|event:<id>|... or a time range t0 and t1');
    const noteParam = stringParam(q, 'note', { maxLen: 40 });
    if (noteParam !== undefined && !isNoteId(noteParam)) throw new HttpError(400, 'malformed note id');
    const track = stringParam(q, 'track', { maxLen: 100 });
    if (track !== undefined && !TRACK_URI_RE.test(track.replace(':', '#')))
      throw new HttpError(400, 'track must be a track uri like cpu#0');
    const maxLines = intParam(q, 'max', { min: 1, max: MAX_EXCERPT_EVENTS, def: 200 })!;
    const pinned = uriList(q, 'pin');
    const hidden = uriList(q, 'hide');

    const t = await readyTrace(ctx, req.params);
    const { findings } = m?.[1] === 'finding' ? await ctx.library.findings(t.id) : { findings: [] };
    const selection: Selection = m
      ? { kind: m[1] as 'finding', id: Number(m[2]) }
      : { kind: 'range', t0: qt0!, t1: qt1!, track };
    let r: Resolved;
    try {
      r = await resolveSelection(t.tr, findings, selection, maxLines);
    } catch (e) {
      if (e instanceof SelectionNotFound) throw new HttpError(404, e.message);
      throw e;
    }
    const all = await ctx.notes.list(t.id);
    const notes = all.filter(
      (n) => (noteParam !== undefined && n.id === noteParam) || (r.sel !== null && noteSel(n) === r.sel),
    );
    if (noteParam !== undefined && !notes.some((n) => n.id === noteParam))
      throw new HttpError(404, `no note ${noteParam} on this trace (it may have been deleted)`);
    const view = `${publicBaseUrl(ctx)}/${shareSearch({
      trace: t.id,
      t0: qt0 !== undefined ? Number(qt0) : r.window.t0,
      t1: qt1 !== undefined ? Number(qt1) : r.window.t1,
      sel: r.sel,
      pinned,
      hidden,
      note: noteParam ?? (notes.length === 1 ? notes[0]!.id : null),
    })}`;
    // The link carries the file's facts and these notes (shared/links/link_codec.ts): it works for a reviewer without this server.
    const link = await withLinkFragment(view, t.rec, notes);
    const text = formatExcerpt({
      trace: { id: t.id, name: t.rec.name, kernel: t.rec.kernel ?? null, cpus: t.rec.cpus },
      sentence: r.sentence,
      values: r.values,
      lines: r.lines,
      eventsTotal: r.total,
      notes,
      link,
    });
    return reply
      .header('content-type', 'text/plain; charset=utf-8')
      .header('x-content-type-options', 'nosniff')
      .send(text);
  });
}
