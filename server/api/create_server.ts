/**
 * The stallscope HTTP server: the JSON API under /api and the built app.
 *
 *   const server = await createServer({ library, port: 7420 });
 *   console.log(server.url); ... await server.close();
 *
 * `buildApi` gives the same fastify instance without listening (for tests
 * with `app.inject`). Errors are JSON `{error}` with a 4xx/5xx status.
 */
import { tmpdir } from 'node:os';
import { createServer as createHttpServer } from 'node:http';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerAccessControl } from './access.ts';
import { ByteLru } from './byte_lru.ts';
import { HttpError, userFacingError } from './http_errors.ts';
import { HostAllowList, parsePublicUrl, resolvePublicBaseUrl } from './public_url.ts';
import { Jobs } from './jobs.ts';
import type { LibraryLike } from './library_contract.ts';
import { TraceEngines } from './trace_engines.ts';
import { Overviews } from './overview.ts';
import type { ApiContext, CacheBudgets } from './context.ts';
import { DEFAULT_APP_DIR, registerAppRoutes } from './routes/app.ts';
import { registerEventRoutes } from './routes/events.ts';
import { registerFindingRoutes } from './routes/findings.ts';
import { registerJobRoutes } from './routes/jobs.ts';
import { registerTraceRoutes, writeHeldPartsNow } from './routes/traces.ts';
import { registerTrackRoutes, warmTrace } from './routes/tracks.ts';
import { registerNoteRoutes } from './routes/notes.ts';
import { registerExportRoutes } from './routes/export.ts';
import { registerQueryRoutes } from './routes/query.ts';
import { registerAnnotationRoutes } from './routes/annotations.ts';
import { registerCompareRoutes } from './routes/compare.ts';
import { registerFleetRoutes } from './routes/fleet.ts';
import { NotesStore } from '../notes/notes_store.ts';
import { RateLimiter, type RateLimit } from '../notes/rate_limit.ts';

export const DEFAULT_MAX_UPLOAD_BYTES = 16 * 1024 ** 3; // 16 GiB: multi-GB traces are normal

export interface ServerOptions {
  library: LibraryLike;
  port?: number;
  host?: string;
  /** Upload size cap in bytes (default 16 GiB). */
  maxUploadBytes?: number;
  /** Where uploads are staged (default: library.dataDir, else the OS temp dir). */
  dataDir?: string;
  /** The built app (default: dist/app of this checkout). */
  appDir?: string;
  /**
   * Access token: when set, every API route needs it (header
   * `Authorization: Bearer <token>` or `X-Stallscope-Token`, or the HttpOnly
   * cookie the app page sets after a first visit with `?token=`; access.ts).
   * The app shell itself is public: it holds no trace data.
   */
  token?: string;
  /** What users reach the server as (links are written with it; its host is allowed): `--public-url`. */
  publicUrl?: string;
  /** More Host names to answer to (a team server's DNS names): `--allow-host`. */
  allowHosts?: string[];
  /** A request whose body stops arriving for this long is cut off (default 60 s). */
  bodyIdleTimeoutMs?: number;
  /** Longest a client may take to send a request's headers (default 30 s). */
  headersTimeoutMs?: number;
  /** Log requests (default false). */
  logger?: boolean;
  /** Where notes are kept (default: <dataDir>/notes). */
  notesDir?: string;
  /** Per-client rate limits (token buckets): note writes, and excerpt/export reads. */
  rateLimits?: { writes?: RateLimit; reads?: RateLimit };
  /** Fleet datasets to offer (`serve --fleet DIR`): name -> directory; only these are ever read (routes/fleet.ts). */
  fleets?: Map<string, string>;
  /** Cache budgets in bytes (default DEFAULT_CACHE_BUDGETS). */
  cacheBudgets?: Partial<CacheBudgets>;
}

/**
 * What the server's caches may hold in memory, in bytes (byte_lru.ts): past
 * a budget the least recently used answers go (they are rebuilt, mostly from
 * files kept beside each model). 224 MiB in all.
 */
export const DEFAULT_CACHE_BUDGETS: CacheBudgets = {
  trackAnswers: 64 << 20,
  overviews: 128 << 20,
  findingsAnswers: 32 << 20,
};

/** Defaults: a burst of 120 note writes, then 2 a second; 60 excerpts/exports, then 5 a second. */
export const DEFAULT_RATE_LIMITS = { writes: { burst: 120, perSecond: 2 }, reads: { burst: 60, perSecond: 5 } };

export interface StallscopeServer {
  app: FastifyInstance;
  url: string;
  /** What links are written with (public_url.ts): `--public-url`, else the bound address. No trailing slash. */
  publicBaseUrl: string;
  /** What the routes share (tests look at its caches). */
  ctx: ApiContext;
  /**
   * Builds a library trace's timeline summaries (what an upload's job does
   * before it reports done), so its first view needs no table scans.
   */
  warm(traceId: string): Promise<void>;
  close(): Promise<void>;
}

export async function buildApi(opts: ServerOptions): Promise<{ app: FastifyInstance; ctx: ApiContext }> {
  // Job records survive a restart only where there is a data directory to keep them in.
  const root = opts.library.paths?.root ?? opts.dataDir ?? opts.library.dataDir;
  // What the first view of a trace needs (its meta, track list and overview) is kept beside each
  // model (<dataDir>/traces/<id>/overview/): after a restart it is read back instead of rescanned.
  const libRoot = opts.library.paths?.root;
  const cacheDirOf = libRoot ? (id: string) => join(libRoot, 'traces', id, 'overview') : undefined;
  const publicUrl = opts.publicUrl === undefined ? undefined : parsePublicUrl(opts.publicUrl);
  // The port is only known for sure once listening (port 0): createServer sets it then.
  let port = opts.port ?? 7420;
  const cacheBudgets: CacheBudgets = { ...DEFAULT_CACHE_BUDGETS, ...opts.cacheBudgets };
  const ctx: ApiContext = {
    library: opts.library,
    engines: new TraceEngines(opts.library, cacheDirOf),
    overviews: new Overviews(cacheDirOf, cacheBudgets.overviews),
    caches: {
      trackAnswers: new ByteLru(cacheBudgets.trackAnswers),
      findingsAnswers: new ByteLru(cacheBudgets.findingsAnswers),
    },
    cacheDirOf,
    jobs: new Jobs(root ? join(root, 'jobs') : undefined),
    uploadDir: opts.library.paths?.tmp ?? join(opts.dataDir ?? opts.library.dataDir ?? tmpdir(), 'tmp'),
    maxUploadBytes: opts.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES,
    notes: new NotesStore(
      opts.notesDir ?? join(opts.library.paths?.root ?? opts.dataDir ?? opts.library.dataDir ?? tmpdir(), 'notes'),
    ),
    limits: {
      writes: new RateLimiter(opts.rateLimits?.writes ?? DEFAULT_RATE_LIMITS.writes),
      reads: new RateLimiter(opts.rateLimits?.reads ?? DEFAULT_RATE_LIMITS.reads),
    },
    publicBaseUrl: () => resolvePublicBaseUrl({ host: opts.host, port, publicUrl }),
    fleets: opts.fleets ?? new Map(),
    setListeningPort: (p: number) => {
      port = p;
    },
  };
  // Jobs a crash interrupted after their trace was committed are done, not failed: ask the library what it has.
  await ctx.jobs.reconcile(async (id) => (await opts.library.get(id))?.status === 'ready');
  // A re-ingest that rebuilt a model (another stallscope version built it) must not be answered from the old one.
  opts.library.onTraceReplaced?.((id) => {
    ctx.engines.forget(id);
    ctx.overviews.forget(id);
    ctx.caches.findingsAnswers.delete(id);
    ctx.caches.trackAnswers.deleteWhere((k) => k.startsWith(`${id}|`));
  });
  // No overall request timeout (a multi-GB upload may take long): a body that stops arriving is cut off instead (below).
  // Headers that dribble in (slowloris) are cut off after headersTimeout: Node looks every
  // connectionsCheckingInterval, so that is kept well below it.
  const headersTimeout = opts.headersTimeoutMs ?? 30_000;
  const app = Fastify({
    logger: opts.logger ?? false,
    routerOptions: { maxParamLength: 200 },
    serverFactory: (handler) =>
      createHttpServer(
        {
          requestTimeout: 0,
          headersTimeout,
          connectionsCheckingInterval: Math.max(100, Math.min(5_000, headersTimeout / 4)),
        },
        handler,
      ),
  });
  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown }, req, reply) => {
    if (err instanceof HttpError) return reply.code(err.statusCode).send({ error: err.message });
    if ((err as { code?: string }).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      const type = String(req.headers['content-type'] ?? 'none').slice(0, 60);
      return reply.code(415).send({
        error: `unsupported content type ${type}: upload a trace as application/octet-stream (the raw file), send notes as application/json`,
      });
    }
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status >= 500) req.log.error(err);
    const { status: code, message } = userFacingError(err, status, [
      root,
      opts.notesDir,
      opts.dataDir,
      opts.library.dataDir,
      ctx.uploadDir,
      tmpdir(),
    ]);
    return reply.code(code).send({ error: message });
  });
  registerAccessControl(app, {
    token: opts.token,
    hosts: new HostAllowList({ host: opts.host, port, publicUrl, allowHosts: opts.allowHosts }),
    port: () => port,
  });
  cutOffStalledBodies(app, opts.bodyIdleTimeoutMs ?? 60_000);
  await registerTraceRoutes(app, ctx);
  await registerJobRoutes(app, ctx);
  await registerFindingRoutes(app, ctx);
  await registerTrackRoutes(app, ctx);
  await registerEventRoutes(app, ctx);
  await registerNoteRoutes(app, ctx);
  await registerExportRoutes(app, ctx);
  await registerQueryRoutes(app, ctx);
  await registerAnnotationRoutes(app, ctx);
  await registerCompareRoutes(app, ctx);
  await registerFleetRoutes(app, ctx);
  await registerAppRoutes(app, opts.appDir ?? DEFAULT_APP_DIR);
  // Shutting down: unfinished ingests fail now (their feeds end, so close does not wait on them).
  app.addHook('preClose', async () => ctx.jobs.stopAll());
  // The overview parts held for a first view are written before the engines go (they are found open).
  app.addHook('onClose', async () => {
    await writeHeldPartsNow(ctx);
    await ctx.engines.forgetAll();
  });
  return { app, ctx };
}

/**
 * A client that stops sending a request body (a stalled upload, a slowloris)
 * would hold its socket and the staged file forever: after `ms` without a
 * byte the connection is closed (the upload route then removes its partial
 * file). Measured from the last byte, not the start: slow links still upload.
 */
function cutOffStalledBodies(app: FastifyInstance, ms: number): void {
  app.addHook('onRequest', async (req) => {
    const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    if (!hasBody || ms <= 0) return;
    const raw = req.raw;
    const sock = raw.socket;
    if (typeof sock?.setTimeout !== 'function') return; // app.inject's stand-in socket
    const onIdle = () => sock.destroy();
    sock.setTimeout(ms);
    sock.once('timeout', onIdle);
    const done = () => {
      sock.setTimeout(0);
      sock.off('timeout', onIdle);
    };
    raw.once('end', done);
    raw.once('close', done);
  });
}

export async function createServer(opts: ServerOptions): Promise<StallscopeServer> {
  const { app, ctx } = await buildApi(opts);
  const host = opts.host ?? '127.0.0.1';
  await app.listen({ port: opts.port ?? 7420, host });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? 7420);
  ctx.setListeningPort(port);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
  return {
    app,
    url,
    publicBaseUrl: ctx.publicBaseUrl(),
    ctx,
    warm: (id) => warmTrace(ctx, id),
    close: () => app.close(),
  };
}
