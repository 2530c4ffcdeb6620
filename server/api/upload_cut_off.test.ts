/**
 * Issue 4: an upload cut off half-way. A real server (real TraceLibrary,
 * DuckDB) on a socket; the client promises the whole file in Content-Length,
 * sends half of it and closes the connection (reset, or a clean half-close),
 * raw (multipart is refused before a byte is staged). The partial file must not be ingested or listed, the
 * staged upload must be removed, the server must keep answering, and a retry
 * of the full file must succeed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FIXTURES,
  cutOffUpload,
  listTraces,
  sha256,
  startRealServer,
  tmpEntries,
  traceDirs,
  until,
  uploadFile,
  waitJob,
  type RealServer,
} from '../../tests/support/api/test_server.ts';

const FILE = path.join(FIXTURES, 'reclaim_kswapd.v7.dat');
const bytes = fs.readFileSync(FILE);
const half = bytes.subarray(0, Math.floor(bytes.length / 2));

let s: RealServer;
beforeAll(async () => {
  s = await startRealServer();
});
afterAll(async () => {
  await s?.close();
  if (s) fs.rmSync(s.dataDir, { recursive: true, force: true });
});

/** The server has staged (part of) an upload: it is streaming to <dataDir>/tmp/upload-*. */
const staged = () =>
  until('the staged upload file', () => {
    const f = tmpEntries(s.dataDir).find((n) => n.startsWith('upload-'));
    return f && fs.statSync(path.join(s.dataDir, 'tmp', f)).size > 0 ? f : null;
  });

async function expectNothingAdded() {
  // The partial upload is removed, no job was started, nothing is listed.
  await until('the partial upload to be removed', () => tmpEntries(s.dataDir).length === 0, 5_000);
  const list = await listTraces(s.base);
  expect(list.traces).toEqual([]);
  expect(list.jobs).toEqual([]);
  expect(traceDirs(s.dataDir)).toEqual([]);
}

describe('an upload cut off half-way', () => {
  for (const how of ['destroy', 'end'] as const) {
    it(`raw body, connection ${how === 'destroy' ? 'reset' : 'half-closed'} after half the bytes`, async () => {
      const answer = await cutOffUpload(s.base, {
        head: 'POST /api/traces?name=reclaim.dat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n',
        body: half,
        declared: bytes.length,
        how,
        beforeClose: async () => {
          await staged();
        },
      });
      // Nobody is left to read an answer; if the server still got one out, it is not a success.
      expect(answer).not.toMatch(/^HTTP\/1\.1 2/);
      await expectNothingAdded();
    });
  }

  it('multipart body cut off inside the file part: refused (415) before anything is staged', async () => {
    const boundary = 'CUTOFFBOUNDARY';
    const pre = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="reclaim.dat"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const post = Buffer.from(`\r\n--${boundary}--\r\n`);
    const answer = await cutOffUpload(s.base, {
      head: `POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n`,
      body: Buffer.concat([pre, half]),
      declared: pre.length + bytes.length + post.length,
      how: 'end',
    });
    expect(answer).toMatch(/^HTTP\/1\.1 415/);
    await expectNothingAdded();
  });

  it('keeps working: the retry of the full file is ingested and listed as ready', async () => {
    const r = await uploadFile(s.base, FILE, 'reclaim.dat');
    expect(r.status).toBe(202);
    const job = await waitJob(s.base, r.body.jobId!);
    expect(job.phase).toBe('done');
    expect(job.traceId).toBe(sha256(FILE));
    const list = await listTraces(s.base);
    expect(list.traces.map((t) => [t.id, t.status])).toEqual([[sha256(FILE), 'ready']]);
    expect(tmpEntries(s.dataDir)).toEqual([]);
  });
});
