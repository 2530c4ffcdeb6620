/**
 * A trace's notes as an annotations file (shared/links/annotations_file.ts):
 *
 *   GET  /api/traces/:id/annotations      <name>.stallscope-notes.json (download)
 *   POST /api/traces/:id/annotations      an annotations file (JSON) -> {added, existing, reanchored, skipped, notes}
 *
 * POST merges by note id: notes already here are left as they are; the
 * others are added with their original id, author and times (the app's
 * "keep these notes" of a share link posts the link's notes this way). The
 * file must name this trace (its sha256): a file for another trace is
 * refused (409) with both names. The body is untrusted: JSON of at most
 * ANNOTATIONS_MAX_BYTES, checked field by field (400 naming the field).
 * Like every write it is rate-limited and passes the server's access
 * checks (create_server.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { jsSafe } from '../../engine/engine.ts';
import { HttpError } from '../http_errors.ts';
import type { ApiContext } from '../context.ts';
import {
  ANNOTATIONS_MAX_BYTES,
  annotationsDocument,
  annotationsFileName,
  parseAnnotations,
} from '../../../shared/links/annotations_file.ts';
import { PortableError, toPortable, traceFactsOf } from '../../../shared/links/portable_notes.ts';
import { planImport } from '../../notes/annotations.ts';
import { NotesLimitError } from '../../notes/notes_store.ts';
import { rateLimited, readyTrace, resolveAnchor } from './notes.ts';

function requireJson(req: FastifyRequest): void {
  const type = String(req.headers['content-type'] ?? '');
  if (!/^application\/json\b/i.test(type))
    throw new HttpError(415, 'send the annotations file as JSON (content-type: application/json)');
}

export async function registerAnnotationRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  app.get('/api/traces/:id/annotations', { onRequest: rateLimited(ctx.limits.reads) }, async (req, reply) => {
    const t = await readyTrace(ctx, req.params);
    const notes = await ctx.notes.list(t.id);
    const doc = annotationsDocument(traceFactsOf(t.rec), notes.map(toPortable));
    return reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('content-disposition', `attachment; filename="${annotationsFileName(t.rec.name)}"`)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-store')
      .send(`${JSON.stringify(jsSafe(doc), null, 1)}\n`);
  });

  app.post(
    '/api/traces/:id/annotations',
    { bodyLimit: ANNOTATIONS_MAX_BYTES, onRequest: rateLimited(ctx.limits.writes) },
    async (req) => {
      requireJson(req);
      const t = await readyTrace(ctx, req.params);
      let file;
      try {
        file = parseAnnotations(req.body);
      } catch (e) {
        if (e instanceof PortableError) throw new HttpError(400, e.message);
        throw e;
      }
      if (file.trace.sha256 !== t.id) {
        throw new HttpError(
          409,
          `these notes are for another trace: ${file.trace.name} (sha256 ${file.trace.sha256}), not ${t.rec.name} (sha256 ${t.id})`,
        );
      }
      const plan = await planImport(t.id, file.notes, async (a) => {
        try {
          return await resolveAnchor(ctx, t, a);
        } catch (e) {
          if (e instanceof HttpError && e.statusCode < 500) return { error: e.message };
          throw e;
        }
      });
      try {
        const { added, existing } = await ctx.notes.importNotes(t.id, plan.notes);
        const addedIds = new Set(added.map((n) => n.id));
        return {
          added: added.length,
          existing: existing.length,
          reanchored: plan.reanchored.filter((r) => addedIds.has(r.id)),
          skipped: plan.skipped,
          notes: added,
        };
      } catch (e) {
        if (e instanceof NotesLimitError) throw new HttpError(413, e.message);
        throw e;
      }
    },
  );
}
