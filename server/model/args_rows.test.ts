// ArgsRows and the `args` view (queries/schema.sql) in a real DuckDB: text is
// interned until the dictionary is full, then stored in the row, and the view
// reads both the same way. The cap is what keeps an ingest of events whose
// values rarely repeat (kmem pointers) from growing with the file.
import { afterEach, describe, expect, it } from 'vitest';
import { openDuckDb, type Engine } from '../engine/engine.ts';
import { ArgsRows, SID_BASE_FIELD_WORKER } from './args_rows.ts';
import { appendRows, ColumnAppender } from './column_appender.ts';
import { ColumnChunk } from './column_chunk.ts';
import { ModelStore } from './model_store.ts';

let engine: Engine | null = null;
afterEach(() => {
  engine?.close();
  engine = null;
});

/** Writes `events` through ArgsRows (dictionary of at most `maxInterned`) into a fresh model; returns the `args` view's rows and the dictionary's size. */
async function argsOf(events: Record<string, string | number>[], maxInterned: number, sidBase = 0) {
  engine = await openDuckDb(':memory:');
  const layout = (await ModelStore.create(engine)).layout;
  const appender = await ColumnAppender.create(engine.connection, '_args', layout.args);
  const rows = new ArgsRows(new ColumnChunk(layout.args, (d) => appender.append(d)), sidBase, maxInterned);
  events.forEach((fields, id) => rows.write(id, fields));
  rows.flush();
  appender.close();
  const strings = rows.stringRows();
  await appendRows(
    engine.connection,
    '_string',
    [
      { name: 'sid', kind: 'i32' },
      { name: 'str', kind: 'str' },
    ],
    strings,
  );
  const view = await engine.query<{
    arg_set_id: bigint;
    arg_index: number;
    key: string;
    int_value: bigint | null;
    string_value: string | null;
    value_type: string;
  }>('SELECT arg_set_id, arg_index, key, int_value, string_value, value_type FROM args ORDER BY arg_set_id, arg_index');
  const [inline] = await engine.query<{ keys: bigint; values: bigint }>(
    'SELECT count(key_str) AS keys, count(str) AS values FROM _args',
  );
  return {
    view: view.map((r) => [
      Number(r.arg_set_id),
      r.arg_index,
      r.key,
      r.int_value === null ? null : Number(r.int_value),
      r.string_value,
      r.value_type,
    ]),
    interned: strings.length,
    inline,
  };
}

const kmalloc = (ptr: string) => ({
  call_site: '__alloc_skb+0x4e/0x180',
  ptr,
  bytes_req: 1024,
  gfp_flags: 'GFP_KERNEL',
});
const events = [
  kmalloc('0000000010000000'),
  kmalloc('0000000010000040'),
  kmalloc('0000000010000080'),
  { new_key: 'x', ptr: '0000000010000000' },
];

/** What the view must read for `events`, whatever was interned. */
const expected = events.flatMap((fields, id) =>
  Object.entries(fields).map(([key, v], index) => [
    id,
    index,
    key,
    typeof v === 'number' ? v : null,
    typeof v === 'string' ? v : null,
    typeof v === 'number' ? 'int' : 'string',
  ]),
);

describe('args: a capped string dictionary', () => {
  it('with room for every string, all are interned and none is stored in the rows', async () => {
    const r = await argsOf(events, 1000);
    expect(r.view).toEqual(expected);
    expect(r.inline).toEqual({ keys: 0n, values: 0n });
    expect(r.interned).toBe(11); // 5 keys; call_site's symbol, three pointers, GFP_KERNEL, x
  });

  it('once full, new strings go into the rows, strings already interned keep their sids, and the view reads the same', async () => {
    // Room for the first event's 4 keys and 3 text values (call_site, ptr, gfp_flags) only.
    const r = await argsOf(events, 7);
    expect(r.view).toEqual(expected);
    expect(r.interned).toBe(7);
    // events 1 and 2: a new pointer each; event 3: new key `new_key`, its value `x`; its ptr was interned by event 0
    expect(r.inline).toEqual({ keys: 1n, values: 3n });
  });

  it('the field worker numbers its dictionary from its own base, and the view joins on it', async () => {
    const r = await argsOf(events, 7, SID_BASE_FIELD_WORKER);
    expect(r.view).toEqual(expected);
  });
});
