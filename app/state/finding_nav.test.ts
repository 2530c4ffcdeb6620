import { describe, expect, it } from 'vitest';
import type { Finding } from '../api/types.ts';
import { groupFindings, orderedFindings, stepFinding, windowFor } from './finding_nav.ts';

const f = (index: number, detector: string, severity: Finding['severity'], ts: number): Finding => ({
  index, detector, kind: detector, severity, ts, dur: 10, ts_ns: String(ts), dur_ns: '10', cpu: 0, tid: 1, comm: 'x', title: '', values: {}, event_ids: [],
});

describe('finding navigation', () => {
  const all = [f(0, 'b', 'warn', 5), f(1, 'a', 'warn', 1), f(2, 'b', 'critical', 9), f(3, 'a', 'info', 0)];
  const order = orderedFindings(groupFindings(all));

  it('groups by detector, worst detector first, then severity, then time', () => {
    expect(order.map((x) => x.index)).toEqual([2, 0, 1, 3]);
  });

  it('steps across all or within the detector, wrapping', () => {
    expect(stepFinding(order, null, 1, 'all')!.index).toBe(2);
    expect(stepFinding(order, 0, 1, 'all')!.index).toBe(1);
    expect(stepFinding(order, 0, 1, 'detector')!.index).toBe(2);
    expect(stepFinding(order, 2, -1, 'all')!.index).toBe(3);
  });

  it('shows a finding with context on both sides', () => {
    const w = windowFor({ ts: 1_000_000, dur: 1_000_000 });
    expect(w.t0).toBeLessThan(1_000_000);
    expect(w.t1).toBeGreaterThan(2_000_000);
  });
});
