/**
 * The native key=value reader (scan_kv.c) must give exactly the rows the
 * fields-object path gives (the event's parser, then the table's field
 * writer), and leave to the JavaScript path whatever it is not sure of.
 * Checked as the field worker uses it: batches of records in one block of
 * bytes, plans learned by KvColumnWriter on the JavaScript path first, then
 * read natively; on every key=value reclaim event of the text fixtures, plus
 * mutations that push it off its path (hex, signs, long numbers, repeated,
 * missing and renamed keys, extra spaces, truncations), and a flood of
 * distinct text values past its token table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuckDb, type Engine } from '../../../engine/engine.ts';
import type { ChunkData } from '../../../model/column_chunk.ts';
import { ModelStore, type ModelLayout } from '../../../model/model_store.ts';
import { TableRowWriter, TypedRows } from '../../../model/typed_rows.ts';
import { typedTableFor } from '../../../model/typed_tables.ts';
import { directTextWriter, textFieldParser } from '../raw_text_fields.ts';
import { comparableChunks as comparable, KV_FIXTURES as FILES, kvEvents, mutatedKvEvents, recordedKvEventsWithLookAlikes } from '../../../../tests/support/decode/ftrace_text/fields/test_kv_events.ts';
import { loadNativeModule } from './load_wasm.ts';
import { NativeKvScanner, nativeKvScanner, SCAN_KV_WASM } from './native_kv_scanner.ts';

/** record_batch.ts: ints per record; format, at, len, kind. */
const REC_INTS = 7;
/** Small batches: plans learned on the JavaScript path in one are read natively in the next, even in the small handmade files. */
const BATCH = 16;

let engine: Engine;
let layout: ModelLayout;
beforeAll(async () => {
  engine = await openDuckDb(':memory:');
  layout = (await ModelStore.create(engine)).layout;
});
afterAll(() => engine?.close());

/**
 * Rows of events written two ways, in batches as the field worker gets
 * them: the definition (fields object), and the field worker's way (native
 * reader, else KvColumnWriter.scan/write, else the fields object).
 */
function writeBoth(events: [string, string][], scanner: NativeKvScanner) {
  scanner.reset();
  const chunks: { object: ChunkData[]; native: ChunkData[] } = { object: [], native: [] };
  const objectRows = new TypedRows(layout, (_t, d) => chunks.object.push(d));
  const nativeRows = new TypedRows(layout, (_t, d) => chunks.native.push(d));
  objectRows.setBase(0n);
  nativeRows.setBase(0n);
  const nameIds = new Map<string, number>();
  const writers: { object: TableRowWriter; direct: TableRowWriter; kv: ReturnType<typeof directTextWriter> }[] = [];
  let native = 0;
  let rows = 0;
  for (let from = 0; from < events.length; from += BATCH) {
    const batch = events.slice(from, from + BATCH);
    const block = Buffer.from(batch.map(([, args]) => args).join('\n'), 'latin1');
    const ints = new Int32Array(batch.length * REC_INTS);
    let at = 0;
    batch.forEach(([name, args], i) => {
      let id = nameIds.get(name);
      if (id === undefined) {
        id = nameIds.size;
        nameIds.set(name, id);
        const table = typedTableFor(name)!;
        const direct = new TableRowWriter(nativeRows, nativeRows.target(table)!, name);
        const kv = directTextWriter(name, direct);
        kv?.useNative(scanner, id);
        writers[id] = { object: new TableRowWriter(objectRows, objectRows.target(table)!, name), direct, kv };
      }
      ints.set([id, 0, 0, 0, at, args.length, 0], i * REC_INTS);
      at += args.length + 1;
    });
    scanner.scan(ints, batch.length, block);
    batch.forEach(([name, args], i) => {
      const id = from + i;
      const w = writers[nameIds.get(name)!]!;
      const fields = textFieldParser(name)(args, 0, args.length, args, Buffer.from(args, 'latin1'));
      const handle = scanner.plan[i]!;
      const plan = handle >= 0 && w.kv !== null ? w.kv.nativePlan(handle) : null;
      const s = ints[i * REC_INTS + 4]!;
      const sure = plan === null && w.kv !== null && w.kv.scan(block, s, s + args.length);
      // What the native reader or the writer takes, the definition parses.
      if (plan !== null || sure) expect(fields, `${name}: ${args}`).not.toBeNull();
      if (fields === null) return;
      rows++;
      w.object.startRow(id, id * 10, 1, 2, 3, id);
      w.object.allFields(fields);
      w.object.end();
      w.direct.startRow(id, id * 10, 1, 2, 3, id);
      if (plan !== null) {
        w.kv!.writeNative(plan, scanner.vals, scanner.base[i]!);
        native++;
      } else if (sure) w.kv!.write();
      else w.direct.allFields(fields);
      w.direct.end();
    });
  }
  objectRows.flush();
  nativeRows.flush();
  return { chunks, dicts: { object: objectRows.dictLists(), native: nativeRows.dictLists() }, native, rows };
}

function freshScanner(): NativeKvScanner {
  return new NativeKvScanner(loadNativeModule(SCAN_KV_WASM)!);
}

describe('the native key=value reader writes the fields-object path rows', () => {
  it('loads (else the field worker would read every record in JavaScript, slower)', () => {
    expect(nativeKvScanner()).not.toBeNull();
  });

  for (const f of FILES) {
    it(f, () => {
      const once = mutatedKvEvents(f);
      expect(once.length).toBeGreaterThan(0);
      // twice: the small files' sequences are learned in the first pass, read natively in the second
      const events = [...once, ...once];
      const r = writeBoth(events, freshScanner());
      expect(comparable(r.chunks.native)).toEqual(comparable(r.chunks.object));
      expect(r.dicts.native).toEqual(r.dicts.object);
      // It reads the plain lines (most originals), and not the rest.
      expect(r.native).toBeGreaterThan(0);
      expect(r.native).toBeLessThan(r.rows);
    });
  }

  it('events in recorded order, runs of equal texts with look-alikes between, as on the field worker', () => {
    for (const f of ['reclaim_kswapd.report.txt', 'tracefs_plain.txt', 'memcg_reclaim.report.txt']) {
      const events = recordedKvEventsWithLookAlikes(f);
      const r = writeBoth(events, freshScanner());
      expect(comparable(r.chunks.native), f).toEqual(comparable(r.chunks.object));
      expect(r.dicts.native, f).toEqual(r.dicts.object);
      expect(r.native, f).toBeGreaterThan(r.rows / 2);
    }
  });

  it('a new key sequence every few events: plans dropped and the plan table used up, rows unchanged', () => {
    // Each sequence is learned on the JavaScript path, read natively until
    // the writer drops it (it keeps 4), and past 2048 sequences the native
    // reader takes no more: the JavaScript path reads the rest.
    const base = kvEvents('reclaim_kswapd.report.txt').find(([name]) => name === 'mm_vmscan_lru_shrink_inactive')!;
    expect(base).toBeDefined();
    const events: [string, string][] = [];
    for (let seq = 0; seq < 2500; seq++) for (let k = 0; k < 20; k++) events.push([base[0], `${base[1]} extra_${seq}=${k}`]);
    const r = writeBoth(events, freshScanner());
    expect(comparable(r.chunks.native)).toEqual(comparable(r.chunks.object));
    expect(r.dicts.native).toEqual(r.dicts.object);
    // about half of each of the first 2048 sequences' events (the rest come before it is learned), none after
    expect(r.native).toBeGreaterThan(2000 * 8);
    expect(r.native).toBeLessThanOrEqual(2048 * 11); // all 2500 sequences would be ~25000
  });

  it('more distinct text values than its token table holds: the rest go to JavaScript, rows unchanged', () => {
    const base = kvEvents('reclaim_kswapd.report.txt').find(([name, args]) => name === 'mm_vmscan_lru_isolate' && /\blru=\S+$/.test(args))!;
    expect(base).toBeDefined();
    const events = Array.from({ length: 70_000 }, (_, i): [string, string] => [base[0], base[1].replace(/lru=\S+$/, `lru=value_${i}`)]);
    const r = writeBoth(events, freshScanner());
    expect(comparable(r.chunks.native)).toEqual(comparable(r.chunks.object));
    expect(r.dicts.native).toEqual(r.dicts.object);
    // 65536 tokens, then JavaScript (its first batch too: plans are learned there)
    expect(r.native).toBeGreaterThan(60_000);
    expect(r.native).toBeLessThan(66_000);
  });
});
