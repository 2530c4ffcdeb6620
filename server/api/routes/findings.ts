/**
 * GET /api/traces/:id/findings: the detectors' findings for a trace, each with
 * `index` (its stable position, used in links: `sel=finding:<index>`), its
 * time relative to the trace start (`ts`, `dur`, numbers), the exact absolute
 * `ts_ns`/`dur_ns` as strings, and counts per severity.
 *
 * The answer is a pure function of the trace (findings.json never changes for
 * a given content hash): it is built once, kept in memory and beside the model
 * (`<traceDir>/overview/findings-v1.json`), so opening a large trace after a
 * restart does not convert thousands of findings again.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { jsSafe } from '../../engine/engine.ts';
import { HttpError } from '../http_errors.ts';
import type { ApiContext } from '../context.ts';
import { traceParam } from './traces.ts';
import { stringBytes } from '../byte_lru.ts';

const ANSWER_VERSION = 1;

export async function registerFindingRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  /** The answer's text per trace, and the detector output it was built from (a budget in bytes for all traces). */
  const answers = ctx.caches.findingsAnswers;

  const build = async (id: string, source: Awaited<ReturnType<ApiContext['library']['findings']>>): Promise<string> => {
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
    const text = JSON.stringify({ findings: out, summaries: jsSafe(summaries ?? null), counts });
    if (file) {
      const tmp = `${file}.${process.pid}.tmp`;
      fs.mkdir(path.dirname(file), { recursive: true })
        .then(() => fs.writeFile(tmp, text))
        .then(() => fs.rename(tmp, file))
        .catch(() => fs.rm(tmp, { force: true }).catch(() => undefined));
    }
    return text;
  };

  app.get('/api/traces/:id/findings', async (req, reply) => {
    const id = traceParam(req.params);
    const rec = await ctx.library.get(id);
    if (!rec) throw new HttpError(404, `no trace ${id} in the library`);
    if (rec.status !== 'ready') throw new HttpError(409, `trace ${id} is ${rec.status}${rec.error ? `: ${rec.error}` : ''}`);
    const source = await ctx.library.findings(id);
    let a = answers.get(id);
    if (!a || a.source !== source) {
      const entry = { source, text: build(id, source) };
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
    reply.type('application/json; charset=utf-8');
    return a.text;
  });
}
