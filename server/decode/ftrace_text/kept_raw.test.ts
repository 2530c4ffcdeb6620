// KeptRaw drops an event's printed text only where the excerpt's rendering
// of its fields (report_line.ts formatArgs, the oracle here) gives the same
// text back, byte for byte; it compares the name=value and `bdi NAME:`
// layouts in place, so these tests check that comparison against the built
// string on every event of the committed text fixtures (report and tracefs
// forms, of many event systems), and on the same texts changed by a byte.
import { describe, expect, it } from 'vitest';
import { formatArgs } from '../../notes/report_line.ts';
import type { EventFields } from '../decoded_event.ts';
import { KEEP_AFTER_MISSES, KeptRaw } from './kept_raw.ts';
import { TEXT_FIXTURES, decodedEventsOf } from '../../../tests/support/decode/ftrace_text/text_fixtures.ts';

describe('KeptRaw keeps an event text unless its fields print it back', () => {
  it.each(TEXT_FIXTURES)(
    '%s: dropped exactly where formatArgs gives the text back',
    { timeout: 120_000 },
    async (file) => {
      const events = (await decodedEventsOf(file)).filter((e) => e.raw !== null && e.fields !== null);
      expect(events.length).toBeGreaterThan(0);
      const kept = new KeptRaw();
      const missesBeforeMatch = new Map<string, number>();
      const wrong: string[] = [];
      let dropped = 0;
      for (const e of events) {
        const same = formatArgs(e.name, e.fields!) === e.raw;
        const got = kept.of(e.name, e.raw, e.fields);
        const misses = missesBeforeMatch.get(e.name) ?? 0;
        if (got === null) dropped++;
        // Dropped only when the same; kept when the same only once the name stopped being checked.
        if (got === null ? !same : same && misses < KEEP_AFTER_MISSES)
          wrong.push(`${e.name} line ${e.where}: ${got === null ? 'dropped' : 'kept'} ${e.raw}`);
        if (got !== e.raw && got !== null) wrong.push(`${e.name} line ${e.where}: returned other text`);
        missesBeforeMatch.set(e.name, same || misses === -1 ? -1 : misses + 1);
      }
      expect(wrong.slice(0, 5)).toEqual([]);
      // Every fixture has events whose fields print back (sched_*'s name=value in tracefs text, ...).
      expect(dropped).toBeGreaterThan(0);
    },
  );

  it.each(TEXT_FIXTURES)('%s: a text one byte off is kept', { timeout: 120_000 }, async (file) => {
    const printsBack = (await decodedEventsOf(file)).filter(
      (e) => e.raw !== null && e.fields !== null && formatArgs(e.name, e.fields) === e.raw,
    );
    expect(printsBack.length).toBeGreaterThan(0);
    for (const e of printsBack) {
      const raw = e.raw!;
      const last = raw.length - 1;
      for (const changed of [
        `${raw} `,
        ` ${raw}`,
        raw.slice(0, last),
        `${raw.slice(0, last)}${raw[last] === 'x' ? 'y' : 'x'}`,
        raw.replace(' ', '  '),
        raw.replace('=', ':'),
      ]) {
        if (changed === raw) continue;
        expect({ event: e.name, text: new KeptRaw().of(e.name, changed, e.fields) }).toEqual({
          event: e.name,
          text: changed,
        });
      }
    }
  });

  it('text that did not parse, and binary sources, keep what they have', () => {
    const kept = new KeptRaw();
    expect(kept.of('kmalloc', 'call_site=?', null)).toBe('call_site=?');
    expect(kept.of('kmalloc', null, { ptr: 1 })).toBe(null);
    // `kv` layout: every field, in order, space-separated; a field without a value is not printed.
    expect(kept.of('my_event', 'a=1 b=x', { a: 1, b: 'x' })).toBe(null);
    expect(kept.of('my_event', 'b=x a=1', { a: 1, b: 'x' })).toBe('b=x a=1');
    expect(kept.of('my_event', 'a=1', { a: 1, b: null as unknown as string })).toBe(null);
    // `bdi` layout: writeback's bdi name first, then the other fields.
    expect(
      kept.of('writeback_mark_inode_dirty', 'bdi 8:0: ino=5 state=0x1', { name: '8:0', ino: 5, state: '0x1' }),
    ).toBe(null);
    expect(kept.of('writeback_mark_inode_dirty', 'bdi 8:0: ino=5', { ino: 5, name: '8:1' })).toBe('bdi 8:0: ino=5');
    // Formats with a quick rendering (the kmem plugin's and the page allocator's), as report_line.ts prints them.
    const site = { call_site: 'f+0x1' };
    expect(kept.of('kfree', '(f+0x1) call_site=f+0x1 ptr=(nil)', { ...site, ptr: '0x0' })).toBe(null);
    expect(kept.of('kfree', '(f+0x1) call_site=f+0x1 ptr=0x0', { ...site, ptr: '0x0' })).toBe(
      '(f+0x1) call_site=f+0x1 ptr=0x0',
    );
    expect(
      kept.of('kmalloc', '(f+0x1) call_site=f+0x1 ptr=0xff bytes_req=8', { ...site, ptr: '0xff', bytes_req: 8 }),
    ).toBe(null);
    expect(kept.of('kmalloc', '(f+0x2) call_site=f+0x1 ptr=0xff', { ...site, ptr: '0xff' })).toBe(
      '(f+0x2) call_site=f+0x1 ptr=0xff',
    );
    const page = 'page=0x10 pfn=0x10 order=0 migratetype=1 gfp_flags=GFP_KERNEL';
    const pageFields = { page: '0x10', pfn: '0x10', order: 0, migratetype: 1, gfp_flags: 'GFP_KERNEL' };
    expect(kept.of('mm_page_alloc', page, pageFields)).toBe(null);
    // page is printed from pfn: a page that is not the pfn keeps its text.
    expect(kept.of('mm_page_alloc', page.replace('page=0x10', 'page=0x11'), pageFields)).toBe(
      page.replace('page=0x10', 'page=0x11'),
    );
    // A pfn that is a number is printed in hex (by formatArgs itself).
    expect(kept.of('mm_page_alloc', page, { ...pageFields, pfn: 16 })).toBe(null);
    expect(kept.of('mm_page_alloc', `${page} `, pageFields)).toBe(`${page} `);
    expect(kept.of('mm_page_free', 'page=0x10 pfn=0x10 order=2', { page: '0x10', pfn: '0x10', order: 2 })).toBe(null);
    expect(kept.of('mm_page_free', 'page=0x10 pfn=0x10 order=2', { page: '0x10', pfn: '0x10', order: 3 })).toBe(
      'page=0x10 pfn=0x10 order=2',
    );
  });

  it("writeback's quick renderings drop a text exactly where formatArgs prints it", () => {
    // Each against the oracle: the text formatArgs prints for these fields, and that text one byte off.
    const foreign = { bdi_id: 1, name: '7:0', ino: 25516713, memcg_id: 1, cgroup_ino: 1, page_cgroup_ino: 4226 };
    const wbc = {
      name: '7:0',
      nr_to_write: 9223372036854775807n,
      pages_skipped: 0,
      sync_mode: 1,
      for_kupdate: 0,
      for_background: 0,
      range_cyclic: 0,
      range_start: 0,
      range_end: 9223372036854775807n,
      cgroup_ino: 1,
    };
    const cases: [string, EventFields][] = [
      ['track_foreign_dirty', foreign],
      ['track_foreign_dirty', { ...foreign, memcg_id: null as unknown as number, ino: 7n }],
      ['track_foreign_dirty', { ...foreign, name: '8388608' }],
      ['track_foreign_dirty', { ...foreign, name: 8388608 }],
      ['wbc_writepage', wbc],
      ['wbc_writepage', { ...wbc, range_start: '0x1000', range_end: 4096 }],
      ['wbc_writepage', { ...wbc, range_start: '4096', range_end: -1 }],
      ['wbc_writepage', { ...wbc, range_end: 2 ** 60, cgroup_ino: null as unknown as number }],
    ];
    for (const [name, fields] of cases) {
      const printed = formatArgs(name, fields);
      expect({ name, fields, kept: new KeptRaw().of(name, printed, fields) }).toEqual({ name, fields, kept: null });
      for (const changed of [`${printed} `, printed.replace(' ', '  '), printed.replace('=', ':')]) {
        expect({ name, changed, kept: new KeptRaw().of(name, changed, fields) }).toEqual({
          name,
          changed,
          kept: changed,
        });
      }
    }
    // The real text: its fields as the text decoder parses them print it back.
    expect(
      new KeptRaw().of(
        'track_foreign_dirty',
        'bdi 7:0[1]: ino=25516713 memcg_id=1 cgroup_ino=1 page_cgroup_ino=4226',
        foreign,
      ),
    ).toBe(null);
    const wbcText =
      'bdi 7:0: towrt=9223372036854775807 skip=0 mode=1 kupd=0 bgrd=0 cyclic=0 start=0x0 end=0x7fffffffffffffff cgroup_ino=1';
    expect(new KeptRaw().of('wbc_writepage', wbcText, wbc)).toBe(null);
  });
});
