/**
 * Finding order and navigation: grouped by detector, then severity
 * (critical first), then time. `]`/`[` step through this order, across all
 * detectors or within the selected finding's one.
 */
import type { Finding, Severity } from '../api/types.ts';

export const SEVERITY_RANK: Record<Severity, number> = { critical: 0, warn: 1, info: 2 };

export interface FindingGroup {
  detector: string;
  findings: Finding[];
  counts: Record<Severity, number>;
}

export function groupFindings(findings: Finding[]): FindingGroup[] {
  const by = new Map<string, Finding[]>();
  for (const f of findings) by.set(f.detector, [...(by.get(f.detector) ?? []), f]);
  const groups = [...by.entries()].map(([detector, list]) => {
    list.sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || a.ts - b.ts || a.index - b.index);
    const counts = { info: 0, warn: 0, critical: 0 };
    for (const f of list) counts[f.severity]++;
    return { detector, findings: list, counts };
  });
  // Detectors with the worst findings first, then by name.
  groups.sort((a, b) => SEVERITY_RANK[a.findings[0]!.severity] - SEVERITY_RANK[b.findings[0]!.severity] || a.detector.localeCompare(b.detector));
  return groups;
}

export function orderedFindings(groups: FindingGroup[]): Finding[] {
  return groups.flatMap((g) => g.findings);
}

/** The next (dir 1) or previous (dir -1) finding from `current`, wrapping around. */
export function stepFinding(order: Finding[], current: number | null, dir: 1 | -1, scope: 'all' | 'detector'): Finding | null {
  if (order.length === 0) return null;
  const at = current === null ? -1 : order.findIndex((f) => f.index === current);
  if (at < 0) return dir === 1 ? order[0]! : order[order.length - 1]!;
  const pool = scope === 'detector' ? order.filter((f) => f.detector === order[at]!.detector) : order;
  const i = pool.findIndex((f) => f.index === current);
  return pool[(i + dir + pool.length) % pool.length]!;
}

/** A window showing the finding with context on both sides (never narrower than 100 us). */
export function windowFor(f: { ts: number; dur: number }): { t0: number; t1: number } {
  const dur = Math.max(0, f.dur);
  const pad = Math.max(dur * 0.35, 50_000);
  return { t0: Math.floor(f.ts - pad), t1: Math.ceil(f.ts + dur + pad) };
}
