/**
 * Annotations files and the upload that must be a given file, between two
 * servers on two data directories (two people), through fastify.inject on
 * real libraries with a real trace ingested.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApi, type ServerOptions } from '../api/create_server.ts';
import { TraceLibrary } from '../ingest/library.ts';

const FIXTURE = resolve('fixtures/handmade/kernel4x_kswapd_escalation.txt');
const OTHER = resolve('fixtures/handmade/kernel3x_writepage.txt');
const FIXTURE_SHA = createHash('sha256').update(readFileSync(FIXTURE)).digest('hex');
const OTHER_SHA = createHash('sha256').update(readFileSync(OTHER)).digest('hex');
const json = { 'content-type': 'application/json' };

interface Person {
  dir: string;
  library: TraceLibrary;
  app: FastifyInstance;
}

const people: Person[] = [];
let alice: Person;
let bob: Person;
let trace: string;

async function person(opts: Partial<ServerOptions> = {}): Promise<Person> {
  const dir = mkdtempSync(join(tmpdir(), 'stallscope-annotations-'));
  const library = await TraceLibrary.open(dir);
  const { app } = await buildApi({ library, appDir: join(dir, 'no-app'), ...opts });
  const p = { dir, library, app };
  people.push(p);
  return p;
}

async function waitJob(app: FastifyInstance, jobId: string): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const s = (await app.inject({ url: `/api/jobs/${jobId}` })).json();
    if (s.phase === 'done') return s.traceId as string;
    if (s.phase === 'failed') throw new Error(s.error);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('ingest did not finish');
}

beforeAll(async () => {
  alice = await person();
  bob = await person();
  trace = (await alice.library.ingest(FIXTURE, { name: 'kernel4x_kswapd_escalation.txt' })).id;
}, 120_000);

afterAll(async () => {
  for (const p of people) {
    await p.app.close();
    await p.library.close();
  }
});

describe('upload of the file a link needs', () => {
  it('refuses another file with both hashes, and keeps nothing of it', async () => {
    const r = await bob.app.inject({
      method: 'POST',
      url: `/api/traces?name=kernel3x_writepage.txt&expect=${FIXTURE_SHA}`,
      headers: { 'content-type': 'application/octet-stream' },
      payload: readFileSync(OTHER),
    });
    expect(r.statusCode).toBe(409);
    expect(r.json()).toMatchObject({ expected: FIXTURE_SHA, actual: OTHER_SHA });
    expect(r.json().error).toContain(`its sha256 is ${OTHER_SHA}, the link's trace has sha256 ${FIXTURE_SHA}`);
    expect((await bob.app.inject({ url: '/api/traces' })).json().traces).toHaveLength(0);
  });

  it('refuses an expect that is not a sha256', async () => {
    const r = await bob.app.inject({
      method: 'POST',
      url: '/api/traces?name=x&expect=../../etc/passwd',
      headers: { 'content-type': 'application/octet-stream' },
      payload: 'x',
    });
    expect(r.statusCode).toBe(400);
  });

  it('ingests the right file', async () => {
    const r = await bob.app.inject({
      method: 'POST',
      url: `/api/traces?name=mine.txt&expect=${FIXTURE_SHA}`,
      headers: { 'content-type': 'application/octet-stream' },
      payload: readFileSync(FIXTURE),
    });
    expect(r.statusCode).toBe(202);
    expect(await waitJob(bob.app, r.json().jobId)).toBe(FIXTURE_SHA);
  });
});

describe('annotations file', () => {
  it('round trip: exported by one server, imported by another, merged by note id', async () => {
    const findings = (await alice.app.inject({ url: `/api/traces/${trace}/findings` })).json().findings as Array<{
      index: number;
      ts: number;
      dur: number;
      event_ids: number[];
    }>;
    const f = findings[0]!;
    const made = [];
    for (const payload of [
      { anchor: { kind: 'finding', finding: f.index }, text: 'kswapd **escalates** here', author: 'Alice' },
      { anchor: { kind: 'event', event: f.event_ids[0] }, text: 'first event', author: 'Alice' },
      {
        anchor: { kind: 'range', t0: 1000, t1: 50_000, track: 'cpu#0' },
        text: '<img src=x onerror=alert(1)> [x](javascript:alert(1))',
        author: 'Al "quoted"',
      },
    ]) {
      const r = await alice.app.inject({ method: 'POST', url: `/api/traces/${trace}/notes`, headers: json, payload });
      expect(r.statusCode).toBe(201);
      made.push(r.json());
    }
    const out = await alice.app.inject({ url: `/api/traces/${trace}/annotations` });
    expect(out.statusCode).toBe(200);
    expect(out.headers['content-disposition']).toBe(
      'attachment; filename="kernel4x_kswapd_escalation.txt.stallscope-notes.json"',
    );
    const file = out.json();
    expect(file).toMatchObject({
      format: 'stallscope-annotations',
      version: 1,
      trace: { sha256: trace, name: 'kernel4x_kswapd_escalation.txt', size: readFileSync(FIXTURE).length },
    });
    expect(file.notes).toHaveLength(3);

    const r = await bob.app.inject({
      method: 'POST',
      url: `/api/traces/${trace}/annotations`,
      headers: json,
      payload: file,
    });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ added: 3, existing: 0, reanchored: [], skipped: [] });
    const bobs = (await bob.app.inject({ url: `/api/traces/${trace}/notes` })).json().notes;
    // Same ids, authors, times, text and anchors as the author's.
    const strip = (n: Record<string, unknown>) => ({ ...n, trace: undefined });
    expect(bobs.map(strip)).toEqual(made.map(strip));

    // Again: nothing twice.
    const again = await bob.app.inject({
      method: 'POST',
      url: `/api/traces/${trace}/annotations`,
      headers: json,
      payload: file,
    });
    expect(again.json()).toMatchObject({ added: 0, existing: 3 });
    // Bob edits one; Alice's file does not overwrite his edit.
    const edited = await bob.app.inject({
      method: 'PATCH',
      url: `/api/traces/${trace}/notes/${made[0].id}`,
      headers: json,
      payload: { version: 1, text: 'Bob disagrees' },
    });
    expect(edited.statusCode).toBe(200);
    await bob.app.inject({ method: 'POST', url: `/api/traces/${trace}/annotations`, headers: json, payload: file });
    expect((await bob.app.inject({ url: `/api/traces/${trace}/notes/${made[0].id}` })).json().text).toBe(
      'Bob disagrees',
    );

    // A restarted server (a new API over the same data directory) still has them.
    const { app: bob2 } = await buildApi({ library: bob.library, appDir: join(bob.dir, 'no-app') });
    expect((await bob2.inject({ url: `/api/traces/${trace}/notes` })).json().notes).toHaveLength(3);
    await bob2.close();
  });

  it('anchors a note to its time range when this trace has no such finding there, and skips one past its end', async () => {
    const base = {
      text: 'from a file',
      author: 'Carol',
      created_at: '2024-01-01T00:00:00Z',
      updated_at: '2024-01-01T00:00:00Z',
      version: 1,
    };
    const file = {
      format: 'stallscope-annotations',
      version: 1,
      trace: { sha256: trace, name: 'kernel4x_kswapd_escalation.txt', size: 1 },
      notes: [
        { ...base, id: 'C'.repeat(22), anchor: { kind: 'finding', finding: 999, t0: 10, t1: 20 } },
        { ...base, id: 'D'.repeat(22), anchor: { kind: 'range', t0: 9e15, t1: 9e15 + 1 } },
      ],
    };
    const r = await bob.app.inject({
      method: 'POST',
      url: `/api/traces/${trace}/annotations`,
      headers: json,
      payload: file,
    });
    expect(r.statusCode).toBe(200);
    expect(r.json().added).toBe(1);
    expect(r.json().reanchored).toEqual([
      { id: 'C'.repeat(22), reason: expect.stringMatching(/no finding 999 .*anchored to the time range 10-20 ns/) },
    ]);
    expect(r.json().skipped).toEqual([
      { id: 'D'.repeat(22), reason: expect.stringMatching(/after the end of the trace/) },
    ]);
    const n = (await bob.app.inject({ url: `/api/traces/${trace}/notes/${'C'.repeat(22)}` })).json();
    expect(n).toMatchObject({
      author: 'Carol',
      created_at: '2024-01-01T00:00:00Z',
      anchor: { kind: 'range', t0: 10, t1: 20 },
    });
  });

  it('refuses a file for another trace, naming both', async () => {
    const file = {
      format: 'stallscope-annotations',
      version: 1,
      trace: { sha256: OTHER_SHA, name: 'kernel3x_writepage.txt', size: 5 },
      notes: [],
    };
    const r = await bob.app.inject({
      method: 'POST',
      url: `/api/traces/${trace}/annotations`,
      headers: json,
      payload: file,
    });
    expect(r.statusCode).toBe(409);
    expect(r.json().error).toBe(
      `these notes are for another trace: kernel3x_writepage.txt (sha256 ${OTHER_SHA}), not mine.txt (sha256 ${trace})`,
    );
  });

  it('an import from another site, or without the token, is refused before it is read', async () => {
    const file = {
      format: 'stallscope-annotations',
      version: 1,
      trace: { sha256: trace, name: 't', size: 1 },
      notes: [],
    };
    const cross = await bob.app.inject({
      method: 'POST',
      url: `/api/traces/${trace}/annotations`,
      headers: { ...json, 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      payload: file,
    });
    expect(cross.statusCode).toBe(403);
    const rebound = await bob.app.inject({
      method: 'POST',
      url: `/api/traces/${trace}/annotations`,
      headers: { ...json, host: 'evil.example' },
      payload: file,
    });
    expect(rebound.statusCode).toBe(421);
    const locked = await person({ token: 'sesame' });
    const noToken = await locked.app.inject({
      method: 'POST',
      url: `/api/traces/${trace}/annotations`,
      headers: json,
      payload: file,
    });
    expect(noToken.statusCode).toBe(401);
    const exported = await locked.app.inject({ url: `/api/traces/${trace}/annotations` });
    expect(exported.statusCode).toBe(401);
  });

  it('refuses malformed files with a message naming the field', async () => {
    const good = {
      format: 'stallscope-annotations',
      version: 1,
      trace: { sha256: trace, name: 't', size: 1 },
      notes: [] as unknown[],
    };
    const note = {
      id: 'E'.repeat(22),
      anchor: { kind: 'range', t0: 0, t1: 1 },
      text: 'x',
      author: 'a',
      created_at: '2024-01-01T00:00:00Z',
      updated_at: '2024-01-01T00:00:00Z',
      version: 1,
    };
    const cases: Array<[unknown, RegExp]> = [
      [{ ...good, format: 'stallscope-export' }, /not a stallscope annotations file: "format" is "stallscope-export"/],
      [{ ...good, version: 2 }, /written by a newer stallscope \(version 2; this one reads version 1\)/],
      [
        { ...good, notes: [{ ...note, anchor: { kind: 'range', t0: 5, t1: 1 } }] },
        /notes\[0\]\.anchor\.t1 must not be before/,
      ],
      [{ ...good, notes: [{ ...note, id: '../../../etc/passwd' }] }, /notes\[0\]\.id must be a note id/],
      [{ ...good, notes: [note, note] }, /notes\[1\]\.id .* is there twice/],
      [{ ...good, trace: { ...good.trace, path: '/etc/passwd' } }, /trace: unknown field "path"/],
      [{ ...good, notes: [{ ...note, text: 'x'.repeat(16_001) }] }, /text is too long/],
      [[1, 2], /expected a JSON object/],
    ];
    for (const [payload, message] of cases) {
      const r = await bob.app.inject({
        method: 'POST',
        url: `/api/traces/${trace}/annotations`,
        headers: json,
        payload: payload as object,
      });
      expect(r.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
      expect(r.json().error).toMatch(message);
    }
    const notJson = await bob.app.inject({
      method: 'POST',
      url: `/api/traces/${trace}/annotations`,
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(notJson.statusCode).toBe(415);
    const broken = await bob.app.inject({
      method: 'POST',
      url: `/api/traces/${trace}/annotations`,
      headers: json,
      payload: '{"format": ',
    });
    expect(broken.statusCode).toBe(400);
    const huge = await bob.app.inject({
      method: 'POST',
      url: `/api/traces/${trace}/annotations`,
      headers: json,
      payload: `{"x":"${'a'.repeat(17 * 1024 * 1024)}"}`,
    });
    expect(huge.statusCode).toBe(413);
    const proto = await bob.app.inject({
      method: 'POST',
      url: `/api/traces/${trace}/annotations`,
      headers: json,
      payload: `{"format":"stallscope-annotations","version":1,"__proto__":{"polluted":1}}`,
    });
    expect(proto.statusCode).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
