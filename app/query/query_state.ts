/**
 * The query page's state outside the editor: results shown as tracks (for
 * the open trace; not in share links: a link carries no results), and the
 * query history and saved queries (this browser's localStorage, shared by
 * every trace).
 */
import { smallStore } from '../state/small_store.ts';
import type { QueryTrackSource } from './query_track.ts';

export interface SavedQuery {
  name: string;
  sql: string;
}

export interface QueryState {
  trace: string | null;
  tracks: QueryTrackSource[];
  nextTrackId: number;
  history: string[];
  saved: SavedQuery[];
}

const HISTORY_KEY = 'stallscope.queryHistory';
const SAVED_KEY = 'stallscope.savedQueries';
const MAX_HISTORY = 50;

function read<T>(key: string, fallback: T): T {
  try {
    const v = localStorage.getItem(key);
    return v ? (JSON.parse(v) as T) : fallback;
  } catch {
    return fallback;
  }
}

function write(key: string, v: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(v));
  } catch {
    // storage full or disabled: history is a convenience
  }
}

export const queryState = smallStore<QueryState>({
  trace: null,
  tracks: [],
  nextTrackId: 1,
  history: typeof localStorage === 'undefined' ? [] : read<string[]>(HISTORY_KEY, []),
  saved: typeof localStorage === 'undefined' ? [] : read<SavedQuery[]>(SAVED_KEY, []),
});

/** A new trace opened: its query tracks are the old trace's no more. */
export function openTrace(trace: string): void {
  if (queryState.get().trace !== trace) queryState.set({ trace, tracks: [] });
}

export function remember(sql: string): void {
  const s = sql.trim();
  if (!s) return;
  const history = [s, ...queryState.get().history.filter((h) => h !== s)].slice(0, MAX_HISTORY);
  queryState.set({ history });
  write(HISTORY_KEY, history);
}

export function saveQuery(name: string, sql: string): void {
  const saved = [{ name, sql }, ...queryState.get().saved.filter((q) => q.name !== name)];
  queryState.set({ saved });
  write(SAVED_KEY, saved);
}

export function deleteSaved(name: string): void {
  const saved = queryState.get().saved.filter((q) => q.name !== name);
  queryState.set({ saved });
  write(SAVED_KEY, saved);
}

export function addQueryTrack(src: Omit<QueryTrackSource, 'id'>): number {
  const id = queryState.get().nextTrackId;
  queryState.set((s) => ({ tracks: [...s.tracks, { ...src, id }], nextTrackId: id + 1 }));
  return id;
}

export function removeQueryTrack(id: number): void {
  queryState.set((s) => ({ tracks: s.tracks.filter((t) => t.id !== id) }));
}
