/**
 * The findings list as the user has it: sorted (by impact, i.e. the server's
 * rank, or by time), filtered (severity, detector, kind, task, shrinker, CPU,
 * free text), and optionally grouped: the findings of one detector for one
 * task, or of one shrinker, folded into one row with their count and worst.
 * `]` / `[` step through exactly this list (`navOrder`).
 *
 * Findings covered by another (the kswapd episodes of a repeated ramp-up,
 * a reclaim pass's escalation under its stall: `parent_id`) are not rows of
 * their own where their parent is one: their parent lists them.
 */
import type { Finding, OverviewFilter, Severity } from '../api/types.ts';
import { listedInOwnDetector } from '../../shared/contract/findings.ts';

export type SortOrder = 'impact' | 'time';

export interface FindingsQuery {
  sort: SortOrder;
  /** Severities shown (empty: all). */
  severities: Severity[];
  detector: string | null;
  kind: string | null;
  /** Task name (comm). */
  comm: string | null;
  shrinker: string | null;
  cpu: number | null;
  /** Free text, matched case-insensitively against title, task, detector, kind and values. */
  text: string;
  /** Fold a detector's findings for one task (one shrinker) into one row. */
  group: boolean;
}

export const DEFAULT_QUERY: FindingsQuery = {
  sort: 'impact',
  severities: [],
  detector: null,
  kind: null,
  comm: null,
  shrinker: null,
  cpu: null,
  text: '',
  group: true,
};

/** The query an overview line's filter stands for (everything else reset). */
export function queryFromFilter(f: OverviewFilter, base: FindingsQuery = DEFAULT_QUERY): FindingsQuery {
  return {
    ...base,
    severities: [],
    detector: f.detector,
    kind: f.kind ?? null,
    comm: f.comm ?? null,
    shrinker: f.shrinker ?? null,
    cpu: null,
    text: '',
  };
}

export function shrinkerOf(f: Finding): string | null {
  return typeof f.values.shrinker === 'string' ? f.values.shrinker : null;
}

export function isFiltered(q: FindingsQuery): boolean {
  return (
    q.severities.length > 0 ||
    q.detector !== null ||
    q.kind !== null ||
    q.comm !== null ||
    q.shrinker !== null ||
    q.cpu !== null ||
    q.text.trim() !== ''
  );
}

export function matchesQuery(f: Finding, q: FindingsQuery): boolean {
  if (q.severities.length && !q.severities.includes(f.severity)) return false;
  if (q.detector !== null && f.detector !== q.detector) return false;
  if (q.kind !== null && f.kind !== q.kind) return false;
  if (q.comm !== null && f.comm !== q.comm) return false;
  if (q.shrinker !== null && shrinkerOf(f) !== q.shrinker) return false;
  if (q.cpu !== null && f.cpu !== q.cpu) return false;
  const text = q.text.trim().toLowerCase();
  if (text) {
    const hay = `${f.title} ${f.comm ?? ''} ${f.tid ?? ''} ${f.detector} ${f.kind} ${Object.values(f.values)
      .filter((v) => typeof v === 'string' || typeof v === 'number')
      .join(' ')}`.toLowerCase();
    if (!text.split(/\s+/).every((w) => hay.includes(w))) return false;
  }
  return true;
}

export function compareRank(a: Finding, b: Finding): number {
  return a.rank - b.rank || a.index - b.index;
}

export function compareTime(a: Finding, b: Finding): number {
  return a.ts - b.ts || a.rank - b.rank || a.index - b.index;
}

/**
 * The findings shown, in order: matching the query, not covered by another
 * finding the list shows. A finding covered by one of its own detector (a
 * ramp-up's episodes) is never a row; one covered by another detector's (a
 * reclaim pass's escalation under its stall, server/findings/same_pass.ts)
 * is a row when the detector or kind chosen leaves its parent out (the list
 * filtered on the escalations).
 */
export function queryFindings(findings: readonly Finding[], q: FindingsQuery): Finding[] {
  const byIndex = new Map(findings.map((f) => [f.index, f]));
  return findings
    .filter((f) => {
      if (!matchesQuery(f, q)) return false;
      if (f.parent_id === null) return true;
      const parent = byIndex.get(f.parent_id);
      // a parent not among the findings covers nothing (listedInOwnDetector)
      if (parent === undefined) return true;
      // its parent left out by the detector or kind chosen (not by severity, task or text: then
      // the child stays under its parent as in the unfiltered list)
      const parentLeftOut =
        (q.detector !== null && parent?.detector !== q.detector) || (q.kind !== null && parent?.kind !== q.kind);
      return parent.detector !== f.detector && parentLeftOut;
    })
    .sort(q.sort === 'time' ? compareTime : compareRank);
}

/**
 * The line under the filters: how many rows the list shows, of how many it
 * could show, and how many findings are only under the findings that cover
 * them. A finding nested under another detector's is a possible row only when
 * the list shows it (its detector or kind chosen): then it counts among the
 * possible rows, not among those "under" others.
 */
export function shownSummary(findings: readonly Finding[], listed: readonly Finding[], filtered: boolean): string {
  const topLevel = findings.filter((f) => f.parent_id === null).length;
  const possibleRows = topLevel + listed.filter((f) => f.parent_id !== null).length;
  const under = findings.length - possibleRows;
  const shown = filtered ? `${listed.length} of ${possibleRows} shown` : `${possibleRows} shown`;
  return under > 0 ? `${shown} (${under} more under the findings that cover them)` : shown;
}

export type ListRow =
  | { kind: 'finding'; finding: Finding }
  | {
      kind: 'group';
      key: string;
      label: string;
      detector: string;
      findings: Finding[];
      worst: Finding;
      counts: Record<Severity, number>;
    };

/** What a finding groups by: its shrinker for shrinker calls, else its detector and task. */
export function groupKey(f: Finding): { key: string; label: string } {
  const shr = shrinkerOf(f);
  if (f.detector === 'shrinker_blocking' && shr) return { key: `${f.detector}|shrinker:${shr}`, label: shr };
  const who = f.comm
    ? `${f.comm}${f.tid !== null && !/^kswapd\d/.test(f.comm) ? ` ${f.tid}` : ''}`
    : f.tid !== null
      ? `tid ${f.tid}`
      : '(no task)';
  return { key: `${f.detector}|${f.kind}|task:${f.comm ?? ''}:${f.tid ?? ''}`, label: who };
}

/**
 * Rows for the list: with grouping, each group of two or more findings is one
 * row where its first finding (in the list's order) would be; the rest are rows
 * of their own.
 */
export function listRows(list: readonly Finding[], group: boolean): ListRow[] {
  if (!group) return list.map((finding) => ({ kind: 'finding', finding }));
  const byKey = new Map<string, Finding[]>();
  for (const f of list) {
    const k = groupKey(f).key;
    const g = byKey.get(k);
    if (g) g.push(f);
    else byKey.set(k, [f]);
  }
  const rows: ListRow[] = [];
  const placed = new Set<string>();
  for (const f of list) {
    const { key, label } = groupKey(f);
    const members = byKey.get(key)!;
    if (members.length < 2) {
      rows.push({ kind: 'finding', finding: f });
      continue;
    }
    if (placed.has(key)) continue;
    placed.add(key);
    const counts = { critical: 0, warn: 0, info: 0 };
    for (const m of members) counts[m.severity]++;
    const worst = [...members].sort(compareRank)[0]!;
    rows.push({ kind: 'group', key, label, detector: f.detector, findings: members, worst, counts });
  }
  return rows;
}

/** A group's findings as shown: its worst first, then the others in the list's order. */
export function groupMembers(g: Extract<ListRow, { kind: 'group' }>): Finding[] {
  return [g.worst, ...g.findings.filter((f) => f !== g.worst)];
}

/** Is the group unfolded: by the user, or because the selected finding is one of its folded members. */
export function groupOpen(
  g: Extract<ListRow, { kind: 'group' }>,
  expanded: ReadonlySet<string>,
  selected: number | null,
): boolean {
  return (
    expanded.has(g.key) ||
    (selected !== null && selected !== g.worst.index && g.findings.some((f) => f.index === selected))
  );
}

/**
 * The order `]` / `[` step through: the findings as shown, top to bottom: a
 * folded group shows (and steps through) its worst only, an unfolded one all
 * of its findings.
 */
export function navOrder(
  rows: readonly ListRow[],
  expanded: ReadonlySet<string> = new Set(),
  selected: number | null = null,
): Finding[] {
  return rows.flatMap((r) =>
    r.kind === 'finding' ? [r.finding] : groupOpen(r, expanded, selected) ? groupMembers(r) : [r.worst],
  );
}

/** The next (dir 1) or previous (dir -1) finding of `order` from the finding with id `current`, wrapping around. */
export function stepThrough(order: readonly Finding[], current: number | null, dir: 1 | -1): Finding | null {
  if (order.length === 0) return null;
  const at = current === null ? -1 : order.findIndex((f) => f.index === current);
  if (at < 0) return dir === 1 ? order[0]! : order[order.length - 1]!;
  return order[(at + dir + order.length) % order.length]!;
}

/** The findings a finding covers (its parent_id children), in time order. */
export function childrenOf(findings: readonly Finding[], id: number): Finding[] {
  return findings.filter((f) => f.parent_id === id).sort(compareTime);
}

/** What the filters can choose from, each with its count among the top-level findings. */
export function facets(findings: readonly Finding[]) {
  const count = (m: Map<string, number>, k: string | null) => {
    if (k !== null) m.set(k, (m.get(k) ?? 0) + 1);
  };
  const detectors = new Map<string, number>();
  const kinds = new Map<string, number>();
  const comms = new Map<string, number>();
  const shrinkers = new Map<string, number>();
  const cpus = new Map<string, number>();
  const byIndex = new Map(findings.map((f) => [f.index, f]));
  for (const f of findings) {
    // choosing its detector or kind lists a finding covered by another detector's (queryFindings)
    if (listedInOwnDetector(f, (id) => byIndex.get(id))) {
      count(detectors, f.detector);
      count(kinds, `${f.detector}/${f.kind}`);
    }
    if (f.parent_id !== null) continue;
    count(comms, f.comm);
    count(shrinkers, shrinkerOf(f));
    count(cpus, f.cpu === null ? null : String(f.cpu));
  }
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return {
    detectors: sorted(detectors),
    kinds: sorted(kinds),
    comms: sorted(comms),
    shrinkers: sorted(shrinkers),
    cpus: [...cpus.entries()].sort((a, b) => Number(a[0]) - Number(b[0])),
  };
}
