/**
 * KvColumnWriter (argument text straight into columns, on the field worker)
 * must give exactly the row the fields-object path gives (the event's
 * parser, then the table's field writer), and leave to that path whatever it
 * is not sure of. Checked on every key=value reclaim event of the text
 * fixtures, plus mutations that push it off its fast path (hex, signs, long
 * numbers, repeated, missing and renamed keys, extra spaces, truncations).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuckDb, type Engine } from '../../../engine/engine.ts';
import type { ChunkData } from '../../../model/column_chunk.ts';
import { ModelStore, type ModelLayout } from '../../../model/model_store.ts';
import { TableRowWriter, TypedRows } from '../../../model/typed_rows.ts';
import { typedTableFor } from '../../../model/typed_tables.ts';
import { directTextWriter, textFieldParser } from '../raw_text_fields.ts';
import {
  comparableChunks as comparable,
  KV_FIXTURES as FILES,
  mutatedKvEvents,
  recordedKvEventsWithLookAlikes,
} from '../../../../tests/support/decode/ftrace_text/fields/test_kv_events.ts';

let engine: Engine;
let layout: ModelLayout;
beforeAll(async () => {
  engine = await openDuckDb(':memory:');
  layout = (await ModelStore.create(engine)).layout;
});
afterAll(() => engine?.close());

/**
 * Rows of one table written two ways; returns their chunks and dictionaries.
 * sharedBlock: the texts lie in one block, one after another, as on the field
 * worker (where an event repeating the text before it is taken from memory).
 */
function writeBoth(events: [string, string][], sharedBlock: boolean) {
  const block = Buffer.from(events.map(([, args]) => args).join('\n'), 'latin1');
  let blockPos = 0;
  const chunks: { object: ChunkData[]; direct: ChunkData[] } = { object: [], direct: [] };
  const objectRows = new TypedRows(layout, (_t, d) => chunks.object.push(d));
  const directRows = new TypedRows(layout, (_t, d) => chunks.direct.push(d));
  objectRows.setBase(0n);
  directRows.setBase(0n);
  const writers = new Map<
    string,
    { object: TableRowWriter; direct: TableRowWriter; kv: ReturnType<typeof directTextWriter> }
  >();
  let taken = 0;
  let rows = 0;
  events.forEach(([name, args], id) => {
    let w = writers.get(name);
    if (w === undefined) {
      const table = typedTableFor(name)!;
      const direct = new TableRowWriter(directRows, directRows.target(table)!, name);
      w = {
        object: new TableRowWriter(objectRows, objectRows.target(table)!, name),
        direct,
        kv: directTextWriter(name, direct),
      };
      writers.set(name, w);
    }
    const bytes = Buffer.from(args, 'latin1');
    const fields = textFieldParser(name)(args, 0, args.length, args, bytes);
    const at = blockPos;
    blockPos += args.length + 1;
    const sure =
      w.kv !== null && (sharedBlock ? w.kv.scan(block, at, at + args.length) : w.kv.scan(bytes, 0, bytes.length));
    // What the writer takes, the definition parses.
    if (sure) expect(fields, `${name}: ${args}`).not.toBeNull();
    if (fields === null) return;
    rows++;
    w.object.startRow(id, id * 10, 1, 2, 3, id);
    w.object.allFields(fields);
    w.object.end();
    w.direct.startRow(id, id * 10, 1, 2, 3, id);
    if (sure) {
      w.kv!.write();
      taken++;
    } else w.direct.allFields(fields);
    w.direct.end();
  });
  objectRows.flush();
  directRows.flush();
  return { chunks, dicts: { object: objectRows.dictLists(), direct: directRows.dictLists() }, taken, rows };
}

describe('KvColumnWriter writes the fields-object path rows', () => {
  for (const f of FILES) {
    it(f, () => {
      const events = mutatedKvEvents(f);
      expect(events.length).toBeGreaterThan(0);
      const r = writeBoth(events, false);
      expect(comparable(r.chunks.direct)).toEqual(comparable(r.chunks.object));
      expect(r.dicts.direct).toEqual(r.dicts.object);
      // It takes the plain lines (most originals), and not the rest.
      expect(r.taken).toBeGreaterThan(0);
      expect(r.taken).toBeLessThan(r.rows);
    });
  }

  it('events that repeat the text before them, in one block, as on the field worker', () => {
    for (const f of ['reclaim_kswapd.report.txt', 'tracefs_plain.txt', 'handmade/kernel4x_kswapd_escalation.txt']) {
      const events = recordedKvEventsWithLookAlikes(f);
      const r = writeBoth(events, true);
      expect(comparable(r.chunks.direct), f).toEqual(comparable(r.chunks.object));
      expect(r.dicts.direct, f).toEqual(r.dicts.object);
      expect(r.taken, f).toBeGreaterThan(r.rows / 2);
    }
  });
});
