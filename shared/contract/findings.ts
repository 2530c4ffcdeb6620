/** Wire types shared by server and app (see shared/contract/README.md). Pure types: no Node or DOM imports. */

import type { Severity } from './api.ts';
import type { Metric } from './compare.ts';

/** The findings a line summarises: the app's findings filter, as data. */
export interface OverviewFilter {
  detector: string;
  kind?: string;
  comm?: string;
  shrinker?: string;
  /** A block device ('7,2'): findings whose values.device is it. */
  device?: string;
}

export interface OverviewLine {
  detector: string;
  /** 'findings': the line summarises findings; 'quiet': traced, nothing over the thresholds; 'not_traced'. */
  status: 'findings' | 'quiet' | 'not_traced';
  /** The worst severity among the findings it summarises (null: none). */
  severity: Severity | null;
  text: string;
  /** The finding the line is about (the top-ranked of its filter), or null. */
  finding_id: number | null;
  /** The findings it summarises (null for a line without findings). */
  filter: OverviewFilter | null;
  /** How many findings match the filter. */
  count: number;
  /** Ids of the metrics the text quotes. */
  metrics: string[];
}

/** What became of one selected detector in a run. */
export interface DetectorRun {
  id: string;
  title: string;
  builtin: boolean;
  /** 'ok': it ran; 'not_traced': the trace lacks tracepoints it needs (it did not run). */
  status: 'ok' | 'not_traced';
  /** @requires groups with no event in the trace, as `system:a|system:b`. */
  missing: string[];
  /** What to enable when not traced, e.g. 'enable vmscan:mm_shrink_slab_start/end'. */
  hint: string;
  /**
   * Whether the trace lists the events its recording enabled (trace.dat, Perfetto). Text does not: there
   * 'not_traced' means no event of a tracepoint is in the trace, enabled or not (shown as "not seen").
   */
  enabled_listed: boolean;
  /** Its findings per severity. */
  counts: Record<Severity, number>;
  /** @impact and @severity lines of its header. */
  impact: string;
  severity_rule: string;
  /** `@rank` of its header: 'loss' findings (a process killed) rank before every stall of their severity; 'impact' by impact. */
  rank: 'impact' | 'loss';
  /** The parameter values it ran with (text, as `--param` takes them). */
  params: Record<string, string>;
}

/**
 * The members every form of a finding shares: the detector's output in memory
 * (server/findings/finding.ts, exact bigint times), as stored in findings.json
 * (server/api/library_contract.ts FindingLike) and on the wire (`Finding` below).
 * The forms differ only in how they carry times and ids.
 */
export interface FindingCore {
  /** Detector id (file stem of queries/detectors/<id>.sql). */
  detector: string;
  kind: string;
  severity: Severity;
  /** CPU of the finding's first event, or null. */
  cpu: number | null;
  tid: number | null;
  comm: string | null;
  title: string;
  /** Measured values (NULL ones omitted). */
  values: Record<string, unknown>;
}

/** One finding as GET /api/traces/:id/findings sends it (server/api/routes/findings.ts). */
export interface Finding extends FindingCore {
  /** The finding's stable id (links: `sel=finding:<id>`); `index` is the same number. */
  index: number;
  id: number;
  /** 1 = worst (severity, then losses such as an OOM kill, then impact, then time). */
  rank: number;
  /** The finding covering this one (a repeated ramp-up over its episodes), or null. */
  parent_id: number | null;
  /** The time it cost, ns: exact (decimal string) and as a number. */
  impact_ns: string;
  impact: number;
  /** Absolute ns, exact (decimal strings). */
  ts_ns: string;
  dur_ns: string;
  /** ns relative to the trace's first event. */
  ts: number;
  dur: number;
  /** stallscope's thread key (thread.utid), or null; absent in detector output written before it. */
  utid?: number | null;
  event_ids: number[];
}

/**
 * Whether a finding is a row of its own detector's list: not covered by
 * another finding of the same detector. A repeated ramp-up's episodes are
 * not (their parent is the ramp-up, same detector); a reclaim pass's
 * escalation under its stall still is (server/findings/same_pass.ts). The
 * overview's per-detector counts (server/findings/overview.ts) and the app's
 * list filtered on a detector or kind (app/state/findings_query.ts) both
 * follow this rule. A parent that is not among the findings covers nothing:
 * the child is listed rather than lost. `parentOf`: the finding with an id.
 */
export function listedInOwnDetector<F extends Pick<FindingCore, 'detector'> & { parent_id: number | null }>(
  f: F,
  parentOf: (id: number) => F | undefined,
): boolean {
  if (f.parent_id === null) return true;
  const parent = parentOf(f.parent_id);
  return parent === undefined || parent.detector !== f.detector;
}

/** GET /api/traces/:id/findings */
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
