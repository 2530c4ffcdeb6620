/**
 * The field worker's share of a Perfetto trace: the rows of the records the
 * decoder framed and handed on (RawRecordSink with a PerfettoFieldSpec;
 * server/ingest/field_worker.ts calls perfettoFieldDecoder), their fields
 * written into their typed tables' columns by the kinds' compiled writers
 * (event_writer.ts), as the main thread writes the rows it keeps.
 *
 * Why the field worker: on a 1.3M-event trace the main thread was busy for
 * the whole decode phase (framing, merging the CPUs, reading fields and
 * filling columns), while the store worker was idle 60% of it and the field
 * worker waited. Reading fields into columns was ~60% of the main thread's
 * decode time.
 */
import type { DirectRowColumns, PerfettoFieldSpec } from '../decoded_event.ts';
import { compileFieldReader } from './event_fields.ts';
import { compileEventWriter, finishRow, makePlan, type DirectPlan, type EventWriter } from './event_writer.ts';
import type { EventFieldSpec } from './perfetto_schema.ts';
import { ProtoError, ProtoReader } from './proto_reader.ts';

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
  const kinds: ({ write: EventWriter; rows: FramedRows; plan: DirectPlan } | undefined)[] = [];
  for (const f of spec.formats) {
    const rows = rowsFor(f.name);
    if (rows === null) continue; // not taken by the main thread's sink
    const fields = f.fields.map((x) => (x === null ? undefined : (x as EventFieldSpec)));
    const reader = compileFieldReader(f.name, fields, spec.gfpKnown, f.typed);
    const plan = makePlan(reader, rows);
    kinds[f.id] = { write: compileEventWriter(plan, reader), rows, plan };
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
          k.write(pr.reset(off, off + r.length(i)), rows, null, unknown);
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
