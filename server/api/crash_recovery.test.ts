/**
 * Issue 27, hole 8: job recovery reads what was committed. A server killed
 * (SIGKILL) after the upload's model was complete, while its findings and
 * timelines were being summarised ('detecting'), used to come back listing
 * the trace as ready and, for the same upload, a failed job saying nothing
 * was added. Real `stallscope serve` processes, killed by their PID.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import {
  FIXTURES,
  followJobEvents,
  freePort,
  listTraces,
  sha256,
  spawnedServers,
  uploadFile,
} from '../../tests/support/api/test_server.ts';

const FILE = path.join(FIXTURES, 'fsync_xfs.full.v7.dat');
const ID = sha256(FILE);

const servers = spawnedServers('stallscope-crash-');

it('killed while detecting (the model committed): after a restart the job is done and the trace ready, nothing reported failed', async () => {
  const dataDir = servers.dataDir();
  const port = await freePort();
  const first = await servers.spawn(dataDir, port);
  const up = await uploadFile(first.base, FILE, 'fsync.dat');
  expect(up.status).toBe(202);
  const jobId = up.body.jobId!;
  let killed = false;
  const follow = followJobEvents(first.base, jobId, (st) => {
    if (!killed && st.phase === 'detecting') {
      killed = true;
      process.kill(first.pid, 'SIGKILL');
    }
  });
  await follow.ended;
  await first.exited;
  expect(killed, `phases seen: ${follow.phases.join(',')}`).toBe(true);
  // It died mid-job: the job record on disk still says so, and the model is complete.
  const record = JSON.parse(fs.readFileSync(path.join(dataDir, 'jobs', `${jobId}.json`), 'utf8')) as {
    state: { phase: string };
  };
  expect(record.state.phase).toBe('detecting');
  expect(fs.existsSync(path.join(dataDir, 'traces', ID, 'info.json'))).toBe(true);

  const second = await servers.spawn(dataDir, port);
  const job = (await (await fetch(`${second.base}/api/jobs/${jobId}`)).json()) as {
    phase: string;
    traceId?: string;
    error?: string;
    interrupted?: boolean;
  };
  expect(job.phase).toBe('done');
  expect(job.traceId).toBe(ID);
  expect(job.error).toBeUndefined();
  expect(job.interrupted).toBeUndefined();
  const again = followJobEvents(second.base, jobId);
  expect((await again.ended)?.phase).toBe('done');
  const list = await listTraces(second.base);
  expect(list.traces.map((t) => [t.id, t.status])).toEqual([[ID, 'ready']]);
  expect(list.jobs.filter((j) => j.phase === 'failed')).toEqual([]);
  expect((await fetch(`${second.base}/api/traces/${ID}/findings`)).status).toBe(200);
}, 150_000);
