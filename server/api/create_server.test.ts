/** HTTP API behaviour that needs no trace: uploads, jobs, validation, the app shell, the token. */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApi } from './create_server.ts';
import type { IngestProgress, LibraryLike, TraceRecord } from './library_contract.ts';

const ID = 'a'.repeat(64);

function fakeLibrary(
  root: string,
  behaviour: 'ok' | 'not-a-trace' = 'ok',
  openEngine = (): Promise<never> => Promise.reject(new Error('no engine in this test')),
) {
  const seen: Array<{ path: string; name: string; bytes: string }> = [];
  const rec: TraceRecord = {
    id: ID,
    name: 'x.dat',
    sizeBytes: 5,
    format: 'trace_dat',
    cpus: 2,
    eventsTotal: 10,
    firstTs: '1',
    lastTs: '2',
    findingsBySeverity: { info: 0, warn: 0, critical: 0 },
    addedAt: new Date().toISOString(),
    status: 'ready',
  };
  const lib: LibraryLike = {
    paths: { root, tmp: join(root, 'tmp') },
    list: () => [rec],
    get: (id) => (id === ID ? rec : null),
    async ingest(path, opts: { name: string; onProgress?: (p: IngestProgress) => void }) {
      seen.push({ path, name: opts.name, bytes: readFileSync(path, 'utf8') });
      opts.onProgress?.({ phase: 'decoding', bytesDone: 1, bytesTotal: 5, events: 3 });
      if (behaviour === 'not-a-trace') throw new Error(`${path}: line 1: no ftrace events found`);
      return rec;
    },
    openEngine,
    findings: () => ({ findings: [] }),
  };
  return { lib, seen };
}

const apps: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function setup(
  opts: {
    behaviour?: 'ok' | 'not-a-trace';
    max?: number;
    token?: string;
    appDir?: string;
    openEngine?: () => Promise<never>;
  } = {},
) {
  const root = mkdtempSync(join(tmpdir(), 'stallscope-api-'));
  const { lib, seen } = fakeLibrary(root, opts.behaviour, opts.openEngine);
  const { app } = await buildApi({
    library: lib,
    maxUploadBytes: opts.max,
    token: opts.token,
    appDir: opts.appDir ?? join(root, 'no-app'),
  });
  apps.push(app);
  return { app, seen, root };
}

async function waitJob(app: Awaited<ReturnType<typeof setup>>['app'], jobId: string) {
  for (let i = 0; i < 100; i++) {
    const r = await app.inject({ url: `/api/jobs/${jobId}` });
    const s = r.json() as { phase: string };
    if (s.phase === 'done' || s.phase === 'failed') return s as { phase: string; error?: string; traceId?: string };
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error('job did not finish');
}

describe('uploads', () => {
  it('streams a raw body to a server-named file, whatever the client calls it', async () => {
    const { app, seen, root } = await setup();
    const r = await app.inject({
      method: 'POST',
      url: '/api/traces?name=../../../etc/passwd',
      payload: 'hello',
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(r.statusCode).toBe(202);
    const job = await waitJob(app, r.json().jobId);
    expect(job.phase).toBe('done');
    expect(job.traceId).toBe(ID);
    expect(seen[0]!.name).toBe('passwd');
    expect(seen[0]!.bytes).toBe('hello');
    expect(seen[0]!.path.startsWith(join(root, 'tmp', 'upload-'))).toBe(true);
    expect(readdirSync(join(root, 'tmp'))).toEqual([]); // removed after ingest
  });

  it('refuses multipart and form uploads (any page can post those cross-site): only the raw body the app sends', async () => {
    const { app, seen, root } = await setup();
    const boundary = 'XBOUNDARY';
    const payload = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="my trace.dat"\r\nContent-Type: application/octet-stream\r\n\r\nabc\r\n--${boundary}--\r\n`;
    for (const type of [
      `multipart/form-data; boundary=${boundary}`,
      'application/x-www-form-urlencoded',
      'text/plain',
    ]) {
      const r = await app.inject({ method: 'POST', url: '/api/traces', payload, headers: { 'content-type': type } });
      expect(r.statusCode, type).toBe(415);
      expect(r.json().error, type).toMatch(/application\/octet-stream/);
    }
    expect(seen).toEqual([]);
    expect(existsSync(join(root, 'tmp')) ? readdirSync(join(root, 'tmp')) : []).toEqual([]);
  });

  it('refuses uploads over the cap and empty ones, leaving nothing behind', async () => {
    const { app, root } = await setup({ max: 10 });
    const big = await app.inject({
      method: 'POST',
      url: '/api/traces?name=a',
      payload: 'x'.repeat(11),
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(big.statusCode).toBe(413);
    expect(big.json().error).toMatch(/larger than the limit/);
    const empty = await app.inject({
      method: 'POST',
      url: '/api/traces?name=a',
      payload: '',
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(empty.statusCode).toBe(400);
    expect(readdirSync(join(root, 'tmp'))).toEqual([]);
  });

  it('lists a trace once while its timelines are summarised: the library has it, the job is not shown as an upload', async () => {
    // Summarising needs the trace's engine: it opens (here: fails) only when the test says.
    let letEngineFail!: () => void;
    const engineOpens = new Promise<never>(
      (_res, rej) => (letEngineFail = () => rej(new Error('no engine in this test'))),
    );
    engineOpens.catch(() => undefined); // its consumers handle the failure; this only marks it expected
    const { app } = await setup({ openEngine: () => engineOpens });
    const r = await app.inject({
      method: 'POST',
      url: '/api/traces?name=x.dat',
      payload: 'hello',
      headers: { 'content-type': 'application/octet-stream' },
    });
    const jobId = r.json().jobId as string;
    for (let i = 0; i < 100 && (await app.inject({ url: `/api/jobs/${jobId}` })).json().phase !== 'detecting'; i++)
      await new Promise((res) => setTimeout(res, 10));
    expect((await app.inject({ url: `/api/jobs/${jobId}` })).json()).toMatchObject({ phase: 'detecting', traceId: ID });
    const listing = (await app.inject({ url: '/api/traces' })).json() as {
      traces: { id: string }[];
      jobs: { jobId: string }[];
    };
    expect(listing.traces.map((t) => t.id)).toEqual([ID]);
    expect(listing.jobs.map((j) => j.jobId)).not.toContain(jobId);
    letEngineFail();
    expect((await waitJob(app, jobId)).phase).toBe('done');
  });

  it('reports a failed ingest with the upload name, not the server path', async () => {
    const { app } = await setup({ behaviour: 'not-a-trace' });
    const r = await app.inject({
      method: 'POST',
      url: '/api/traces?name=notes.txt',
      payload: 'hi',
      headers: { 'content-type': 'application/octet-stream' },
    });
    const job = await waitJob(app, r.json().jobId);
    expect(job.phase).toBe('failed');
    expect(job.error).toBe('notes.txt: line 1: no ftrace events found');
  });
});

describe('validation and errors', () => {
  it('answers bad parameters with 4xx JSON errors', async () => {
    const { app } = await setup();
    const cases: Array<[string, number, RegExp]> = [
      ['/api/traces/not-hex', 400, /content hash/],
      [`/api/traces/${'b'.repeat(64)}`, 404, /no trace/],
      [`/api/traces/${ID}/tracks/cpu?cpu=0&t0=5&t1=1`, 400, /t1 must be greater/],
      [`/api/traces/${ID}/tracks/cpu?cpu=0&t0=a&t1=1`, 400, /integer/],
      [`/api/traces/${ID}/tracks/nope?t0=0&t1=1`, 404, /unknown track kind/],
      [`/api/traces/${ID}/events?ids=1,x`, 400, /integers/],
      ['/api/jobs/xyz/events', 400, /malformed job id/],
      ['/api/nothing', 404, /no API route/],
    ];
    for (const [url, status, msg] of cases) {
      const r = await app.inject({ url });
      expect(r.statusCode, url).toBe(status);
      expect(r.json().error, url).toMatch(msg);
    }
  });

  it('serves the app shell for any other path (SPA fallback)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'stallscope-app-'));
    mkdirSync(join(root, 'assets'));
    writeFileSync(join(root, 'index.html'), '<!doctype html><div id="root"></div>');
    writeFileSync(join(root, 'assets', 'a.js'), 'x');
    const { app } = await setup({ appDir: root });
    expect((await app.inject({ url: '/' })).body).toContain('id="root"');
    expect((await app.inject({ url: '/?trace=abc&t0=1' })).body).toContain('id="root"');
    expect((await app.inject({ url: '/some/deep/link' })).body).toContain('id="root"');
    const asset = await app.inject({ url: '/assets/a.js' });
    expect(asset.headers['cache-control']).toContain('immutable');
  });

  it('requires the access token on /api when one is set', async () => {
    const { app } = await setup({ token: 's3cret' });
    expect((await app.inject({ url: '/api/traces' })).statusCode).toBe(401);
    expect((await app.inject({ url: '/api/traces', headers: { 'x-stallscope-token': 'wrong' } })).statusCode).toBe(401);
    expect((await app.inject({ url: '/api/traces', headers: { authorization: 'Bearer s3cret' } })).statusCode).toBe(
      200,
    );
    // ?token= is only read on the app page (it becomes a cookie there), never on the API.
    expect((await app.inject({ url: '/api/traces?token=s3cret' })).statusCode).toBe(401);
  });
});
