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
  /**
   * The public base URL of this server, no trailing slash ("http://127.0.0.1:7420"):
   * what share links, excerpts and exports are written with. `--public-url` when
   * given, else the bound address; never the request's Host (public_url.ts).
   * Read it through `publicBaseUrl(ctx)` from public_url.ts.
   */
  publicBaseUrl: () => string;
  /** createServer: the port it got (port 0 picks one). */
  setListeningPort: (port: number) => void;
}
