/**
 * A finding: one moment a detector found, measured and ranked.
 *
 * This is the stable contract the CLI (`stallscope analyze --json`), the HTTP
 * API and the web app share. People script against it: add keys, never rename
 * or remove them.
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
 *   "event_ids": [1234, 1240]               // ftrace_event.id of every event that makes it up
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

export type Severity = 'critical' | 'warn' | 'info';

/** Severities from worst to mildest: the order findings are reported in. */
export const SEVERITIES: readonly Severity[] = ['critical', 'warn', 'info'];

export function isSeverity(s: unknown): s is Severity {
  return s === 'critical' || s === 'warn' || s === 'info';
}

/** 0 for critical, 1 warn, 2 info. */
export function severityRank(s: Severity): number {
  return SEVERITIES.indexOf(s);
}

export interface Finding {
  detector: string;
  kind: string;
  severity: Severity;
  ts_ns: bigint;
  dur_ns: bigint;
  cpu: number | null;
  tid: number | null;
  comm: string | null;
  utid: number | null;
  title: string;
  values: Record<string, unknown>;
  event_ids: bigint[];
}

/** Orders by severity (critical first), then ts, then detector, kind and first event id. */
export function compareFindings(a: Finding, b: Finding): number {
  const s = severityRank(a.severity) - severityRank(b.severity);
  if (s !== 0) return s;
  if (a.ts_ns !== b.ts_ns) return a.ts_ns < b.ts_ns ? -1 : 1;
  if (a.detector !== b.detector) return a.detector < b.detector ? -1 : 1;
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  const ea = a.event_ids[0] ?? -1n;
  const eb = b.event_ids[0] ?? -1n;
  return ea === eb ? 0 : ea < eb ? -1 : 1;
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
