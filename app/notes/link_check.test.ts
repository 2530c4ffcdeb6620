import { describe, expect, it } from 'vitest';
import { EMPTY_VIEW, viewFromSearch } from '../state/view_state.ts';
import { reconcileNote, reconcileView, searchProblems } from './link_check.ts';
import type { Note } from './types.ts';

const TRACE = 'e'.repeat(64);
const facts = {
  start: 0,
  end: 2_000_000_000,
  findings: 5,
  uris: new Set(['cpu#0', 'cpu#1', 'flow#wakeup']),
  findingWindow: () => ({ t0: 100, t1: 5000 }),
};

describe('link checks', () => {
  it('a good link has no problems and is left as it is', () => {
    const s = `?trace=${TRACE}&t0=1000&t1=900000&sel=finding:2&pin=cpu:1&hide=flow:wakeup&note=AbCdEfGhIjKlMnOpQrStU_`;
    expect(searchProblems(s)).toEqual([]);
    expect(reconcileView(viewFromSearch(s), facts)).toEqual({ patch: {}, problems: [] });
  });

  it('names what is malformed', () => {
    const p = searchProblems('?trace=../../etc/passwd&t0=9&t1=3&sel=finding:x&pin=<img>&note=../x');
    expect(p.join('\n')).toMatch(/trace id "..\/..\/etc\/passwd" is not a trace content hash/);
    expect(p.join('\n')).toMatch(/ends before it starts \(t0=9 > t1=3\)/);
    expect(p.join('\n')).toMatch(/selection "finding:x" is not understood/);
    expect(p.join('\n')).toMatch(/malformed track names/);
    expect(p.join('\n')).toMatch(/note id "..\/x" is malformed/);
  });

  it('clamps or replaces windows outside the trace, drops findings and tracks it does not have', () => {
    const out = reconcileView(
      { ...EMPTY_VIEW, trace: TRACE, t0: 50_000_000_000, t1: 60_000_000_000, sel: { kind: 'finding', id: 3 } },
      facts,
    );
    expect(out.patch).toMatchObject({ t0: 100, t1: 5000 });
    expect(out.problems[0]).toMatch(/outside this trace .*showing the selected finding/);
    const part = reconcileView({ ...EMPTY_VIEW, trace: TRACE, t0: -5_000_000_000, t1: 1_000_000_000 }, facts);
    expect(part.patch).toMatchObject({ t0: 0, t1: 1_000_000_000 });
    expect(part.problems[0]).toMatch(/reaches outside this trace/);
    const gone = reconcileView(
      { ...EMPTY_VIEW, trace: TRACE, sel: { kind: 'finding', id: 99 }, pinned: ['cpu#7', 'cpu#0'] },
      facts,
    );
    expect(gone.patch).toMatchObject({ sel: null, pinned: ['cpu#0'] });
    expect(gone.problems.join('\n')).toMatch(/Finding 99 .* does not exist .*5 findings/);
    expect(gone.problems.join('\n')).toMatch(/no track "cpu#7"/);
  });

  it('drops a deleted note, and opens a note-only link at the note', () => {
    const n: Note = {
      id: 'AbCdEfGhIjKlMnOpQrStU_',
      trace: TRACE,
      anchor: { kind: 'finding', finding: 1, t0: 1_000_000, t1: 2_000_000 },
      text: 'x',
      author: 'a',
      created_at: '',
      updated_at: '',
      version: 1,
    };
    expect(reconcileNote({ ...EMPTY_VIEW, note: 'ZZZZZZZZZZZZZZZZZZZZZZ' }, [n])).toMatchObject({
      patch: { note: null },
      problems: [expect.stringMatching(/deleted/)],
    });
    expect(reconcileNote({ ...EMPTY_VIEW, note: n.id }, [n]).patch).toEqual({
      t0: 650_000,
      t1: 2_350_000,
      sel: { kind: 'finding', id: 1 },
    });
  });
});
