import { describe, expect, it } from 'vitest';
import { Kallsyms } from './kallsyms.ts';

describe('Kallsyms', () => {
  const k = Kallsyms.parse(
    [
      'ffffffff81000000 T _stext',
      'ffffffff8134a0f0 t super_cache_scan',
      'ffffffff8134a2a0 t super_cache_count',
      '0000000000000000 A fixed_percpu_data',
      'ffffffffc0a01000 t xfs_fs_nr_cached_objects\t[xfs]',
      'garbage line',
      '',
    ].join('\n'),
  );

  it('gives %pS form with the offset into the symbol, as trace-cmd prints it', () => {
    expect(k.lookupWithOffset(0xffffffff, 0x8134a0f0)).toBe('super_cache_scan+0x0');
    expect(k.lookupWithOffset(0xffffffff, 0x8134a135)).toBe('super_cache_scan+0x45');
    expect(k.lookupWithOffset(0xffffffff, 0xc0a01010)).toBe('xfs_fs_nr_cached_objects+0x10');
    expect(k.lookupWithOffset(0, 0x1000)).toBeNull();
  });

  it('resolves an address to the symbol at or below it, bare name', () => {
    expect(k.size).toBe(4);
    expect(k.lookup(0xffffffff, 0x8134a0f0)).toBe('super_cache_scan');
    expect(k.lookup(0xffffffff, 0x8134a100)).toBe('super_cache_scan');
    expect(k.lookup(0xffffffff, 0x8134a2a0)).toBe('super_cache_count');
    expect(k.lookup(0xffffffff, 0xc0a01010)).toBe('xfs_fs_nr_cached_objects');
    expect(k.lookup(0xffffffff, 0x80000000)).toBeNull();
    expect(k.lookup(0, 5)).toBeNull();
    // memoised path gives the same answer
    expect(k.lookup(0xffffffff, 0x8134a100)).toBe('super_cache_scan');
  });

  it('counts the symbols of a table not parsed yet (lazy) by the same rules as parse', () => {
    const text = [
      'ffffffff81000000 T _stext',
      'ffffffff81001000 t crname\r',
      'ffffffff81002000 t \t[mod]', // no name
      '0000000000000000 t hidden', // kptr_restrict
      'ffffffff81003000 t tabcr\r\t[mod]',
      '0000000000000000 A fixed_percpu_data', // absolute
      'zzzz t bad', // no address
      'ffffffffc0a01000 t xfs_fs_nr_cached_objects\t[xfs]',
      'ffffffff81004000 t last_no_newline',
    ].join('\n');
    // Kept (by hand): _stext, crname, tabcr, xfs_fs_nr_cached_objects, last_no_newline.
    const lazy = Kallsyms.lazy(text);
    expect(lazy.size).toBe(5);
    expect(Kallsyms.parse(text).size).toBe(5);
    expect(lazy.lookup(0xffffffff, 0x81001004)).toBe('crname');
    expect(lazy.lookup(0xffffffff, 0x81003000)).toBe('tabcr');
    expect(lazy.lookup(0xffffffff, 0x81002800)).toBe('crname');
    expect(lazy.lookupWithOffset(0xffffffff, 0x81004010)).toBe('last_no_newline+0x10');
    expect(lazy.size).toBe(5);
    expect(Kallsyms.lazy(null).size).toBe(0);
  });
});
