/**
 * The notes, excerpt and export routes through fastify.inject, on a real
 * library with a real (small, handmade) trace ingested into a temp data dir.
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApi, type ServerOptions } from '../api/create_server.ts';
import { TraceLibrary } from '../ingest/library.ts';
import { decodeLinkFragment, type LinkPayload } from '../../shared/links/link_codec.ts';

const FIXTURE = resolve('fixtures/handmade/kernel4x_kswapd_escalation.txt');

let dataDir: string;
let library: TraceLibrary;
let traceId: string;
const apps: FastifyInstance[] = [];

async function api(opts: Partial<ServerOptions> = {}): Promise<FastifyInstance> {
  const { app } = await buildApi({ library, appDir: join(dataDir, 'no-app'), ...opts });
  apps.push(app);
  return app;
}

const json = { 'content-type': 'application/json' };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'stallscope-notes-api-'));
  library = await TraceLibrary.open(dataDir);
  traceId = (await library.ingest(FIXTURE, { name: 'kernel4x_kswapd_escalation.txt' })).id;
}, 120_000);

afterAll(async () => {
  for (const a of apps) await a.close();
  await library.close();
});

describe('notes API', () => {
  it('creates, lists, edits and deletes notes, resolving finding and event anchors from the trace', async () => {
    const app = await api();
    const findings = (await app.inject({ url: `/api/traces/${traceId}/findings` })).json().findings as Array<{
      index: number;
      ts: number;
      dur: number;
      event_ids: number[];
    }>;
    expect(findings.length).toBeGreaterThan(0);
    const f = findings[0]!;
    const r = await app.inject({
      method: 'POST',
      url: `/api/traces/${traceId}/notes`,
      headers: json,
      payload: {
        anchor: { kind: 'finding', finding: f.index },
        text: 'This is the **stall** we saw on prod',
        author: 'alice',
      },
    });
    expect(r.statusCode).toBe(201);
    const note = r.json();
    expect(note.anchor).toMatchObject({ kind: 'finding', finding: f.index, t0: f.ts, t1: f.ts + f.dur });

    const ev = await app.inject({
      method: 'POST',
      url: `/api/traces/${traceId}/notes`,
      headers: json,
      payload: { anchor: { kind: 'event', event: f.event_ids[0] }, text: 'begins here', author: 'bob' },
    });
    expect(ev.statusCode).toBe(201);
    expect(ev.json().anchor.t0).toBe(f.ts);
    expect(ev.json().anchor.track).toMatch(/^cpu#\d+$/);

    const list = (await app.inject({ url: `/api/traces/${traceId}/notes` })).json().notes;
    expect(list.map((n: { id: string }) => n.id)).toEqual(expect.arrayContaining([note.id, ev.json().id]));

    const edited = await app.inject({
      method: 'PATCH',
      url: `/api/traces/${traceId}/notes/${note.id}`,
      headers: json,
      payload: { version: 1, text: 'edited' },
    });
    expect(edited.statusCode).toBe(200);
    expect(edited.json()).toMatchObject({ text: 'edited', version: 2 });

    const del = await app.inject({ method: 'DELETE', url: `/api/traces/${traceId}/notes/${ev.json().id}?version=1` });
    expect(del.statusCode).toBe(204);
    expect((await app.inject({ url: `/api/traces/${traceId}/notes/${ev.json().id}` })).statusCode).toBe(404);

    // A restarted server (new API over the same data directory) still has the note.
    const app2 = await api();
    expect((await app2.inject({ url: `/api/traces/${traceId}/notes/${note.id}` })).json()).toMatchObject({
      text: 'edited',
      version: 2,
    });
  });

  it('keeps every note when two clients add notes at the same time', async () => {
    const app = await api();
    const before = (await app.inject({ url: `/api/traces/${traceId}/notes` })).json().notes.length as number;
    const add = (client: string, i: number) =>
      app.inject({
        method: 'POST',
        url: `/api/traces/${traceId}/notes`,
        headers: json,
        remoteAddress: client === 'alice' ? '10.0.0.1' : '10.0.0.2',
        payload: {
          anchor: { kind: 'range', t0: i * 1000, t1: i * 1000 + 500 },
          text: `${client} #${i}`,
          author: client,
        },
      });
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => [add('alice', i), add('bob', i)]).flat());
    expect(answers.map((a) => a.statusCode)).toEqual(Array(80).fill(201));
    const notes = (await app.inject({ url: `/api/traces/${traceId}/notes` })).json().notes as Array<{ text: string }>;
    expect(notes).toHaveLength(before + 80);
    for (let i = 0; i < 40; i++) {
      expect(notes.some((n) => n.text === `alice #${i}`)).toBe(true);
      expect(notes.some((n) => n.text === `bob #${i}`)).toBe(true);
    }
  });

  it('answers a stale edit with 409 and the current note, so the client can show the conflict', async () => {
    const app = await api();
    const n = (
      await app.inject({
        method: 'POST',
        url: `/api/traces/${traceId}/notes`,
        headers: json,
        payload: { anchor: { kind: 'range', t0: 0, t1: 10 }, text: 'first', author: 'alice' },
      })
    ).json();
    const a = await app.inject({
      method: 'PATCH',
      url: `/api/traces/${traceId}/notes/${n.id}`,
      headers: json,
      payload: { version: 1, text: 'alice edits' },
    });
    expect(a.statusCode).toBe(200);
    const b = await app.inject({
      method: 'PATCH',
      url: `/api/traces/${traceId}/notes/${n.id}`,
      headers: json,
      payload: { version: 1, text: 'bob edits' },
    });
    expect(b.statusCode).toBe(409);
    expect(b.json().error).toMatch(/changed by alice meanwhile/);
    expect(b.json().note).toMatchObject({ text: 'alice edits', version: 2 });
    const del = await app.inject({ method: 'DELETE', url: `/api/traces/${traceId}/notes/${n.id}?version=1` });
    expect(del.statusCode).toBe(409);
    expect((await app.inject({ url: `/api/traces/${traceId}/notes/${n.id}` })).json().text).toBe('alice edits');
  });

  it('rejects path traversal, bad input, oversized bodies and floods', async () => {
    const app = await api({ rateLimits: { writes: { burst: 3, perSecond: 0.01 } } });
    // 400 (malformed id) or 404 (the router resolved the dots to another path): never a file.
    const bad: Array<[string, string, number | number[]]> = [
      ['GET', `/api/traces/..%2F..%2Fetc/notes`, 400],
      ['GET', `/api/traces/${'A'.repeat(64)}/notes`, 400],
      ['GET', `/api/traces/${traceId}%2F..%2F..%2Finfo.json/notes`, 400],
      ['GET', `/api/traces/${traceId}/notes/..%2F..%2F..%2Fetc%2Fpasswd`, 400],
      ['GET', `/api/traces/${traceId}/notes/%2e%2e`, [400, 404]],
      ['GET', `/api/traces/${traceId}/notes/%2e%2e%2f%2e%2e%2fnotes`, [400, 404]],
      ['GET', `/api/traces/${traceId}/notes/${'a'.repeat(21)}`, 400],
      ['GET', `/api/traces/${'d'.repeat(64)}/notes`, 404],
      ['DELETE', `/api/traces/${traceId}/notes/..%2F${traceId}`, 400],
    ];
    for (const [method, url, status] of bad) {
      const r = await app.inject({ method: method as 'GET', url });
      expect([status].flat(), url).toContain(r.statusCode);
      expect(r.body, url).not.toMatch(/"notes":\[|"format"/);
    }
    const post = (payload: unknown, headers: Record<string, string> = json, ip = '10.9.9.9') =>
      app.inject({
        method: 'POST',
        url: `/api/traces/${traceId}/notes`,
        headers,
        payload: payload as string,
        remoteAddress: ip,
      });
    // Validation: each from a fresh client so the rate limit does not interfere.
    const cases: Array<[unknown, number, RegExp, Record<string, string>?]> = [
      [{ anchor: { kind: 'file', path: '/etc/passwd' }, text: 'x', author: 'a' }, 400, /anchor.kind/],
      [{ anchor: { kind: 'range', t0: 5, t1: 1 }, text: 'x', author: 'a' }, 400, /t1 must not be before/],
      [{ anchor: { kind: 'range', t0: 0, t1: 1, track: '../../x' }, text: 'x', author: 'a' }, 400, /track uri/],
      [{ anchor: { kind: 'range', t0: 0, t1: 1 }, text: '   ', author: 'a' }, 400, /text is empty/],
      [{ anchor: { kind: 'range', t0: 0, t1: 1 }, text: 'x'.repeat(16_001), author: 'a' }, 400, /too long/],
      [{ anchor: { kind: 'range', t0: 0, t1: 1 }, text: 'x', author: '' }, 400, /author/],
      [{ anchor: { kind: 'finding', finding: 9999 }, text: 'x', author: 'a' }, 404, /no finding 9999/],
      [{ anchor: { kind: 'range', t0: 0, t1: 1 }, text: 'x', author: 'a', admin: true }, 400, /unknown field/],
      [{ anchor: { kind: 'range', t0: 0, t1: 1 }, text: 'y'.repeat(70_000), author: 'a' }, 413, /./],
      ['hello', 415, /JSON/, { 'content-type': 'text/plain' }],
    ];
    let ip = 0;
    for (const [payload, status, msg, headers] of cases) {
      const r = await post(
        typeof payload === 'string' ? payload : JSON.stringify(payload),
        headers ?? json,
        `10.1.0.${ip++}`,
      );
      expect(r.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(status);
      expect(r.json().error).toMatch(msg);
    }
    // Rate limit: a burst of 3 writes per client, then 429 with Retry-After; other clients unaffected.
    const ok = { anchor: { kind: 'range', t0: 0, t1: 1 }, text: 'x', author: 'a' };
    for (let i = 0; i < 3; i++) expect((await post(JSON.stringify(ok), json, '10.2.0.1')).statusCode).toBe(201);
    const limited = await post(JSON.stringify(ok), json, '10.2.0.1');
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await post(JSON.stringify(ok), json, '10.2.0.2')).statusCode).toBe(201);
    // Nothing was written anywhere but the notes files of this trace (snapshot and change log).
    expect(
      readdirSync(join(dataDir, 'notes')).filter((n) => n !== `${traceId}.json` && n !== `${traceId}.log.jsonl`),
    ).toEqual([]);
    expect(readdirSync(join(dataDir, 'notes'))).toContain(`${traceId}.json`);
    expect(existsSync(join(dataDir, 'etc'))).toBe(false);
  });

  it('requires the access token for notes when one is set', async () => {
    const app = await api({ token: 'team-secret' });
    expect((await app.inject({ url: `/api/traces/${traceId}/notes` })).statusCode).toBe(401);
    expect(
      (await app.inject({ method: 'POST', url: `/api/traces/${traceId}/notes`, headers: json, payload: {} }))
        .statusCode,
    ).toBe(401);
    expect((await app.inject({ url: `/api/traces/${traceId}/export.json` })).statusCode).toBe(401);
    expect(
      (await app.inject({ url: `/api/traces/${traceId}/notes`, headers: { 'x-stallscope-token': 'team-secret' } }))
        .statusCode,
    ).toBe(200);
  });
});

describe('excerpt and export', () => {
  it('gives a finding as email text: one plain sentence, its values, trace-cmd lines, its note and the share link', async () => {
    // The link's host is the server's public URL (--public-url), never taken from the request.
    const app = await api({ publicUrl: 'http://stalls.example:7420' });
    const f = (await app.inject({ url: `/api/traces/${traceId}/findings` })).json().findings[1] as {
      index: number;
      id: number;
      title: string;
    };
    expect(f.index).toBe(f.id);
    const note = (
      await app.inject({
        method: 'POST',
        url: `/api/traces/${traceId}/notes`,
        headers: json,
        payload: { anchor: { kind: 'finding', finding: f.id }, text: 'kswapd never backs off here', author: 'carol' },
      })
    ).json();
    const r = await app.inject({
      url: `/api/traces/${traceId}/excerpt?sel=finding:${f.id}`,
      headers: { host: 'stalls.example:7420' },
    });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toMatch(/text\/plain/);
    const text = r.body;
    const lines = text.split('\n');
    // the finding in one sentence: its title, when and where; no tool noise
    expect(lines[0]).toBe(
      `${f.title}, at ${lines[0]!.match(/at (\d+\.\d{6})/)![1]} on CPU ${lines[0]!.match(/on CPU (\d+)\.$/)![1]}.`,
    );
    expect(text).not.toMatch(
      /\[stallscope\]|=false|open=|end_lost|begin_missing|kswapd_escalation\/|shrinker_blocking\//,
    );
    expect(lines[1]).toMatch(/^Values: \w[\w ]* \S/);
    // Raw lines as trace-cmd report prints them: `%16s-%-5d [cpu] sec.usec: %-20s: args`
    expect(text).toMatch(/^ {0,16}\S+-\d+ *\[\d{3}\] +\d+\.\d{6}: mm_vmscan_\w+: +\S/m);
    expect(text).toContain('Note (carol, ');
    expect(text).toContain('kswapd never backs off here');
    expect(text).toMatch(
      new RegExp(
        `^Link: http://stalls\\.example:7420/\\?trace=${traceId}&t0=\\d+&t1=\\d+&sel=finding:${f.id}&note=${note.id}#link=v1\\.[\\w-]+$`,
        'm',
      ),
    );
    // The link carries the note and the file's facts for a reviewer without this server.
    const fragment = /^Link: \S+(#link=\S+)$/m.exec(text)![1]!;
    const carried = await decodeLinkFragment(fragment);
    expect(carried.kind).toBe('ok');
    const payload = (carried as { payload: LinkPayload }).payload;
    expect(payload.trace).toMatchObject({ sha256: traceId, name: 'kernel4x_kswapd_escalation.txt' });
    expect(payload.notes.map((n) => [n.id, n.author, n.text])).toEqual([
      [note.id, 'carol', 'kswapd never backs off here'],
    ]);
    // with a public URL the link names it, whatever Host the request came with
    const pub = await api({ publicUrl: 'https://stalls.example.com/team/' });
    const p = await pub.inject({ url: `/api/traces/${traceId}/excerpt?sel=finding:${f.id}` });
    expect(p.body).toMatch(new RegExp(`^Link: https://stalls\\.example\\.com/team/\\?trace=${traceId}&`, 'm'));
  });

  it('excerpts an event and a time range; bad selections get clear 4xx', async () => {
    const app = await api();
    const f = (await app.inject({ url: `/api/traces/${traceId}/findings` })).json().findings[0];
    const ev = await app.inject({ url: `/api/traces/${traceId}/excerpt?sel=event:${f.event_ids[0]}` });
    expect(ev.statusCode).toBe(200);
    expect(ev.body).toMatch(/^\w+ by \S+ \d+ on CPU \d+, at \d+\.\d{6}\.$/m);
    const range = await app.inject({ url: `/api/traces/${traceId}/excerpt?t0=0&t1=1000000000&track=cpu:1` });
    expect(range.statusCode).toBe(200);
    expect(range.body).toMatch(/^[\d,]+ events? on cpu#1 from \d+\.\d{6} to \d+\.\d{6} \(1\.000s\)\.$/m);
    for (const [q, status] of [
      ['sel=finding:999', 404],
      ['sel=../../x', 400],
      ['t0=5&t1=1', 400],
      ['', 400],
      ['sel=event:1&note=../../x', 400],
    ] as const) {
      expect((await app.inject({ url: `/api/traces/${traceId}/excerpt?${q}` })).statusCode, q).toBe(status);
    }
  });

  it("pages a finding's events, its ids never in a URL", async () => {
    const app = await api();
    const f = (await app.inject({ url: `/api/traces/${traceId}/findings` }))
      .json()
      .findings.find((x: { event_ids: number[] }) => x.event_ids.length >= 3);
    const all = (
      await app.inject({ url: `/api/traces/${traceId}/findings/${f.id}/events?offset=0&limit=2000` })
    ).json();
    expect(all.total).toBe(f.event_ids.length);
    expect(all.events.map((e: { id: number }) => e.id)).toEqual([...f.event_ids].sort((a: number, b: number) => a - b));
    const page = (await app.inject({ url: `/api/traces/${traceId}/findings/${f.id}/events?offset=1&limit=1` })).json();
    expect(page).toMatchObject({ total: f.event_ids.length, offset: 1 });
    expect(page.events.map((e: { id: number }) => e.id)).toEqual([all.events[1].id]);
    expect((await app.inject({ url: `/api/traces/${traceId}/findings/12345/events` })).statusCode).toBe(404);
    expect((await app.inject({ url: `/api/traces/${traceId}/findings/x/events` })).statusCode).toBe(400);
  });

  it('exports findings and notes as JSON and Markdown downloads, with note HTML neutralised', async () => {
    const app = await api();
    await app.inject({
      method: 'POST',
      url: `/api/traces/${traceId}/notes`,
      headers: json,
      payload: {
        anchor: { kind: 'range', t0: 100, t1: 200 },
        text: 'look <img src=x onerror=alert(1)> and `<b>code</b>`',
        author: 'mallory',
      },
    });
    const j = await app.inject({ url: `/api/traces/${traceId}/export.json` });
    expect(j.statusCode).toBe(200);
    expect(j.headers['content-disposition']).toMatch(
      /^attachment; filename="stallscope-kernel4x_kswapd_escalation-[0-9a-f]{12}\.json"$/,
    );
    const body = j.json();
    expect(body.format).toBe('stallscope-export');
    expect(body.findings.length).toBeGreaterThan(0);
    expect(body.findings[0]).toMatchObject({
      index: body.findings[0].id,
      link: expect.stringContaining(`sel=finding:${body.findings[0].id}`),
    });
    expect(body.notes.some((n: { author: string }) => n.author === 'mallory')).toBe(true);

    const md = await app.inject({ url: `/api/traces/${traceId}/export.md` });
    expect(md.statusCode).toBe(200);
    expect(md.headers['content-type']).toMatch(/text\/markdown/);
    expect(md.headers['content-disposition']).toMatch(/attachment; filename=".*\.md"/);
    expect(md.body).toContain('## Findings');
    expect(md.body).toContain('## Notes');
    expect(md.body).toContain('&lt;img src=x onerror=alert(1)>');
    expect(md.body).not.toContain('<img');
    // The note's Markdown is shown as typed (escaped), not rendered: backticks are text too (issue 27).
    expect(md.body).toContain('\\`&lt;b>code&lt;/b>\\`');
  });
});
