import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConflictError, NoteNotFoundError, NotesStore, isNoteId, type NewNote } from './notes_store.ts';

const TRACE = 'c'.repeat(64);
const range = (t0: number, t1: number): NewNote['anchor'] => ({ kind: 'range', t0, t1 });

/** The notes the files hold, read without the store: the snapshot's, then each logged change after its seq. */
function notesOnDisk(dir: string, trace: string): Array<{ id: string; text: string }> {
  const snap = JSON.parse(readFileSync(join(dir, `${trace}.json`), 'utf8')) as {
    seq?: number;
    notes: Array<{ id: string; text: string }>;
  };
  const notes = new Map(snap.notes.map((n) => [n.id, n]));
  let log = '';
  try {
    log = readFileSync(join(dir, `${trace}.log.jsonl`), 'utf8');
  } catch {
    // no changes since the snapshot
  }
  for (const line of log.split('\n').filter(Boolean)) {
    const c = JSON.parse(line) as { seq: number; put?: { id: string; text: string }; del?: string };
    if (c.seq <= (snap.seq ?? 0)) continue;
    if (c.put) notes.set(c.put.id, c.put);
    else notes.delete(c.del!);
  }
  return [...notes.values()];
}

function store() {
  const dir = mkdtempSync(join(tmpdir(), 'stallscope-notes-'));
  return { dir, notes: new NotesStore(dir) };
}

describe('NotesStore', () => {
  it('creates notes with unguessable ids, version 1, and keeps them across restarts', async () => {
    const { dir, notes } = store();
    const n = await notes.create(TRACE, { anchor: range(5, 10), text: 'kswapd wakes here', author: 'alice' });
    expect(isNoteId(n.id)).toBe(true);
    expect(n).toMatchObject({ trace: TRACE, version: 1, author: 'alice', anchor: { kind: 'range', t0: 5, t1: 10 } });
    expect(n.created_at).toBe(n.updated_at);
    // A new store over the same directory (a restarted server) sees it.
    const again = new NotesStore(dir);
    expect(await again.list(TRACE)).toEqual([n]);
    expect(await again.get(TRACE, n.id)).toEqual(n);
    expect(readdirSync(dir)).toEqual([`${TRACE}.json`]);
  });

  it('keeps every note when two clients add many at the same time', async () => {
    const { dir, notes } = store();
    const client = (who: string) =>
      Array.from({ length: 60 }, (_, i) =>
        notes.create(TRACE, { anchor: range(i, i + 1), text: `${who} ${i}`, author: who }),
      );
    const created = await Promise.all([...client('alice'), ...client('bob')]);
    expect(new Set(created.map((n) => n.id)).size).toBe(120);
    const listed = await notes.list(TRACE);
    expect(listed).toHaveLength(120);
    expect(listed.filter((n) => n.author === 'alice')).toHaveLength(60);
    expect(listed.filter((n) => n.author === 'bob')).toHaveLength(60);
    // ...and so do the files on disk (snapshot, then the change log after it: read here on their own),
    // with no temporary files left behind.
    expect(
      notesOnDisk(dir, TRACE)
        .map((n) => n.text)
        .sort(),
    ).toEqual(created.map((n) => n.text).sort());
    expect(readdirSync(dir).filter((n) => !n.startsWith(TRACE) || n.endsWith('.tmp'))).toEqual([]);
    expect(await new NotesStore(dir).list(TRACE)).toHaveLength(120);
  });

  it('refuses an edit or delete of a stale version and keeps the newer text', async () => {
    const { notes } = store();
    const n = await notes.create(TRACE, { anchor: range(0, 1), text: 'v1', author: 'alice' });
    const v2 = await notes.update(TRACE, n.id, 1, { text: 'v2 by alice' });
    expect(v2.version).toBe(2);
    const stale = notes.update(TRACE, n.id, 1, { text: 'v2 by bob' });
    await expect(stale).rejects.toBeInstanceOf(ConflictError);
    const err = await stale.catch((e: ConflictError) => e);
    expect((err as ConflictError).current).toMatchObject({ text: 'v2 by alice', version: 2 });
    await expect(notes.delete(TRACE, n.id, 1)).rejects.toBeInstanceOf(ConflictError);
    expect((await notes.get(TRACE, n.id))!.text).toBe('v2 by alice');
    // Two edits of the same version at once: exactly one wins.
    const results = await Promise.allSettled([
      notes.update(TRACE, n.id, 2, { text: 'from tab A' }),
      notes.update(TRACE, n.id, 2, { text: 'from tab B' }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof ConflictError)).toHaveLength(1);
    await notes.delete(TRACE, n.id, 3);
    expect(await notes.list(TRACE)).toEqual([]);
    await expect(notes.delete(TRACE, n.id)).rejects.toBeInstanceOf(NoteNotFoundError);
  });

  it('never turns a malformed trace or note id into a path', async () => {
    const { notes } = store();
    for (const bad of [
      '../../etc/passwd',
      `${TRACE}/../x`,
      TRACE.toUpperCase(),
      '',
      'c'.repeat(63),
      `${'c'.repeat(64)}.json`,
    ]) {
      expect(() => notes.fileOf(bad), bad).toThrow(/not a trace id/);
      await expect(notes.list(bad)).rejects.toThrow(/not a trace id/);
    }
    for (const bad of [
      '../../../etc/passwd',
      '..',
      'a'.repeat(21),
      'a'.repeat(23),
      'aaaaaaaaaaaaaaaaaaaa/.',
      '%2e%2e%2faaaaaaaaaaaaaaa',
    ]) {
      expect(isNoteId(bad), bad).toBe(false);
      expect(await notes.get(TRACE, bad)).toBeNull();
    }
  });
});
