/**
 * The first view's track answers (CPUs, slice categories, threads of
 * interest, counters), built before an upload's job reports done. After done the app asks for the trace, its track list and
 * findings, draws the page, then asks for the first window's tracks; the
 * timeline paints when every visible track's answer is in. Built per request,
 * the threads of interest (329 KB on sched_wq.v7) took 160-300 ms of this
 * thread at load 3-10, most of it re-aggregating on a cold JIT, and the
 * CPUs' and slices' answers (the same re-aggregation, cold) and the
 * counters' queued with it: this thread answers them one at a time.
 *
 * The first view shows the whole trace, [0, end]: the window it requests
 * (shared/contract/buffered_bounds.ts) depends on the timeline's width only
 * through the resolution, a power of two. The answers are built for the
 * resolutions of the widths a timeline usually has (FIRST_VIEW_WIDTHS), per
 * track, with the same code a request runs (overview.ts), so an answer built
 * ahead is the one the request would build. A width outside the range, or a
 * view restored from a link, is answered per request as before.
 */
import { bufferedBounds } from '../../shared/contract/buffered_bounds.ts';
import {
  counterFromOverview,
  cpuFromOverview,
  sliceFromOverview,
  threadFromOverview,
  type AheadKind,
  type Overview,
} from './overview.ts';
import type { TrackData, Window } from './track_queries.ts';

/** The timeline's width in CSS px that the ahead answers cover (a 1280-2560 px wide window, less the labels). */
export const FIRST_VIEW_WIDTHS = { min: 960, max: 1920 };

/** At most this many tracks of a kind are built ahead (a trace can have thousands of counters; a view shows a few). */
const MAX_AHEAD = 64;

/** The windows the first view of a trace `end` ns long requests, one per resolution a usual width gives. */
export function firstViewWindows(end: number): Window[] {
  const t1 = Math.max(end, 1000); // as the timeline's bounds (app/timeline/timeline.tsx)
  const lo = bufferedBounds(0, t1, FIRST_VIEW_WIDTHS.max).res;
  const hi = bufferedBounds(0, t1, FIRST_VIEW_WIDTHS.min).res;
  const out: Window[] = [];
  for (let res = lo; res <= hi; res *= 2) {
    // Any width of this resolution asks the same window: span / res is one.
    const b = bufferedBounds(0, t1, t1 / res);
    if (b.res !== res) continue;
    out.push({ t0: BigInt(b.t0), t1: BigInt(b.t1), px: b.px });
  }
  return out;
}

/**
 * Ahead builds run one at a time per overview: a later call (warmTrace's, after
 * the detectors) finds what an earlier one (prewarmThreads', beside them) built,
 * where both running at once built the same answers twice.
 */
const turns = new WeakMap<Overview, Promise<void>>();

function inTurn(ov: Overview, build: () => Promise<void>): Promise<void> {
  const next = (turns.get(ov) ?? Promise.resolve()).then(build);
  turns.set(
    ov,
    next.catch(() => undefined),
  );
  return next;
}

/** Builds the threads' first-view answers (those not built yet), from their overview parts. */
export function buildThreadsAhead(ov: Overview, end: number, utids: number[]): Promise<void> {
  return inTurn(ov, () => keepMissing(ov, 'thread', utids, firstViewWindows(end), threadFromOverview));
}

/** Builds the counters' first-view answers (the first MAX_AHEAD tracks that have values). */
export function buildCountersAhead(ov: Overview, end: number): Promise<void> {
  return inTurn(ov, async () => {
    const tracks = [...(await ov.counter()).keys()].slice(0, MAX_AHEAD).map(Number);
    await keepMissing(ov, 'counter', tracks, firstViewWindows(end), counterFromOverview);
  });
}

/** Builds the CPUs' and the slice categories' first-view answers (the first MAX_AHEAD of each). */
export function buildCpusAndSlicesAhead(ov: Overview, end: number): Promise<void> {
  return inTurn(ov, async () => {
    const cpus = [...(await ov.cpu()).keys()].slice(0, MAX_AHEAD).map(Number);
    const categories = [...(await ov.slice()).keys()].slice(0, MAX_AHEAD);
    for (const w of firstViewWindows(end)) {
      await keepMissing(ov, 'cpu', cpus, [w], cpuFromOverview);
      await keepMissing(ov, 'slice', categories, [w], sliceFromOverview);
    }
  });
}

/** Builds, with the request's own code (`answer`), the answers of `keys` not built yet for `windows`, and keeps them. */
async function keepMissing<K extends number | string>(
  ov: Overview,
  kind: AheadKind,
  keys: K[],
  windows: Window[],
  answer: (ov: Overview, w: Window, keys: K[]) => Promise<Map<K, TrackData>>,
): Promise<void> {
  for (const w of windows) {
    const missing = keys.filter((k) => !ov.firstViewAnswer(kind, k, w));
    if (!missing.length) continue;
    for (const [k, data] of await answer(ov, w, missing)) ov.keepFirstViewAnswer(kind, k, w, data);
  }
}
