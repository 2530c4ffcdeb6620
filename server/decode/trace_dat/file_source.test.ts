import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileSource } from './file_source.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-file-source-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('FileSource.read into a reused buffer', () => {
  // Bytes 0..255 repeated: every offset's byte is offset % 256.
  const file = path.join(dir, 'ramp.bin');
  fs.writeFileSync(
    file,
    Uint8Array.from({ length: 10_000 }, (_, i) => i % 256),
  );
  const expected = (offset: number, len: number) => Array.from({ length: len }, (_, i) => (offset + i) % 256);
  /** Runs `use` on the file opened as a FileSource, closed afterwards whatever happens. */
  const withSource = async (use: (src: FileSource) => Promise<void>) => {
    const src = await FileSource.open(file);
    try {
      await use(src);
    } finally {
      await src.close();
    }
  };

  it('reads each window into the buffer given, as a new view per read', () =>
    withSource(async (src) => {
      const store = Buffer.alloc(4096);
      const a = await src.read(100, 4096, 'test', store);
      expect([...a]).toEqual(expected(100, 4096));
      expect(a.buffer).toBe(store.buffer);
      const b = await src.read(9_000, 1_000, 'test', store);
      expect([...b]).toEqual(expected(9_000, 1_000));
      expect(b.buffer).toBe(store.buffer);
      // A new object per read: code that recognises a window by identity sees a new one.
      expect(b).not.toBe(a);
    }));

  it('reads into a fresh buffer when the one given is too small, leaving it untouched', () =>
    withSource(async (src) => {
      const store = Buffer.alloc(16);
      const a = await src.read(5_000, 32, 'test', store);
      expect([...a]).toEqual(expected(5_000, 32));
      expect(a.buffer).not.toBe(store.buffer);
      expect([...store]).toEqual(new Array(16).fill(0));
    }));
});
