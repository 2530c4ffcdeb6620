/**
 * Issue 37: notes from elsewhere (a share link's, a notes file's) kept with
 * their ids, authors and times, through the store's change log: one line per
 * added note, nothing for notes already there, read back by a new store.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NOTE_LIMITS, NotesLimitError, NotesStore, type Note } from './notes_store.ts';

const TRACE = 'c'.repeat(64);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function theirs(i: number, text = `from the link ${i}`): Note {
  return {
    id: `L${String(i).padStart(21, '0')}`,
    trace: TRACE,
    anchor: { kind: 'range', t0: i, t1: i + 10 },
    text,
    author: 'Alice',
    created_at: '2024-05-01T10:00:00.000Z',
    updated_at: '2024-05-02T11:00:00.000Z',
    version: 3,
  };
}

describe('importNotes', () => {
  it('adds notes as they are, one log line each, and leaves notes already there alone', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-notes-import-'));
    dirs.push(dir);
    const log = path.join(dir, `${TRACE}.log.jsonl`);
    const store = new NotesStore(dir);
    const mine = await store.create(TRACE, { anchor: { kind: 'range', t0: 0, t1: 1 }, text: 'mine', author: 'Bob' });
    const lines = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0);
    const before = lines();
    const r = await store.importNotes(TRACE, [
      theirs(1),
      theirs(2),
      { ...theirs(3), id: mine.id, text: 'an impostor with my id' },
    ]);
    expect(r.added.map((n) => n.id)).toEqual([theirs(1).id, theirs(2).id]);
    expect(r.existing.map((n) => n.text)).toEqual(['mine']);
    expect(lines() - before).toBe(2);
    // Again: nothing added, nothing written.
    const again = await store.importNotes(TRACE, [theirs(1), theirs(2)]);
    expect(again).toMatchObject({ added: [], existing: [{ id: theirs(1).id }, { id: theirs(2).id }] });
    expect(lines() - before).toBe(2);
    // A new store (a restart) reads them back as they were.
    const reread = await new NotesStore(dir).list(TRACE);
    expect(reread.find((n) => n.id === theirs(2).id)).toEqual(theirs(2));
    expect(reread.find((n) => n.id === mine.id)!.text).toBe('mine');
  });

  it('refuses, all or nothing, what would pass the per-trace limit', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-notes-import-'));
    dirs.push(dir);
    const store = new NotesStore(dir);
    const many = Array.from({ length: NOTE_LIMITS.notesPerTrace + 1 }, (_, i) => theirs(i, 'x'));
    await expect(store.importNotes(TRACE, many)).rejects.toBeInstanceOf(NotesLimitError);
    expect(await store.list(TRACE)).toEqual([]);
    await store.importNotes(TRACE, many.slice(0, NOTE_LIMITS.notesPerTrace));
    expect(await new NotesStore(dir).list(TRACE)).toHaveLength(NOTE_LIMITS.notesPerTrace);
  });
});
