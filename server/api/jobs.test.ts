/** Job records kept across restarts (jobs.ts): what a new server makes of what an old one left. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Jobs } from './jobs.ts';

/** A pid that is not running (the highest possible pid is taken to be free). */
const DEAD_PID = 4_194_303;

function leftBehind(dir: string, rec: { state: Record<string, unknown>; pid: number; finishedAt?: number }) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${rec.state.jobId}.json`), JSON.stringify(rec));
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-jobs-'));
  dirs.push(d);
  return d;
};

const base = {
  name: 'big.dat',
  bytesDone: 10,
  bytesTotal: 100,
  events: 5,
  startedAt: new Date().toISOString(),
  sizeBytes: 100,
};

describe('jobs across a restart', () => {
  it('a job whose process died mid-ingest comes back failed, saying so; live and finished ones are left as they are', () => {
    const dir = tempDir();
    const dead = '11111111-1111-1111-1111-111111111111';
    const live = '22222222-2222-2222-2222-222222222222';
    const done = '33333333-3333-3333-3333-333333333333';
    const old = '44444444-4444-4444-4444-444444444444';
    leftBehind(dir, { state: { ...base, jobId: dead, phase: 'deriving' }, pid: DEAD_PID });
    leftBehind(dir, { state: { ...base, jobId: live, phase: 'decoding' }, pid: process.pid });
    leftBehind(dir, {
      state: { ...base, jobId: done, phase: 'done', traceId: 'a'.repeat(64) },
      pid: DEAD_PID,
      finishedAt: Date.now() - 1000,
    });
    leftBehind(dir, {
      state: { ...base, jobId: old, phase: 'done' },
      pid: DEAD_PID,
      finishedAt: Date.now() - 2 * 3600_000,
    });

    const jobs = new Jobs(dir);
    const d = jobs.get(dead)!;
    expect(d.phase).toBe('failed');
    expect(d.interrupted).toBe(true);
    expect(d.error).toBe(
      'big.dat: the server stopped (while deriving) before the ingest finished (it was restarted or crashed); nothing was added to the library. Upload the file again.',
    );
    expect(jobs.get(live)).toBeUndefined(); // still running elsewhere: not judged
    expect(jobs.get(done)?.phase).toBe('done');
    expect(jobs.get(old)).toBeUndefined();
    expect(fs.existsSync(path.join(dir, `${old}.json`))).toBe(false);
    expect(jobs.interrupted().map((j) => j.jobId)).toEqual([dead]);

    // Another restart reports the same (the verdict was written back).
    expect(new Jobs(dir).get(dead)?.error).toBe(d.error);

    // A successful upload of the same file (name and size) clears the notice.
    jobs.forgetInterrupted('big.dat', 100);
    expect(jobs.interrupted()).toEqual([]);
    expect(new Jobs(dir).get(dead)).toBeUndefined();
  });

  it('stopping the server fails running jobs with why, and their feeds get the final state', () => {
    const dir = tempDir();
    const jobs = new Jobs(dir);
    const j = jobs.create('t.dat', 10);
    jobs.update(j.jobId, { phase: 'decoding' });
    const seen: string[] = [];
    jobs.subscribe(j.jobId, (s) => seen.push(`${s.phase}: ${s.error ?? ''}`));
    jobs.stopAll();
    expect(seen).toEqual([
      'failed: t.dat: the server was stopped (while decoding) before the ingest finished; nothing was added to the library. Upload the file again.',
    ]);
    expect(new Jobs(dir).get(j.jobId)?.phase).toBe('failed');
  });
});
