/**
 * An ftrace event's fields, read from its Perfetto message, under the
 * kernel's field names and with the trace.dat decoder's value conventions
 * (EVENT_FIELD_CONVENTIONS, decoded_event.ts):
 *
 * - function pointers (mm_shrink_slab_*.shrink, workqueue_*.function): the
 *   kernel symbol the trace interned for them (Perfetto's symbolize_ksyms
 *   writes the symbol's iid in the field and the name in the packet's
 *   InternedData.kernel_symbols), else the value as `0x` hex (the address,
 *   when the recorder did not symbolise): what trace_processor shows too;
 * - other pointers (shr, work): `0x` + lowercase hex;
 * - flags and enumerations the kernel prints symbolically: their printed
 *   text (kernel_values.ts);
 * - integers as numbers (bigint past 2^53), strings as they are.
 *
 * Each event kind gets one compiled reader (an array of per-field-number
 * converters), built on its first event.
 */
import { type EventFields, type FieldValue, setField } from '../decoded_event.ts';
import type { EventFieldSpec, ScalarKind } from './perfetto_schema.ts';
import { isDevField, kernelDevFromUserspace, printedField } from './kernel_values.ts';
import {
  exact,
  internedUtf8,
  ProtoReader,
  signed64,
  WIRE_FIXED32,
  WIRE_FIXED64,
  WIRE_LEN,
  WIRE_VARINT,
} from './proto_reader.ts';

/** Kernel symbols the bundle's sequence interned (iid -> name), or null. */
export type SymbolTable = Map<number, string> | null;

type Convert = (r: ProtoReader, syms: SymbolTable) => FieldValue;

export interface FieldReader {
  names: (string | undefined)[];
  convert: (Convert | undefined)[];
  /** The wire type each field must come with. */
  wire: number[];
  /**
   * Plain integer fields (their value is the number read): how the varint
   * becomes the value, INT_AS_READ, INT_LOW32 (uint32) or INT_SIGNED32
   * (int32); 0 for every other field. For writers that store numbers
   * without the converter (raw_fields.ts writeFields).
   */
  int: Uint8Array;
  /**
   * 1 for a varint field whose value is text made from the varint's 64 bits
   * alone (flags and enumerations printed, pointers as hex): writers may
   * cache the text by those bits (DirectRowColumns.keyed) and skip the
   * converter when they have it. 0 for every other field (symbols depend on
   * the bundle's interned table too).
   */
  keyedText: Uint8Array;
}

/** FieldReader.int: the value is the varint's number (uint64, int64 and bool below 2^53). */
export const INT_AS_READ = 1;
/** FieldReader.int: the varint's low 32 bits, unsigned (uint32). */
export const INT_LOW32 = 2;
/** FieldReader.int: the varint's low 32 bits, signed (int32). */
export const INT_SIGNED32 = 3;
const INT_MODE: Partial<Record<ScalarKind, number>> = {
  uint64: INT_AS_READ,
  int64: INT_AS_READ,
  bool: INT_AS_READ,
  uint32: INT_LOW32,
  int32: INT_SIGNED32,
};

/** Function-pointer fields, by event name. */
const SYMBOL_FIELDS: Record<string, string> = {
  mm_shrink_slab_start: 'shrink',
  mm_shrink_slab_end: 'shrink',
  workqueue_queue_work: 'function',
  workqueue_activate_work: 'function',
  workqueue_execute_start: 'function',
  workqueue_execute_end: 'function',
};
/** Whether an event's fields include a function pointer the trace may intern as a kernel symbol. */
export function readsSymbols(event: string): boolean {
  return SYMBOL_FIELDS[event] !== undefined;
}
/** Plain pointer fields, by name (%p in the kernel's print fmt). */
const POINTER_FIELDS = new Set(['shr', 'work']);

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function hex(v: number | bigint): string {
  return '0x' + (typeof v === 'bigint' ? BigInt.asUintN(64, v) : v).toString(16);
}

/** An unsigned varint: a number, or an exact bigint past 2^53. */
function readUnsigned(r: ProtoReader): number | bigint {
  const at = r.pos;
  const v = r.varint();
  if (v <= MAX_SAFE) return v;
  r.pos = at;
  return r.varint64();
}

/** A signed (two's complement) varint: int32 / int64. */
function readSigned(r: ProtoReader): number | bigint {
  const at = r.pos;
  const v = r.varint();
  if (v <= MAX_SAFE) return v;
  r.pos = at;
  return exact(signed64(r.varint64()));
}

function readZigzag(r: ProtoReader): number | bigint {
  const u = BigInt(readUnsigned(r));
  return exact((u >> 1n) ^ -(u & 1n));
}

/** A string field's reader that returns the same string for the same bytes (see internedUtf8). */
function internedText(): Convert {
  const text = internedUtf8();
  return (r) => {
    const s = r.bytes();
    return text(r.buf, s, r.pos);
  };
}

/**
 * A uint64 / int64 varint's 64 bits as `0x` + lowercase hex, as hex() prints
 * the bigint varint64() reads, without the bigints.
 */
function hexVarint(r: ProtoReader): string {
  r.varintWords();
  const lo = r.lo;
  const hi = r.hi;
  return hi === 0 ? '0x' + lo.toString(16) : '0x' + hi.toString(16) + lo.toString(16).padStart(8, '0');
}

function scalar(kind: ScalarKind): Convert {
  switch (kind) {
    case 'int32':
      return (r) => {
        const v = readSigned(r);
        return typeof v === 'number' ? v | 0 : Number(BigInt.asIntN(32, v));
      };
    case 'int64':
      return (r) => readSigned(r);
    case 'uint32':
      return (r) => {
        // Truncated to 32 bits as protobuf does; exact in doubles (no bigint per value).
        const v = readUnsigned(r);
        return typeof v === 'number' ? (v <= 0xffffffff ? v : v % 2 ** 32) : Number(BigInt.asUintN(32, v));
      };
    case 'uint64':
    case 'bool':
      return (r) => readUnsigned(r);
    case 'sint32':
    case 'sint64':
      return (r) => readZigzag(r);
    case 'string':
      return internedText();
    case 'bytes':
      return (r) => {
        const s = r.bytes();
        return '0x' + Buffer.from(r.buf.buffer, r.buf.byteOffset + s, r.pos - s).toString('hex');
      };
    case 'fixed64':
      return (r) => exact(r.fixed64());
    case 'fixed32':
      return (r) => r.fixed32();
    case 'double':
      return (r) => r.double();
  }
}

/** The wire type a scalar kind is written with. */
export function wireOf(kind: ScalarKind): number {
  switch (kind) {
    case 'string':
    case 'bytes':
      return WIRE_LEN;
    case 'fixed64':
    case 'double':
      return WIRE_FIXED64;
    case 'fixed32':
      return WIRE_FIXED32;
    default:
      return WIRE_VARINT;
  }
}

/** The reader of one event kind's message. */
export function compileFieldReader(
  event: string,
  fields: readonly (EventFieldSpec | undefined)[],
  gfpKnown: boolean,
  /** A message of Perfetto's own for the event (its dev_t fields in userspace's encoding), not a generic event. */
  typedMessage: boolean,
): FieldReader {
  const names: (string | undefined)[] = [];
  const convert: (Convert | undefined)[] = [];
  const wire: number[] = [];
  const int = new Uint8Array(fields.length);
  const keyedText = new Uint8Array(fields.length);
  const symbolField = SYMBOL_FIELDS[event];
  fields.forEach((f, no) => {
    if (!f) return;
    names[no] = f.name;
    wire[no] = wireOf(f.kind);
    const base = scalar(f.kind);
    const printed = printedField(event, f.name, gfpKnown);
    if (f.name === symbolField && f.kind !== 'string') {
      convert[no] = function symbol(r, syms) {
        const v = base(r, syms) as number | bigint;
        const name = typeof v === 'number' ? syms?.get(v) : undefined;
        return name ?? hex(v);
      };
    } else if (POINTER_FIELDS.has(f.name) && (f.kind === 'uint64' || f.kind === 'int64')) {
      // Both are the pointer's 64 bits on the wire; hex() prints int64 as unsigned too.
      convert[no] = hexVarint;
      keyedText[no] = 1;
    } else if (POINTER_FIELDS.has(f.name) && f.kind !== 'string') {
      convert[no] = function pointer(r, syms) {
        return hex(base(r, syms) as number | bigint);
      };
    } else if (typedMessage && isDevField(event, f.name) && f.kind !== 'string' && f.kind !== 'bytes') {
      // The model keeps the kernel's encoding (kernel_values.ts); a generic event's fields are the kernel's as they are.
      convert[no] = function devT(r, syms) {
        return kernelDevFromUserspace(base(r, syms) as number | bigint);
      };
    } else if (printed && f.kind !== 'string' && f.kind !== 'bytes') {
      // Flags repeat: print each value once.
      const cache = new Map<number | bigint, string>();
      convert[no] = function printedValue(r, syms) {
        const v = base(r, syms) as number | bigint;
        let s = cache.get(v);
        if (s === undefined) {
          s = printed.print(v);
          if (cache.size < 4096) cache.set(v, s);
        }
        return s;
      };
      keyedText[no] = wire[no] === WIRE_VARINT ? 1 : 0;
    } else {
      convert[no] = base;
      int[no] = INT_MODE[f.kind] ?? 0;
    }
  });
  return { names, convert, wire, int, keyedText };
}

/**
 * The fields of an event message (the reader set to its bytes). Fields the reader does
 * not know (a newer Perfetto's additions) are skipped: `unknown` counts
 * them for the report.
 */
export function readFields(
  reader: FieldReader,
  r: ProtoReader,
  syms: SymbolTable,
  unknown: { n: number },
): EventFields {
  const out: EventFields = {};
  while (r.next()) {
    const c = reader.convert[r.field];
    if (c === undefined || r.wire !== reader.wire[r.field]) {
      unknown.n++;
      r.skip();
      continue;
    }
    setField(out, reader.names[r.field]!, c(r, syms));
  }
  return out;
}
