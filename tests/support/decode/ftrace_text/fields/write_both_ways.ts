/**
 * The check the field worker's text-to-column writers share: each event's
 * row written by the fields-object path (the event's parser, then the
 * table's field writer) and by the writer under test (or, where it is not
 * sure, by the fields-object path), into two TypedRows; the tests compare
 * the two sets of chunks and dictionaries.
 */
import { expect } from 'vitest';
import type { ChunkData } from '../../../../../server/model/column_chunk.ts';
import type { ModelLayout } from '../../../../../server/model/model_store.ts';
import { TableRowWriter, TypedRows } from '../../../../../server/model/typed_rows.ts';
import { typedTableFor } from '../../../../../server/model/typed_tables.ts';
import type { DirectRowColumns } from '../../../../../server/decode/decoded_event.ts';
import { textFieldParser, type TextColumnWriter } from '../../../../../server/decode/ftrace_text/raw_text_fields.ts';

export interface WriteBothWaysOptions {
  /** The writer under test for an event name (null: that event has none). */
  writerFor: (name: string, cols: DirectRowColumns) => TextColumnWriter | null;
  /** Every event must have a writer. */
  writerRequired: boolean;
  /**
   * The texts lie in one block, one after another, as on the field worker
   * (where an event repeating the text before it may be taken from memory);
   * else each is scanned from its own bytes.
   */
  sharedBlock: boolean;
  /** The parser is also given the text's bytes (its byte path), as the field worker does for these events. */
  parserGetsBytes: boolean;
}

export function writeBothWays(layout: ModelLayout, events: [string, string][], opts: WriteBothWaysOptions) {
  const block = Buffer.from(events.map(([, args]) => args).join('\n'), 'latin1');
  let blockPos = 0;
  const chunks: { object: ChunkData[]; direct: ChunkData[] } = { object: [], direct: [] };
  const objectRows = new TypedRows(layout, (_t, d) => chunks.object.push(d));
  const directRows = new TypedRows(layout, (_t, d) => chunks.direct.push(d));
  objectRows.setBase(0n);
  directRows.setBase(0n);
  const writers = new Map<string, { object: TableRowWriter; direct: TableRowWriter; text: TextColumnWriter | null }>();
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
        text: opts.writerFor(name, direct),
      };
      if (opts.writerRequired) expect(w.text, name).not.toBeNull();
      writers.set(name, w);
    }
    const bytes = Buffer.from(args, 'latin1');
    const fields = textFieldParser(name)(args, 0, args.length, args, opts.parserGetsBytes ? bytes : null);
    const at = blockPos;
    blockPos += args.length + 1;
    const sure =
      w.text !== null &&
      (opts.sharedBlock ? w.text.scan(block, at, at + args.length) : w.text.scan(bytes, 0, bytes.length));
    // What the writer takes, the definition parses.
    if (sure) expect(fields, `${name}: ${args}`).not.toBeNull();
    if (fields === null) return;
    rows++;
    w.object.startRow(id, id * 10, 1, 2, 3, id);
    w.object.allFields(fields);
    w.object.end();
    w.direct.startRow(id, id * 10, 1, 2, 3, id);
    if (sure) {
      w.text!.write();
      taken++;
    } else w.direct.allFields(fields);
    w.direct.end();
  });
  objectRows.flush();
  directRows.flush();
  return { chunks, dicts: { object: objectRows.dictLists(), direct: directRows.dictLists() }, taken, rows };
}
