/**
 * The query sandbox over HTTP (server/query/): everything here runs in the
 * query process (server/query/query_process.ts), on a sandboxed DuckDB
 * instance per trace, never on the connection or the threads the timeline's
 * track queries and ingests use, so a long query delays none of them.
 *
 *   POST /api/traces/:id/query            {sql, queryId?, timeoutMs?, maxRows?} -> columns, rows
 *   POST /api/queries/:queryId/cancel     stops a running query (DuckDB interrupt)
 *   GET  /api/queries/:queryId            {running, startedAt}: is it running (or waiting for a slot)
 *   GET  /api/traces/:id/schema           tables, columns, descriptions, ss_* macros (completion)
 *   GET  /api/traces/:id/event_list       ?t0&t1[&names&cpus&task&expr]&from&count: rows of the window's events
 *   GET  /api/traces/:id/event_list/position   same filters &ts[&id]: the row number of a time
 *   GET  /api/traces/:id/search           ?q: threads, processes, event names, field values
 *   GET  /api/traces/:id/search/matches   ?kind=thread&utid | kind=event&name | kind=value&table&field&value
 *   GET  /api/traces/:id/range            ?t0&t1[&tracks=thread#3,cpu#0]: range aggregates
 *   GET  /api/saved-detectors             the detectors saved from the query page (and the built-in ones)
 *   POST /api/saved-detectors             {traceId, id, title, description?, severity, sql, replace?}: save as detector
 *
 * Times in and out are ns relative to the trace's first event, except query
 * results, which are the model's own values (absolute ns), with `base`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { HttpError, bigParam, enumParam, intParam, stringParam, traceParam } from '../http_errors.ts';
import type { ApiContext } from '../context.ts';
import { QueryError, DEFAULT_TIMEOUT_MS } from '../../query/sandbox.ts';
import { FilterError } from '../../query/field_filter.ts';
import type { EventListFilter } from '../../query/event_list.ts';
import type { MatchSpec } from '../../query/search.ts';
import { QueryProcess } from '../../query/query_process.ts';
import type { TraceRef } from '../../query/query_service.ts';
import { SaveDetectorError, userDetectorDir, type Severity } from '../../query/user_detectors.ts';
import { listDetectors } from '../../findings/detector_registry.ts';

const MAX_SQL = 100_000;
const MAX_TIMEOUT_MS = 10 * 60_000;
const MAX_ROWS = 1_000_000;
const MAX_WINDOW_NS = 10n ** 15n;

/** HTTP status for a sandbox error. */
function statusOf(e: QueryError): number {
  switch (e.kind) {
    case 'refused':
      return 403;
    case 'timeout':
      return 408;
    case 'cancelled':
      return 409;
    default:
      return 400;
  }
}

export async function registerQueryRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const root = ctx.library.paths?.root ?? null;
  const queries = new QueryProcess();
  ctx.library.onTraceReplaced?.((id) => {
    void queries.request({ op: 'forget', traceId: id }).catch(() => undefined);
  });
  app.addHook('onClose', async () => queries.close());
  // Started with the server, so the first query does not wait for the process to boot.
  app.addHook('onReady', async () => {
    if (root) void queries.warm().catch(() => undefined);
  });

  const ready = async (params: unknown): Promise<TraceRef> => {
    const id = traceParam(params);
    const rec = await ctx.library.get(id);
    if (!rec) throw new HttpError(404, `no trace ${id} in the library`);
    if (rec.status !== 'ready') throw new HttpError(409, `trace ${id} is ${rec.status}`);
    if (!root) throw new HttpError(501, 'this server has no data directory to query traces in');
    const { meta } = await ctx.engines.get(id);
    return { id, dbPath: join(root, 'traces', id, 'trace.duckdb'), meta };
  };

  /** Aborts when the client goes away before the answer (a closed tab, a cancelled fetch): its query stops. */
  const abortOnClose = (reply: FastifyReply): AbortSignal => {
    const ac = new AbortController();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) ac.abort();
    });
    return ac.signal;
  };

  /** Sandbox and filter errors answer {error, kind, position, line, column} (the app marks the place). */
  const wrap = async <T>(reply: FastifyReply, run: () => Promise<T>): Promise<T | FastifyReply> => {
    try {
      return await run();
    } catch (e) {
      if (e instanceof QueryError) {
        return reply
          .code(statusOf(e))
          .send({ error: e.message, kind: e.kind, position: e.position, line: e.line, column: e.column });
      }
      if (e instanceof FilterError)
        return reply.code(400).send({ error: e.message, kind: 'filter', position: e.position });
      if (e instanceof SaveDetectorError) throw new HttpError(e.status, e.message);
      throw e;
    }
  };

  app.post('/api/traces/:id/query', async (req, reply) => {
    const body = (req.body ?? {}) as { sql?: unknown; queryId?: unknown; timeoutMs?: unknown; maxRows?: unknown };
    if (typeof body.sql !== 'string' || body.sql.trim() === '') throw new HttpError(400, 'body.sql: the SQL to run');
    if (body.sql.length > MAX_SQL) throw new HttpError(400, `the query is too long (${MAX_SQL} characters at most)`);
    const sql = body.sql;
    const queryId = body.queryId === undefined ? undefined : String(body.queryId);
    if (queryId !== undefined && !/^[\w-]{1,64}$/.test(queryId))
      throw new HttpError(400, 'queryId: letters, digits, - and _ (64 at most)');
    const timeoutMs = body.timeoutMs === undefined ? DEFAULT_TIMEOUT_MS : Number(body.timeoutMs);
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS)
      throw new HttpError(400, `timeoutMs: 1 to ${MAX_TIMEOUT_MS}`);
    const maxRows = body.maxRows === undefined ? undefined : Number(body.maxRows);
    if (maxRows !== undefined && (!Number.isInteger(maxRows) || maxRows < 0 || maxRows > MAX_ROWS))
      throw new HttpError(400, `maxRows: 0 to ${MAX_ROWS}`);
    const trace = await ready(req.params);
    return wrap(reply, async () => {
      const r = await queries.request({ op: 'run', trace, sql, queryId, timeoutMs, maxRows }, abortOnClose(reply));
      return { ...r, base: trace.meta.base.toString() };
    });
  });

  app.post('/api/queries/:queryId/cancel', async (req) => {
    const { queryId } = req.params as { queryId: string };
    if (!/^[\w-]{1,64}$/.test(queryId)) throw new HttpError(400, 'bad query id');
    return queries.request({ op: 'cancel', queryId });
  });

  app.get('/api/queries/:queryId', async (req) => {
    const { queryId } = req.params as { queryId: string };
    if (!/^[\w-]{1,64}$/.test(queryId)) throw new HttpError(400, 'bad query id');
    return queries.request({ op: 'status', queryId });
  });

  app.get('/api/traces/:id/schema', async (req, reply) => {
    const trace = await ready(req.params);
    return wrap(reply, () => queries.request({ op: 'catalog', trace }, abortOnClose(reply)));
  });

  const listFilter = (q: Record<string, unknown>): EventListFilter => {
    const names = stringParam(q, 'names', { maxLen: 8000 });
    const cpus = stringParam(q, 'cpus', { maxLen: 4000, pattern: /^\d{1,6}(,\d{1,6})*$/ });
    return {
      names: names ? names.split(',').filter(Boolean).slice(0, 500) : undefined,
      cpus: cpus ? cpus.split(',').map(Number) : undefined,
      task: stringParam(q, 'task', { maxLen: 200 }),
      expr: stringParam(q, 'expr', { maxLen: 2000 }),
    };
  };
  const windowOf = (q: Record<string, unknown>) => {
    const t0 = bigParam(q, 't0', { required: true, min: -MAX_WINDOW_NS, max: MAX_WINDOW_NS })!;
    const t1 = bigParam(q, 't1', { required: true, min: -MAX_WINDOW_NS, max: MAX_WINDOW_NS })!;
    if (t1 <= t0) throw new HttpError(400, 't1 must be greater than t0');
    return { t0, t1 };
  };

  app.get('/api/traces/:id/event_list', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    const { t0, t1 } = windowOf(q);
    const filter = listFilter(q);
    const from = intParam(q, 'from', { min: 0, max: 2 ** 31, def: 0 })!;
    const count = intParam(q, 'count', { min: 0, max: 2000, def: 200 })!;
    const trace = await ready(req.params);
    return wrap(reply, async () => {
      const r = await queries.request({ op: 'eventList', trace, t0, t1, filter, from, count }, abortOnClose(reply));
      return { t0: Number(t0), t1: Number(t1), from, ...r };
    });
  });

  app.get('/api/traces/:id/event_list/position', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    const { t0, t1 } = windowOf(q);
    const filter = listFilter(q);
    const ts = bigParam(q, 'ts', { required: true, min: -MAX_WINDOW_NS, max: MAX_WINDOW_NS })!;
    const eventId = bigParam(q, 'id', { min: 0n, max: 2n ** 62n }) ?? null;
    const trace = await ready(req.params);
    return wrap(reply, () =>
      queries.request({ op: 'position', trace, t0, t1, filter, ts, eventId }, abortOnClose(reply)),
    );
  });

  app.get('/api/traces/:id/search', async (req, reply) => {
    const text = stringParam(req.query as Record<string, unknown>, 'q', { required: true, maxLen: 200 })!;
    const trace = await ready(req.params);
    return wrap(reply, () => queries.request({ op: 'search', trace, text }, abortOnClose(reply)));
  });

  app.get('/api/traces/:id/search/matches', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    const kind = enumParam(q, 'kind', ['thread', 'event', 'value'] as const);
    let spec: MatchSpec;
    if (kind === 'thread') spec = { kind, utid: intParam(q, 'utid', { required: true, min: 0, max: 2 ** 31 - 1 })! };
    else if (kind === 'event') spec = { kind, name: stringParam(q, 'name', { required: true, maxLen: 200 })! };
    else {
      spec = {
        kind,
        table: stringParam(q, 'table', { required: true, maxLen: 64, pattern: /^\w+$/ })!,
        field: stringParam(q, 'field', { required: true, maxLen: 64, pattern: /^\w+$/ })!,
        value: stringParam(q, 'value', { required: true, maxLen: 4000 })!,
      };
    }
    const trace = await ready(req.params);
    return wrap(reply, async () => {
      try {
        return await queries.request({ op: 'matches', trace, spec }, abortOnClose(reply));
      } catch (e) {
        if (e instanceof Error && /^no field /.test(e.message)) throw new HttpError(400, e.message);
        throw e;
      }
    });
  });

  app.get('/api/traces/:id/range', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    const { t0, t1 } = windowOf(q);
    const tracks = stringParam(q, 'tracks', { maxLen: 20_000 });
    const trace = await ready(req.params);
    return wrap(reply, () =>
      queries.request({ op: 'range', trace, t0, t1, tracks: tracks ? tracks.split(',') : [] }, abortOnClose(reply)),
    );
  });

  app.get('/api/saved-detectors', async () => {
    const dir = root ? userDetectorDir(root) : null;
    return { detectors: await listDetectors(dir && existsSync(dir) ? [dir] : []), userDir: dir };
  });

  app.post('/api/saved-detectors', async (req, reply) => {
    if (!root) throw new HttpError(501, 'this server has no data directory to keep detectors in');
    const body = (req.body ?? {}) as Record<string, unknown>;
    const str = (k: string, max: number, required = true): string => {
      const v = body[k];
      if (v === undefined || v === null || v === '') {
        if (required) throw new HttpError(400, `body.${k} is required`);
        return '';
      }
      if (typeof v !== 'string' || v.length > max)
        throw new HttpError(400, `body.${k}: text of at most ${max} characters`);
      return v;
    };
    const trace = await ready({ id: str('traceId', 128) });
    const request = {
      id: str('id', 64),
      title: str('title', 200),
      description: str('description', 300, false),
      severity: str('severity', 10) as Severity,
      sql: str('sql', MAX_SQL),
    };
    const rec = await ctx.library.get(trace.id);
    return wrap(reply, async () => {
      const saved = await queries.request({
        op: 'saveDetector',
        trace,
        dataDir: root,
        request,
        replace: body.replace === true,
        origin: `trace ${rec?.name ?? trace.id.slice(0, 12)}, ${new Date().toISOString().slice(0, 10)}`,
      });
      // The findings list now includes it: this trace's findings are recomputed (others when next opened).
      await ctx.library.findings(trace.id);
      return saved;
    });
  });
}
