/**
 * A Perfetto event's fields straight into its typed table's columns
 * (DirectRowColumns), on either thread: the main thread writes the rows the
 * decoder keeps (decode_perfetto.ts, through DirectRows), the field worker
 * writes the rows of the records the decoder framed and handed on
 * (RawRecordSink with a PerfettoFieldSpec; server/ingest/field_worker.ts
 * calls perfettoFieldDecoder).
 *
 * Why the field worker: on a 1.3M-event trace the main thread was busy for
 * the whole decode phase (framing, merging the CPUs, reading fields and
 * filling columns), while the store worker was idle 60% of it and the field
 * worker waited. Reading fields into columns was ~60% of the main thread's
 * decode time.
 */
import type { DirectRowColumns, PerfettoFieldSpec } from '../decoded_event.ts';
import { compileFieldReader, INT_LOW32, INT_SIGNED32, type FieldReader, type SymbolTable } from './event_fields.ts';
import type { EventFieldSpec } from './perfetto_schema.ts';
import { ProtoError, ProtoReader } from './proto_reader.ts';

/** How one event kind's fields go to a table's columns. */
export interface DirectPlan {
  /** Column by field number, -1: no column. */
  column: Int32Array;
  /**
   * By field number: how a plain integer field's number goes straight into
   * its column's array (NUMBER_I32, NUMBER_I64, NUMBER_F64; 0: through
   * rows.value()), with the converter's conversion (FieldReader.int) kept in
   * intMode; or KEYED_TEXT: text made from the varint's bits alone
   * (FieldReader.keyedText) into a text column, through the rows' per-key
   * cache (rows.keyed / rows.text).
   */
  store: Uint8Array;
  intMode: Uint8Array;
  /** Columns any field of the kind can fill (the others are absent in every row). */
  columns: number[];
  alwaysAbsent: number[];
  seen: Uint8Array;
}

export function makePlan(reader: FieldReader, rows: DirectRowColumns): DirectPlan {
  const byName = new Map<string, number>();
  reader.names.forEach((n, no) => n !== undefined && byName.set(n, no));
  const column = new Int32Array(reader.names.length).fill(-1);
  const store = new Uint8Array(reader.names.length);
  const columns: number[] = [];
  const alwaysAbsent: number[] = [];
  let maxColumn = 0;
  for (const f of rows.fields) {
    maxColumn = Math.max(maxColumn, f.column);
    const no = f.names.map((n) => byName.get(n)).find((x) => x !== undefined);
    if (no === undefined) alwaysAbsent.push(f.column);
    else {
      column[no] = f.column;
      columns.push(f.column);
      if ((reader.int[no] ?? 0) !== 0)
        store[no] = f.kind === 'i32' ? NUMBER_I32 : f.kind === 'i64' ? NUMBER_I64 : f.kind === 'f64' ? NUMBER_F64 : 0;
      else if (reader.keyedText[no] === 1 && f.kind === 'text') store[no] = KEYED_TEXT;
    }
  }
  return { column, store, intMode: reader.int, columns, alwaysAbsent, seen: new Uint8Array(maxColumn + 1) };
}

const NUMBER_I32 = 1;
const NUMBER_I64 = 2;
const NUMBER_F64 = 3;
const KEYED_TEXT = 4;
const TWO_32 = 2 ** 32;

/**
 * The fields of one event message (`r` set to its bytes) into the row begun
 * on `rows`: what event() would store for the same fields. Fields the reader
 * does not know are skipped and counted in `unknown`. Throws ProtoError on
 * damaged bytes, with the row's columns half written (the caller ends or
 * drops the row: finishRow()).
 */
export function writeFields(
  plan: DirectPlan,
  reader: FieldReader,
  rows: DirectRowColumns,
  r: ProtoReader,
  syms: SymbolTable,
  unknown: { n: number },
): void {
  const seen = plan.seen;
  const column = plan.column;
  const store = plan.store;
  const intMode = plan.intMode;
  while (r.next()) {
    const no = r.field;
    const c = reader.convert[no];
    if (c === undefined || r.wire !== reader.wire[no]) {
      unknown.n++;
      r.skip();
      continue;
    }
    const col = no < column.length ? column[no]! : -1;
    if (col < 0) {
      r.skip();
      continue;
    }
    const how = store[no]!;
    if (how === KEYED_TEXT) {
      // Flags, enumerations and pointers repeat: their text is made and
      // looked up in the column's dictionary only the first time their bits
      // come (per cache slot), as the trace.dat decoder's compiled readers do.
      const at = r.pos;
      r.varintWords();
      if (!rows.keyed(col, r.lo, r.hi)) {
        r.pos = at;
        rows.text(col, c(r, syms));
      }
      seen[col] = 1;
      continue;
    }
    if (how !== 0) {
      // A plain integer straight into the column's array: what rows.value()
      // stores for the converter's number (ColumnChunk.setNumber), without the
      // converter's and value()'s calls. Past 2^53 (negative int64 / int32,
      // huge uint64) the converter's bigint path as before.
      const at = r.pos;
      let v = r.varint();
      if (v <= Number.MAX_SAFE_INTEGER) {
        const mode = intMode[no]!;
        if (mode === INT_SIGNED32) v |= 0;
        else if (mode === INT_LOW32 && v > 0xffffffff) v %= TWO_32;
        const a = rows.arrays[col]!;
        const row = rows.row;
        if (how === NUMBER_I64) {
          const hi = Math.floor(v / TWO_32);
          a[2 * row] = v - hi * TWO_32;
          a[2 * row + 1] = hi;
        } else a[row] = v;
        seen[col] = 1;
        continue;
      }
      r.pos = at;
    }
    rows.value(col, c(r, syms));
    seen[col] = 1;
  }
  finishRow(plan, rows);
}

/** Marks the columns no field filled as absent, and clears `seen` for the next row. */
export function finishRow(plan: DirectPlan, rows: DirectRowColumns): void {
  const seen = plan.seen;
  for (const col of plan.columns) {
    if (seen[col] === 1) seen[col] = 0;
    else rows.absent(col);
  }
  for (const col of plan.alwaysAbsent) rows.absent(col);
}

/** A typed table's rows on the field worker (typed_rows.ts TableRowWriter). */
export interface FramedRows extends DirectRowColumns {
  startRow(id: number, ts: number, cpu: number, utid: number, common: number | null, where: number): void;
  end(): void;
}

/** The framed records of one batch (model/record_batch.ts RecordBatchReader). */
export interface FramedRecords {
  readonly batch: { readonly count: number };
  readonly bytes: Uint8Array;
  format(i: number): number;
  id(i: number): number;
  ts(i: number): number;
  cpu(i: number): number;
  utid(i: number): number;
  common(i: number): number | null;
  where(i: number): number;
  offset(i: number): number;
  length(i: number): number;
}

/**
 * The field worker's decoder of Perfetto records: each record's event message
 * into its typed table's row, by the reader compiled from the spec (the main
 * thread offers only kinds with a typed table and no interned-symbol field,
 * so no symbol table crosses threads).
 *
 * A record whose bytes are damaged keeps the fields read before the damage
 * (the others absent) and counts in `unparsed`: its row is begun, with its
 * event id, before its fields are read. The main thread, which decodes the
 * same events of small traces, drops such an event and reports its offset.
 * Fields of unknown number are skipped as on the main thread, but not
 * counted (the count does not cross back).
 */
export function perfettoFieldDecoder(
  spec: PerfettoFieldSpec,
  rowsFor: (name: string) => FramedRows | null,
): {
  decode(r: FramedRecords): void;
  finish(): void;
  unparsed: number;
  strings(): [number, string][];
  shapes(): never[];
} {
  /** By format id. */
  const kinds: ({ reader: FieldReader; rows: FramedRows; plan: DirectPlan } | undefined)[] = [];
  for (const f of spec.formats) {
    const rows = rowsFor(f.name);
    if (rows === null) continue; // not taken by the main thread's sink
    const fields = f.fields.map((x) => (x === null ? undefined : (x as EventFieldSpec)));
    const reader = compileFieldReader(f.name, fields, spec.gfpKnown, f.typed);
    kinds[f.id] = { reader, rows, plan: makePlan(reader, rows) };
  }
  const unknown = { n: 0 };
  const self = {
    unparsed: 0,
    // Rows only go to typed tables: nothing held back, no strings or shapes of this thread's own.
    finish: () => undefined,
    strings: (): [number, string][] => [],
    shapes: (): never[] => [],
    decode(r: FramedRecords): void {
      const count = r.batch.count;
      const pr = new ProtoReader(r.bytes, 0, 0);
      for (let i = 0; i < count; i++) {
        const k = kinds[r.format(i)];
        if (k === undefined) throw new Error(`field worker: no reader for Perfetto event kind ${r.format(i)}`);
        const rows = k.rows;
        rows.startRow(r.id(i), r.ts(i), r.cpu(i), r.utid(i), r.common(i), r.where(i));
        const off = r.offset(i);
        try {
          writeFields(k.plan, k.reader, rows, pr.reset(off, off + r.length(i)), null, unknown);
        } catch (e) {
          if (!(e instanceof ProtoError)) throw e;
          finishRow(k.plan, rows);
          self.unparsed++;
        }
        rows.end();
      }
    },
  };
  return self;
}
