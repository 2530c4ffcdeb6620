/**
 * Field readers for trace.dat records that were framed on another thread
 * (RawRecordSink, decoded_event.ts): compiled from the RawFieldSpec exactly
 * as decodeTraceDat compiles them, so a record's fields come out the same
 * whichever thread decodes them.
 */
import type { DirectRowColumns, EventFields, RawFieldSpec } from '../decoded_event.ts';
import { compileEvent, makeHelpers } from './event_decoder.ts';
import { parseEventFormat } from './event_format.ts';
import { PrintkFormats } from './bprint.ts';
import { Kallsyms } from './kallsyms.ts';
import { readsAsPrinted } from '../ftrace_text/fields/index.ts';
import type { CompiledShapeReader, FieldsReader, Helpers } from './event_decoder.ts';

/**
 * One set of helpers per spec: the field worker compiles the typed and the
 * untyped readers of one file, and each parse of a full kallsyms (~150k
 * lines) costs tens of ms. The table itself is parsed on the first lookup
 * (Kallsyms.lazy): many traces print no symbol.
 */
const helpersBySpec = new WeakMap<RawFieldSpec, Helpers>();

function helpersOf(spec: RawFieldSpec): Helpers {
  let h = helpersBySpec.get(spec);
  if (h === undefined) {
    h = makeHelpers(spec.littleEndian, Kallsyms.lazy(spec.kallsyms), PrintkFormats.parse(spec.printk));
    helpersBySpec.set(spec, h);
  }
  return h;
}

export interface RawFieldReader<R extends DirectRowColumns> {
  /** Where the fields go. */
  rows: R;
  /**
   * Writes a record's fields into `rows` (the record starts with the common
   * fields). Records shorter than the format's fixed fields are read
   * field by field and only what they hold is written.
   */
  read(buf: Buffer, off: number, len: number): void;
}

/**
 * The typed-row reader of a format by format id, compiled on the first ask
 * (null for a format `rowsFor` gives no columns, or an id the file has no
 * format for). Why on the first ask: a trace.dat saves the formats of every
 * event of each enabled system, and compiling each one that has a typed
 * table (its print format analysed, its readers generated, its row writer
 * made) at the field worker's start compiled formats that never have a
 * record: of the formats this thread reads, 14 were compiled and 8 read on
 * sched_wq.v7, 14 and 10 on many_systems.v7, 22 and 4 on kmem.v7.
 */
export function compileRawFieldReaders<R extends DirectRowColumns & { allFields(fields: EventFields): void }>(
  spec: RawFieldSpec,
  rowsFor: (name: string, system: string) => R | null,
): (formatId: number) => RawFieldReader<R> | null {
  const helpers = helpersOf(spec);
  const formats = new Map(spec.formats.map((f) => [f.id, f]));
  return (formatId) => {
    const f = formats.get(formatId);
    if (f === undefined) return null;
    const rows = rowsFor(f.name, f.system);
    if (rows === null) return null;
    const ev = compileEvent(parseEventFormat(f.text, f.system), helpers, spec.littleEndian, spec.longSize, rows);
    const direct = ev.direct!.read;
    const minLen = ev.minLen;
    const safe = ev.safe;
    return {
      rows,
      read(buf, off, len) {
        if (len >= minLen) direct(buf, off, len, rows);
        else rows.allFields(safe(buf, off, len));
      },
    };
  };
}

/** A reader of an event without a typed table: its fields object, as decodeTraceDat makes it for EventSink.event(). */
export interface UntypedFieldReader {
  minLen: number;
  /** Records of minLen bytes or more. */
  fast: FieldsReader;
  /** Shorter records: only the fields they hold. */
  safe: FieldsReader;
  /** Records of minLen bytes or more straight into their shape's row (see CompiledEvent.shaped); null: none. */
  shaped: CompiledShapeReader | null;
}

/**
 * The fields-object reader of a format `wanted` names, by format id
 * (undefined for the others), compiled as decodeTraceDat compiles readers
 * for its EventSink.event() path, on the first ask: a trace.dat saves the
 * formats of every event of each enabled system, and compiling each (its
 * print format analysed, its readers generated) cost the field worker
 * ~0.3-0.4 s CPU on a file with many systems. A format that does not
 * compile gets none: the decoding thread skips its records (as an unknown
 * event id).
 */
export function compileUntypedFieldReaders(
  spec: RawFieldSpec,
  wanted: (name: string, system: string) => boolean,
  /** Leading columns of shape rows (untyped_rows.ts SHAPE_LEAD): compile shape readers too. */
  shapeLead: number | null = null,
): (formatId: number) => UntypedFieldReader | undefined {
  const helpers = helpersOf(spec);
  const formats = new Map(spec.formats.map((f) => [f.id, f]));
  const readers = new Map<number, UntypedFieldReader | undefined>();
  const compile = (formatId: number): UntypedFieldReader | undefined => {
    const f = formats.get(formatId);
    if (f === undefined || !wanted(f.name, f.system)) return undefined;
    try {
      const ev = compileEvent(
        parseEventFormat(f.text, f.system),
        helpers,
        spec.littleEndian,
        spec.longSize,
        null,
        readsAsPrinted(f.name, f.system),
        shapeLead,
      );
      return { minLen: ev.minLen, fast: ev.fast, safe: ev.safe, shaped: ev.shaped };
    } catch {
      // decodeTraceDat reported it, and frames none of its records
      return undefined;
    }
  };
  return (formatId) => {
    if (!readers.has(formatId)) readers.set(formatId, compile(formatId));
    return readers.get(formatId);
  };
}
