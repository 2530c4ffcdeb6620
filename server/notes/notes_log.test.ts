/**
 * Issue 27: notes kept so that one write does not rewrite every note (a
 * snapshot plus an append-only change log, notes_store.ts), older notes
 * files still read, crashes and full disks handled: torn log lines cut off,
 * temporary files of dead writers removed at start, a change log left by a
 * crash after compaction not applied twice, ENOSPC answered in user terms.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../api/create_server.ts';
import type { LibraryLike } from '../api/library_contract.ts';
import { TraceLibrary } from '../ingest/library.ts';
import { NotesStore, newNoteId, type NewNote } from './notes_store.ts';

const TRACE = 'e'.repeat(64);
const range = (t0: number): NewNote['anchor'] => ({ kind: 'range', t0, t1: t0 + 1 });
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function fresh(): { dir: string; store: NotesStore } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-notes-log-'));
  dirs.push(dir);
  return { dir, store: new NotesStore(dir) };
}

const size = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);

describe('notes on disk', () => {
  it('a write appends one change to the log; the snapshot is left alone until the log outgrows it', async () => {
    const { dir, store } = fresh();
    const snap = path.join(dir, `${TRACE}.json`);
    const log = path.join(dir, `${TRACE}.log.jsonl`);
    await store.create(TRACE, { anchor: range(0), text: 'first', author: 'a' });
    const snapIno = fs.statSync(snap).ino;
    const snapSize = size(snap);
    let before = size(log);
    for (let i = 1; i <= 40; i++) {
      const text = `note ${i} ${'x'.repeat(200)}`;
      await store.create(TRACE, { anchor: range(i), text, author: 'a' });
      const grew = size(log) - before;
      // One line: the note itself (its JSON), not all the notes so far.
      expect(grew).toBeGreaterThan(text.length);
      expect(grew).toBeLessThan(text.length + 400);
      before = size(log);
      expect(fs.statSync(snap).ino).toBe(snapIno);
      expect(size(snap)).toBe(snapSize);
    }
    // Past 64 KiB of log (and the snapshot's size), a write folds it into a new snapshot.
    for (let i = 41; size(log) > 0 && i < 2000; i++)
      await store.create(TRACE, { anchor: range(i), text: `bulk ${i} ${'y'.repeat(300)}`, author: 'b' });
    expect(size(log)).toBe(0);
    expect(fs.statSync(snap).ino).not.toBe(snapIno);
    const all = await store.list(TRACE);
    expect(all.length).toBeGreaterThan(41);
    expect(await new NotesStore(dir).list(TRACE)).toEqual(all);
    // Written bytes stay proportional to the notes, not to notes x writes.
    expect(size(snap)).toBeLessThan(1.5 * all.reduce((a, n) => a + JSON.stringify(n).length, 0));
  });

  it('reads a notes file written before the change log (no seq), and keeps adding to it', async () => {
    const { dir } = fresh();
    const old = {
      format: 'stallscope-notes',
      version: 1,
      notes: [
        {
          id: newNoteId(),
          trace: TRACE,
          anchor: { kind: 'range', t0: 1, t1: 2 },
          text: 'from 2025',
          author: 'grace',
          created_at: '2025-11-22T08:31:00.000Z',
          updated_at: '2025-11-22T08:31:00.000Z',
          version: 3,
        },
      ],
    };
    fs.writeFileSync(path.join(dir, `${TRACE}.json`), JSON.stringify(old, null, 1));
    const store = new NotesStore(dir);
    expect(await store.list(TRACE)).toEqual(old.notes);
    const edited = await store.update(TRACE, old.notes[0]!.id, 3, { text: 'from 2025, edited' });
    expect(edited.version).toBe(4);
    await store.create(TRACE, { anchor: range(5), text: 'new', author: 'ada' });
    expect((await new NotesStore(dir).list(TRACE)).map((n) => [n.text, n.version])).toEqual([
      ['from 2025, edited', 4],
      ['new', 1],
    ]);
  });

  it('a torn last line (a crash mid-append) is cut off; the change before it and later writes are kept', async () => {
    const { dir, store } = fresh();
    await store.create(TRACE, { anchor: range(0), text: 'snapshot', author: 'a' });
    const kept = await store.create(TRACE, { anchor: range(1), text: 'logged', author: 'a' });
    const log = path.join(dir, `${TRACE}.log.jsonl`);
    fs.appendFileSync(log, '{"seq":99,"put":{"id":"AAAAAAAAAAAAAAAAAAAAAA","tra');
    const again = new NotesStore(dir);
    expect((await again.list(TRACE)).map((n) => n.text)).toEqual(['snapshot', 'logged']);
    expect(fs.readFileSync(log, 'utf8').endsWith('\n')).toBe(true);
    await again.create(TRACE, { anchor: range(2), text: 'after', author: 'a' });
    expect((await new NotesStore(dir).list(TRACE)).map((n) => n.text)).toEqual(['snapshot', 'logged', 'after']);
    expect(kept.version).toBe(1);
  });

  it('a log left behind by a crash after its snapshot was written is not applied again (no edit undone)', async () => {
    const { dir, store } = fresh();
    const n = await store.create(TRACE, { anchor: range(0), text: 'v1', author: 'a' });
    await store.update(TRACE, n.id, 1, { text: 'v2' });
    const log = path.join(dir, `${TRACE}.log.jsonl`);
    const stale = fs.readFileSync(log); // holds "v2"
    // Grow the log until a write folds it into the snapshot, editing the note to v3 on the way.
    await store.update(TRACE, n.id, 2, { text: 'v3' });
    for (let i = 0; size(log) > 0 && i < 2000; i++)
      await store.create(TRACE, { anchor: range(i + 1), text: 'z'.repeat(400), author: 'b' });
    expect(size(log)).toBe(0);
    fs.writeFileSync(log, stale); // as if the crash came between the snapshot's rename and the log's removal
    expect((await new NotesStore(dir).get(TRACE, n.id))!.text).toBe('v3');
  });

  it('temporary files of a writer that died are removed at start; live ones are not', () => {
    const { dir } = fresh();
    const dead = path.join(dir, `${TRACE}.json.999999999.0.tmp`);
    const mine = path.join(dir, `${TRACE}.json.${process.pid}.7.tmp`);
    fs.writeFileSync(dead, 'half a snapshot');
    fs.writeFileSync(mine, 'being written');
    new NotesStore(dir);
    expect(fs.existsSync(dead)).toBe(false);
    expect(fs.existsSync(mine)).toBe(true);
  });

  it('many clients at once: every note kept, on disk too', async () => {
    const { dir, store } = fresh();
    await store.create(TRACE, { anchor: range(0), text: 'first', author: 'a' });
    const writes = Array.from({ length: 200 }, (_, i) =>
      store.create(TRACE, { anchor: range(i + 1), text: `c${i}`, author: `client${i % 20}` }),
    );
    await Promise.all(writes);
    expect(await new NotesStore(dir).list(TRACE)).toHaveLength(201);
  });
});

describe('a full disk', () => {
  let dataDir: string;
  let library: TraceLibrary;
  let app: FastifyInstance;
  let traceId: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-enospc-'));
    dirs.push(dataDir);
    library = await TraceLibrary.open(dataDir);
    traceId = (
      await library.ingest(path.resolve(import.meta.dirname, '../../fixtures/reclaim_kswapd.v7.dat'), { name: 'r.dat' })
    ).id;
    ({ app } = await buildApi({ library: library as unknown as LibraryLike, appDir: path.join(dataDir, 'no-app') }));
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await library?.close();
  });

  it('a note that cannot be written (ENOSPC) is answered 507 in plain words, no server path; nothing half-saved', async () => {
    const json = { 'content-type': 'application/json' };
    const post = (text: string) =>
      app.inject({
        method: 'POST',
        url: `/api/traces/${traceId}/notes`,
        headers: json,
        payload: { anchor: { kind: 'range', t0: 0, t1: 5 }, text, author: 'a' },
      });
    expect((await post('kept')).statusCode).toBe(201);
    // The change log on a device that is always full.
    const log = path.join(dataDir, 'notes', `${traceId}.log.jsonl`);
    fs.symlinkSync('/dev/full', log);
    const r = await post('lost to a full disk');
    expect(r.statusCode).toBe(507);
    expect(r.json().error).toMatch(/^the server's disk is full: nothing was saved/);
    expect(r.body).not.toContain(dataDir);
    expect(r.body).not.toMatch(/\/(tmp|dev|home|root)\//);
    fs.rmSync(log);
    const notes = (await app.inject({ url: `/api/traces/${traceId}/notes` })).json().notes as Array<{ text: string }>;
    expect(notes.map((n) => n.text)).toEqual(['kept']);
    expect((await post('after space was freed')).statusCode).toBe(201);
    expect(fs.readdirSync(path.join(dataDir, 'notes')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});
