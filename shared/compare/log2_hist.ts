/**
 * log2 histograms of durations, as bcc's funclatency / argdist -H print them,
 * for several traces side by side.
 *
 * Buckets are in microseconds (the duration in ns divided by 1000, rounded
 * down): bucket 0 holds 0 and 1 us, bucket k >= 1 holds 2^k .. 2^(k+1)-1 us
 * ("2 -> 3", "4 -> 7", ...), the ranges funclatency prints.
 */

export interface Log2Bucket {
  /** Inclusive bounds, microseconds. */
  low: number;
  high: number;
}

/** The bucket of a duration in ns. */
export function log2Slot(ns: number): number {
  const us = Math.floor(ns / 1000);
  return us < 2 ? 0 : Math.floor(Math.log2(us));
}

export function slotBounds(slot: number): Log2Bucket {
  return slot === 0 ? { low: 0, high: 1 } : { low: 2 ** slot, high: 2 ** (slot + 1) - 1 };
}

/** Counts per slot (index = slot), as long as the largest slot used. */
export function log2Counts(ns: ArrayLike<number>): number[] {
  const out: number[] = [];
  for (let i = 0; i < ns.length; i++) {
    const s = log2Slot(ns[i]!);
    while (out.length <= s) out.push(0);
    out[s]!++;
  }
  return out;
}

export interface SideBySideHistogram {
  title: string;
  /** Column headings, one per histogram. */
  labels: string[];
  /** counts[column][slot] */
  counts: number[][];
}

/**
 * The histograms as text: one row per bucket from the first to the last
 * non-empty one in any column, each column a count and a bar scaled to its
 * own largest bucket (as argdist does per histogram).
 */
export function formatSideBySide(h: SideBySideHistogram, barWidth = 24): string {
  const first = Math.min(
    ...h.counts.map((c) => {
      const i = c.findIndex((x) => x > 0);
      return i < 0 ? Infinity : i;
    }),
  );
  const last = Math.max(
    ...h.counts.map((c) => {
      for (let i = c.length - 1; i >= 0; i--) if (c[i]! > 0) return i;
      return -1;
    }),
  );
  const lines = [h.title];
  if (!Number.isFinite(first) || last < 0) {
    lines.push('    (no events)', '');
    return lines.join('\n');
  }
  const countW = Math.max(6, ...h.counts.flat().map((n) => String(n).length));
  const colW = countW + 1 + barWidth + 2;
  const rangeW = 22;
  const head =
    `${'usecs'.padStart(14).padEnd(rangeW)} : ` +
    h.labels.map((l) => `${l.length > colW - 1 ? l.slice(0, colW - 1) : l}`.padEnd(colW)).join(' ');
  lines.push(head.trimEnd());
  for (let s = first; s <= last; s++) {
    const b = slotBounds(s);
    const range = `${String(b.low).padStart(10)} -> ${String(b.high).padEnd(8)}`.padEnd(rangeW);
    const cols = h.counts.map((c) => {
      const n = c[s] ?? 0;
      const max = Math.max(...c, 0);
      const stars = max > 0 ? Math.round((n / max) * barWidth) : 0;
      const bar = '*'.repeat(n > 0 ? Math.max(1, stars) : 0).padEnd(barWidth);
      return `${String(n).padEnd(countW)} |${bar}|`;
    });
    lines.push(`${range} : ${cols.join(' ')}`);
  }
  lines.push('');
  return lines.join('\n');
}
