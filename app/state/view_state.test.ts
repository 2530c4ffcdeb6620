import { describe, expect, it } from 'vitest';
import { EMPTY_VIEW, viewFromSearch, viewToSearch } from './view_state.ts';

describe('view state <-> URL', () => {
  it('round-trips every field and stays readable', () => {
    const v = {
      ...EMPTY_VIEW,
      trace: 'e962771d9db3e49446f2687e216ade7f07fe4ca264df386c33a869782c8c4132',
      t0: 7_632_053_756,
      t1: 9_984_066_876,
      sel: { kind: 'finding' as const, id: 3 },
      pinned: ['cpu#1', 'thread#93'],
      hidden: ['flow#wakeup'],
      collapsed: ['group#Counters'],
      filter: 'kswapd',
      scope: 'detector' as const,
      note: 'AbCdEfGhIjKlMnOpQrStU_',
    };
    const s = viewToSearch(v);
    expect(s).toContain('t0=7632053756&t1=9984066876');
    expect(s).toContain('sel=finding:3');
    expect(s).toContain('pin=cpu:1,thread:93');
    expect(s).not.toContain('#'); // a '#' would start the fragment and cut a share link
    expect(s).toContain('note=AbCdEfGhIjKlMnOpQrStU_');
    expect(viewFromSearch(s)).toEqual(v);
    // The old percent-encoded form still opens.
    expect(viewFromSearch('?pin=cpu%231,thread%2393').pinned).toEqual(['cpu#1', 'thread#93']);
    // What the browser keeps of the URL (no fragment) still has every field.
    expect(viewFromSearch(new URL(`http://x/${s}`).search)).toEqual(v);
  });

  it('drops what is malformed instead of failing', () => {
    const v = viewFromSearch('?trace=../../etc&t0=5&t1=2&sel=finding:x&pin=<img>,cpu:0&note=../../x');
    expect(v.trace).toBeNull();
    expect(v.t0).toBeNull();
    expect(v.sel).toBeNull();
    expect(v.pinned).toEqual(['cpu#0']);
    expect(v.note).toBeNull();
  });
});
