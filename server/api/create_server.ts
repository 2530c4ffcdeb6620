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
import { join } from 'node:path';
import { timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyMultipart from '@fastify/multipart';
import { HttpError } from './http_errors.ts';
import { Jobs } from './jobs.ts';
import type { LibraryLike } from './library_contract.ts';
import { TraceEngines } from './trace_engines.ts';
import { Overviews } from './overview.ts';
import type { ApiContext } from './context.ts';
import { DEFAULT_APP_DIR, registerAppRoutes } from './routes/app.ts';
import { registerEventRoutes } from './routes/events.ts';
import { registerFindingRoutes } from './routes/findings.ts';
import { registerJobRoutes } from './routes/jobs.ts';
import { registerTraceRoutes } from './routes/traces.ts';
import { registerTrackRoutes, warmTrace } from './routes/tracks.ts';
import { registerNoteRoutes } from './routes/notes.ts';
import { registerExportRoutes } from './routes/export.ts';
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
   * Access token: when set, every /api request must carry it (header
   * `Authorization: Bearer <token>` or `X-Stallscope-Token`, or `?token=` for
   * EventSource). The app shell itself is public: it holds no trace data.
   */
  token?: string;
  /** Log requests (default false). */
  logger?: boolean;
  /** Where notes are kept (default: <dataDir>/notes). */
  notesDir?: string;
  /** Per-client rate limits (token buckets): note writes, and excerpt/export reads. */
  rateLimits?: { writes?: RateLimit; reads?: RateLimit };
}

/** Defaults: a burst of 120 note writes, then 2 a second; 60 excerpts/exports, then 5 a second. */
export const DEFAULT_RATE_LIMITS = { writes: { burst: 120, perSecond: 2 }, reads: { burst: 60, perSecond: 5 } };

export interface StallscopeServer {
  app: FastifyInstance;
  url: string;
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
  const ctx: ApiContext = {
    library: opts.library,
    engines: new TraceEngines(opts.library, cacheDirOf),
    overviews: new Overviews(cacheDirOf),
    cacheDirOf,
    jobs: new Jobs(root ? join(root, 'jobs') : undefined),
    uploadDir: opts.library.paths?.tmp ?? join(opts.dataDir ?? opts.library.dataDir ?? tmpdir(), 'tmp'),
    maxUploadBytes: opts.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES,
    notes: new NotesStore(opts.notesDir ?? join(opts.library.paths?.root ?? opts.dataDir ?? opts.library.dataDir ?? tmpdir(), 'notes')),
    limits: {
      writes: new RateLimiter(opts.rateLimits?.writes ?? DEFAULT_RATE_LIMITS.writes),
      reads: new RateLimiter(opts.rateLimits?.reads ?? DEFAULT_RATE_LIMITS.reads),
    },
  };
  // A re-ingest that rebuilt a model (another stallscope version built it) must not be answered from the old one.
  opts.library.onTraceReplaced?.((id) => {
    ctx.engines.forget(id);
    ctx.overviews.forget(id);
  });
  const app = Fastify({ logger: opts.logger ?? false, routerOptions: { maxParamLength: 200 }, requestTimeout: 0 });
  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown }, req, reply) => {
    if (err instanceof HttpError) return reply.code(err.statusCode).send({ error: err.message });
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status >= 500) req.log.error(err);
    return reply.code(status).send({ error: status >= 500 ? `internal error: ${err.message}` : err.message });
  });
  if (opts.token) {
    const token = opts.token;
    app.addHook('onRequest', async (req) => {
      if (!req.url.startsWith('/api/')) return;
      const auth = req.headers.authorization;
      const given =
        (auth?.startsWith('Bearer ') ? auth.slice(7) : undefined) ??
        (req.headers['x-stallscope-token'] as string | undefined) ??
        ((req.query as Record<string, unknown> | undefined)?.token as string | undefined);
      if (!given || !safeEqual(given, token)) throw new HttpError(401, 'this server needs an access token: open the URL it printed (with ?token=...)');
    });
  }
  await app.register(fastifyMultipart, { limits: { fileSize: ctx.maxUploadBytes, files: 1, fields: 10 } });
  await registerTraceRoutes(app, ctx);
  await registerJobRoutes(app, ctx);
  await registerFindingRoutes(app, ctx);
  await registerTrackRoutes(app, ctx);
  await registerEventRoutes(app, ctx);
  await registerNoteRoutes(app, ctx);
  await registerExportRoutes(app, ctx);
  await registerAppRoutes(app, opts.appDir ?? DEFAULT_APP_DIR);
  // Shutting down: unfinished ingests fail now (their feeds end, so close does not wait on them).
  app.addHook('preClose', async () => ctx.jobs.stopAll());
  app.addHook('onClose', async () => ctx.engines.forgetAll());
  return { app, ctx };
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export async function createServer(opts: ServerOptions): Promise<StallscopeServer> {
  const { app, ctx } = await buildApi(opts);
  const host = opts.host ?? '127.0.0.1';
  await app.listen({ port: opts.port ?? 7420, host });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
  return { app, url, warm: (id) => warmTrace(ctx, id), close: () => app.close() };
}
