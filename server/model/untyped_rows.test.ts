// UntypedRows (server/model/untyped_rows.ts) and the `args` / `ftrace_event`
// views over its shape tables, in a real DuckDB: whatever table an untyped
// event's fields land in (its shape's, a variant with a full dictionary's
// field stored as text, or `_args`), the views read back exactly the
// fields written, in order, each as an integer or as its text.
import { afterEach, describe, expect, it } from 'vitest';
import type { EventFields } from '../decode/decoded_event.ts';
import { openDuckDb, type Engine } from '../engine/engine.ts';
import { packCommon } from './model_layout.ts';
import { untypedRowsResult } from './many_tables_load.ts';
import { ModelStore } from './model_store.ts';
import { isCanonicalHex, MAX_FIELDS, SHAPE_TABLE_BASE, UntypedRows } from './untyped_rows.ts';

let engine: Engine | null = null;
afterEach(() => {
  engine?.close();
  engine = null;
});

interface Ev {
  name: string;
  fields: EventFields | null;
  raw?: string | null;
  /** common_flags and preempt_count (default 1 and 0; null: the source has none). */
  flags?: number | null;
  preemptCount?: number | null;
}

/** Writes the events (ids 0, 1, ...) through UntypedRows into a fresh model; returns what the views read. */
async function modelOf(
  events: Ev[],
  // shapeTableAfter: 0 unless told (these tests are about the shape tables).
  opts: { maxInterned?: number; text?: boolean; packed?: boolean; shapeTableAfter?: number } = {},
) {
  engine = await openDuckDb(':memory:');
  const store = await ModelStore.create(engine);
  const rows = new UntypedRows(
    store.layout,
    (t, d) => store.append(t, d),
    SHAPE_TABLE_BASE,
    0,
    undefined,
    opts.maxInterned,
    opts.shapeTableAfter ?? 0,
  );
  rows.setBase(1_000_000_000n, opts.text ?? false);
  const names = [...new Set(events.map((e) => e.name))];
  events.forEach((e, id) => {
    const flags = e.flags === undefined ? 1 : e.flags;
    const preemptCount = e.preemptCount === undefined ? 0 : e.preemptCount;
    const nameId = names.indexOf(e.name);
    // writePacked: as the field worker calls it, with the batches' packed common fields.
    if (opts.packed) {
      rows.writePacked(
        id,
        id * 10,
        id % 2,
        0,
        nameId,
        packCommon(flags, preemptCount),
        100 + id,
        e.raw ?? null,
        e.fields,
      );
    } else rows.write(id, id * 10, id % 2, 0, nameId, flags, preemptCount, 100 + id, e.raw ?? null, e.fields);
  });
  rows.flush();
  await store.finish(
    untypedRowsResult(
      rows,
      names.map((n) => [n, 'test', events.filter((e) => e.name === n).length]),
    ),
  );
  const args = await engine.query<{
    arg_set_id: bigint;
    arg_index: number;
    key: string;
    int_value: bigint | null;
    string_value: string | null;
    value_type: string;
  }>('SELECT arg_set_id, arg_index, key, int_value, string_value, value_type FROM args ORDER BY arg_set_id, arg_index');
  const events_ = await engine.query<{
    id: bigint;
    ts: bigint;
    name: string;
    arg_set_id: bigint | null;
    raw: string | null;
    source_where: bigint;
    common_flags: number | null;
    preempt_count: number | null;
  }>('SELECT id, ts, name, arg_set_id, raw, source_where, common_flags, preempt_count FROM ftrace_event ORDER BY id');
  const tables = await engine.query<{ name: string }>(
    `SELECT table_name AS name FROM duckdb_tables() WHERE starts_with(table_name, '_shape_') ORDER BY 1`,
  );
  const [{ n: argsRows }] = await engine.query<{ n: bigint }>('SELECT count(*) AS n FROM _args');
  return {
    args: args.map((r) => [Number(r.arg_set_id), r.arg_index, r.key, r.int_value, r.string_value, r.value_type]),
    events: events_.map((e) => ({
      id: Number(e.id),
      ts: e.ts,
      name: e.name,
      argSet: e.arg_set_id === null ? null : Number(e.arg_set_id),
      raw: e.raw,
      where: Number(e.source_where),
      flags: e.common_flags,
    })),
    common: events_.map((e) => [e.common_flags, e.preempt_count]),
    shapeTables: tables.length,
    argsRows: Number(argsRows),
    shapes: rows.shapeResults(),
  };
}

/** What the args view must read for these events: every field, in order, integers as int_value, text as string_value. */
function expectedArgs(events: Ev[]) {
  return events.flatMap((e, id) =>
    Object.entries(e.fields ?? {}).map(([key, v], index) => [
      id,
      index,
      key,
      typeof v === 'string' ? null : BigInt(v),
      typeof v === 'string' ? v : null,
      typeof v === 'string' ? 'string' : 'int',
    ]),
  );
}

const kmalloc = (ptr: string, site = 'kmem_cache_alloc_noprof+0x1a2') => ({
  call_site: site,
  ptr,
  bytes_req: 1024,
  bytes_alloc: 1024,
  gfp_flags: 'GFP_KERNEL|__GFP_ZERO',
  node: -1,
  accounted: 'false',
});

describe('untyped events: one row per event in a table of its shape', () => {
  it('reads back every field, in order; hex text is stored as its integer and read back as the same text', async () => {
    const events: Ev[] = [
      { name: 'kmalloc', fields: kmalloc('0xffff888109c64000') },
      { name: 'kmalloc', fields: kmalloc('0xffff888109c64400') },
      { name: 'kfree', fields: { call_site: 'kfree_skb+0x2', ptr: '0x0' } },
      {
        name: 'mm_page_alloc',
        fields: { page: '0x27b01a', pfn: '0x27b01a', order: 0, migratetype: 1, gfp_flags: 'GFP_HIGHUSER_MOVABLE' },
      },
      {
        name: 'big',
        fields: { all_bits: '0xffffffffffffffff', top: '0x8000000000000000', huge: 9007199254740993n, neg: -5 },
      },
    ];
    const m = await modelOf(events);
    expect(m.args).toEqual(expectedArgs(events));
    expect(m.argsRows).toBe(0);
    expect(m.shapeTables).toBe(4);
    expect(m.shapes.find((s) => s.fields[0]!.key === 'call_site')!.fields.map((f) => f.kind)).toEqual([
      'str',
      'hex',
      'int',
      'int',
      'str',
      'int',
      'str',
    ]);
    // ftrace_event: each event once, with its own id as arg_set_id, its position, flags and absolute ts.
    expect(m.events).toEqual(
      events.map((e, id) => ({
        id,
        ts: 1_000_000_000n + BigInt(id * 10),
        name: e.name,
        argSet: id,
        raw: null,
        where: 100 + id,
        flags: 1,
      })),
    );
  });

  it('text that only looks like hex stays text: leading zeros, upper case, no digits', async () => {
    for (const v of ['0x00ab', '0xAB', '0x', '0x1g', '00000000dbab40df', '0x10000000000000000'])
      expect(isCanonicalHex(v)).toBe(false);
    for (const v of ['0x0', '0xab', '0xffffffffffffffff']) expect(isCanonicalHex(v)).toBe(true);
    const events: Ev[] = ['0x00ab', '0xAB', '0xab', '00000000dbab40df'].map((ptr) => ({
      name: 'kfree',
      fields: { call_site: 'x', ptr },
    }));
    const m = await modelOf(events);
    expect(m.args).toEqual(expectedArgs(events));
  });

  it('a text field whose dictionary is full moves to a shape storing it as text; the views read the same', async () => {
    // Room for 4 strings in all: the call site, the flags, `false` and one pointer-like text.
    const events: Ev[] = ['00000000dbab40df', '00000000dbab40e0', '00000000dbab40e1', '00000000dbab40df'].map((p) => ({
      name: 'kmalloc',
      fields: kmalloc(p),
    }));
    const m = await modelOf(events, { maxInterned: 4 });
    expect(m.args).toEqual(expectedArgs(events));
    expect(m.argsRows).toBe(0);
    // The first shape, then its variant with ptr as text, which the later events keep using.
    expect(m.shapes.map((s) => s.fields[1]!.kind)).toEqual(['str', 'text']);
  });

  it('fields that fit no shape keep _args rows; events without fields have no arg_set_id; text inputs keep raw', async () => {
    // More fields than a shape takes (MAX_FIELDS).
    const wide = Object.fromEntries(Array.from({ length: MAX_FIELDS + 1 }, (_, k) => [`f${k}`, k]));
    const events: Ev[] = [
      { name: 'wide', fields: wide, raw: 'f0=0 ...' },
      { name: 'nothing', fields: {}, raw: '' },
      { name: 'garbled', fields: null, raw: 'cannot parse this' },
      { name: 'kfree', fields: { call_site: 'x', ptr: '0x1' }, raw: 'call_site=x ptr=0x1' },
    ];
    const m = await modelOf(events, { text: true });
    expect(m.args).toEqual(expectedArgs(events));
    expect(m.argsRows).toBe(MAX_FIELDS + 1);
    expect(m.events.map((e) => [e.name, e.argSet, e.raw])).toEqual([
      ['wide', 0, 'f0=0 ...'],
      ['nothing', null, ''],
      ['garbled', null, 'cannot parse this'],
      ['kfree', 3, 'call_site=x ptr=0x1'],
    ]);
  });

  it('writePacked (the field worker: flags and preempt count packed) writes what write does, shaped or not', async () => {
    // block_dirty_buffer of an unmapped buffer head: its sector is 2^64 - 65536, past 2^63, fitting no shape.
    const unmapped = { dev: 266338304, sector: 18446744073709486080n, size: 4096 };
    const events: Ev[] = [
      { name: 'block_dirty_buffer', fields: unmapped, flags: 1, preemptCount: 0 },
      {
        name: 'block_dirty_buffer',
        fields: { dev: 266338304, sector: 42926089, size: 4096 },
        flags: 0,
        preemptCount: 2,
      },
      { name: 'block_dirty_buffer', fields: unmapped, flags: null, preemptCount: 1 },
      { name: 'block_dirty_buffer', fields: unmapped, flags: 13, preemptCount: null },
      { name: 'block_dirty_buffer', fields: unmapped, flags: null, preemptCount: null },
      { name: 'kfree', fields: { call_site: 'x', ptr: '0x1' }, flags: 255, preemptCount: 255 },
    ];
    const unpacked = await modelOf(events);
    engine?.close();
    const packed = await modelOf(events, { packed: true });
    expect(packed.events).toEqual(unpacked.events);
    expect(packed.args).toEqual(unpacked.args);
    // The flags and preempt counts given, each NULL where the source had none.
    expect(packed.common).toEqual(unpacked.common);
    expect(packed.common).toEqual(events.map((e) => [e.flags ?? null, e.preemptCount ?? null]));
    // Every sector as given, one past 2^63 as the same 64 bits read back signed.
    expect(packed.args.filter((r) => r[2] === 'sector').map((r) => r[3])).toEqual(
      events.filter((e) => e.fields && 'sector' in e.fields).map((e) => BigInt.asIntN(64, BigInt(e.fields!.sector!))),
    );
  });
});
