/**
 * GET /api/compare?sides=ID~ID,ID~ID[&alpha=0.05]: traces of the library
 * compared (server/compare/COMPARE.md). Sides are separated by `,`, the
 * iterations of a side by `~`; the first side is the baseline. The answer:
 *
 *   compare  the CompareResult JSON, as `stallscope compare --json` prints it
 *   traces   per side, per trace: id, name, duration_ns (for the stacked timelines)
 *   series   per side, per trace: time series from each trace's first event
 *            (server/compare/series.ts), one bin width for all (`bin_ns`)
 */
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../http_errors.ts';
import { compareSides } from '../../compare/compare.ts';
import { compareResultToJson } from '../../compare/compare_json.ts';
import { type CompareLibrary, forgetSamples, loadTraceInput } from '../../compare/load_trace.ts';
import { ALIGN_EVENT_RE, compareSeries } from '../../compare/series.ts';

import { TRACE_ID_RE as ID_RE } from '../../../shared/contract/trace_id.ts';
/** Traces in one comparison, all sides together. */
const MAX_TRACES = 16;

export function parseSidesParam(text: unknown): string[][] {
  if (typeof text !== 'string' || text === '')
    throw new HttpError(400, 'sides=ID,ID (or ID~ID,ID~ID for iterations) names the traces to compare');
  const sides = text.split(',').map((s) => s.split('~'));
  if (sides.length < 2) throw new HttpError(400, 'compare needs two sides: sides=ID,ID');
  const all = sides.flat();
  if (all.length > MAX_TRACES) throw new HttpError(400, `at most ${MAX_TRACES} traces in one comparison`);
  for (const id of all)
    if (!ID_RE.test(id)) throw new HttpError(400, 'each trace must be named by its content hash (hex)');
  return sides;
}

export async function registerCompareRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const lib: CompareLibrary = {
    findings: (id) => ctx.library.findings(id) as ReturnType<CompareLibrary['findings']>,
    openEngine: (id) => ctx.library.openEngine(id),
    paths: ctx.library.paths,
    samplesWritten: (id) => ctx.library.samplesWritten?.(id) ?? Promise.resolve(),
  };
  ctx.library.onTraceReplaced?.((id) => forgetSamples(lib, id));

  app.get('/api/compare', async (req) => {
    const q = req.query as { sides?: string; alpha?: string; align?: string };
    const align = q.align === undefined || q.align === '' ? null : String(q.align);
    if (align !== null && !ALIGN_EVENT_RE.test(align))
      throw new HttpError(400, 'align must be an event name (name or system:name)');
    const sides = parseSidesParam(q.sides);
    const alpha = q.alpha === undefined ? 0.05 : Number(q.alpha);
    if (!(alpha > 0 && alpha < 1)) throw new HttpError(400, 'alpha must be between 0 and 1');
    const records = new Map<string, { name: string; duration: number }>();
    for (const id of new Set(sides.flat())) {
      const r = await ctx.library.get(id);
      if (!r || (r as { status?: string }).status === 'failed')
        throw new HttpError(404, `no trace ${id.slice(0, 12)} in the library`);
      const first = r.firstTs === null ? 0 : Number(BigInt(r.firstTs));
      const last = r.lastTs === null ? 0 : Number(BigInt(r.lastTs));
      records.set(id, { name: r.name, duration: Math.max(0, last - first) });
    }
    const inputs = await Promise.all(
      sides.map(async (ids, i) => ({
        label: sideLabel(
          ids.map((id) => records.get(id)!.name),
          i,
        ),
        traces: await Promise.all(ids.map((id) => loadTraceInput(lib, id, records.get(id)!.name))),
      })),
    );
    const result = compareSides(inputs, { alpha });
    const ts = await compareSeries(
      sides.map((ids) =>
        ids.map((id) => ({ engine: () => ctx.library.openEngine(id), durationNs: records.get(id)!.duration })),
      ),
      align,
    );
    return {
      compare: compareResultToJson(result),
      traces: sides.map((ids) =>
        ids.map((id) => ({ id, name: records.get(id)!.name, duration_ns: records.get(id)!.duration })),
      ),
      // bin_ns, series, not_traced, align: server/compare/series.ts CompareSeries
      ...ts,
    };
  });
}

/** One trace: its name; iterations: their names' common start, else "side N". */
function sideLabel(names: string[], i: number): string {
  if (names.length === 1) return names[0]!;
  let p = names[0]!;
  for (const n of names) while (!n.startsWith(p)) p = p.slice(0, -1);
  return p.replace(/[._\-\s]+$/, '') || `side ${i + 1}`;
}
