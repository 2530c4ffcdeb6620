import { describe, expect, it } from 'vitest';
import { BundleEvents, sortByTs } from './bundle_events.ts';

/** A bundle's columns with the given timestamps; every other column numbers the event (its position before sorting). */
function bundle(ts: number[]): BundleEvents {
  const b = new BundleEvents();
  b.count = ts.length;
  b.ts = Float64Array.from(ts);
  const order = Int32Array.from(ts, (_, i) => i);
  b.pid = order.slice();
  b.flags = order.slice();
  b.kind = order.slice();
  b.a = order.slice();
  b.b = order.slice();
  return b;
}

/** The expected order, by a plain comparator sort: timestamp, then position (ties keep their order). */
function expectedOrder(ts: number[]): number[] {
  return ts
    .map((t, i) => [t, i] as const)
    .sort((x, y) => x[0] - y[0] || x[1] - y[1])
    .map(([, i]) => i);
}

function check(ts: number[]): void {
  const b = bundle(ts);
  sortByTs(b);
  const want = expectedOrder(ts);
  expect(Array.from(b.pid)).toEqual(want);
  for (const col of [b.flags, b.kind, b.a, b.b]) expect(Array.from(col)).toEqual(want);
  expect(Array.from(b.ts)).toEqual(want.map((i) => ts[i]));
}

describe('sortByTs: a bundle of runs in order (regular events, compact switches, compact wakings)', () => {
  it('merges three sorted runs, ties keeping their order', () => {
    // regular events, then switches, then wakings, with equal timestamps across runs
    check([10, 20, 30, 40, 5, 20, 35, 50, 1, 20, 40, 60]);
  });
  it('handles one run, an empty bundle, a reversed bundle and an odd number of runs', () => {
    check([1, 2, 3]);
    check([]);
    check([9, 8, 7, 6, 5, 4, 3, 2, 1]);
    check([3, 4, 1, 2, 0]);
  });
  it('orders random runs with many ties as a comparator sort does', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
    for (let round = 0; round < 50; round++) {
      const ts: number[] = [];
      const runs = 1 + Math.floor(rand() * 6);
      for (let r = 0; r < runs; r++) {
        let t = Math.floor(rand() * 20);
        const len = Math.floor(rand() * 30);
        for (let k = 0; k < len; k++) ts.push((t += Math.floor(rand() * 3)));
      }
      check(ts);
    }
  });
});
