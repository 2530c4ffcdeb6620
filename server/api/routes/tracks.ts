/**
 * GET /api/traces/:id/tracks: which tracks the trace has.
 * GET /api/traces/:id/tracks/<kind>?t0&t1&px&...: a track's data for a window
 * (t0, t1: ns relative to the trace's first event; px: pixel columns), summarised
 * per pixel column when zoomed out (see track_queries.ts).
 *   cpu?cpu=N  thread?utid=N  slice?category=NAME  counter?track=N
 *   instant?name=writepage  flow?kind=wakeup|migration|begin_end
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { HttpError, bigParam, enumParam, intParam, stringParam, traceParam } from '../http_errors.ts';
import type { ApiContext } from '../context.ts';
import { kindLabel } from '../../../shared/contract/labels.ts';
import { LANES, type OpenTrace } from '../trace_engines.ts';
import {
  counterFromOverview,
  cpuFromOverview,
  servesWindow,
  sliceFromOverview,
  threadFromOverview,
  writepageFromOverview,
} from '../overview.ts';
import {
  counterTracks,
  cpuTracks,
  flowTrack,
  instantTrack,
  sliceTracks,
  threadTracks,
  type Window,
} from '../track_queries.ts';
import { stringBytes } from '../byte_lru.ts';
import { buildCountersAhead, buildCpusAndSlicesAhead, buildThreadsAhead } from '../first_view_tracks.ts';

export type { TrackList } from '../../../shared/contract/api.ts';
import type { TrackList } from '../../../shared/contract/api.ts';

const MAX_THREADS_LISTED = 50_000;
const MAX_WINDOW_NS = 10n ** 15n; // ~11.5 days

async function openReady(ctx: ApiContext, params: unknown): Promise<{ id: string; tr: OpenTrace }> {
  const id = traceParam(params);
  const rec = await ctx.library.get(id);
  if (!rec) throw new HttpError(404, `no trace ${id} in the library`);
  if (rec.status !== 'ready')
    throw new HttpError(409, `trace ${id} is ${rec.status}${rec.error ? `: ${rec.error}` : ''}`);
  return { id, tr: await ctx.engines.get(id) };
}

function num(v: unknown): number {
  return typeof v === 'bigint' ? Number(v) : (v as number);
}

const listings = new WeakMap<ApiContext, Map<string, Promise<TrackList>>>();

/** Which tracks a trace has (computed once per trace). */
export function trackList(ctx: ApiContext, id: string, tr: OpenTrace): Promise<TrackList> {
  let m = listings.get(ctx);
  if (!m) {
    m = new Map();
    listings.set(ctx, m);
  }
  let p = m.get(id);
  if (!p) {
    const file = ctx.cacheDirOf ? path.join(ctx.cacheDirOf(id), `tracks-v${TRACK_LIST_VERSION}.json`) : null;
    p = (async () => {
      if (file) {
        try {
          return JSON.parse(await fs.readFile(file, 'utf8')) as TrackList;
        } catch {
          // not kept yet
        }
      }
      const list = await buildTrackList(ctx, id, tr);
      if (file) void keep(file, JSON.stringify(list));
      return list;
    })();
    m.set(id, p);
    p.catch(() => m!.delete(id));
  }
  return p;
}

/** Bump when TrackList changes: older kept lists are then ignored. */
const TRACK_LIST_VERSION = 2; // 2: thread labels name the kind of finding (issue 28)

async function keep(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(tmp, text);
    await fs.rename(tmp, file);
  } catch {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
  }
}

/**
 * The parts of a first view that need no findings (CPUs, slice categories,
 * counters, writepage), started as soon as the model is in the library: on
 * the API's connection (trace_engines.ts), so their queries run beside the
 * detectors'. Never rejects (warmTrace builds what is missing).
 */
export async function prewarmTrace(ctx: ApiContext, id: string): Promise<void> {
  try {
    const tr = await ctx.engines.get(id);
    const o = ctx.overviews.get(id, tr);
    // Written once the job is done (releaseTraceWrites): the first view does not need the files.
    o.holdWrites();
    await Promise.all([o.cpu(), o.slice(), o.counter(), o.writepage()]);
    // The first view's answers for them too (first_view_tracks.ts), while the detectors still run.
    await buildCpusAndSlicesAhead(o, traceEnd(tr));
    await buildCountersAhead(o, traceEnd(tr));
  } catch {
    // warmTrace tries again, and reports nothing either
  }
}

/**
 * Starts summarising the threads an upload's findings name (its first view's
 * threads of interest, but kswapd: trackList), as soon as the detectors have
 * found them: their summaries then run beside the detectors' own summaries
 * and metrics, and warmTrace finds them built or under way. Never rejects
 * (warmTrace builds what is missing).
 */
export async function prewarmThreads(ctx: ApiContext, id: string, utids: number[]): Promise<void> {
  // utid 0 (the idle task / swapper) is never a thread of interest.
  const wanted = utids.filter((u) => u !== 0);
  if (wanted.length === 0) return;
  try {
    const tr = await ctx.engines.get(id);
    const o = ctx.overviews.get(id, tr);
    await o.threads(wanted);
    // Their first-view answers too, while the detectors' summaries and metrics still run.
    await buildThreadsAhead(o, traceEnd(tr), wanted);
  } catch {
    // warmTrace tries again
  }
}

/**
 * The overview parts prewarmTrace held back from disk are written once `after`
 * resolves (the upload's job is done or failed, and its first view served).
 * The overview is found now, while the trace is open: the same object's parts
 * are written even if the cache let it go meanwhile.
 */
export async function releaseTraceWrites(ctx: ApiContext, id: string, after: Promise<void>): Promise<void> {
  try {
    const tr = await ctx.engines.get(id);
    const overview = ctx.overviews.get(id, tr);
    await after;
    overview.endFirstView();
    await overview.releaseWrites();
  } catch {
    // no overview: nothing held
  }
}

/**
 * Opens a trace and summarises what its first view shows (overview.ts), so that view is instant.
 * `ahead`: and builds its track answers (an upload's first view, whose end,
 * releaseTraceWrites, drops them).
 */
export async function warmTrace(ctx: ApiContext, id: string, ahead = false): Promise<void> {
  const tr = await ctx.engines.get(id);
  const list = await trackList(ctx, id, tr);
  const utids = list.threadsOfInterest.map((t) => t.utid);
  await ctx.overviews.warm(id, tr, utids);
  if (!ahead) return;
  // The first view's answers for the threads prewarmThreads did not see (kswapd), and any it has not finished.
  const o = ctx.overviews.get(id, tr);
  await Promise.all([
    buildThreadsAhead(o, traceEnd(tr), utids),
    buildCpusAndSlicesAhead(o, traceEnd(tr)),
    buildCountersAhead(o, traceEnd(tr)),
  ]);
}

/** The trace's length in ns (its track list's `end`: the first view's window is [0, end]). */
function traceEnd(tr: OpenTrace): number {
  return Number(tr.meta.last - tr.meta.base);
}

async function buildTrackList(ctx: ApiContext, id: string, tr: OpenTrace): Promise<TrackList> {
  const t = tr.meta.tables;
  // Not behind the overview parts on the API's connection: an upload's job waits for this list (warmTrace).
  const lane = tr.beside?.(LANES.threadStates) ?? tr;
  const q = async <T>(table: string, sql: string): Promise<T[]> => (t.has(table) ? lane.query<T>(sql) : []);
  let cpus = (
    await q<{ cpu: number; events: bigint }>('cpu', 'SELECT cpu, event_count AS events FROM cpu ORDER BY cpu')
  ).map((r) => ({ cpu: r.cpu, events: num(r.events) }));
  if (cpus.length === 0) {
    cpus = (
      await q<{ cpu: number; events: bigint }>(
        'ftrace_event',
        'SELECT cpu, count(*) AS events FROM ftrace_event GROUP BY cpu ORDER BY cpu',
      )
    ).map((r) => ({ cpu: r.cpu, events: num(r.events) }));
  }
  const threads = await q<{ utid: number; tid: number | null; name: string | null }>(
    'thread',
    `SELECT utid, tid, name FROM thread ORDER BY utid LIMIT ${MAX_THREADS_LISTED}`,
  );
  const byTid = new Map<number, typeof threads>();
  for (const th of threads) if (th.tid !== null) byTid.set(th.tid, [...(byTid.get(th.tid) ?? []), th]);
  const interest = new Map<number, TrackList['threadsOfInterest'][number]>();
  for (const th of threads) if (th.name && /^kswapd/.test(th.name)) interest.set(th.utid, { ...th, reason: 'kswapd' });
  const { findings } = await ctx.library.findings(id);
  const byUtid = new Map(threads.map((th) => [th.utid, th]));
  for (const f of findings) {
    // Findings name their thread by utid (exact); older ones only by tid.
    const utid = (f as { utid?: number | null }).utid;
    const matches =
      utid !== null && utid !== undefined
        ? [byUtid.get(Number(utid))].filter((th): th is NonNullable<typeof th> => !!th)
        : f.tid
          ? (byTid.get(Number(f.tid)) ?? [])
          : [];
    for (const th of matches) {
      if (th.utid !== 0 && !interest.has(th.utid))
        interest.set(th.utid, { ...th, reason: `finding: ${kindLabel(f.detector, f.kind)}` });
    }
  }
  const counters = (
    await q<{
      id: number;
      name: string;
      unit: string | null;
      utid: number | null;
      cpu: number | null;
      description: string | null;
      values: bigint;
    }>(
      'counter_track',
      `SELECT t.id, t.name, t.unit, t.utid, t.cpu, t.description, (SELECT count(*) FROM counter c WHERE c.track_id = t.id) AS "values" FROM counter_track t ORDER BY t.id`,
    )
  ).map((r) => ({ ...r, values: num(r.values) }));
  const sliceCategories = (
    await q<{ category: string; count: bigint }>(
      'slice',
      'SELECT category, count(*) AS count FROM slice GROUP BY 1 ORDER BY 2 DESC',
    )
  ).map((r) => ({ category: r.category, count: num(r.count) }));
  const writes = await q<{ count: bigint }>(
    'mm_vmscan_write_folio',
    'SELECT count(*) AS count FROM mm_vmscan_write_folio',
  );
  const flows = (
    await q<{ kind: string; count: bigint }>('flow', 'SELECT kind, count(*) AS count FROM flow GROUP BY 1 ORDER BY 1')
  ).map((r) => ({ kind: r.kind, count: num(r.count) }));
  return {
    start: 0,
    end: Number(tr.meta.last - tr.meta.base),
    cpus,
    threads,
    threadsOfInterest: [...interest.values()].sort((a, b) =>
      a.reason === b.reason ? (a.name ?? '').localeCompare(b.name ?? '') : a.reason === 'kswapd' ? -1 : 1,
    ),
    counters: counters.filter((c) => c.values > 0),
    sliceCategories,
    instants: writes.length && num(writes[0]!.count) > 0 ? [{ name: 'writepage', count: num(writes[0]!.count) }] : [],
    flows,
  };
}

export async function registerTrackRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  app.get('/api/traces/:id/tracks', async (req) => {
    const { id, tr } = await openReady(ctx, req.params);
    return trackList(ctx, id, tr);
  });

  const KINDS = ['cpu', 'thread', 'slice', 'counter', 'instant', 'flow'] as const;
  const MAX_KEYS = 256;

  /** A comma-separated list of integers (one track or several served by one scan). */
  const ints = (q: Record<string, unknown>, key: string, max: number): number[] => {
    const s = stringParam(q, key, { required: true, maxLen: 4000, pattern: /^\d{1,10}(,\d{1,10}){0,255}$/ })!;
    const v = s.split(',').map(Number);
    if (v.some((x) => x > max)) throw new HttpError(400, `query parameter ${key} out of range`);
    return [...new Set(v)].slice(0, MAX_KEYS);
  };
  const strs = (q: Record<string, unknown>, key: string): string[] => {
    const s = stringParam(q, key, { required: true, maxLen: 4000, pattern: /^[\w.-]{1,64}(,[\w.-]{1,64}){0,255}$/ })!;
    return [...new Set(s.split(','))];
  };

  // Answers are a pure function of (trace, URL): keep recent ones (panning back, reloads, other tabs),
  // up to a budget in bytes (an answer can be MBs: a count of them bounded nothing).
  const cache = ctx.caches.trackAnswers;

  app.get('/api/traces/:id/tracks/:kind', async (req, reply) => {
    const kind = (req.params as { kind: string }).kind;
    if (!(KINDS as readonly string[]).includes(kind))
      throw new HttpError(404, `unknown track kind ${JSON.stringify(kind.slice(0, 40))} (one of ${KINDS.join(', ')})`);
    const q = req.query as Record<string, unknown>;
    const t0 = bigParam(q, 't0', { required: true, min: -MAX_WINDOW_NS, max: MAX_WINDOW_NS })!;
    const t1 = bigParam(q, 't1', { required: true, min: -MAX_WINDOW_NS, max: MAX_WINDOW_NS })!;
    if (t1 <= t0) throw new HttpError(400, 't1 must be greater than t0');
    const px = intParam(q, 'px', { min: 1, max: 20_000, def: 1000 })!;
    const w: Window = { t0, t1, px };
    const { id, tr } = await openReady(ctx, req.params);
    const cacheKey = `${id}|${req.url.slice(req.url.indexOf('/tracks/'))}`;
    const hit = cache.get(cacheKey);
    reply.type('application/json; charset=utf-8');
    if (hit !== undefined) return hit;
    // A list of keys (cpu=0,1,2) gets {batch: {key: data}}; a single key gets the data itself.
    const multi = (name: string) => typeof q[name] === 'string' && (q[name] as string).includes(',');
    const many = async (name: string, run: () => Promise<Map<number | string, unknown>>) => {
      const m = await run();
      return multi(name) ? { batch: Object.fromEntries(m) } : m.values().next().value;
    };
    let body: unknown;
    // Zoomed out: re-aggregate the trace's overview instead of scanning the tables. Until its
    // part is built (after ingest it is; after a restart it is built behind the first answers),
    // scan the tables for just the tracks asked for.
    const ov = kind === 'flow' ? null : ctx.overviews.get(id, tr);
    const okind = kind as 'cpu' | 'thread' | 'slice' | 'counter' | 'instant';
    const utids = kind === 'thread' ? ints(q, 'utid', 2 ** 31 - 1) : [];
    const fromOverview = !!ov && servesWindow(ov, w) && ov.isReadySoon(okind, utids);
    if (ov && servesWindow(ov, w) && !fromOverview) setTimeout(() => ov.prepare(okind, utids), 0);
    if (ov && fromOverview) {
      switch (kind) {
        case 'cpu':
          body = await many('cpu', async () => cpuFromOverview(ov, w, ints(q, 'cpu', 100_000)));
          break;
        case 'thread':
          body = await many('utid', async () => threadFromOverview(ov, w, ints(q, 'utid', 2 ** 31 - 1)));
          break;
        case 'slice':
          body = await many('category', async () => sliceFromOverview(ov, w, strs(q, 'category')));
          break;
        case 'counter':
          body = await many('track', async () => counterFromOverview(ov, w, ints(q, 'track', 2 ** 31 - 1)));
          break;
        default:
          enumParam(q, 'name', ['writepage'] as const);
          body = await writepageFromOverview(ov, w);
      }
    } else
      switch (kind) {
        case 'cpu':
          body = await many('cpu', () => cpuTracks(tr, w, ints(q, 'cpu', 100_000)));
          break;
        case 'thread':
          body = await many('utid', () => threadTracks(tr, w, ints(q, 'utid', 2 ** 31 - 1)));
          break;
        case 'slice':
          body = await many('category', () => sliceTracks(tr, w, strs(q, 'category')));
          break;
        case 'counter':
          body = await many('track', () => counterTracks(tr, w, ints(q, 'track', 2 ** 31 - 1)));
          break;
        case 'instant':
          body = await instantTrack(tr, w, enumParam(q, 'name', ['writepage'] as const));
          break;
        default:
          body = await flowTrack(tr, w, stringParam(q, 'kind', { required: true, maxLen: 32, pattern: /^\w+$/ })!);
      }
    const text = JSON.stringify(body);
    cache.set(cacheKey, text, stringBytes(text) + stringBytes(cacheKey));
    return text;
  });
}
