/**
 * GET /api/traces/:id/events/:eventId: one event's fields and raw line.
 * GET /api/traces/:id/events?ids=1,2,3: several (a finding's event_ids), by time.
 * GET /api/traces/:id/rows/<sched_slice|thread_state|slice>/:rowId: one derived row and its events.
 */
import type { FastifyInstance } from 'fastify';
import { jsSafe } from '../../engine/engine.ts';
import { HttpError, idListParam, traceParam } from '../http_errors.ts';
import type { ApiContext } from '../context.ts';
import { lookupEvents } from '../event_lookup.ts';

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

  // A row of a derived table (what a click on a CPU slice, thread state or slice selects),
  // with its thread and the events it was built from.
  const ROW_TABLES: Record<string, { events: (r: Record<string, unknown>) => unknown[] }> = {
    sched_slice: { events: (r) => [r.id] },
    thread_state: { events: (r) => [r.waker_id] },
    slice: { events: (r) => [r.begin_id, r.end_id] },
  };
  app.get('/api/traces/:id/rows/:table/:rowId', async (req) => {
    const { table, rowId } = req.params as { table: string; rowId: string };
    const spec = ROW_TABLES[table];
    if (!spec)
      throw new HttpError(
        404,
        `unknown table ${JSON.stringify(table.slice(0, 40))} (one of ${Object.keys(ROW_TABLES).join(', ')})`,
      );
    if (!/^\d{1,20}$/.test(rowId)) throw new HttpError(400, 'row id must be a non-negative integer');
    const tr = await ready(req.params);
    if (!tr.meta.tables.has(table)) throw new HttpError(404, `this trace has no ${table} table`);
    const [row] = await tr.query(
      `SELECT r.*, t.tid, t.name AS thread_name FROM ${table} r LEFT JOIN thread t ON t.utid = r.utid WHERE r.id = ${BigInt(rowId)} LIMIT 1`,
    );
    if (!row) throw new HttpError(404, `no ${table} row ${rowId}`);
    const ids = spec
      .events(row)
      .filter((v): v is bigint | number => typeof v === 'bigint' || typeof v === 'number')
      .map((v) => BigInt(v));
    const out = jsSafe(row) as Record<string, unknown>;
    out.ts_ns = String(row.ts);
    out.ts = Number((row.ts as bigint) - tr.meta.base);
    return { table, row: out, events: await lookupEvents(tr, ids) };
  });

  app.get('/api/traces/:id/events', async (req) => {
    const ids = idListParam(req.query as Record<string, unknown>, 'ids', MAX_EVENT_IDS);
    const tr = await ready(req.params);
    return { events: await lookupEvents(tr, ids) };
  });
}
