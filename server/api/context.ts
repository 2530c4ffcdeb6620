import type { Jobs } from './jobs.ts';
import type { LibraryLike } from './library_contract.ts';
import type { Overviews } from './overview.ts';
import type { TraceEngines } from './trace_engines.ts';

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
}
