// Field names come from the trace: a text event may print `__proto__=` or
// `constructor=` as a key. Such a key is a field like any other. Before, a
// printed `__proto__` made the text decoder compile `{ {}: v[0] }` (a
// lookup of the key in a plain object found Object.prototype) and the whole
// ingest failed with "Unexpected token '{'"; `constructor` was stored under
// the name "undefined".
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuckDb, type Engine } from '../engine/engine.ts';
import { ingestFile } from './ingest_file.ts';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-hostile-keys-'));
let engine: Engine;

const TRACEFS = [
  '# tracer: nop',
  '#',
  '           <...>-123   [000] ....   100.000001: mm_page_alloc: page=0x1 pfn=0x2 order=0 __proto__=5 migratetype=0',
  '           <...>-123   [000] ....   100.000002: foo_bar: __proto__=1 constructor=2 toString=x3 x=3',
  '           <...>-123   [001] ....   100.000003: foo_bar: hasOwnProperty=7 __proto__=8',
  '',
].join('\n');

/** (event, key, int_value, string_value) as the lines above print them, in event then key order. */
const EXPECTED = [
  ['mm_page_alloc', '__proto__', 5, null],
  ['mm_page_alloc', 'migratetype', 0, null],
  ['mm_page_alloc', 'order', 0, null],
  ['mm_page_alloc', 'page', null, '0x1'],
  ['mm_page_alloc', 'pfn', null, '0x2'],
  ['foo_bar', '__proto__', 1, null],
  ['foo_bar', 'constructor', 2, null],
  ['foo_bar', 'toString', null, 'x3'],
  ['foo_bar', 'x', 3, null],
  ['foo_bar', '__proto__', 8, null],
  ['foo_bar', 'hasOwnProperty', 7, null],
];

beforeAll(async () => {
  engine = await openDuckDb(':memory:');
});
afterAll(async () => {
  await engine.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe('field names that are also Object.prototype names', () => {
  it('are kept as fields of their events (tracefs text)', async () => {
    const file = path.join(scratch, 'proto.tracefs.txt');
    fs.writeFileSync(file, TRACEFS);
    const r = await ingestFile(file, { dataDir: path.join(scratch, 'data') });
    expect(r.summary.eventsTotal).toBe(3);
    await engine.exec(`ATTACH '${r.dbPath}' AS t (READ_ONLY)`);
    const rows = await engine.query<{
      name: string;
      key: string;
      int_value: bigint | null;
      string_value: string | null;
    }>(
      `SELECT e.name, a.key, a.int_value, a.string_value
       FROM t.ftrace_event e JOIN t.args a USING (arg_set_id) ORDER BY e.id, a.key`,
    );
    await engine.exec('DETACH t');
    expect(rows.map((x) => [x.name, x.key, x.int_value === null ? null : Number(x.int_value), x.string_value])).toEqual(
      EXPECTED,
    );
  });
});
