/**
 * GET /api/traces/:id/events/:eventId: one event's fields and raw line.
 * GET /api/traces/:id/events?ids=1,2,3: several (a finding's event_ids), by time.
 */
import type { FastifyInstance } from 'fastify';
import { HttpError, idListParam } from '../http_errors.ts';
import type { ApiContext } from '../context.ts';
import { lookupEvents } from '../event_lookup.ts';
import { traceParam } from './traces.ts';

export const MAX_EVENT_IDS = 5000;

export async function registerEventRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const ready = async (params: unknown) => {
    const id = traceParam(params);
    const rec = await ctx.library.get(id);
    if (!rec) throw new HttpError(404, `no trace ${id} in the library`);
    if (rec.status !== 'ready') throw new HttpError(409, `trace ${id} is ${rec.status}`);
    return ctx.engines.get(id);
  };

  app.get('/api/traces/:id/events/:eventId', async (req) => {
    const raw = (req.params as { eventId: string }).eventId;
    if (!/^\d{1,20}$/.test(raw)) throw new HttpError(400, 'event id must be a non-negative integer');
    const tr = await ready(req.params);
    const [ev] = await lookupEvents(tr, [BigInt(raw)]);
    if (!ev) throw new HttpError(404, `no event ${raw} in this trace`);
    return ev;
  });

  app.get('/api/traces/:id/events', async (req) => {
    const ids = idListParam(req.query as Record<string, unknown>, 'ids', MAX_EVENT_IDS);
    const tr = await ready(req.params);
    return { events: await lookupEvents(tr, ids) };
  });
}
