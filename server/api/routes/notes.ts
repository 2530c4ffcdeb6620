/**
 * Notes on a trace (server/notes/notes_store.ts):
 *
 *   GET    /api/traces/:id/notes                   {notes: Note[]}
 *   GET    /api/traces/:id/notes/:noteId           Note
 *   POST   /api/traces/:id/notes                   {anchor, text, author} -> 201 Note
 *   PATCH  /api/traces/:id/notes/:noteId           {version, text?, author?, anchor?} -> Note | 409 {error, note}
 *   DELETE /api/traces/:id/notes/:noteId?version=N -> 204 | 409 {error, note}
 *
 * Anchors: {kind:'finding', finding}, {kind:'event', event}, {kind:'range', t0, t1}
 * (ns from the trace start), each with an optional `track` uri. The server
 * fills in t0/t1 of finding and event anchors from the trace and checks that
 * the finding / event exists.
 *
 * Trace ids must be sha256 hex and note ids 22 base64url characters before
 * anything else happens; bodies are JSON of at most 64 KiB; writes are
 * rate-limited per client (429 with Retry-After).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http_errors.ts';
import type { ApiContext } from '../context.ts';
import type { OpenTrace } from '../trace_engines.ts';
import type { TraceRecord } from '../library_contract.ts';
import { findingById } from '../library_contract.ts';
import { lookupEvents } from '../event_lookup.ts';
import { isTraceId } from '../../ingest/data_dir.ts';
import { NoteInputError, parseNewNote, parsePatch } from '../../notes/note_input.ts';
import {
  ConflictError,
  NoteNotFoundError,
  NotesLimitError,
  isNoteId,
  type NoteAnchor,
} from '../../notes/notes_store.ts';
import type { RateLimiter } from '../../notes/rate_limit.ts';

export const NOTE_BODY_LIMIT = 64 * 1024;

export interface ReadyTrace {
  id: string;
  rec: TraceRecord;
  tr: OpenTrace;
}

/** The trace named by `:id`, ready to query; 400 for a malformed id, 404 unknown, 409 not ready. */
export async function readyTrace(ctx: ApiContext, params: unknown): Promise<ReadyTrace> {
  const id = (params as { id?: string }).id ?? '';
  if (!isTraceId(id)) throw new HttpError(400, 'trace id must be the trace content hash (sha256, 64 hex digits)');
  const rec = await ctx.library.get(id);
  if (!rec) throw new HttpError(404, `no trace ${id} in the library`);
  if (rec.status !== 'ready') throw new HttpError(409, `trace ${id} is ${rec.status}`);
  return { id, rec, tr: await ctx.engines.get(id) };
}

export function noteIdParam(params: unknown): string {
  const id = (params as { noteId?: string }).noteId;
  if (!isNoteId(id)) throw new HttpError(400, 'malformed note id');
  return id;
}

/** A route-level onRequest hook: one token per request from this client, else 429. */
export function rateLimited(limiter: RateLimiter) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const r = limiter.take(req.ip || 'unknown');
    if (!r.ok) {
      reply.header('retry-after', String(r.retryAfterS));
      throw new HttpError(429, `too many requests: try again in ${r.retryAfterS} s`);
    }
  };
}

function requireJson(req: FastifyRequest): void {
  const type = String(req.headers['content-type'] ?? '');
  if (!/^application\/json\b/i.test(type))
    throw new HttpError(415, 'send the note as JSON (content-type: application/json)');
}

/** Fills in and checks an anchor against the trace. */
export async function resolveAnchor(ctx: ApiContext, t: ReadyTrace, a: NoteAnchor): Promise<NoteAnchor> {
  const base = t.tr.meta.base;
  const span = Number(t.tr.meta.last - base);
  if (a.kind === 'finding') {
    const { findings } = await ctx.library.findings(t.id);
    const f = findingById(findings, a.finding);
    if (!f) throw new HttpError(404, `no finding ${a.finding} in this trace`);
    const t0 = Number(BigInt(f.ts_ns) - base);
    return { ...a, t0, t1: t0 + Math.max(0, Number(f.dur_ns ?? 0)) };
  }
  if (a.kind === 'event') {
    const [ev] = await lookupEvents(t.tr, [BigInt(a.event)]);
    if (!ev) throw new HttpError(404, `no event ${a.event} in this trace`);
    return { ...a, t0: ev.ts, t1: ev.ts, track: a.track ?? `cpu#${ev.cpu}` };
  }
  if (a.t0 > span) throw new HttpError(400, `anchor range starts after the end of the trace (${span} ns)`);
  return { ...a, t1: Math.min(a.t1, span) };
}

function mapStoreError(err: unknown): never {
  if (err instanceof NoteInputError) throw new HttpError(400, err.message);
  if (err instanceof NoteNotFoundError) throw new HttpError(404, err.message);
  if (err instanceof NotesLimitError) throw new HttpError(413, err.message);
  throw err;
}

export async function registerNoteRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const writeLimit = rateLimited(ctx.limits.writes);

  app.get('/api/traces/:id/notes', async (req) => {
    const t = await readyTrace(ctx, req.params);
    return { notes: await ctx.notes.list(t.id) };
  });

  app.get('/api/traces/:id/notes/:noteId', async (req) => {
    const noteId = noteIdParam(req.params);
    const t = await readyTrace(ctx, req.params);
    const note = await ctx.notes.get(t.id, noteId);
    if (!note) throw new HttpError(404, `no note ${noteId} on this trace (it may have been deleted)`);
    return note;
  });

  app.post('/api/traces/:id/notes', { bodyLimit: NOTE_BODY_LIMIT, onRequest: writeLimit }, async (req, reply) => {
    requireJson(req);
    const t = await readyTrace(ctx, req.params);
    try {
      const input = parseNewNote(req.body);
      input.anchor = await resolveAnchor(ctx, t, input.anchor);
      const note = await ctx.notes.create(t.id, input);
      reply.code(201);
      return note;
    } catch (err) {
      mapStoreError(err);
    }
  });

  app.patch(
    '/api/traces/:id/notes/:noteId',
    { bodyLimit: NOTE_BODY_LIMIT, onRequest: writeLimit },
    async (req, reply) => {
      const noteId = noteIdParam(req.params);
      requireJson(req);
      const t = await readyTrace(ctx, req.params);
      try {
        const { version, patch } = parsePatch(req.body);
        if (patch.anchor) patch.anchor = await resolveAnchor(ctx, t, patch.anchor);
        return await ctx.notes.update(t.id, noteId, version, patch);
      } catch (err) {
        if (err instanceof ConflictError) return reply.code(409).send({ error: err.message, note: err.current });
        mapStoreError(err);
      }
    },
  );

  app.delete('/api/traces/:id/notes/:noteId', { onRequest: writeLimit }, async (req, reply) => {
    const noteId = noteIdParam(req.params);
    const q = req.query as Record<string, unknown>;
    let version: number | undefined;
    if (q.version !== undefined) {
      if (typeof q.version !== 'string' || !/^\d{1,9}$/.test(q.version))
        throw new HttpError(400, 'version must be an integer');
      version = Number(q.version);
    }
    const t = await readyTrace(ctx, req.params);
    try {
      await ctx.notes.delete(t.id, noteId, version);
      return reply.code(204).send();
    } catch (err) {
      if (err instanceof ConflictError) return reply.code(409).send({ error: err.message, note: err.current });
      mapStoreError(err);
    }
  });
}
