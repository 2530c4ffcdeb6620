/**
 * GET /api/traces/:id/findings: the detectors' findings for a trace, each with
 * `index` (its stable position, used in links: `sel=finding:<index>`), its
 * time relative to the trace start (`ts`, `dur`, numbers), the exact absolute
 * `ts_ns`/`dur_ns` as strings, and counts per severity.
 */
import type { FastifyInstance } from 'fastify';
import { jsSafe } from '../../engine/engine.ts';
import { HttpError } from '../http_errors.ts';
import type { ApiContext } from '../context.ts';
import { traceParam } from './traces.ts';

export async function registerFindingRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  app.get('/api/traces/:id/findings', async (req) => {
    const id = traceParam(req.params);
    const rec = await ctx.library.get(id);
    if (!rec) throw new HttpError(404, `no trace ${id} in the library`);
    if (rec.status !== 'ready') throw new HttpError(409, `trace ${id} is ${rec.status}${rec.error ? `: ${rec.error}` : ''}`);
    const tr = await ctx.engines.get(id);
    const { findings, summaries } = await ctx.library.findings(id);
    const counts = { info: 0, warn: 0, critical: 0 };
    const out = findings.map((f, index) => {
      counts[f.severity] = (counts[f.severity] ?? 0) + 1;
      const ts = BigInt(f.ts_ns);
      const dur = BigInt(f.dur_ns ?? 0);
      return {
        ...(jsSafe(f) as object),
        index,
        ts_ns: ts.toString(),
        dur_ns: dur.toString(),
        ts: Number(ts - tr.meta.base),
        dur: Number(dur),
        event_ids: f.event_ids.map((e) => Number(e)),
      };
    });
    return { findings: out, summaries: jsSafe(summaries ?? null), counts };
  });
}
