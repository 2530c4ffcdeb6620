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
import { printedField } from './kernel_values.ts';
import {
  exact,
  ProtoReader,
  signed64,
  utf8Text,
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
}

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
      return (r) => {
        const s = r.bytes();
        return utf8Text(r.buf, s, r.pos);
      };
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
): FieldReader {
  const names: (string | undefined)[] = [];
  const convert: (Convert | undefined)[] = [];
  const wire: number[] = [];
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
    } else if (POINTER_FIELDS.has(f.name) && f.kind !== 'string') {
      convert[no] = function pointer(r, syms) {
        return hex(base(r, syms) as number | bigint);
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
    } else convert[no] = base;
  });
  return { names, convert, wire };
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
