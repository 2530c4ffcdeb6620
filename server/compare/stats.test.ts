import { describe, expect, it } from 'vitest';
import { mannWhitneyU, mean, stddev, welchT } from './stats.ts';

// Expected values from scipy 1.17.1 (an independent implementation):
//   stats.ttest_ind(a, b, equal_var=False); stats.mannwhitneyu(a, b, method='asymptotic', alternative='two-sided')
const cases = {
  w1: {
    a: [12.1, 13.4, 11.8],
    b: [15.2, 16.0, 14.9, 15.5],
    t: -5.4518186373020345,
    tp: 0.01305482573610437,
    df: 2.9153779054851445,
    u: 0,
    up: 0.05182992721790968,
  },
  w2: {
    a: [100, 102, 98, 101],
    b: [100, 99, 103, 100],
    t: -0.2055566129482595,
    tp: 0.8439353788136266,
    df: 5.998809996033319,
    u: 8,
    up: 1.0,
  },
  m1: {
    a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    b: [6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    t: -3.6927447293799815,
    tp: 0.0016653519541944806,
    df: 18,
    u: 12.5,
    up: 0.005075392315273923,
  },
  // ties across and within samples
  m2: {
    a: [5, 5, 5, 1, 2, 3, 3, 3, 10],
    b: [5, 5, 6, 7, 7, 8, 2, 2, 11, 12, 30],
    t: -1.8141912068842114,
    tp: 0.09337142801812938,
    df: 12.678695197991932,
    u: 24,
    up: 0.0548080287275137,
  },
};

describe('compare statistics', () => {
  for (const [name, c] of Object.entries(cases)) {
    it(`Welch's t and Mann-Whitney U agree with scipy (${name})`, () => {
      const w = welchT(c.a, c.b)!;
      expect(w.statistic).toBeCloseTo(c.t, 9);
      expect(w.df!).toBeCloseTo(c.df, 9);
      expect(w.p).toBeCloseTo(c.tp, 9);
      const m = mannWhitneyU(c.a, c.b)!;
      expect(m.statistic).toBe(c.u);
      expect(m.p).toBeCloseTo(c.up, 9);
    });
  }

  it('mean and sample standard deviation', () => {
    expect(mean([2, 4, 4, 4, 5, 5, 7, 9])).toBe(5);
    expect(stddev([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(Math.sqrt(32 / 7), 12);
    expect(stddev([3])).toBe(0);
  });

  it('needs two iterations a side for Welch, one event a side for Mann-Whitney', () => {
    expect(welchT([1], [2, 3])).toBeNull();
    expect(mannWhitneyU([], [1])).toBeNull();
  });

  it('degenerate cases: no spread at all', () => {
    expect(welchT([5, 5], [5, 5])!.p).toBe(1);
    expect(welchT([5, 5], [7, 7])).toBeNull();
    expect(mannWhitneyU([1, 1], [1, 1, 1])!.p).toBe(1);
  });

  it('a sample against itself is never significant; a shifted large sample is', () => {
    const a = Array.from({ length: 5000 }, (_, i) => Math.exp((i % 97) / 10));
    expect(mannWhitneyU(a, a)!.p).toBeGreaterThan(0.99);
    const b = a.map((x) => x * 3);
    // tiny p values stay positive (no 1 - cdf cancellation)
    const p = mannWhitneyU(a, b)!.p;
    expect(p).toBeLessThan(1e-20);
    expect(p).toBeGreaterThan(0);
  });
});
