import type { Jobs } from './jobs.ts';
import type { LibraryLike } from './library_contract.ts';
import type { Overviews } from './overview.ts';
import type { TraceEngines } from './trace_engines.ts';
import type { NotesStore } from '../notes/notes_store.ts';
import type { RateLimiter } from '../notes/rate_limit.ts';

/** What every route module gets. */
export interface ApiContext {
  library: LibraryLike;
  engines: TraceEngines;
  /** Zoomed-out summaries per trace (overview.ts). */
  overviews: Overviews;
  jobs: Jobs;
  /** Where uploads are staged (the library's tmp dir: cleaned of stale files at start). */
  uploadDir: string;
  maxUploadBytes: number;
  /** Notes on traces (server/notes). */
  notes: NotesStore;
  /** Where a trace's first-view caches live (track list, meta, overview); none: memory only. */
  cacheDirOf?: (id: string) => string;
  /** Per-client limits: note writes, and the heavier reads (excerpt, export). */
  limits: { writes: RateLimiter; reads: RateLimiter };
}
