/**
 * Shapes of the HTTP API's answers (server/api). Times named `ts`/`dur`/`t0`/`t1`
 * are ns relative to the trace's first event, as JS numbers; absolute ns are
 * decimal strings (`ts_ns`).
 */
import type { Severity, IngestPhase as ServerIngestPhase } from '../../shared/contract/api.ts';
export type { Severity, ThreadInfo, TrackList } from '../../shared/contract/api.ts';
export type { OverviewFilter, OverviewLine, DetectorRun } from '../../shared/contract/findings.ts';
/** The contract: server/findings/METRICS.md */
export type { Metric } from '../../shared/contract/compare.ts';
import type { OverviewLine, DetectorRun } from '../../shared/contract/findings.ts';
import type { Metric } from '../../shared/contract/compare.ts';

export interface TraceRecord {
  id: string;
  name: string;
  sizeBytes: number;
  format: string | null;
  formatVersion?: string | null;
  cpus: number | null;
  kernel?: string | null;
  eventsTotal: number;
  firstTs: number | string | null;
  lastTs: number | string | null;
  findingsBySeverity: Record<Severity, number>;
  /** False until the detectors ran on it (they run when the trace is first opened). */
  findingsComputed?: boolean;
  addedAt: string;
  status: 'ingesting' | 'ready' | 'failed';
  error?: string | null;
  /** Events the kernel reported lost (ring buffer overruns), summed over the notices that give a count. */
  lostEvents?: number;
  /** Lost-event notices, with or without a count (a `##### CPU N buffer started ####` marker has none). */
  lostEventNotices?: number;
  /** Lines (text) or byte ranges (trace.dat) the decoder skipped: the model's ingest_problem rows. */
  skippedInputs?: number;
  /** The first of them: line number or byte offset, and why. */
  firstSkipped?: { where: number; unit: string; reason: string }[];
  /** A compressed file whose decompression failed part-way (counted in skippedInputs): the rest of the file is missing. */
  cutOff?: { where: number; unit: string; reason: string } | null;
  /** The model version that built it (server/model/model_version.ts). */
  modelVersion?: number;
  /** Built by another stallscope version: its decoding may differ from this one's until the file is ingested again. */
  outdated?: boolean;
}

/** The server's phases, and 'uploading' while the app sends the file. */
export type IngestPhase = 'uploading' | ServerIngestPhase;

export interface JobState {
  jobId: string;
  name: string;
  phase: IngestPhase;
  bytesDone: number;
  bytesTotal: number | null;
  events: number;
  message?: string;
  traceId?: string;
  error?: string;
  /** The server stopped (restart, crash) before this job finished. */
  interrupted?: boolean;
}

export interface Finding {
  /** The finding's stable id (links: `sel=finding:<id>`); `index` is the same number. */
  index: number;
  id: number;
  /** 1 = worst (severity, then impact, then time). */
  rank: number;
  /** The finding covering this one (a repeated ramp-up over its episodes), or null. */
  parent_id: number | null;
  /** The time it cost, ns: exact (string) and as a number. */
  impact_ns: string;
  impact: number;
  detector: string;
  kind: string;
  severity: Severity;
  ts_ns: string;
  dur_ns: string;
  /** Relative ns. */
  ts: number;
  dur: number;
  cpu: number | null;
  tid: number | null;
  comm: string | null;
  title: string;
  values: Record<string, unknown>;
  event_ids: number[];
}

export interface FindingsResponse {
  /** Ranked: worst first. */
  findings: Finding[];
  counts: Record<Severity, number>;
  /** Detector id -> its summary table's rows. */
  summaries: Record<string, Array<Record<string, unknown>>> | null;
  overview: { lines: OverviewLine[] } | null;
  metrics: Metric[];
  detectors: DetectorRun[];
}

export type Column = Array<number | string | null>;

export interface TrackData {
  t0: number;
  t1: number;
  px: number;
  res: number;
  rows: number;
  cols: Record<string, Column>;
  extra?: Record<string, unknown>;
}

/** The event lookup's wire shape is defined once, by the server (type-only: nothing is bundled). */
export type { EventInfo } from '../../shared/contract/events.ts';
