/**
 * Fleet datasets the server was started with (`stallscope serve --fleet DIR`):
 *
 *   GET /api/fleet                             the datasets (name, traces, failures, label names)
 *   GET /api/fleet/:name?by=L[&baseline=V]      fleet-report's document for label L (the same
 *                                              code: server/fleet/report.ts) and the worst traces,
 *                                              each with `in_library` (the library holds its sha256)
 *
 * Only the directories given at start are read: a request names a dataset by
 * its registered name, never by a path.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../http_errors.ts';
import { toJson } from '../../engine/engine.ts';
import { FleetError } from '../../fleet/dataset.ts';
import { fleetLabels, fleetQuestions, fleetReportJson, openFleet } from '../../fleet/report.ts';
import type { FleetDatasetInfo, FleetViewAnswer, FleetWorstTrace } from '../../../shared/contract/fleet.ts';

const WORST = 20;

export async function registerFleetRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const datasets = ctx.fleets;

  app.get('/api/fleet', async () => {
    const out: FleetDatasetInfo[] = [];
    for (const [name, dir] of datasets) {
      const engine = await openFleet(dir);
      try {
        const [c] = await engine.query<{ traces: bigint; failures: bigint }>(
          'SELECT (SELECT count(*) FROM traces) AS traces, (SELECT count(*) FROM failures) AS failures',
        );
        out.push({ name, traces: Number(c!.traces), failures: Number(c!.failures), labels: await fleetLabels(engine) });
      } finally {
        engine.close();
      }
    }
    return { datasets: out };
  });

  app.get('/api/fleet/:name', async (req, reply) => {
    const { name } = req.params as { name: string };
    const dir = datasets.get(name);
    if (dir === undefined)
      throw new HttpError(
        404,
        `no fleet dataset ${JSON.stringify(name.slice(0, 80))} on this server (serve --fleet DIR registers one)`,
      );
    const q = req.query as { by?: string; baseline?: string };
    const engine = await openFleet(dir);
    try {
      const labels = await fleetLabels(engine);
      const by = q.by === undefined || q.by === '' ? labels[0] : String(q.by);
      if (by === undefined)
        throw new HttpError(404, `the dataset ${name} has no labels (batch --labels labels.csv gives them)`);
      if (!labels.includes(by))
        throw new HttpError(400, `no trace has the label ${by.slice(0, 80)} (labels: ${labels.join(', ')})`);
      let questions;
      try {
        questions = await fleetQuestions(engine, {
          by,
          baseline: q.baseline || undefined,
          alpha: 0.05,
          failOnRegressionPct: null,
          top: WORST,
        });
      } catch (e) {
        if (e instanceof FleetError) throw new HttpError(400, e.message);
        throw e;
      }
      const worst: FleetWorstTrace[] = [];
      for (const w of questions.tops.worst_traces) {
        const rec = await ctx.library.get(String(w.trace_id));
        worst.push({
          trace_id: String(w.trace_id),
          file: String(w.file),
          name: String(w.name),
          labels: String(w.labels ?? '{}'),
          findings: Number(w.findings),
          impact_ns: Number(w.impact_ns),
          critical: Number(w.critical),
          in_library: rec !== null && rec !== undefined && (rec as { status?: string }).status !== 'failed',
        });
      }
      const { worst_traces: _w, ...top } = questions.tops;
      const report = { ...fleetReportJson(by, questions), top };
      const answer = { name, labels, by, report, worst_traces: worst } as unknown as FleetViewAnswer;
      reply.type('application/json');
      return toJson(answer);
    } finally {
      engine.close();
    }
  });
}
