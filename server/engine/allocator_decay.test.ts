import { describe, expect, it } from 'vitest';
import { openDuckDb } from './engine.ts';
import {
  allocatorDecayState,
  keepingFreedPages,
  keptPagesBytes,
  KEPT_DECAY_MS,
  KEPT_PAGES_CHECK_MS,
  KEPT_PAGES_MAX_BYTES,
  pastDecodePeak,
  traceBuildStarted,
} from './allocator_decay.ts';

// The values are read back from DuckDB's own jemalloc (mallctl), not from this module's bookkeeping.
describe('DuckDB allocator decay switched at run time', () => {
  it('keeps freed pages only while someone asks and no decode runs', async () => {
    const engine = await openDuckDb(':memory:');
    try {
      // Some work, so that DuckDB's threads have arenas of their own.
      await engine.query('SELECT sum(i) FROM range(1000000) t(i)');
      expect(allocatorDecayState()).toEqual({ decayMs: [0], unavailable: null });

      const keep = keepingFreedPages();
      expect(allocatorDecayState().decayMs).toEqual([KEPT_DECAY_MS]);
      await engine.query('SELECT count(DISTINCT i % 1000) FROM range(1000000) t(i)');

      const decode = traceBuildStarted();
      expect(allocatorDecayState().decayMs).toEqual([0]);
      const other = keepingFreedPages();
      expect(allocatorDecayState().decayMs).toEqual([0]);
      decode();
      decode(); // a second call does nothing
      expect(allocatorDecayState().decayMs).toEqual([KEPT_DECAY_MS]);

      keep();
      expect(allocatorDecayState().decayMs).toEqual([KEPT_DECAY_MS]);
      other();
      expect(allocatorDecayState().decayMs).toEqual([0]);
    } finally {
      engine.close();
    }
  });

  it('keeps freed pages while a build is past its decode, and only then', async () => {
    const engine = await openDuckDb(':memory:');
    try {
      await engine.query('SELECT sum(i) FROM range(1000000) t(i)');
      const build = traceBuildStarted();
      expect(allocatorDecayState().decayMs).toEqual([0]);

      const commit = pastDecodePeak(); // the store's COMMIT, then derive
      expect(allocatorDecayState().decayMs).toEqual([KEPT_DECAY_MS]);
      await engine.query('SELECT count(DISTINCT i % 1000) FROM range(1000000) t(i)');
      // Another upload decoding meanwhile: back at once, until it is past its decode too.
      const other = traceBuildStarted();
      expect(allocatorDecayState().decayMs).toEqual([0]);
      other();
      expect(allocatorDecayState().decayMs).toEqual([KEPT_DECAY_MS]);
      commit();
      commit(); // a second call does nothing
      expect(allocatorDecayState().decayMs).toEqual([0]);

      // A build with nothing past its decode (another upload decoding): back at once, also for a keeper.
      const keep = keepingFreedPages();
      expect(allocatorDecayState().decayMs).toEqual([0]);
      build();
      expect(allocatorDecayState().decayMs).toEqual([KEPT_DECAY_MS]);
      keep();
      expect(allocatorDecayState().decayMs).toEqual([0]);
    } finally {
      engine.close();
    }
  });
});

describe('freed pages kept, bounded in bytes', () => {
  it('gives them all back once they pass KEPT_PAGES_MAX_BYTES', async () => {
    const engine = await openDuckDb(':memory:');
    const build = traceBuildStarted();
    const commit = pastDecodePeak();
    try {
      expect(allocatorDecayState().decayMs).toEqual([KEPT_DECAY_MS]);
      // A hash aggregate over 4M distinct keys frees far more than the bound when it ends.
      await engine.query('SELECT count(*) FROM (SELECT i, count(*) FROM range(4000000) t(i) GROUP BY i)');
      // The check runs every KEPT_PAGES_CHECK_MS; after a few the kept pages are under the bound.
      await new Promise((r) => setTimeout(r, 5 * KEPT_PAGES_CHECK_MS));
      const kept = keptPagesBytes();
      expect(kept).not.toBeNull();
      expect(kept!).toBeLessThanOrEqual(KEPT_PAGES_MAX_BYTES);
    } finally {
      commit();
      build();
      engine.close();
    }
  });
});
