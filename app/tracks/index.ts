/**
 * Track registry: which tracks a trace gets, built from GET /tracks.
 * Each entry is one small plugin (a data request + a renderer); adding a
 * track kind means adding a file and one line here.
 */
import type { TrackList } from '../api/types.ts';
import { CounterTrack } from './counter_track.ts';
import { CpuTrack } from './cpu_track.ts';
import { FlowOverlay } from './flow_track.ts';
import { InstantTrack } from './instant_track.ts';
import { SliceTrack } from './slice_track.ts';
import { ThreadTrack } from './thread_track.ts';
import { TRACK_GROUPS, type Track, type TrackEnv } from './track.ts';

export interface TrackSet {
  tracks: Track[];
  flows: FlowOverlay[];
}

/** Slice categories in the order users look for them. */
const CATEGORY_ORDER = ['shrinker', 'direct_reclaim', 'memcg_reclaim', 'workqueue'];

export function buildTracks(info: TrackList, env: TrackEnv): TrackSet {
  const tracks: Track[] = [];
  for (const c of info.cpus) tracks.push(new CpuTrack(env, c.cpu, c.events));
  const cats = [...info.sliceCategories].sort(
    (a, b) => rank(CATEGORY_ORDER, a.category) - rank(CATEGORY_ORDER, b.category),
  );
  for (const c of cats) tracks.push(new SliceTrack(env, c.category, c.count));
  for (const i of info.instants) if (i.name === 'writepage') tracks.push(new InstantTrack(env, 'writepage', i.count));
  for (const t of info.threadsOfInterest) tracks.push(new ThreadTrack(env, t.utid, t.tid, t.name, t.reason));
  // Several series share a name (one `slab cache_items` per shrinker): tell them apart by
  // the description's `what:` prefix, else by their thread or CPU.
  const nameCount = new Map<string, number>();
  for (const c of info.counters) nameCount.set(c.name, (nameCount.get(c.name) ?? 0) + 1);
  for (const c of info.counters) {
    let title = c.name;
    if (nameCount.get(c.name)! > 1) {
      const prefix = /^([\w.-]+):/.exec(c.description ?? '')?.[1];
      title = prefix
        ? `${c.name} · ${prefix}`
        : c.utid !== null
          ? `${c.name} · ${env.threadName(c.utid)}`
          : c.cpu !== null
            ? `${c.name} · CPU ${c.cpu}`
            : c.name;
    }
    tracks.push(new CounterTrack(env, c.id, title, c.unit, c.description, c.name));
  }
  tracks.sort((a, b) => TRACK_GROUPS.indexOf(a.group) - TRACK_GROUPS.indexOf(b.group));
  const flows = info.flows.map((f) => new FlowOverlay(env, f.kind, f.count));
  return { tracks, flows };
}

function rank(order: string[], v: string): number {
  const i = order.indexOf(v);
  return i < 0 ? order.length : i;
}
