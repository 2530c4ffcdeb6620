/**
 * heapBound on this thread's real V8 heap: a workload whose garbage lives
 * long enough to be promoted (as a field worker batch's rows are, behind its
 * small young generation) must stay within the slack of its live size after
 * each check; V8 alone lets the old generation grow to several times it.
 * The live size is measured after a full collection at the end, not taken
 * from the check.
 */
import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { collectGarbage, heapBound } from './ingest_memory.ts';

const MB = 1048576;
const used = () => getHeapStatistics().used_heap_size;

/** Small objects (arrays of numbers), like one batch's rows: ~2 MB. */
function unit(seed: number): number[][] {
  const rows: number[][] = [];
  for (let i = 0; i < 16384; i++) rows.push([seed, i, seed * i, i + 0.5, seed - i, i * 2, i * 3, i * 4]);
  return rows;
}

/** The heap in use after each check, at worst, above the start. */
function worstGrowth(check: () => void): { worst: number; live: number } {
  collectGarbage();
  const before = used();
  // A rolling window of units stays live; each one dropped has lived through
  // many scavenges, so it is garbage in the old generation.
  const window: number[][][] = [];
  let worst = 0;
  for (let i = 0; i < 160; i++) {
    window.push(unit(i));
    if (window.length > 16) window.shift();
    check();
    worst = Math.max(worst, used() - before);
  }
  collectGarbage();
  const live = used() - before;
  expect(window.length).toBe(16);
  return { worst, live };
}

describe('heapBound', () => {
  it('keeps the heap in use within its slack of the live objects after each check', () => {
    const slackMb = 8;
    const { worst, live } = worstGrowth(heapBound(slackMb));
    expect(live).toBeGreaterThan(16 * MB); // the window really is live
    // Live plus the slack, plus the unit allocated since the last check.
    expect(worst).toBeLessThan(live + slackMb * MB + live / 16 + 2 * MB);
  });

  it('does nothing when turned off (slack 0)', () => {
    expect(heapBound(0)()).toBeUndefined();
  });
});
