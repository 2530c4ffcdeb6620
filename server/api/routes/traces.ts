/**
 * The trace library: list, one trace, and uploads.
 *
 * POST /api/traces streams the body to a server-named file under
 * <dataDir>/tmp (a raw `application/octet-stream` body with the display
 * name in `?name=`: the one content type the app sends; form and multipart
 * bodies, which any web page can post cross-site without a preflight, are
 * refused with 415), never buffering it,
 * enforcing the size cap as bytes arrive. The client's file name is used as a
 * display name only. Ingest then runs in the background: GET
 * /api/jobs/:id/events reports its progress. With `?expect=<sha256>` (the
 * trace a share link needs) a file with other content is refused (409
 * {error, expected, actual}) and removed, never ingested.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path, { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { jsSafe } from '../../engine/engine.ts';
import { HttpError, scrubPaths, traceParam, TRACE_ID_RE } from '../http_errors.ts';
import type { ApiContext, CacheBudgets } from '../context.ts';
import { isFinal, type JobState } from '../jobs.ts';
import type { TraceRecord } from '../library_contract.ts';
import type { UploadAccepted } from '../../../shared/contract/library.ts';
import { prewarmThreads, prewarmTrace, releaseTraceWrites, warmTrace } from './tracks.ts';
import { findingsAnswer } from './findings.ts';
import { formatBytes } from '../../../shared/format/bytes.ts';

export function displayName(raw: string | undefined | null): string {
  // Control characters and path separators are dropped; the name is never used in a path.
  const name = (raw ?? '')
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .replace(/^.*[\\/]/, '')
    .trim()
    .slice(0, 200);
  return name || 'trace';
}

export async function registerTraceRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  // Raw uploads: hand the body stream to the route untouched (no size limit from fastify: ours applies).
  // Only this type: a body of any other type is refused before it is read (415, create_server.ts).
  const passThrough = (_req: FastifyRequest, payload: Readable, done: (err: Error | null, body?: unknown) => void) =>
    done(null, payload);
  app.addContentTypeParser('application/octet-stream', passThrough);

  app.get('/api/traces', async () => {
    const traces = await ctx.library.list();
    // Failed ingests of uploads carry the staged file's path in their error: show the upload's name.
    const staged = new RegExp(`${escapeRe(ctx.uploadDir)}[\\\\/]upload-[\\w-]+`, 'g');
    // Uploads a previous server process was ingesting when it stopped: listed as failed, with why.
    const interrupted = ctx.jobs.interrupted().map((j): TraceRecord => ({
      id: j.jobId,
      name: j.name,
      sizeBytes: j.sizeBytes ?? 0,
      format: null,
      cpus: null,
      eventsTotal: 0,
      firstTs: null,
      lastTs: null,
      findingsBySeverity: { info: 0, warn: 0, critical: 0 },
      addedAt: j.startedAt,
      status: 'failed',
      error: j.error ?? 'interrupted',
    }));
    // A job summarising the timelines of a trace the library already lists
    // is not an upload in progress any more: listing it too showed the trace twice.
    const listed = new Set(traces.filter((t) => t.status === 'ready').map((t) => t.id));
    return {
      traces: [...traces, ...interrupted].map((t) =>
        jsSafe(t.error ? { ...t, error: t.error.replace(staged, t.name) } : t),
      ),
      jobs: ctx.jobs.active().filter((j) => isFinal(j) || j.traceId === undefined || !listed.has(j.traceId)),
    };
  });

  app.get('/api/traces/:id', async (req) => {
    const id = traceParam(req.params);
    const rec = await ctx.library.get(id);
    if (!rec) throw new HttpError(404, `no trace ${id} in the library`);
    return jsSafe(rec);
  });

  app.post('/api/traces', async (req, reply) => {
    await mkdir(ctx.uploadDir, { recursive: true });
    // Server-chosen name; `-<pid>-` lets the library remove it after a crash (removeStaleWork).
    const path = join(ctx.uploadDir, `upload-${process.pid}-${randomUUID().replace(/-/g, '')}`);
    const q = req.query as Record<string, unknown>;
    const name = displayName(typeof q.name === 'string' ? q.name : (req.headers['x-file-name'] as string | undefined));
    const expect = q.expect === undefined ? undefined : String(q.expect);
    if (expect !== undefined && !TRACE_ID_RE.test(expect))
      throw new HttpError(400, 'expect must be the sha256 (64 hex digits) of the file the upload must be');
    let bytes = 0;
    let declared = NaN;
    // The content hash (the trace's id) is computed on the way to disk, so the
    // ingest need not read a multi-GB upload once more just to hash it.
    const sha = createHash('sha256');
    const limiter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        bytes += chunk.length;
        if (bytes > ctx.maxUploadBytes)
          cb(new HttpError(413, `upload larger than the limit of ${formatBytes(ctx.maxUploadBytes)}`));
        else {
          sha.update(chunk);
          cb(null, chunk);
        }
      },
    });
    try {
      const body = req.body as Readable | undefined;
      if (!body || typeof (body as Readable).pipe !== 'function')
        throw new HttpError(415, 'send the trace as the request body with content-type application/octet-stream');
      declared = Number(req.headers['content-length'] ?? NaN);
      if (Number.isFinite(declared) && declared > ctx.maxUploadBytes) {
        throw new HttpError(
          413,
          `upload of ${formatBytes(declared)} is larger than the limit of ${formatBytes(ctx.maxUploadBytes)}`,
        );
      }
      await pipeline(body, limiter, createWriteStream(path, { flags: 'wx' }));
      if (Number.isFinite(declared) && bytes !== declared) {
        throw new HttpError(
          400,
          `the upload of ${name} was cut off: the server received ${bytes} of ${declared} bytes; nothing was added to the library, please retry`,
        );
      }
    } catch (e) {
      await rm(path, { force: true });
      if (e instanceof HttpError) throw e;
      const err = e as Error & { code?: string; statusCode?: number };
      if (
        err.code === 'ERR_STREAM_PREMATURE_CLOSE' ||
        err.code === 'ECONNRESET' ||
        /aborted|Unexpected end/i.test(err.message)
      ) {
        const of = Number.isFinite(declared) ? ` of ${declared}` : '';
        req.log.warn(`upload of ${name} cut off after ${bytes}${of} bytes: partial file removed`);
        throw new HttpError(
          400,
          `the upload of ${name} was cut off after ${bytes}${of} bytes (the connection closed early); nothing was added to the library, please retry`,
        );
      }
      throw e;
    }
    if (bytes === 0) {
      await rm(path, { force: true });
      throw new HttpError(400, 'the uploaded file is empty');
    }
    const contentSha256 = sha.digest('hex');
    // `?expect=<sha256>` (a share link asking for its trace): a different file is refused before it is ingested.
    if (expect !== undefined && contentSha256 !== expect) {
      await rm(path, { force: true });
      return reply.code(409).send({
        error: `${name} is not the trace this link needs: its sha256 is ${contentSha256}, the link's trace has sha256 ${expect}; nothing was added to the library`,
        expected: expect,
        actual: contentSha256,
        name,
        bytes,
      });
    }
    const job = ctx.jobs.create(name, bytes, contentSha256);
    void runIngest(ctx, job.jobId, path, name, contentSha256);
    reply.code(202);
    return { jobId: job.jobId, name, bytes } satisfies UploadAccepted;
  });
}

/**
 * The caches' budgets while a model is being built (hashing to deriving: the
 * ingest's peak), 24 MiB in all against DEFAULT_CACHE_BUDGETS' 224: what
 * the server cached for traces opened before (up to the full budgets) would
 * otherwise add to that peak (issue 29). The least recently used answers go
 * when an ingest starts; the budgets come back once no ingest is building a
 * model (its detectors and first view then fill the caches as before).
 */
export const LOADING_CACHE_BUDGETS: CacheBudgets = {
  trackAnswers: 4 << 20,
  overviews: 16 << 20,
  findingsAnswers: 4 << 20,
};

const loading = new WeakMap<ApiContext, { ingests: number; normal: CacheBudgets }>();

/** Lowers the caches' budgets until the returned function is called (once per ingest; budgets back after the last). */
function leanCachesWhileLoading(ctx: ApiContext): () => void {
  let state = loading.get(ctx);
  if (!state) {
    state = {
      ingests: 0,
      normal: {
        trackAnswers: ctx.caches.trackAnswers.maxBytes,
        overviews: ctx.overviews.maxBytes,
        findingsAnswers: ctx.caches.findingsAnswers.maxBytes,
      },
    };
    loading.set(ctx, state);
    ctx.overviews.dropKeptOnDisk();
    setBudgets(ctx, {
      trackAnswers: Math.min(state.normal.trackAnswers, LOADING_CACHE_BUDGETS.trackAnswers),
      overviews: Math.min(state.normal.overviews, LOADING_CACHE_BUDGETS.overviews),
      findingsAnswers: Math.min(state.normal.findingsAnswers, LOADING_CACHE_BUDGETS.findingsAnswers),
    });
  }
  const s = state;
  s.ingests++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    if (--s.ingests > 0) return;
    loading.delete(ctx);
    setBudgets(ctx, s.normal);
  };
}

function setBudgets(ctx: ApiContext, b: CacheBudgets): void {
  ctx.caches.trackAnswers.setBudget(b.trackAnswers);
  ctx.caches.findingsAnswers.setBudget(b.findingsAnswers);
  ctx.overviews.setBudget(b.overviews);
}

/** Longest an upload's `done` waits for the timeline overview to be built. */
const OVERVIEW_WAIT_MS = 20_000;

/**
 * Ingests a file as job `jobId` (progress, then done or failed with why).
 * `staged`: the file is an upload's staged copy, removed afterwards; the
 * desktop shell's files (server/desktop/) are the user's own and stay.
 */
export async function runIngest(
  ctx: ApiContext,
  jobId: string,
  path: string,
  name: string,
  contentSha256: string | undefined,
  opts: { staged: boolean } = { staged: true },
): Promise<void> {
  let outcome: Partial<JobState>;
  let prewarming: Promise<void> | null = null;
  const endLean = leanCachesWhileLoading(ctx);
  try {
    const rec = await ctx.library.ingest(path, {
      name,
      contentSha256,
      // The library's own done/failed wait until the staged file is gone (below).
      onProgress: (p) => {
        if (p.phase === 'detecting' || p.phase === 'done' || p.phase === 'failed') endLean();
        // The model is in the library: summarise what needs no findings while the detectors run (warmTrace below waits for it).
        if (p.phase === 'detecting' && p.traceId && !prewarming) prewarming = prewarmTrace(ctx, p.traceId);
        ctx.jobs.update(
          jobId,
          p.phase === 'done' || p.phase === 'failed' ? { ...p, phase: ctx.jobs.get(jobId)!.phase } : p,
        );
      },
      // The threads the findings name are the first view's threads of interest (trackList): summarised while
      // the detectors' summaries and metrics still run, behind the parts prewarmTrace started.
      onFindingThreads: (traceId, utids) => prewarmThreads(ctx, traceId, utids),
    });
    outcome =
      rec.status === 'failed'
        ? { phase: 'failed', error: ingestFailure(ctx, rec.error ?? 'ingest failed', path, name) }
        : { phase: 'done', traceId: rec.id, events: rec.eventsTotal };
    if (rec.status !== 'failed') {
      // Summarise the timeline now, so the first view of the trace is instant (bounded: never blocks done for long).
      ctx.jobs.update(jobId, { phase: 'detecting', message: 'summarising timelines', traceId: rec.id });
      const warmStarted = performance.now();
      // The findings answer too: built here, the first view's request for it is answered from memory.
      await Promise.race([
        Promise.all([
          // Its track answers too when prewarmTrace held the parts back (released, and dropped, after the first view).
          warmTrace(ctx, rec.id, prewarming !== null).catch(() => null),
          findingsAnswer(ctx, rec.id).catch(() => null),
        ]),
        new Promise((r) => setTimeout(r, OVERVIEW_WAIT_MS)),
      ]);
      if (process.env.STALLSCOPE_TIMING)
        process.stderr.write(`[timing] timeline summaries ${(performance.now() - warmStarted).toFixed(0)} ms\n`);
    }
  } catch (e) {
    // The staged file's path means nothing to the user (and is the server's business): name the upload instead.
    outcome = {
      phase: 'failed',
      error: ingestFailure(ctx, (e as Error).message || String(e), path, name, (e as { code?: string }).code),
    };
  }
  endLean();
  if (opts.staged) await rm(path, { force: true }).catch(() => undefined);
  if (outcome.error) outcome.message = outcome.error;
  const job = ctx.jobs.get(jobId);
  ctx.jobs.update(jobId, outcome);
  if (outcome.phase === 'done' && job) ctx.jobs.forgetInterrupted(job.name, job.sizeBytes);
  // After the first view: its parts are kept on disk for later views (prewarmTrace held them back).
  const prewarmed = ctx.jobs.get(jobId)?.traceId;
  if (prewarming && prewarmed) {
    await (prewarming as Promise<void>);
    const written = releaseTraceWrites(ctx, prewarmed, afterFirstView(ctx));
    firstViewsOf(ctx).writes.add(written);
    await written;
    firstViewsOf(ctx).writes.delete(written);
  }
}

/**
 * How long after an upload's done its held overview parts wait before they
 * are encoded and written: the app asks for the trace, its track list and
 * findings, then the first window's tracks, within about a second of done,
 * and encoding the parts (~100 ms of this thread on a 1M-event trace, plus
 * the collection of their buffers) delayed those answers when it ran then.
 */
export const FIRST_VIEW_WRITES_AFTER_MS = 3_000;

/** Per server: the ends of the first views whose parts wait (afterFirstView), and the writes waiting on them. */
interface FirstViews {
  ends: Set<() => void>;
  writes: Set<Promise<void>>;
  /** The server is closing: no more waiting. */
  closing: boolean;
}
const firstViews = new WeakMap<ApiContext, FirstViews>();

function firstViewsOf(ctx: ApiContext): FirstViews {
  let f = firstViews.get(ctx);
  if (!f) firstViews.set(ctx, (f = { ends: new Set(), writes: new Set(), closing: false }));
  return f;
}

/**
 * Resolves FIRST_VIEW_WRITES_AFTER_MS from now, or at once when the server
 * closes (writeHeldPartsNow). The timer keeps no process alive.
 */
function afterFirstView(ctx: ApiContext): Promise<void> {
  const { ends, closing } = firstViewsOf(ctx);
  if (closing) return Promise.resolve();
  return new Promise((resolve) => {
    const end = () => {
      clearTimeout(timer);
      ends.delete(end);
      resolve();
    };
    const timer = setTimeout(end, FIRST_VIEW_WRITES_AFTER_MS).unref();
    ends.add(end);
  });
}

/**
 * Writes the overview parts still held for a first view now, and resolves
 * once they are on disk: called when the server closes, so no part is
 * written after it (into a data directory its owner may be removing).
 */
export async function writeHeldPartsNow(ctx: ApiContext): Promise<void> {
  const views = firstViewsOf(ctx);
  const { ends, writes } = views;
  views.closing = true;
  for (const end of [...ends]) end();
  await Promise.all([...writes]);
}

/**
 * Why an ingest failed, for the user: the staged file's path becomes the
 * upload's name, a full disk is said so, and no other server path is shown
 * (DuckDB and the file system name their files).
 */
function ingestFailure(ctx: ApiContext, message: string, staged: string, name: string, code?: string): string {
  if (code === 'ENOSPC' || /ENOSPC|No space left on device/i.test(message)) {
    return `${name}: the server's disk filled up while ingesting it; nothing was added to the library. Free some space on the server and upload it again.`;
  }
  const root = path.dirname(ctx.uploadDir);
  return scrubPaths(message.split(staged).join(name), [ctx.uploadDir, root]);
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
