/**
 * Tracks beyond the ones a trace opens with: any thread, added by hand from
 * search, a query result or a task link (kept in the view: `add=thread:N`).
 * Each is built once and kept while it stays, so adding one track does not
 * drop the others' data. (Query results shown as tracks are the query
 * feature's: app/query/query_tracks.ts.)
 */
import { useMemo, useRef } from 'react';
import type { TrackList } from '../api/types.ts';
import { useView, viewStore } from '../state/view_store.ts';
import type { TrackSet } from './index.ts';
import { ThreadTrack } from './thread_track.ts';
import type { Track, TrackEnv } from './track.ts';

export function useAddedTracks(base: TrackSet, env: TrackEnv, info: TrackList): TrackSet {
  const added = useView((v) => v.added);
  const cache = useRef(new Map<string, Track>());
  const lastEnv = useRef(env);
  if (lastEnv.current !== env) {
    cache.current.clear();
    lastEnv.current = env;
  }
  return useMemo(() => {
    const have = new Set(base.tracks.map((t) => t.uri));
    const threads = new Map(info.threads.map((t) => [t.utid, t]));
    const extra: Track[] = [];
    const keep = new Set<string>();
    for (const uri of added) {
      if (have.has(uri)) continue;
      const utid = Number(uri.slice('thread#'.length));
      const th = threads.get(utid);
      if (!th) continue;
      let t = cache.current.get(uri);
      if (!t) {
        t = new ThreadTrack(env, utid, th.tid, th.name, 'added');
        cache.current.set(uri, t);
      }
      keep.add(uri);
      extra.push(t);
    }
    for (const k of [...cache.current.keys()]) if (!keep.has(k)) cache.current.delete(k);
    return extra.length ? { tracks: [...base.tracks, ...extra], flows: base.flows } : base;
  }, [base, env, info, added]);
}

/**
 * Gives a thread a track (pinned, so it is in view at once) unless it has one;
 * `uri` of its track either way.
 */
export function showThread(utid: number): string {
  const uri = `thread#${utid}`;
  const v = viewStore.get();
  const patch: { added?: string[]; pinned?: string[]; hidden?: string[] } = {};
  if (!v.added.includes(uri)) patch.added = [...v.added, uri];
  if (!v.pinned.includes(uri)) patch.pinned = [...v.pinned, uri];
  if (v.hidden.includes(uri)) patch.hidden = v.hidden.filter((u) => u !== uri);
  if (Object.keys(patch).length) viewStore.update(patch, { history: 'push' });
  return uri;
}

/** Pins a CPU's track (every CPU has one) so it is in view. */
export function showCpu(cpu: number): string {
  const uri = `cpu#${cpu}`;
  const v = viewStore.get();
  if (!v.pinned.includes(uri))
    viewStore.update({ pinned: [...v.pinned, uri], hidden: v.hidden.filter((u) => u !== uri) }, { history: 'push' });
  return uri;
}
