/**
 * The trace library's wire shapes: GET /api/traces (records and jobs),
 * GET /api/traces/:id, GET /api/jobs/:id and its progress events. Pure types
 * (see shared/contract/README.md).
 *
 * Times: `firstTs`/`lastTs` are the trace's first and last event, absolute
 * trace-clock ns as decimal strings (the ingest summary keeps them as strings
 * so that values past 2^53 stay exact), or null before or without events.
 */
import type { IngestProgress, Severity } from './api.ts';

export type TraceStatus = 'ingesting' | 'ready' | 'failed';

/** A line (text) or byte range (trace.dat) the decoder skipped, and why. */
export interface SkippedInput {
  /** Line number or byte offset. */
  where: number;
  unit: string;
  reason: string;
}

/**
 * One trace of the library. The library fills every field for the traces it
 * holds (server/ingest/library.ts narrows the optional ones); the optional
 * ones are absent on a record of an upload a previous server process was
 * ingesting when it stopped (listed as failed).
 */
export interface TraceRecord {
  /** The file's sha256 (shared/contract/trace_id.ts). */
  id: string;
  name: string;
  sizeBytes: number;
  format: string | null;
  formatVersion?: string | null;
  cpus: number | null;
  kernel?: string | null;
  eventsTotal: number;
  /** Absolute ns, decimal string. */
  firstTs: string | null;
  lastTs: string | null;
  findingsBySeverity: Record<Severity, number>;
  /** False until the detectors ran on it (they run when the trace is first opened; absent: they did). */
  findingsComputed?: boolean;
  /** ISO 8601. */
  addedAt: string;
  status: TraceStatus;
  error?: string | null;
  /** Events the kernel reported lost (ring buffer overruns), summed over the notices that give a count. */
  lostEvents?: number;
  /** Lost-event notices, with or without a count (a `##### CPU N buffer started ####` marker has none). */
  lostEventNotices?: number;
  /** Lines (text) or byte ranges (trace.dat) the decoder skipped: the model's ingest_problem rows. */
  skippedInputs?: number;
  /** The first of them, for the app to name them. */
  firstSkipped?: SkippedInput[];
  /** A compressed file whose decompression failed part-way (counted in skippedInputs): the rest of the file is missing. */
  cutOff?: SkippedInput | null;
  /** The model version that built it (server/model/model_version.ts; 0: before versions). */
  modelVersion?: number;
  /** Built by another stallscope version: its decoding may differ from this one's until the file is ingested again. */
  outdated?: boolean;
}

/** An ingest job started by an upload (server/api/jobs.ts): its latest progress. */
export interface JobState extends IngestProgress {
  jobId: string;
  name: string;
  /** The trace id, once the library has the trace (phases 'detecting' and 'done'). */
  traceId?: string;
  error?: string;
  /** ISO 8601. */
  startedAt: string;
  /** The uploaded file's size. */
  sizeBytes: number | null;
  /** The server stopped (restart, crash) before this job finished. */
  interrupted?: boolean;
  /** The upload's content hash: the trace id it becomes (known before the ingest starts). */
  contentSha256?: string;
}

/** GET /api/traces */
export interface TraceList {
  traces: TraceRecord[];
  jobs: JobState[];
}

/** POST /api/traces (202): the upload is stored and its ingest runs as job `jobId`. */
export interface UploadAccepted {
  jobId: string;
  /** The display name the server kept (shared by the job and the trace). */
  name: string;
  /** Bytes received. */
  bytes: number;
}
