import { describe, expect, it } from 'vitest';
import type { Finding } from '../api/types.ts';
import { windowFor } from './finding_nav.ts';
import {
  DEFAULT_QUERY,
  childrenOf,
  facets,
  listRows,
  navOrder,
  queryFindings,
  queryFromFilter,
  shownSummary,
  stepThrough,
} from './findings_query.ts';

let rank = 0;
const f = (
  index: number,
  detector: string,
  severity: Finding['severity'],
  ts: number,
  extra: Partial<Finding> = {},
): Finding => ({
  index,
  id: index,
  rank: ++rank,
  parent_id: null,
  impact_ns: '10',
  impact: 10,
  detector,
  kind: detector,
  severity,
  ts,
  dur: 10,
  ts_ns: String(ts),
  dur_ns: '10',
  cpu: 0,
  tid: 1,
  comm: 'x',
  title: '',
  values: {},
  event_ids: [],
  ...extra,
});

describe('findings list', () => {
  rank = 0;
  // as the server ranks them: critical first, then by impact
  const all = [
    f(2, 'b', 'critical', 9, { comm: 'kswapd0', tid: 45 }),
    f(0, 'b', 'warn', 5, { comm: 'kswapd0', tid: 45, cpu: 1 }),
    f(1, 'a', 'warn', 1, { comm: 'dd', tid: 7, title: 'dd stalled' }),
    f(4, 'shrinker_blocking', 'warn', 3, { kind: 'call', values: { shrinker: 'super_cache_scan' } }),
    f(5, 'shrinker_blocking', 'info', 4, { kind: 'call', values: { shrinker: 'super_cache_scan' } }),
    f(3, 'a', 'info', 0, { comm: 'dd', tid: 7 }),
    f(6, 'b', 'info', 6, { parent_id: 2, comm: 'kswapd0', tid: 45 }),
  ];

  it('sorts by rank (impact) or by time, leaving out covered findings', () => {
    expect(queryFindings(all, DEFAULT_QUERY).map((x) => x.index)).toEqual([2, 0, 1, 4, 5, 3]);
    expect(queryFindings(all, { ...DEFAULT_QUERY, sort: 'time' }).map((x) => x.index)).toEqual([3, 1, 4, 5, 0, 2]);
    expect(childrenOf(all, 2).map((x) => x.index)).toEqual([6]);
  });

  it('filters by severity, detector, task, shrinker, CPU and text', () => {
    const ids = (q: Partial<typeof DEFAULT_QUERY>) =>
      queryFindings(all, { ...DEFAULT_QUERY, ...q }).map((x) => x.index);
    expect(ids({ severities: ['warn'] })).toEqual([0, 1, 4]);
    expect(ids({ detector: 'a' })).toEqual([1, 3]);
    expect(ids({ comm: 'kswapd0' })).toEqual([2, 0]);
    expect(ids({ shrinker: 'super_cache_scan' })).toEqual([4, 5]);
    expect(ids({ cpu: 1 })).toEqual([0]);
    expect(ids({ text: 'DD stalled' })).toEqual([1]);
    expect(ids(queryFromFilter({ detector: 'b', comm: 'kswapd0' }))).toEqual([2, 0]);
  });

  it('groups one detector and task (or one shrinker) into a row, where its first finding is', () => {
    const rows = listRows(queryFindings(all, DEFAULT_QUERY), true);
    expect(
      rows.map((r) =>
        r.kind === 'group' ? `${r.label}:${r.findings.map((x) => x.index).join(',')}` : r.finding.index,
      ),
    ).toEqual(['kswapd0:2,0', 'dd 7:1,3', 'super_cache_scan:4,5']);
    const g = rows[0]!;
    expect(g.kind === 'group' && g.worst.index).toBe(2);
    expect(g.kind === 'group' && g.counts).toEqual({ critical: 1, warn: 1, info: 0 });
  });

  it('steps through the list as filtered, sorted and shown, wrapping', () => {
    const rows = listRows(queryFindings(all, { ...DEFAULT_QUERY, severities: ['warn', 'critical'] }), true);
    // folded, the kswapd0 group shows (and steps through) its worst only
    expect(navOrder(rows).map((x) => x.index)).toEqual([2, 1, 4]);
    // unfolded, or with a folded member selected, all of it
    const key = rows[0]!.kind === 'group' ? rows[0]!.key : '';
    expect(navOrder(rows, new Set([key])).map((x) => x.index)).toEqual([2, 0, 1, 4]);
    expect(navOrder(rows, new Set(), 0).map((x) => x.index)).toEqual([2, 0, 1, 4]);
    const order = navOrder(rows, new Set([key]));
    expect(stepThrough(order, null, 1)!.index).toBe(2);
    expect(stepThrough(order, 0, 1)!.index).toBe(1);
    expect(stepThrough(order, 4, 1)!.index).toBe(2);
    expect(stepThrough(order, 2, -1)!.index).toBe(4);
    // a finding outside the filter steps to the list's first
    expect(stepThrough(order, 3, 1)!.index).toBe(2);
  });

  it("lists a finding covered by another detector's under it, and on its own when its detector or kind is chosen", () => {
    // a reclaim pass: the stall (3) covers the escalation of the same pass (8, server/findings/same_pass.ts)
    const pass = [
      ...all.filter((x) => x.index !== 3),
      f(3, 'direct_reclaim_stall', 'critical', 0, { kind: 'memcg', comm: 'dd', tid: 7 }),
      f(8, 'kswapd_escalation', 'critical', 0, { kind: 'memcg_escalation', comm: 'dd', tid: 7, parent_id: 3 }),
    ];
    const ids = (q: Partial<typeof DEFAULT_QUERY>) =>
      queryFindings(pass, { ...DEFAULT_QUERY, ...q }).map((x) => x.index);
    expect(ids({})).not.toContain(8);
    expect(ids({ comm: 'dd' })).toEqual([1, 3]);
    expect(ids({ detector: 'kswapd_escalation' })).toEqual([8]);
    expect(ids({ kind: 'memcg_escalation' })).toEqual([8]);
    expect(ids({ text: 'memcg' })).toEqual([3]);
    expect(ids({ severities: ['critical'] })).toEqual([2, 3]);
    // a ramp-up's episode (6, under 2 of its own detector) stays under it whatever the filter
    expect(ids({ detector: 'b', severities: ['info'] })).toEqual([]);
    const fc = facets(pass);
    expect(fc.detectors).toContainEqual(['kswapd_escalation', 1]);
    expect(fc.kinds).toContainEqual(['kswapd_escalation/memcg_escalation', 1]);
    expect(fc.detectors).toContainEqual(['b', 2]);
    expect(fc.comms).toContainEqual(['dd', 2]);

    // the line under the filters: 6 top-level of 8 findings; 8 and the ramp-up's episode 6 are under others
    const line = (q: Partial<typeof DEFAULT_QUERY>) =>
      shownSummary(pass, queryFindings(pass, { ...DEFAULT_QUERY, ...q }), Object.keys(q).length > 0);
    expect(line({})).toBe('6 shown (2 more under the findings that cover them)');
    expect(line({ comm: 'dd' })).toBe('2 of 6 shown (2 more under the findings that cover them)');
    // listed on its own, the escalation is a possible row, no longer "under" its stall
    expect(line({ detector: 'kswapd_escalation' })).toBe('1 of 7 shown (1 more under the findings that cover them)');
  });

  it('lists a finding whose parent is missing rather than losing it', () => {
    const orphan = [f(1, 'a', 'warn', 1), f(9, 'kswapd_escalation', 'warn', 2, { parent_id: 77 })];
    expect(queryFindings(orphan, DEFAULT_QUERY).map((x) => x.index)).toEqual([1, 9]);
    expect(facets(orphan).detectors).toContainEqual(['kswapd_escalation', 1]);
  });

  it('counts what the filters can choose', () => {
    const fc = facets(all);
    expect(fc.comms).toEqual(
      [
        ['kswapd0', 2],
        ['dd', 2],
        ['x', 2],
      ].sort((a, b) => (b[1] as number) - (a[1] as number) || (a[0]! < b[0]! ? -1 : 1)),
    );
    expect(fc.shrinkers).toEqual([['super_cache_scan', 2]]);
    expect(fc.cpus).toEqual([
      ['0', 5],
      ['1', 1],
    ]);
  });

  it('shows a finding with context on both sides', () => {
    const w = windowFor({ ts: 1_000_000, dur: 1_000_000 });
    expect(w.t0).toBeLessThan(1_000_000);
    expect(w.t1).toBeGreaterThan(2_000_000);
  });
});
