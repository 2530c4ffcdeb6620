/**
 * Issue 4: the server stops in the middle of an ingest (killed like a crash,
 * or stopped with SIGTERM like a restart), then starts again on the same data
 * directory. The half-built trace is never listed as complete, the staged
 * upload and the work directory are removed at start, the job answers
 * "failed" with what happened, the library lists the upload as failed, and
 * uploading the file again works. Real `stallscope serve` processes, killed
 * by their PID.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  FIXTURES,
  followJobEvents,
  freePort,
  listTraces,
  sha256,
  spawnedServers,
  tmpEntries,
  traceDirs,
  until,
  uploadFile,
  waitJob,
} from '../../tests/support/api/test_server.ts';

// 148k events: ingest takes seconds, so "mid-ingest" is easy to hit.
const FILE = path.join(FIXTURES, 'fsync_xfs.full.v7.dat');
const ID = sha256(FILE);

const servers = spawnedServers('stallscope-restart-');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
  describe(`server stopped during ingest (${signal})`, () => {
    it('lists nothing half-built, cleans up, reports the job as failed, and accepts the file again', async () => {
      const dataDir = servers.dataDir();
      const port = await freePort();
      const first = await servers.spawn(dataDir, port);

      const up = await uploadFile(first.base, FILE, 'fsync.dat');
      expect(up.status).toBe(202);
      const jobId = up.body.jobId!;
      // Stop it while it decodes (the model is half-written in its work directory).
      let killed = false;
      const follow = followJobEvents(first.base, jobId, (st) => {
        if (!killed && (st.phase === 'decoding' || st.phase === 'deriving')) {
          killed = true;
          process.kill(first.pid, signal);
        }
      });
      await follow.ended;
      expect(killed, `phases seen: ${follow.phases.join(',')}`).toBe(true);
      await first.exited;
      expect(alive(first.pid)).toBe(false);
      expect(follow.phases).not.toContain('done');
      // A clean stop tells the feed why it ends; a crash cannot.
      if (signal === 'SIGTERM') expect((await follow.ended)?.error).toMatch(/^fsync\.dat: the server was stopped/);
      // It really was cut mid-way: no complete trace; leftovers in tmp (for SIGKILL at least).
      expect(fs.existsSync(path.join(dataDir, 'traces', ID, 'info.json'))).toBe(false);
      if (signal === 'SIGKILL') expect(tmpEntries(dataDir).length).toBeGreaterThan(0);

      const second = await servers.spawn(dataDir, port);
      expect(tmpEntries(dataDir)).toEqual([]); // staged upload and work dir removed at start
      expect(traceDirs(dataDir)).toEqual([]);

      const job = (await (await fetch(`${second.base}/api/jobs/${jobId}`)).json()) as {
        phase: string;
        error: string;
        interrupted: boolean;
      };
      expect(job.phase).toBe('failed');
      expect(job.interrupted).toBe(true);
      expect(job.error).toMatch(
        /^fsync\.dat: the server (was )?stopped \(while (decoding|deriving)\) before the ingest finished/,
      );
      expect(job.error).toMatch(/nothing was added to the library/);
      // The SSE feed ends at once with the same outcome.
      const again = followJobEvents(second.base, jobId);
      expect((await again.ended)?.phase).toBe('failed');

      const list = await listTraces(second.base);
      expect(list.traces.filter((t) => t.status === 'ready')).toEqual([]);
      expect(
        list.traces
          .filter((t) => t.status === 'failed')
          .map((t) => [t.name, /server (was )?stopped/.test(t.error ?? '')]),
      ).toEqual([['fsync.dat', true]]);

      // Upload again: ingested and listed as ready.
      const retry = await uploadFile(second.base, FILE, 'fsync.dat');
      const done = await waitJob(second.base, retry.body.jobId!);
      expect(done.phase).toBe('done');
      expect(done.traceId).toBe(ID);
      await until('the trace to be listed ready', async () =>
        (await listTraces(second.base)).traces.some((t) => t.id === ID && t.status === 'ready'),
      );
      // ...and the failed attempt is no longer listed next to it.
      expect((await listTraces(second.base)).traces.map((t) => t.status)).toEqual(['ready']);
      expect(tmpEntries(dataDir)).toEqual([]);
    }, 150_000);
  });
}
