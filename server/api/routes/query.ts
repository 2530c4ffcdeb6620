/**
 * The query sandbox over HTTP (server/query/): everything here runs on a
 * trace's sandbox instance, never on the connection the timeline's track
 * queries use, so a long query delays no track, ingest or other user.
 *
 *   POST /api/traces/:id/query            {sql, queryId?, timeoutMs?, maxRows?} -> columns, rows
 *   POST /api/queries/:queryId/cancel     stops a running query (DuckDB interrupt)
 *   GET  /api/traces/:id/schema           tables, columns, descriptions, ss_* macros (completion)
 *   GET  /api/traces/:id/event_list       ?t0&t1[&names&cpus&task&expr]&from&count: rows of the window's events
 *   GET  /api/traces/:id/event_list/position   same filters &ts[&id]: the row number of a time
 *   GET  /api/traces/:id/search           ?q: threads, processes, event names, field values
 *   GET  /api/traces/:id/search/matches   ?kind=thread&utid | kind=event&name | kind=value&table&field&value
 *   GET  /api/traces/:id/range            ?t0&t1[&tracks=thread#3,cpu#0]: range aggregates
 *   GET  /api/detectors                   built-in and saved detectors
 *   POST /api/detectors                   {traceId, id, title, description?, severity, sql, replace?}: save as detector
 *
 * Times in and out are ns relative to the trace's first event, except query
 * results, which are the model's own values (absolute ns), with `base`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { HttpError, bigParam, enumParam, intParam, stringParam } from '../http_errors.ts';
import type { ApiContext } from '../context.ts';
import type { OpenTrace } from '../trace_engines.ts';
import { traceParam } from './traces.ts';
import { QuerySandboxes } from '../../query/sandboxes.ts';
import { QueryError, DEFAULT_TIMEOUT_MS } from '../../query/sandbox.ts';
import { readCatalog, type Catalog } from '../../query/catalog.ts';
import { FilterError } from '../../query/field_filter.ts';
import { buildIndex, listRows, readArgKeys, rowAt, rowIds, type EventListFilter, type ListContext, type ListIndex } from '../../query/event_list.ts';
import { eventNameCounts, matches, search, type EventNameHit, type MatchSpec } from '../../query/search.ts';
import { coveredBy, rangeSummary } from '../../query/range_summary.ts';
import { saveDetector, SaveDetectorError, userDetectorDir, type Severity } from '../../query/user_detectors.ts';
import { listDetectors } from '../../findings/detector_registry.ts';

const MAX_SQL = 100_000;
const MAX_TIMEOUT_MS = 10 * 60_000;
const MAX_ROWS = 1_000_000;
const MAX_WINDOW_NS = 10n ** 15n;
/** The app's own reads (event list, search, range) get this long. */
const READ_TIMEOUT_MS = 30_000;

/** HTTP status for a sandbox error. */
function statusOf(e: QueryError): number {
  switch (e.kind) {
    case 'refused': return 403;
    case 'timeout': return 408;
    case 'cancelled': return 409;
    default: return 400;
  }
}

export async function registerQueryRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const root = ctx.library.paths?.root ?? null;
  const sandboxes = new QuerySandboxes((id) => (root ? join(root, 'traces', id, 'trace.duckdb') : null));
  ctx.library.onTraceReplaced?.((id) => {
    sandboxes.forget(id);
    perTrace.delete(id);
  });
  app.addHook('onClose', async () => sandboxes.closeAll());

  /** Per trace: its catalogue, args keys and event names (read once), and event list indexes (LRU). */
  const perTrace = new Map<string, { lc: Promise<ListContext>; names: Promise<EventNameHit[]> | null; indexes: Map<string, Promise<ListIndex>> }>();

  const ready = async (params: unknown): Promise<{ id: string; tr: OpenTrace }> => {
    const id = traceParam(params);
    const rec = await ctx.library.get(id);
    if (!rec) throw new HttpError(404, `no trace ${id} in the library`);
    if (rec.status !== 'ready') throw new HttpError(409, `trace ${id} is ${rec.status}`);
    return { id, tr: await ctx.engines.get(id) };
  };

  const state = (id: string, tr: OpenTrace) => {
    let s = perTrace.get(id);
    if (!s) {
      s = {
        lc: sandboxes.read(id, async (conn) => {
          const catalog = await readCatalog(conn);
          return { meta: tr.meta, catalog, argKeys: await readArgKeys(conn, catalog) };
        }),
        names: null,
        indexes: new Map(),
      };
      s.lc.catch(() => perTrace.delete(id));
      perTrace.set(id, s);
    }
    return s;
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
        return reply.code(statusOf(e)).send({ error: e.message, kind: e.kind, position: e.position, line: e.line, column: e.column });
      }
      if (e instanceof FilterError) return reply.code(400).send({ error: e.message, kind: 'filter', position: e.position });
      throw e;
    }
  };

  app.post('/api/traces/:id/query', async (req, reply) => {
    const body = (req.body ?? {}) as { sql?: unknown; queryId?: unknown; timeoutMs?: unknown; maxRows?: unknown };
    if (typeof body.sql !== 'string' || body.sql.trim() === '') throw new HttpError(400, 'body.sql: the SQL to run');
    if (body.sql.length > MAX_SQL) throw new HttpError(400, `the query is too long (${MAX_SQL} characters at most)`);
    const sql = body.sql;
    const queryId = body.queryId === undefined ? undefined : String(body.queryId);
    if (queryId !== undefined && !/^[\w-]{1,64}$/.test(queryId)) throw new HttpError(400, 'queryId: letters, digits, - and _ (64 at most)');
    const timeoutMs = body.timeoutMs === undefined ? DEFAULT_TIMEOUT_MS : Number(body.timeoutMs);
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS) throw new HttpError(400, `timeoutMs: 1 to ${MAX_TIMEOUT_MS}`);
    const maxRows = body.maxRows === undefined ? undefined : Number(body.maxRows);
    if (maxRows !== undefined && (!Number.isInteger(maxRows) || maxRows < 0 || maxRows > MAX_ROWS)) throw new HttpError(400, `maxRows: 0 to ${MAX_ROWS}`);
    const { id, tr } = await ready(req.params);
    return wrap(reply, async () => {
      const r = await sandboxes.run(id, sql, { queryId, timeoutMs, maxRows, signal: abortOnClose(reply) });
      return { ...r, base: tr.meta.base.toString() };
    });
  });

  app.post('/api/queries/:queryId/cancel', async (req) => {
    const { queryId } = req.params as { queryId: string };
    if (!/^[\w-]{1,64}$/.test(queryId)) throw new HttpError(400, 'bad query id');
    return { cancelled: sandboxes.cancel(queryId) };
  });

  app.get('/api/traces/:id/schema', async (req, reply) => {
    const { id, tr } = await ready(req.params);
    return wrap(reply, async () => (await state(id, tr).lc).catalog satisfies Catalog);
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
  const INDEXES_KEPT = 16;
  const indexFor = async (id: string, tr: OpenTrace, t0: bigint, t1: bigint, f: EventListFilter, signal: AbortSignal): Promise<ListIndex> => {
    const s = state(id, tr);
    const key = JSON.stringify([String(t0), String(t1), f.names ?? [], f.cpus ?? [], f.task ?? '', f.expr ?? '']);
    let p = s.indexes.get(key);
    if (p) {
      s.indexes.delete(key);
      s.indexes.set(key, p);
      return p;
    }
    const lc = await s.lc;
    p = sandboxes.read(id, (conn) => buildIndex(conn, lc, tr.meta.base + t0, tr.meta.base + t1, f), { timeoutMs: READ_TIMEOUT_MS, signal });
    s.indexes.set(key, p);
    p.catch(() => s.indexes.delete(key));
    if (s.indexes.size > INDEXES_KEPT) s.indexes.delete(s.indexes.keys().next().value!);
    return p;
  };

  app.get('/api/traces/:id/event_list', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    const { t0, t1 } = windowOf(q);
    const f = listFilter(q);
    const from = intParam(q, 'from', { min: 0, max: 2 ** 31, def: 0 })!;
    const count = intParam(q, 'count', { min: 0, max: 2000, def: 200 })!;
    const { id, tr } = await ready(req.params);
    const signal = abortOnClose(reply);
    return wrap(reply, async () => {
      const index = await indexFor(id, tr, t0, t1, f, signal);
      const rows = await sandboxes.read(id, async (conn) => listRows(conn, tr.meta, await rowIds(conn, index, from, count), from), { timeoutMs: READ_TIMEOUT_MS, signal });
      return { t0: Number(t0), t1: Number(t1), total: index.total, from, rows };
    });
  });

  app.get('/api/traces/:id/event_list/position', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    const { t0, t1 } = windowOf(q);
    const f = listFilter(q);
    const ts = bigParam(q, 'ts', { required: true, min: -MAX_WINDOW_NS, max: MAX_WINDOW_NS })!;
    const eventId = bigParam(q, 'id', { min: 0n, max: 2n ** 62n }) ?? null;
    const { id, tr } = await ready(req.params);
    const signal = abortOnClose(reply);
    return wrap(reply, async () => {
      const index = await indexFor(id, tr, t0, t1, f, signal);
      const at = await sandboxes.read(id, (conn) => rowAt(conn, index, tr.meta.base + ts, eventId), { timeoutMs: READ_TIMEOUT_MS, signal });
      return { index: at, total: index.total };
    });
  });

  app.get('/api/traces/:id/search', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    const text = stringParam(q, 'q', { required: true, maxLen: 200 })!;
    const { id, tr } = await ready(req.params);
    const signal = abortOnClose(reply);
    return wrap(reply, async () => {
      const s = state(id, tr);
      const lc = await s.lc;
      if (!s.names) {
        s.names = sandboxes.read(id, (conn) => eventNameCounts(conn), { timeoutMs: READ_TIMEOUT_MS });
        s.names.catch(() => { s.names = null; });
      }
      const names = await s.names;
      return sandboxes.read(id, (conn) => search(conn, lc.catalog, names, text), { timeoutMs: READ_TIMEOUT_MS, signal });
    });
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
    const { id, tr } = await ready(req.params);
    const signal = abortOnClose(reply);
    return wrap(reply, async () => {
      const lc = await state(id, tr).lc;
      try {
        return await sandboxes.read(id, (conn) => matches(conn, lc.catalog, tr.meta, spec), { timeoutMs: READ_TIMEOUT_MS, signal });
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
    const { id, tr } = await ready(req.params);
    const signal = abortOnClose(reply);
    return wrap(reply, () => sandboxes.read(id, (conn) => rangeSummary(conn, tr.meta, t0, t1, coveredBy(tracks ? tracks.split(',') : [])), { timeoutMs: READ_TIMEOUT_MS, signal }));
  });

  app.get('/api/detectors', async () => {
    const dir = root ? userDetectorDir(root) : null;
    return { detectors: await listDetectors(dir && existsSync(dir) ? [dir] : []), userDir: dir };
  });

  app.post('/api/detectors', async (req, reply) => {
    if (!root) throw new HttpError(501, 'this server has no data directory to keep detectors in');
    const body = (req.body ?? {}) as Record<string, unknown>;
    const str = (k: string, max: number, required = true): string => {
      const v = body[k];
      if (v === undefined || v === null || v === '') {
        if (required) throw new HttpError(400, `body.${k} is required`);
        return '';
      }
      if (typeof v !== 'string' || v.length > max) throw new HttpError(400, `body.${k}: text of at most ${max} characters`);
      return v;
    };
    const traceId = str('traceId', 128);
    const { id } = await ready({ id: traceId });
    const sql = str('sql', MAX_SQL);
    const request = { id: str('id', 64), title: str('title', 200), description: str('description', 300, false), severity: str('severity', 10) as Severity, sql };
    const rec = await ctx.library.get(id);
    return wrap(reply, async () => {
      // The query's columns, from the query itself (LIMIT 0 of it).
      const probe = await sandboxes.run(id, sql, { maxRows: 0, timeoutMs: DEFAULT_TIMEOUT_MS });
      try {
        const saved = await sandboxes.read(id, (conn) => saveDetector(root, request, {
          columns: probe.columns.map((c) => c.name),
          conn,
          origin: `trace ${rec?.name ?? id.slice(0, 12)}, ${new Date().toISOString().slice(0, 10)}`,
          replace: body.replace === true,
        }), { timeoutMs: 5 * 60_000 });
        // The findings list now includes it: this trace's findings are recomputed (others when next opened).
        await ctx.library.findings(id);
        return { id: saved.id, file: saved.file, findings: saved.findings, replaced: saved.replaced };
      } catch (e) {
        if (e instanceof SaveDetectorError) throw new HttpError(e.status, e.message);
        throw e;
      }
    });
  });
}
