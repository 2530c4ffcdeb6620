/**
 * Issue 27, holes 1-3: who may reach the API, on a real server and real
 * sockets (requests are sent byte for byte as written: no client-side URL
 * normalisation).
 *
 * 1. The token is decided on the route the router matched: every API route
 *    (taken from the server itself, so routes added later are covered too)
 *    under every spelling of its path (percent-encoding, double encoding,
 *    case, duplicate slashes, dot segments, trailing dots) is refused without
 *    the token, and never answers with trace data.
 * 2. Cross-site: a state-changing or API request from another origin (Origin,
 *    Sec-Fetch-Site) is refused; uploads accept only application/octet-stream.
 * 3. Host allow-list (DNS rebinding), and links written with the server's
 *    public URL, never the request's Host.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { apiRoutes } from './access.ts';
import { registerFleets } from '../fleet/registry.ts';
import {
  FIXTURES,
  rawRequest,
  sha256,
  startRealServer,
  tmpEntries,
  until,
  type RealServer,
} from '../../tests/support/api/test_server.ts';

const TOKEN = 'tok-3c9f8e21a7';
const FILE = path.join(FIXTURES, 'reclaim_kswapd.v7.dat');
const TRACE = sha256(FILE);
const NOTE_TEXT = 'SECRET-NOTE-7d1e';
const INDEX_HTML = '<!doctype html><title>stallscope</title><div id="root" data-marker="app-shell"></div>';

let s: RealServer;
let noteId = '';
let jobId = '';
/** A finding of the trace (findings are addressed by their stable id, not a position). */
let findingId = 0;
const auth = { authorization: `Bearer ${TOKEN}` };

beforeAll(async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-access-'));
  const appDir = path.join(dataDir, 'app');
  fs.mkdirSync(appDir);
  fs.writeFileSync(path.join(appDir, 'index.html'), INDEX_HTML);
  // A fleet dataset (serve --fleet): its answers name the trace's file, so a leak shows.
  const fleetDir = path.join(dataDir, 'fleet-ds');
  fs.writeFileSync(path.join(dataDir, 'labels.csv'), 'file,host\nreclaim_kswapd.v7.dat,vm\nsyscalls.v7.dat,laptop\n');
  const b = spawnSync(
    process.execPath,
    [
      fileURLToPath(new URL('../../bin/stallscope.mjs', import.meta.url)),
      '--data-dir',
      path.join(dataDir, 'batch-data'),
      'batch',
      FILE,
      path.join(FIXTURES, 'syscalls.v7.dat'),
      '--out',
      fleetDir,
      '--labels',
      path.join(dataDir, 'labels.csv'),
    ],
    { encoding: 'utf8' },
  );
  expect(b.status, b.stderr).toBe(0);
  s = await startRealServer(dataDir, {
    token: TOKEN,
    appDir,
    allowHosts: ['stalls.team.example'],
    fleets: await registerFleets([fleetDir]),
  });
  // A trace (through an upload, so there is a finished job for the progress stream) and a note.
  const up = await rawRequest(
    s.base,
    'POST',
    '/api/traces?name=reclaim_kswapd.v7.dat',
    { ...auth, 'content-type': 'application/octet-stream' },
    fs.readFileSync(FILE),
  );
  expect(up.status).toBe(202);
  jobId = JSON.parse(up.body).jobId;
  await until(
    'the upload to be ingested',
    async () => {
      const j = JSON.parse((await rawRequest(s.base, 'GET', `/api/jobs/${jobId}`, auth)).body);
      if (j.phase === 'failed') throw new Error(j.error);
      return j.phase === 'done';
    },
    120_000,
  );
  findingId = JSON.parse((await rawRequest(s.base, 'GET', `/api/traces/${TRACE}/findings`, auth)).body).findings[0].id;
  const n = await rawRequest(
    s.base,
    'POST',
    `/api/traces/${TRACE}/notes`,
    { ...auth, 'content-type': 'application/json' },
    JSON.stringify({ anchor: { kind: 'finding', finding: findingId }, text: NOTE_TEXT, author: 'alice' }),
  );
  expect(n.status).toBe(201);
  noteId = JSON.parse(n.body).id;
}, 180_000);

afterAll(async () => {
  await s?.close();
  if (s) fs.rmSync(s.dataDir, { recursive: true, force: true });
});

/** A concrete URL (and body) for a route pattern. */
function concrete(method: string, pattern: string): { target: string; body?: string; type?: string } {
  const fill: Record<string, string> = {
    id: pattern.startsWith('/api/jobs') ? jobId : TRACE,
    noteId,
    eventId: '1',
    rowId: '0',
    table: 'sched_slice',
    kind: 'cpu',
    fid: String(findingId),
    name: 'fleet-ds',
  };
  const p = pattern.replace(/:(\w+)/g, (_m, k: string) => fill[k] ?? 'x');
  const q: Record<string, string> = {
    '/api/traces/:id/tracks/:kind': '?cpu=0&t0=0&t1=1000000000&px=100',
    '/api/traces/:id/events': '?ids=1,2',
    '/api/traces/:id/excerpt': `?sel=finding:${findingId}`,
    '/api/traces/:id/notes/:noteId': method === 'DELETE' ? '?version=99' : '',
    '/api/traces/:id/event_list': '?t0=0&t1=1000000000',
    '/api/traces/:id/event_list/position': '?t0=0&t1=1000000000&ts=0',
    '/api/traces/:id/search': '?q=kswapd',
    '/api/traces/:id/search/matches': '?kind=event&name=sched_switch',
    '/api/traces/:id/range': '?t0=0&t1=1000000000',
    '/api/compare': `?sides=${TRACE},${TRACE}`,
  };
  if (method === 'POST' && pattern === '/api/traces')
    return { target: `${p}?name=evil.dat`, body: 'not a trace at all\n', type: 'application/octet-stream' };
  if (method === 'POST' || method === 'PATCH' || method === 'PUT') {
    return {
      target: p + (q[pattern] ?? ''),
      body: JSON.stringify({
        anchor: { kind: 'range', t0: 0, t1: 10 },
        text: 'planted',
        author: 'mallory',
        version: 99,
      }),
      type: 'application/json',
    };
  }
  return { target: p + (q[pattern] ?? '') };
}

/** Every spelling of a path that a router, a proxy or a file system might read as the same path. */
function spellings(p: string): string[] {
  const rest = p.slice('/api'.length); // "/traces/..."
  const [first = '', ...more] = rest.slice(1).split('/');
  const tail = more.length ? `/${more.join('/')}` : '';
  const out = [
    `/API${rest}`,
    `/Api${rest}`,
    `/aPI${rest}`,
    `/api/${first.toUpperCase()}${tail}`,
    `/%61pi${rest}`,
    `/ap%69${rest}`,
    `/a%70i${rest}`,
    `/%61%70%69${rest}`,
    `/%41PI${rest}`,
    `/%61%50%49${rest}`,
    `/api/%${first.charCodeAt(0).toString(16)}${first.slice(1)}${tail}`,
    `/%2561pi${rest}`,
    `/ap%2569${rest}`,
    `/%252561pi${rest}`,
    `//api${rest}`,
    `///api${rest}`,
    `/api/${rest}`,
    `/api${rest.replace(/\//g, '//')}`,
    `/./api${rest}`,
    `/api/.${rest}`,
    `/x/../api${rest}`,
    `/api/x/..${rest}`,
    `/%2e/api${rest}`,
    `/x/%2e%2e/api${rest}`,
    `/x/%2E%2E/api${rest}`,
    `/api.${rest}`,
    `/api..${rest}`,
    `${p}.`,
    `${p}..`,
    `${p}/`,
    `${p}//`,
    `${p};x`,
    `${p}%20`,
    `${p}%00`,
    `/api%2F${rest.slice(1)}`,
    `/api%2f${rest.slice(1)}`,
    `/api%5C${rest.slice(1)}`,
    `/api\\${rest.slice(1)}`,
    `/%EF%BD%81pi${rest}`,
    `/api%09${rest}`,
  ];
  return [...new Set(out)];
}

/** An answer that gives nothing away: refused, unknown, or the public app page. */
function givesNothing(a: { status: number; headers: Record<string, unknown>; body: string }, method: string): boolean {
  if (a.body.includes(NOTE_TEXT) || a.body.includes('reclaim_kswapd') || a.body.includes('"phase"')) return false;
  if (a.status >= 200 && a.status < 300)
    return method === 'HEAD' ? /^text\/html/.test(String(a.headers['content-type'])) : a.body === INDEX_HTML;
  return a.status >= 400;
}

describe('the access token, decided on the matched route', () => {
  it('covers every API route the server registers', () => {
    const routes = apiRoutes(s.server.app).map((r) => `${r.method} ${r.url}`);
    // The routes this test knew when it was written: all still there, and checked below with the rest.
    for (const r of [
      'GET /api/traces',
      'POST /api/traces',
      'GET /api/traces/:id',
      'GET /api/jobs/:id',
      'GET /api/jobs/:id/events',
      'GET /api/traces/:id/findings',
      'GET /api/traces/:id/tracks',
      'GET /api/traces/:id/tracks/:kind',
      'GET /api/traces/:id/events',
      'GET /api/traces/:id/notes',
      'POST /api/traces/:id/notes',
      'PATCH /api/traces/:id/notes/:noteId',
      'DELETE /api/traces/:id/notes/:noteId',
      'GET /api/traces/:id/export.md',
      'GET /api/traces/:id/export.json',
      'GET /api/traces/:id/excerpt',
      'GET /api/fleet',
      'GET /api/fleet/:name',
    ]) {
      expect(routes).toContain(r);
    }
  });

  it('with the token, each route answers (so the refusals below are about the token)', async () => {
    for (const { method, url } of apiRoutes(s.server.app)) {
      if (method === 'DELETE' || method === 'POST' || method === 'PATCH') continue; // writes: checked in the other tests
      const c = concrete(method, url);
      const a = await rawRequest(s.base, method, c.target, auth);
      expect(a.status, `${method} ${c.target}`).toBeLessThan(300);
    }
  });

  it('refuses every spelling of every API route without the token', async () => {
    const bad: string[] = [];
    let tried = 0;
    const routes = apiRoutes(s.server.app);
    // fastify answers HEAD for every GET route too.
    for (const { method, url } of [
      ...routes,
      ...routes.filter((r) => r.method === 'GET').map((r) => ({ ...r, method: 'HEAD' })),
    ]) {
      const c = concrete(method, url);
      const [pathPart, query = ''] = c.target.split(/\?(.*)/s);
      for (const sp of [pathPart!, ...spellings(pathPart!)]) {
        const target = query ? `${sp}?${query}` : sp;
        const headers: Record<string, string> = c.type ? { 'content-type': c.type } : {};
        const withQueryToken = `${target}${target.includes('?') ? '&' : '?'}token=${TOKEN}`;
        for (const t of [target, withQueryToken]) {
          for (const extra of [
            {},
            { 'x-stallscope-token': 'wrong' },
            { cookie: `stallscope_token_${new URL(s.base).port}=wrong` },
          ] as Array<Record<string, string>>) {
            let a;
            try {
              a = await rawRequest(s.base, method, t, { ...headers, ...extra }, c.body);
            } catch {
              continue; // the server closed the connection: nothing given away
            }
            tried++;
            if (!givesNothing(a, method)) bad.push(`${method} ${t} -> ${a.status} ${a.body.slice(0, 80)}`);
          }
        }
      }
    }
    expect(tried).toBeGreaterThan(500);
    expect(bad).toEqual([]);
    // Nothing was written by any of them: no upload job, no planted note, the note still there.
    const list = JSON.parse((await rawRequest(s.base, 'GET', '/api/traces', auth)).body);
    expect(list.jobs.filter((j: { name: string }) => j.name === 'evil.dat')).toEqual([]);
    const notes = JSON.parse((await rawRequest(s.base, 'GET', `/api/traces/${TRACE}/notes`, auth)).body).notes;
    expect(notes.map((n: { text: string }) => n.text)).toEqual([NOTE_TEXT]);
    expect(tmpEntries(s.dataDir).filter((n) => n.startsWith('upload-'))).toEqual([]);
  }, 120_000);

  it('exchanges ?token= on the app page for an HttpOnly SameSite=Strict cookie; the API never reads ?token=', async () => {
    const page = await rawRequest(s.base, 'GET', `/?trace=${TRACE}&token=${TOKEN}`);
    expect(page.status).toBe(200);
    expect(page.body).toBe(INDEX_HTML);
    const setCookie = String(page.headers['set-cookie']);
    const port = new URL(s.base).port;
    expect(setCookie).toMatch(new RegExp(`^stallscope_token_${port}=${TOKEN}; `));
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    const cookie = setCookie.split(';')[0]!;
    expect((await rawRequest(s.base, 'GET', '/api/traces', { cookie })).status).toBe(200);
    expect((await rawRequest(s.base, 'GET', `/api/jobs/${jobId}/events`, { cookie })).body).toMatch(/event: progress/);
    expect((await rawRequest(s.base, 'GET', `/api/traces?token=${TOKEN}`)).status).toBe(401);
    expect((await rawRequest(s.base, 'GET', '/?token=wrong')).headers['set-cookie']).toBeUndefined();
  });
});

describe('requests from other sites', () => {
  const note = JSON.stringify({ anchor: { kind: 'range', t0: 0, t1: 10 }, text: 'cross-site', author: 'mallory' });
  const json = { ...auth, 'content-type': 'application/json' };

  it('refuses state changes whose Origin or Sec-Fetch-Site is not this server, accepts its own and curl', async () => {
    const target = `/api/traces/${TRACE}/notes`;
    const own = new URL(s.base).host;
    for (const h of [
      { origin: 'http://evil.example' } as Record<string, string>,
      { origin: `http://localhost:${Number(new URL(s.base).port) + 1}` },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: `http://${own}`, 'sec-fetch-site': 'same-site' },
    ]) {
      const a = await rawRequest(s.base, 'POST', target, { ...json, ...h }, note);
      expect(a.status, JSON.stringify(h)).toBe(403);
    }
    expect(
      (
        await rawRequest(
          s.base,
          'POST',
          target,
          { ...json, origin: `http://${own}`, 'sec-fetch-site': 'same-origin' },
          note,
        )
      ).status,
    ).toBe(201);
    expect((await rawRequest(s.base, 'POST', target, json, note)).status).toBe(201); // curl: neither header
    const texts = JSON.parse((await rawRequest(s.base, 'GET', target, auth)).body).notes.map(
      (n: { text: string }) => n.text,
    );
    expect(texts.filter((t: string) => t === 'cross-site')).toHaveLength(2);
  });

  it('refuses API reads a page on another site (or another port) makes', async () => {
    for (const site of ['cross-site', 'same-site']) {
      expect((await rawRequest(s.base, 'GET', '/api/traces', { ...auth, 'sec-fetch-site': site })).status).toBe(403);
    }
    expect((await rawRequest(s.base, 'GET', '/api/traces', { ...auth, 'sec-fetch-site': 'same-origin' })).status).toBe(
      200,
    );
    // The app page itself may be opened from anywhere (a share link in a mail).
    expect((await rawRequest(s.base, 'GET', `/?trace=${TRACE}`, { 'sec-fetch-site': 'cross-site' })).status).toBe(200);
  });

  it('uploads accept only application/octet-stream: form, multipart and text bodies (no preflight) are refused', async () => {
    for (const type of [
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'text/plain',
      undefined,
    ]) {
      const headers: Record<string, string> = { ...auth };
      if (type) headers['content-type'] = type;
      const a = await rawRequest(
        s.base,
        'POST',
        '/api/traces?name=form.dat',
        headers,
        '--x\r\nContent-Disposition: form-data; name="f"; filename="a"\r\n\r\nhello\r\n--x--\r\n',
      );
      expect(a.status, String(type)).toBe(415);
    }
  });
});

describe('Host names (DNS rebinding) and the links the server writes', () => {
  it('answers only to its own names', async () => {
    const port = new URL(s.base).port;
    for (const host of [
      `attacker.example:${port}`,
      'attacker.example',
      `127.0.0.1.attacker.example:${port}`,
      `localhost.attacker.example:${port}`,
      `[::2]:${port}`,
      `evil_host:${port}`,
      `10.1.2.3:${port}`,
    ]) {
      const a = await rawRequest(s.base, 'GET', '/api/traces', { ...auth, host });
      expect(a.status, host).toBe(421);
      expect(a.body).not.toContain('reclaim_kswapd');
      // The app page too, and writes.
      expect((await rawRequest(s.base, 'GET', '/', { host })).status, host).toBe(421);
      expect(
        (
          await rawRequest(
            s.base,
            'POST',
            `/api/traces/${TRACE}/notes`,
            { ...auth, host, 'content-type': 'application/json' },
            '{}',
          )
        ).status,
        host,
      ).toBe(421);
    }
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `localhost.:${port}`,
      `app.localhost:${port}`,
      `127.1.2.3:${port}`,
      'stalls.team.example',
      `stalls.team.example:${port}`,
    ]) {
      expect((await rawRequest(s.base, 'GET', '/api/traces', { ...auth, host })).status, host).toBe(200);
    }
  });

  it('writes excerpt and export links with the bound address, whatever Host the request came with', async () => {
    const port = new URL(s.base).port;
    for (const host of [`stalls.team.example:${port}`, `localhost:${port}`]) {
      const ex = await rawRequest(s.base, 'GET', `/api/traces/${TRACE}/excerpt?sel=finding:${findingId}`, {
        ...auth,
        host,
      });
      expect(ex.status).toBe(200);
      expect(ex.body).toMatch(new RegExp(`^Link: http://127\\.0\\.0\\.1:${port}/\\?trace=${TRACE}&`, 'm'));
      const md = await rawRequest(s.base, 'GET', `/api/traces/${TRACE}/export.md`, { ...auth, host });
      expect(md.body).toContain(`<http://127.0.0.1:${port}/?trace=${TRACE}>`);
      expect(md.body).not.toContain('stalls.team.example');
      expect(md.body).not.toContain('localhost');
      const js = await rawRequest(s.base, 'GET', `/api/traces/${TRACE}/export.json`, { ...auth, host });
      expect(JSON.parse(js.body).link).toBe(`http://127.0.0.1:${port}/?trace=${TRACE}`);
    }
  });
});

describe('framing and content policy', () => {
  it('every answer forbids framing and sets a content security policy', async () => {
    for (const target of ['/', `/?trace=${TRACE}`, '/api/traces', '/api/nothing']) {
      const a = await rawRequest(s.base, 'GET', target, auth);
      expect(a.headers['content-security-policy'], target).toMatch(/frame-ancestors 'none'/);
      expect(a.headers['content-security-policy'], target).toMatch(/script-src 'self'/);
      expect(a.headers['x-frame-options'], target).toBe('DENY');
      expect(a.headers['x-content-type-options'], target).toBe('nosniff');
    }
  });
});

describe('stalled clients', () => {
  it('closes a connection whose headers or upload body stop arriving, and removes the partial upload', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-stall-'));
    const t = await startRealServer(dataDir, { bodyIdleTimeoutMs: 500, headersTimeoutMs: 600 });
    try {
      const u = new URL(t.base);
      const hang = (first: string) =>
        new Promise<{ closedAfterMs: number; answer: string }>((resolve) => {
          const sock = net.connect(Number(u.port), u.hostname);
          const t0 = Date.now();
          let answer = '';
          sock.on('data', (d) => {
            answer += d;
          });
          sock.on('error', () => undefined);
          sock.on('close', () => resolve({ closedAfterMs: Date.now() - t0, answer }));
          sock.write(first);
          setTimeout(() => sock.destroy(), 15_000).unref(); // the test's own limit
        });
      const headers = await hang(`GET /api/traces HTTP/1.1\r\nHost: ${u.host}\r\nX-Slow: `);
      expect(headers.closedAfterMs).toBeLessThan(10_000);
      const body = await hang(
        `POST /api/traces?name=slow.dat HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n${'x'.repeat(1000)}`,
      );
      expect(body.closedAfterMs).toBeLessThan(10_000);
      expect(body.answer).not.toMatch(/^HTTP\/1\.1 2/);
      await until('the partial upload to be removed', () => tmpEntries(dataDir).length === 0, 5_000);
    } finally {
      await t.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
