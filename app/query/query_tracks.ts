/**
 * Query results shown as tracks ("show as track" on the query page), after
 * the tracks the trace opened with and the threads added by hand
 * (app/tracks/added_tracks.ts). Each is built once and kept while it stays,
 * so adding one does not drop the others' data.
 */
import { useMemo, useRef } from 'react';
import type { TrackList } from '../api/types.ts';
import type { TrackSet } from '../tracks/index.ts';
import type { Track, TrackEnv } from '../tracks/track.ts';
import { QueryTrack } from './query_track.ts';
import { queryState } from './query_state.ts';

const NONE: never[] = [];

export function useQueryTracks(base: TrackSet, env: TrackEnv, info: TrackList): TrackSet {
  // Query tracks of this trace only (the store may still hold the last trace's for a render).
  const sources = queryState.use((s) => (s.trace === env.traceId ? s.tracks : NONE));
  const cache = useRef(new Map<string, Track>());
  const lastEnv = useRef(env);
  if (lastEnv.current !== env) {
    cache.current.clear();
    lastEnv.current = env;
  }
  const byTid = useMemo(() => {
    const m = new Map<number, number>();
    for (const t of info.threads) if (t.tid !== null && !m.has(t.tid)) m.set(t.tid, t.utid);
    return m;
  }, [info]);
  return useMemo(() => {
    const extra: Track[] = [];
    const keep = new Set<string>();
    for (const src of sources) {
      const uri = `query#${src.id}`;
      let t = cache.current.get(uri);
      if (!t) {
        t = new QueryTrack(src, env.threadName, (tid) => byTid.get(tid) ?? null);
        cache.current.set(uri, t);
      }
      keep.add(uri);
      extra.push(t);
    }
    for (const k of [...cache.current.keys()]) if (!keep.has(k)) cache.current.delete(k);
    return extra.length ? { tracks: [...base.tracks, ...extra], flows: base.flows } : base;
  }, [base, env, sources, byTid]);
}
