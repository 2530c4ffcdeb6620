/**
 * Wire shapes of the HTTP API that server and app both name. Times named
 * `ts`/`dur`/`t0`/`t1` are ns relative to the trace's first event, as JS
 * numbers; absolute ns are decimal strings (`ts_ns`). Pure types: no Node or
 * DOM imports (see shared/contract/README.md).
 */

export type Severity = 'info' | 'warn' | 'critical';

/** The server's ingest phases (the app adds its own 'uploading' before them). */
export type IngestPhase = 'hashing' | 'decompressing' | 'decoding' | 'deriving' | 'detecting' | 'done' | 'failed';

export interface IngestProgress {
  phase: IngestPhase;
  bytesDone: number;
  /** null when unknown (compressed text input). */
  bytesTotal: number | null;
  events: number;
  message?: string;
}

export interface ThreadInfo {
  utid: number;
  tid: number | null;
  name: string | null;
}

/** GET /api/traces/:id/tracks */
export interface TrackList {
  start: number;
  end: number;
  cpus: Array<{ cpu: number; events: number }>;
  threads: ThreadInfo[];
  threadsOfInterest: Array<ThreadInfo & { reason: string }>;
  counters: Array<{
    id: number;
    name: string;
    unit: string | null;
    utid: number | null;
    cpu: number | null;
    description: string | null;
    values: number;
  }>;
  sliceCategories: Array<{ category: string; count: number }>;
  instants: Array<{ name: string; count: number }>;
  flows: Array<{ kind: string; count: number }>;
}
