/**
 * Shapes of the HTTP API's answers (server/api). Times named `ts`/`dur`/`t0`/`t1`
 * are ns relative to the trace's first event, as JS numbers; absolute ns are
 * decimal strings (`ts_ns`).
 */
import type { IngestPhase as ServerIngestPhase } from '../../shared/contract/api.ts';
export type { Severity, ThreadInfo, TrackList } from '../../shared/contract/api.ts';
export type { OverviewFilter, OverviewLine, DetectorRun } from '../../shared/contract/findings.ts';
/** The contract: server/findings/METRICS.md */
export type { Metric } from '../../shared/contract/compare.ts';

export type { TraceRecord, JobState, TraceList, SkippedInput, UploadAccepted } from '../../shared/contract/library.ts';
export type { Finding, FindingsResponse } from '../../shared/contract/findings.ts';
export type { TrackData } from '../../shared/contract/tracks.ts';

/** The server's phases, and 'uploading' while the app sends the file. */
export type IngestPhase = 'uploading' | ServerIngestPhase;

/** The event lookup's wire shape is defined once, by the server (type-only: nothing is bundled). */
export type { EventInfo } from '../../shared/contract/events.ts';
