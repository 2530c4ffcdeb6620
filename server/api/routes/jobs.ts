/**
 * GET /api/jobs/:id/events: Server-Sent Events with an ingest job's progress.
 * Sends the current state at once, then every change, and ends after the
 * final `done` or `failed` state. GET /api/jobs/:id is the same state once.
 */
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../http_errors.ts';
import type { ApiContext } from '../context.ts';
import type { JobState } from '../jobs.ts';

const JOB_ID_RE = /^[0-9a-f-]{36}$/;

function jobParam(params: unknown): string {
  const id = (params as { id?: string }).id ?? '';
  if (!JOB_ID_RE.test(id)) throw new HttpError(400, 'malformed job id');
  return id;
}

export async function registerJobRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  app.get('/api/jobs/:id', async (req) => {
    const id = jobParam(req.params);
    const job = ctx.jobs.get(id);
    if (!job) throw new HttpError(404, 'unknown job (finished long ago, or the server restarted): check the library');
    return job;
  });

  app.get('/api/jobs/:id/events', async (req, reply) => {
    const id = jobParam(req.params);
    const job = ctx.jobs.get(id);
    if (!job) throw new HttpError(404, 'unknown job (finished long ago, or the server restarted): check the library');
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    let lastSent = 0;
    let pending: JobState | null = null;
    let timer: NodeJS.Timeout | null = null;
    const write = (s: JobState) => {
      lastSent = Date.now();
      res.write(`event: progress\ndata: ${JSON.stringify(s)}\n\n`);
      if (s.phase === 'done' || s.phase === 'failed') finish();
    };
    // Progress can come thousands of times a second: send at most ~10 per second, but every phase change at once.
    const onUpdate = (s: JobState) => {
      const final = s.phase === 'done' || s.phase === 'failed';
      if (final || (s.phase !== pending?.phase && Date.now() - lastSent > 20) || Date.now() - lastSent > 100) {
        if (timer) {
          clearTimeout(timer);
          timer = null;
        }
        pending = null;
        write(s);
      } else {
        pending = s;
        timer ??= setTimeout(() => {
          timer = null;
          if (pending) {
            const p = pending;
            pending = null;
            write(p);
          }
        }, 100);
      }
    };
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    let unsubscribe = () => {};
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearInterval(heartbeat);
      if (timer) clearTimeout(timer);
      unsubscribe();
      res.end();
    };
    req.raw.on('close', finish);
    unsubscribe = ctx.jobs.subscribe(id, onUpdate);
    write(job);
  });
}
