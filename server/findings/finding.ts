/**
 * A finding: one moment a detector found, measured and ranked.
 *
 * This is the stable contract the CLI (`stallscope analyze --json`), the HTTP
 * API and the web app share. People script against it: add keys, never rename
 * or remove them. The whole contract (findings, overview, metrics, detector
 * coverage) is described in server/findings/CONTRACT.md.
 *
 * JSON shape of one finding (see `findingToJson`):
 *
 * ```json
 * {
 *   "detector": "shrinker_blocking",        // detector id (file stem of queries/detectors/<id>.sql)
 *   "kind": "call",                         // kind of finding within the detector
 *   "severity": "critical",                 // "critical" | "warn" | "info"
 *   "ts_ns": 1234567890123,                 // start, trace clock ns, exact integer
 *   "dur_ns": 312400123,                    // duration ns, exact integer (0 for an instant)
 *   "cpu": 1,                               // CPU of the finding's first event, or null
 *   "tid": 95,                              // kernel thread id, or null
 *   "comm": "kswapd0",                      // thread name, or null
 *   "utid": 7,                              // stallscope thread key (thread.utid), or null
 *   "title": "super_cache_scan blocked kswapd0 for 312.4 ms (...)",
 *   "values": { "shrinker": "super_cache_scan", ... },  // measured values; NULL ones omitted
 *   "event_ids": [1234, 1240],              // ftrace_event.id of every event that makes it up
 *   "id": 183405219980422,                  // stable id (links, API, `stallscope excerpt FILE finding:<id>`)
 *   "impact_ns": 312400123,                 // the time it cost, as the detector's @impact line defines it
 *   "rank": 1,                              // 1 = worst: severity, then losses (OOM kills), then impact, then time
 *   "parent_id": null                       // the finding that covers this one (its group), or null
 * }
 * ```
 *
 * Integers (ts_ns, dur_ns, event_ids, counts in values) are written as exact
 * JSON integers by `toJson` (server/engine/engine.ts), also past 2^53.
 * Keys each detector guarantees in `values`:
 *   kswapd_escalation: min_priority;  shrinker_blocking: shrinker;
 *   reclaim_writeback: pages;         migration_pingpong: bounces, cpus;
 *   direct_reclaim_stall: nr_reclaimed (when the end event was seen), order, gfp_flags.
 */
import { createHash } from 'node:crypto';

export type { Severity } from '../../shared/contract/api.ts';
import type { Severity } from '../../shared/contract/api.ts';
import type { FindingCore } from '../../shared/contract/findings.ts';

/** Severities from worst to mildest: the order findings are ranked in. */
export const SEVERITIES: readonly Severity[] = ['critical', 'warn', 'info'];

export function isSeverity(s: unknown): s is Severity {
  return s === 'critical' || s === 'warn' || s === 'info';
}

/** 0 for critical, 1 warn, 2 info. */
export function severityRank(s: Severity): number {
  return SEVERITIES.indexOf(s);
}

/** In memory: the shared members (shared/contract/findings.ts FindingCore), exact times and ids. */
export interface Finding extends FindingCore {
  ts_ns: bigint;
  dur_ns: bigint;
  /** stallscope's thread key (thread.utid), or null. */
  utid: number | null;
  event_ids: bigint[];
  /** Stable id: the same finding has the same id whatever else ran, however the list is sorted (see `findingId`). */
  id: number;
  /** The time the finding cost, ns (each detector's `@impact` header line says how it is measured). */
  impact_ns: bigint;
  /** 1 = worst: by severity, then losses (a process killed) before stalls, then impact (larger first), then ts, then id. */
  rank: number;
  /** A finding that covers this one (the repeated ramp-up a kswapd episode belongs to, the stall of an escalation's pass), or null. */
  parent_id: number | null;
}

/**
 * The order `rank` numbers: severity (critical first), then the findings of
 * `losses` first (detectors whose header says `@rank loss`, e.g. oom_kill),
 * then impact (larger first), ts, id. Why losses first: their cost is not a
 * duration (oom_kill's impact is the reclaim episode before the kill, often
 * a few ms), and a developer reading the list must see the kill before the
 * stalls that led to it.
 */
export function rankComparator(losses: ReadonlySet<string>): (a: Finding, b: Finding) => number {
  return (a, b) => {
    const s = severityRank(a.severity) - severityRank(b.severity);
    if (s !== 0) return s;
    const loss = Number(losses.has(b.detector)) - Number(losses.has(a.detector));
    if (loss !== 0) return loss;
    if (a.impact_ns !== b.impact_ns) return a.impact_ns > b.impact_ns ? -1 : 1;
    if (a.ts_ns !== b.ts_ns) return a.ts_ns < b.ts_ns ? -1 : 1;
    return a.id - b.id;
  };
}

/** Findings in the order their `rank` (assignRanks) numbers them. */
export function compareByRank(a: Finding, b: Finding): number {
  return a.rank - b.rank;
}

/** Time order: ts, then detector, kind and id. */
export function compareByTime(a: Finding, b: Finding): number {
  if (a.ts_ns !== b.ts_ns) return a.ts_ns < b.ts_ns ? -1 : 1;
  if (a.detector !== b.detector) return a.detector < b.detector ? -1 : 1;
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  return a.id - b.id;
}

/** @deprecated the runner ranks findings (`compareByRank`); kept for scripts importing it. */
export const compareFindings = compareByRank;

/** Largest id + 1: ids are 48-bit, so they stay exact JS numbers and fit `finding:<15 digits>` in links. */
const ID_SPACE = 2 ** 48;

/**
 * A finding's stable id, from what identifies it: its detector, kind, start,
 * thread and first event. It does not depend on which other detectors ran,
 * on parameters that only change severities, or on any sort order, so a
 * link or a note made today names the same finding after a re-run.
 */
export function findingId(f: {
  detector: string;
  kind: string;
  ts_ns: bigint;
  utid: number | null;
  event_ids: readonly bigint[];
}): number {
  const key = `${f.detector}\0${f.kind}\0${f.ts_ns}\0${f.utid ?? ''}\0${f.event_ids[0] ?? ''}`;
  const h = createHash('sha256').update(key).digest();
  return h.readUIntBE(0, 6) % ID_SPACE;
}

/**
 * Gives each finding its id (`findingId`; a clash, which is rare, moves the
 * later finding in time order to the next free id) and returns them by id.
 */
export function assignIds(findings: Finding[]): Map<number, Finding> {
  const byId = new Map<number, Finding>();
  for (const f of [...findings].sort(compareByTime)) {
    let id = findingId(f);
    while (byId.has(id)) id = (id + 1) % ID_SPACE;
    f.id = id;
    byId.set(id, f);
  }
  return byId;
}

/** Numbers `rank` (1 = worst; rankComparator, `losses` the ids of `@rank loss` detectors) and sorts the list by it. */
export function assignRanks(findings: Finding[], losses: ReadonlySet<string>): void {
  findings.sort(rankComparator(losses));
  findings.forEach((f, i) => {
    f.rank = i + 1;
  });
}

/** The contract object with its keys in documented order (serialise with `toJson`). */
export function findingToJson(f: Finding): Record<string, unknown> {
  return {
    detector: f.detector,
    kind: f.kind,
    severity: f.severity,
    ts_ns: f.ts_ns,
    dur_ns: f.dur_ns,
    cpu: f.cpu,
    tid: f.tid,
    comm: f.comm,
    utid: f.utid,
    title: f.title,
    values: f.values,
    event_ids: f.event_ids,
    id: f.id,
    impact_ns: f.impact_ns,
    rank: f.rank,
    parent_id: f.parent_id,
  };
}

/** Counts per severity, e.g. for a report header or the trace library. */
export function countBySeverity(findings: readonly Finding[]): Record<Severity, number> {
  const out: Record<Severity, number> = { critical: 0, warn: 0, info: 0 };
  for (const f of findings) out[f.severity]++;
  return out;
}

/** True when some finding is at or above `level` (for `--fail-on warn|critical`). */
export function reachesSeverity(findings: readonly Finding[], level: Severity): boolean {
  const limit = severityRank(level);
  return findings.some((f) => severityRank(f.severity) <= limit);
}
