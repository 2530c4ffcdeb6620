import type { ByteLru } from './byte_lru.ts';
import type { Jobs } from './jobs.ts';
import type { LibraryLike } from './library_contract.ts';
import type { Overviews } from './overview.ts';
import type { TraceEngines } from './trace_engines.ts';
import type { NotesStore } from '../notes/notes_store.ts';
import type { RateLimiter } from '../notes/rate_limit.ts';

/** Bytes each in-memory cache may hold (create_server.ts DEFAULT_CACHE_BUDGETS). */
export interface CacheBudgets {
  /** Track answers (GET .../tracks/:kind), all traces together. */
  trackAnswers: number;
  /** Timeline overviews, all traces together. */
  overviews: number;
  /** Findings answers (GET .../findings), all traces together. */
  findingsAnswers: number;
}

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
  /** Answers kept in memory, each within its budget in bytes (byte_lru.ts; the overviews keep theirs in `overviews`). */
  caches: {
    /** Track answers by trace and URL. */
    trackAnswers: ByteLru<string, string>;
    /** Findings answers by trace, with the detector output each was built from. */
    findingsAnswers: ByteLru<string, { source: object; text: Promise<string> }>;
  };
  /** Fleet datasets given at start (`serve --fleet DIR`), by name -> directory (routes/fleet.ts). */
  fleets: Map<string, string>;
  /** createServer: the port it got (port 0 picks one). */
  setListeningPort: (port: number) => void;
}
