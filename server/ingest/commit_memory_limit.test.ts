// The store COMMIT's cap from what the process holds at `finish` (ingest_memory.ts commitMemoryLimit).
import { describe, expect, it } from 'vitest';
import {
  COMMIT_OUTSIDE_POOL_BYTES,
  commitMemoryLimit,
  duckDbSizeBytes,
  INGEST_PEAK_TARGET_BYTES,
} from './ingest_memory.ts';

const MB = 1048576;

describe('commitMemoryLimit', () => {
  it('is derive cap when the process holds little', () => {
    expect(commitMemoryLimit(150 * MB, '40MB', '128MB', 32 * MB)).toBe('128MB');
  });

  it('is the load cap plus what is left of the target', () => {
    // 350 - 260 - 32 - 16 = 42 MB of room over the load's 40MB.
    const resident = 260 * MB;
    const room = INGEST_PEAK_TARGET_BYTES - resident - 32 * MB - COMMIT_OUTSIDE_POOL_BYTES;
    expect(room).toBe(42 * MB);
    expect(commitMemoryLimit(resident, '40MB', '128MB', 32 * MB)).toBe('82MB');
    // Without kept pages the room grows by their bound.
    expect(commitMemoryLimit(resident, '40MB', '128MB', 0)).toBe('114MB');
  });

  it('never goes below the load cap', () => {
    // The block-heavy 2.2M-event trace.dat held ~310 MB at finish.
    expect(commitMemoryLimit(330 * MB, '40MB', '128MB', 32 * MB)).toBe('40MB');
    expect(commitMemoryLimit(400 * MB, '24MB', '96MB', 0)).toBe('24MB');
  });

  it('reads the sizes this module writes', () => {
    expect(duckDbSizeBytes('40MB')).toBe(40 * MB);
    expect(duckDbSizeBytes('1GB')).toBe(1024 * MB);
    expect(duckDbSizeBytes('lots')).toBeNull();
    // A size it cannot read leaves derive's cap as it was.
    expect(commitMemoryLimit(330 * MB, 'lots', '128MB', 0)).toBe('128MB');
  });
});
