/**
 * GET /api/traces/:id/findings: the detectors' output for a trace:
 *   findings   ranked (worst first), each with its stable `id` (links:
 *              `sel=finding:<id>`; `index` is the same number, kept for
 *              clients written before ids), `rank`, `impact_ns` and
 *              `parent_id`, its time relative to the trace start (`ts`, `dur`,
 *              numbers), the exact absolute `ts_ns`/`dur_ns` as strings
 *   counts     per severity
 *   summaries  per detector (the CLI's tables)
 *   overview   the story of the trace (server/findings/overview.ts)
 *   metrics    the numbers behind it (server/findings/METRICS.md)
 *   detectors  each detector: ran or not traced (and what to enable), its counts
 *
 * GET /api/traces/:id/findings/:fid/events?offset=0&limit=500: a finding's
 * events (lines as `trace-cmd report` prints them), a page at a time, in
 * time order. The ids stay on the server: a finding of 30,000 events cannot
 * be sent in a URL.
 *
 * The answer is a pure function of the trace (findings.json never changes for
 * a given content hash): it is built once, kept in memory and beside the model
 * (`<traceDir>/overview/findings-v2.json`), so opening a large trace after a
 * restart does not convert thousands of findings again.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { jsSafe } from '../../engine/engine.ts';
import { HttpError, intParam, traceParam } from '../http_errors.ts';
import type { ApiContext } from '../context.ts';
import { lookupEvents } from '../event_lookup.ts';
import { findingById } from '../library_contract.ts';
import { stringBytes } from '../byte_lru.ts';
import type { Finding, FindingsResponse } from '../../../shared/contract/findings.ts';

const ANSWER_VERSION = 2;
/** Events per page of a finding's events. */
export const MAX_FINDING_EVENTS_PAGE = 2000;

/**
 * The findings answer of a ready trace, as text: from memory (the answer's
 * text per trace, and the detector output it was built from, within a budget
 * in bytes for all traces), else from the answer kept beside the model, else
 * built. An upload's job builds it before it reports done (runIngest), so
 * the first view's request is answered from memory.
 */
export async function findingsAnswer(ctx: ApiContext, id: string): Promise<string> {
  const answers = ctx.caches.findingsAnswers;
  const source = await ctx.library.findings(id);
  let a = answers.get(id);
  if (!a || a.source !== source) {
    const entry = { source, text: buildAnswer(ctx, id, source) };
    a = entry;
    answers.set(id, entry, 1024);
    entry.text.then(
      (t) => {
        if (answers.peek(id) === entry) answers.resize(id, stringBytes(t));
      },
      () => {
        if (answers.peek(id) === entry) answers.delete(id);
      },
    );
  }
  return a.text;
}

async function buildAnswer(
  ctx: ApiContext,
  id: string,
  source: Awaited<ReturnType<ApiContext['library']['findings']>>,
): Promise<string> {
  const file = ctx.cacheDirOf ? path.join(ctx.cacheDirOf(id), `findings-v${ANSWER_VERSION}.json`) : null;
  const findingsJson = path.join(path.dirname(ctx.cacheDirOf?.(id) ?? '.'), 'findings.json');
  if (file) {
    try {
      // Kept answers are only good while they are newer than the detector output.
      const [kept, src] = await Promise.all([fs.stat(file), fs.stat(findingsJson)]);
      if (kept.mtimeMs >= src.mtimeMs) return await fs.readFile(file, 'utf8');
    } catch {
      // none kept yet
    }
  }
  const tr = await ctx.engines.get(id);
  const { findings, summaries } = source;
  const counts = { info: 0, warn: 0, critical: 0 };
  const out = findings.map((f, index): Finding => {
    counts[f.severity] = (counts[f.severity] ?? 0) + 1;
    const ts = BigInt(f.ts_ns);
    const dur = BigInt(f.dur_ns ?? 0);
    return {
      ...(jsSafe(f) as object),
      index: f.id ?? index,
      id: f.id ?? index,
      rank: f.rank ?? index + 1,
      parent_id: f.parent_id ?? null,
      impact_ns: String(f.impact_ns ?? dur),
      ts_ns: ts.toString(),
      dur_ns: dur.toString(),
      ts: Number(ts - tr.meta.base),
      dur: Number(dur),
      impact: Number(f.impact_ns ?? dur),
      event_ids: f.event_ids.map((e) => Number(e)),
    } as Finding;
  });
  // Detector output is JSON the server wrote itself: its overview, metrics and runs are the contract's shapes.
  const text = JSON.stringify({
    findings: out,
    summaries: jsSafe(summaries ?? null),
    counts,
    overview: jsSafe(source.overview ?? null),
    metrics: jsSafe(source.metrics ?? []),
    detectors: jsSafe(source.runs ?? []),
  } as FindingsResponse);
  if (file) {
    const tmp = `${file}.${process.pid}.tmp`;
    fs.mkdir(path.dirname(file), { recursive: true })
      .then(() => fs.writeFile(tmp, text))
      .then(() => fs.rename(tmp, file))
      .catch(() => fs.rm(tmp, { force: true }).catch(() => undefined));
  }
  return text;
}

export async function registerFindingRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const readyRecord = async (params: unknown) => {
    const id = traceParam(params);
    const rec = await ctx.library.get(id);
    if (!rec) throw new HttpError(404, `no trace ${id} in the library`);
    if (rec.status !== 'ready')
      throw new HttpError(409, `trace ${id} is ${rec.status}${rec.error ? `: ${rec.error}` : ''}`);
    return id;
  };

  app.get('/api/traces/:id/findings', async (req, reply) => {
    const id = await readyRecord(req.params);
    const text = await findingsAnswer(ctx, id);
    reply.type('application/json; charset=utf-8');
    return text;
  });

  app.get('/api/traces/:id/findings/:fid/events', async (req) => {
    const raw = (req.params as { fid: string }).fid;
    if (!/^\d{1,15}$/.test(raw)) throw new HttpError(400, 'finding id must be a non-negative integer');
    const q = req.query as Record<string, unknown>;
    const offset = intParam(q, 'offset', { min: 0, max: Number.MAX_SAFE_INTEGER, def: 0 })!;
    const limit = intParam(q, 'limit', { min: 1, max: MAX_FINDING_EVENTS_PAGE, def: 500 })!;
    const id = await readyRecord(req.params);
    const { findings } = await ctx.library.findings(id);
    const f = findingById(findings, Number(raw));
    if (!f) throw new HttpError(404, `no finding ${raw} in this trace`);
    const ids = f.event_ids.map((e) => BigInt(e)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const tr = await ctx.engines.get(id);
    return { total: ids.length, offset, events: await lookupEvents(tr, ids.slice(offset, offset + limit)) };
  });
}
