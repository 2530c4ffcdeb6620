// A trace's id is the sha256 of its bytes whichever way it is computed: on
// the caller's thread (small files) or on a thread of its own (larger ones).
// Expected values from coreutils' sha256sum, not from node's crypto.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HASH_THREAD_MIN_BYTES, hashFile, hashFileInBackground, hashFileOnThread } from './content_hash.ts';

const SMALL = path.resolve(__dirname, '../../fixtures/perfetto_reclaim.pftrace');
const LARGE = path.resolve(__dirname, '../../fixtures/corpus/sched_wq.v7.dat');
const sha256sum = (f: string) => execFileSync('sha256sum', [f], { encoding: 'utf8' }).split(' ')[0]!;

describe('content hash', () => {
  it('the fixtures fall on both sides of the thread threshold', () => {
    expect(fs.statSync(SMALL).size).toBeLessThan(HASH_THREAD_MIN_BYTES);
    expect(fs.statSync(LARGE).size).toBeGreaterThanOrEqual(HASH_THREAD_MIN_BYTES);
  });

  for (const file of [SMALL, LARGE]) {
    it(`${path.basename(file)}: every way gives sha256sum's hash`, async () => {
      const want = sha256sum(file);
      const background = hashFileInBackground(file, fs.statSync(file).size);
      expect(await background.sha256).toBe(want);
      expect(background.seconds()).toBeGreaterThanOrEqual(0);
      expect(await hashFileOnThread(file).sha256).toBe(want);
      expect(await hashFile(file)).toBe(want);
    });
  }

  it('a file that cannot be read rejects, on either side of the threshold', async () => {
    const missing = path.join(path.dirname(SMALL), 'no_such_trace.pftrace');
    await expect(hashFileInBackground(missing, 1).sha256).rejects.toThrow(/ENOENT/);
    await expect(hashFileInBackground(missing, HASH_THREAD_MIN_BYTES).sha256).rejects.toThrow(/ENOENT/);
  });
});
