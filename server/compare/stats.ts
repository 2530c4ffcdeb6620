/**
 * The statistics a comparison needs, and no more: mean and sample standard
 * deviation over iterations, Welch's t-test on per-iteration values, and the
 * Mann-Whitney U test on per-event samples (stall and shrinker call
 * durations). The distributions' CDFs come from stdlib; the tests are a few
 * lines each, written to match scipy.stats (ttest_ind(equal_var=False) and
 * mannwhitneyu(method='asymptotic')), against which stats.test.ts checks them.
 *
 * Why two tests (COMPARE.md says the same for users):
 * - Per-event durations are heavy-tailed and far from normal (most stalls take
 *   tens of microseconds, a few take hundreds of milliseconds), so a t-test on
 *   them is driven by the few outliers. Mann-Whitney U works on ranks: it asks
 *   whether a stall drawn from B tends to be longer than one drawn from A, and
 *   one 400 ms outlier counts as one event, not as 10,000 typical ones.
 * - A count, a rate or a sum (stalls/s, pages reclaimed) has one value per
 *   trace, so the only spread is between iterations; Welch's t (unequal
 *   variances, since a patched kernel may also change the variance) on those
 *   few values is the usual choice and what MMTests-style tables report.
 */
import normalCdf from '@stdlib/stats-base-dists-normal-cdf';
import tCdf from '@stdlib/stats-base-dists-t-cdf';
import type { TestResult } from '../../shared/contract/compare.ts';

export function mean(xs: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i]!;
  return xs.length ? s / xs.length : Number.NaN;
}

/** Sample standard deviation (n - 1); 0 for one value. */
export function stddev(xs: ArrayLike<number>): number {
  const n = xs.length;
  if (n < 2) return 0;
  const m = mean(xs);
  let s = 0;
  for (let i = 0; i < n; i++) s += (xs[i]! - m) ** 2;
  return Math.sqrt(s / (n - 1));
}

export type { TestResult } from '../../shared/contract/compare.ts';
/**
 * Welch's two-sample t-test, two-sided. Needs two or more values on each
 * side. When neither side varies (every iteration gave the same value) there
 * is no test: null when the means differ (two iterations of a small integer,
 * a lowest priority of 12, 12 against 11, 11, agree by chance often enough
 * that calling it certain would be wrong), p = 1 when they are equal.
 */
export function welchT(a: ArrayLike<number>, b: ArrayLike<number>): TestResult | null {
  const na = a.length;
  const nb = b.length;
  if (na < 2 || nb < 2) return null;
  const ma = mean(a);
  const mb = mean(b);
  const va = stddev(a) ** 2 / na;
  const vb = stddev(b) ** 2 / nb;
  const se2 = va + vb;
  if (se2 === 0) return ma === mb ? { method: 'welch_t', statistic: 0, p: 1, df: null } : null;
  const t = (ma - mb) / Math.sqrt(se2);
  const df = (se2 * se2) / ((va * va) / (na - 1) + (vb * vb) / (nb - 1));
  const p = Math.min(1, 2 * tCdf(-Math.abs(t), df));
  return { method: 'welch_t', statistic: t, p, df };
}

/**
 * Mann-Whitney U, two-sided, normal approximation with the tie correction
 * and the continuity correction (scipy's method='asymptotic'). Sorts a copy
 * of each sample (native numeric sort) and ranks them in one merge: a
 * million events in well under a second. Needs one value on each side; with
 * fewer than ~8 per side the approximation is rough (the p-value is still
 * reported).
 */
export function mannWhitneyU(a: ArrayLike<number>, b: ArrayLike<number>): TestResult | null {
  const n1 = a.length;
  const n2 = b.length;
  if (n1 === 0 || n2 === 0) return null;
  const n = n1 + n2;
  const x = Float64Array.from(a).sort();
  const y = Float64Array.from(b).sort();
  let i = 0;
  let j = 0;
  let below = 0; // values ranked so far
  let r1 = 0; // rank sum of a
  let tieTerm = 0; // sum of t^3 - t over tie groups
  while (i < n1 || j < n2) {
    const v = j >= n2 || (i < n1 && x[i]! <= y[j]!) ? x[i]! : y[j]!;
    let ci = 0;
    let cj = 0;
    while (i < n1 && x[i] === v) {
      i++;
      ci++;
    }
    while (j < n2 && y[j] === v) {
      j++;
      cj++;
    }
    const t = ci + cj;
    r1 += ci * (below + (t + 1) / 2); // ranks below+1 .. below+t, averaged
    below += t;
    if (t > 1) tieTerm += t * t * t - t;
  }
  const u1 = r1 - (n1 * (n1 + 1)) / 2;
  const mu = (n1 * n2) / 2;
  const sigma = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  if (!(sigma > 0)) return { method: 'mann_whitney_u', statistic: u1, p: 1, df: null };
  const u = Math.max(u1, n1 * n2 - u1);
  const z = (u - mu - 0.5) / sigma;
  const p = Math.min(1, 2 * normalCdf(-z, 0, 1));
  return { method: 'mann_whitney_u', statistic: u1, p, df: null };
}
