/**
 * What the HTTP API needs from the trace library (server/ingest/library.ts).
 *
 * The API is written against this structural interface, not the class, so the
 * real TraceLibrary and the development stub both satisfy it and the routes
 * never depend on how ingest works.
 */
import type { Engine } from '../engine/engine.ts';

import type { IngestProgress } from '../../shared/contract/api.ts';
import type { FindingCore } from '../../shared/contract/findings.ts';
import type { TraceRecord } from '../../shared/contract/library.ts';
export type { IngestPhase, IngestProgress, Severity } from '../../shared/contract/api.ts';
export type { TraceRecord } from '../../shared/contract/library.ts';

/**
 * One finding as the detectors' output (findings.json) holds it: the shared
 * members, times and ids as whatever JSON or the detector run gave them
 * (server/findings/finding.ts `Finding` in memory; the wire form is
 * shared/contract/findings.ts `Finding`).
 */
export interface FindingLike extends FindingCore {
  ts_ns: number | bigint | string;
  dur_ns: number | bigint | string;
  event_ids: Array<number | bigint>;
  /** Stable id (links: `sel=finding:<id>`); absent only in detector output written before ids existed. */
  id?: number;
  impact_ns?: number | bigint | string;
  rank?: number;
  parent_id?: number | null;
}

/** A finding by its id (`sel=finding:<id>`); output without ids is addressed by position, as it was. */
export function findingById<F extends FindingLike>(findings: readonly F[], id: number): F | undefined {
  if (findings.length > 0 && findings[0]!.id === undefined) return findings[id];
  return findings.find((f) => f.id === id);
}

export interface FindingsResultLike {
  findings: FindingLike[];
  summaries?: unknown;
  /** server/findings/run_detectors.ts RunResult: absent in detector output written before them. */
  metrics?: unknown[];
  /** RunResult.detectors (named `runs` here: findings.json's `detectors` is the detectors' stamp). */
  runs?: unknown[];
  overview?: unknown;
}

export interface LibraryLike {
  list(): TraceRecord[] | Promise<TraceRecord[]>;
  get(id: string): TraceRecord | undefined | null | Promise<TraceRecord | undefined | null>;
  ingest(
    filePath: string,
    /** contentSha256: the file's sha256 if the caller hashed it while writing it (saves a read). */
    opts: {
      name: string;
      contentSha256?: string;
      /** traceId: from 'detecting' on (the model is in the library, the detectors run). */
      onProgress?: (p: IngestProgress & { traceId?: string }) => void;
      /** Optional: the threads (utid) the trace's findings name, as soon as the detectors found them. */
      onFindingThreads?: (traceId: string, utids: number[]) => void;
    },
  ): Promise<TraceRecord>;
  openEngine(id: string): Promise<Engine>;
  findings(id: string): Promise<FindingsResultLike> | FindingsResultLike;
  /** Optional: the data directory layout; uploads are staged in `paths.tmp` (stale files there are cleaned at start). */
  readonly paths?: { root: string; tmp: string };
  /** Optional: calls back with a trace's id when an ingest replaced its model, so caches over the old one are dropped. */
  onTraceReplaced?(listener: (id: string) => void): void;
  /** Optional: settles when a trace's samples.bin (written after its findings, for compare) is in place. */
  samplesWritten?(id: string): Promise<void>;
  readonly dataDir?: string;
}
