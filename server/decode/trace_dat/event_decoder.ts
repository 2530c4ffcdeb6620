/**
 * Turns an event format into a precompiled field reader: one generated
 * function per event format that reads every non-common field at its fixed
 * offset and builds the fields object in one literal (stable hidden class,
 * no per-event loops, regexes or bigint). Field names from the file only ever
 * appear JSON-quoted in the generated source, offsets/sizes only as integers.
 */
import {
  isStackEvent,
  type DirectColumnKind,
  type DirectRowColumns,
  type EventFields,
  type FieldValue,
  literalKey,
  type ShapeRowColumns,
} from '../decoded_event.ts';
import type { EventFormat, FieldDef } from './event_format.ts';
import { PrintkFormats, renderBprint } from './bprint.ts';
import type { Kallsyms } from './kallsyms.ts';
import { analyzePrintFmt, type PrintFmtInfo, type SymbolicRenderer } from './print_fmt.ts';

export type FieldsReader = (buf: Buffer, off: number, len: number) => EventFields;
/** Writes a record's fields into a sink's DirectRows (see DirectRowSink). */
export type DirectReader = (buf: Buffer, off: number, len: number, rows: DirectRowColumns) => void;

export interface CompiledEvent<R extends DirectRowColumns = DirectRowColumns> {
  id: number;
  name: string;
  system: string;
  /** Record length needed for the fast reader (all fixed fields in range). */
  minLen: number;
  fast: FieldsReader;
  /** Reader that checks every field against the record length (short/corrupt records). */
  safe: FieldsReader;
  /** When the sink takes this event's rows directly: where they go, and the reader (records of minLen or more). */
  direct: { rows: R; read: DirectReader } | null;
  /** sched plugin emulation: (pid field, comm field) pairs whose comm trace-cmd registers. */
  commRegistrations: { pidOff: number; commOff: number; commSize: number }[];
  /**
   * With `shapeLead` (events without a typed table): the reader writing a
   * record of minLen or more straight into its shape's row (true), or
   * writing nothing (false: take fast() and the general path). Null when
   * the format's fields cannot be written so (none, too many, odd names).
   */
  shaped: CompiledShapeReader | null;
}

/** See CompiledEvent.shaped. */
export type ShapeReader = (b: Buffer, o: number, n: number, w: ShapeRowColumns) => boolean;

export interface CompiledShapeReader {
  read: ShapeReader;
  /** The fields, in fast()'s key order. */
  keys: string[];
  /** Per field, the kind the format fixes (0 integer, 1 0x-hex), -1 where the value decides. */
  fixedKinds: Int8Array;
}

const TWO_POW_32 = 4294967296;
const HEX8 = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Runtime helpers the generated code calls (passed in as `h`). */
export interface Helpers {
  u64(b: Buffer, p: number): number | bigint;
  s64(b: Buffer, p: number): number | bigint;
  ptr64(b: Buffer, p: number): string;
  ptr32(b: Buffer, p: number): string;
  sym64(b: Buffer, p: number): string;
  sym32(b: Buffer, p: number): string;
  /** As sym64/sym32, with the offset into the symbol (%pS: `func+0x45`). */
  symoff64(b: Buffer, p: number): string;
  symoff32(b: Buffer, p: number): string;
  /** An integer as `0x` and its hex digits (negative: its two's complement in `bytes` bytes), as `0x%lx` prints it. */
  hex(v: number | bigint, bytes: number): string;
  cstr(b: Buffer, p: number, max: number): string;
  /** cstr of a 16-byte array (TASK_COMM_LEN: every sched event's task names). */
  cstr16(b: Buffer, p: number): string;
  dynstr(b: Buffer, recOff: number, recLen: number, fieldPos: number, fieldEnd: number, relative: boolean): string;
  arr(b: Buffer, p: number, count: number, elem: number, signed: boolean): string;
  dynarr(
    b: Buffer,
    recOff: number,
    recLen: number,
    fieldPos: number,
    fieldEnd: number,
    relative: boolean,
    elem: number,
    signed: boolean,
  ): string;
  tailstr(b: Buffer, recOff: number, recLen: number, p: number): string;
  tailarr(b: Buffer, recOff: number, recLen: number, p: number, elem: number, signed: boolean): string;
  stack(b: Buffer, recOff: number, recLen: number, p: number, elem: number, kernel: boolean): string;
  /** A trace_printk() message: the format its pointer at fmtPos names, applied to the packed arguments from bufPos (bprint.ts). */
  bprint(b: Buffer, recOff: number, recLen: number, fmtPos: number, fmtSize: number, bufPos: number): string;
  /** A trace_puts() string: the constant its pointer at strPos names. */
  bputs(b: Buffer, strPos: number, strSize: number): string;
}

/**
 * What an event's generated code uses besides the file's helpers: its
 * symbolic renderers (passed in as `s`, referred to by index) and the
 * hexOfNumber of those that have one (print_fmt.ts SymbolicRenderer; as
 * `x`, for shape readers). Kept out of the source so that formats with the
 * same layout get the same source (see instantiate()).
 */
interface EventOwn {
  sym: SymbolicFn[];
  hexValues: ((raw: number) => number)[];
}

export type SymbolicFn = (raw: number | bigint) => FieldValue;

/**
 * The runtime helpers for a file of this byte order, symbol table and
 * trace_printk formats: composed from the readers below, one concern each.
 */
export function makeHelpers(
  littleEndian: boolean,
  kallsyms: Kallsyms,
  printk: PrintkFormats = PrintkFormats.none,
): Helpers {
  const words = wordReaders(littleEndian);
  const ints = wideIntReaders(words);
  const ptrs = pointerReaders(words);
  const syms = symbolReaders(words, kallsyms);
  const text = recordText(words, internedStrings());
  const arrays = arrayPrinters(words, ints, ptrs, syms, littleEndian);
  const messages = printkMessages(words, printk, kallsyms, littleEndian);
  return {
    ...ints,
    ...ptrs,
    ...syms,
    hex: hexOf,
    ...text,
    ...arrays,
    ...messages,
  };
}

/**
 * 32-bit reads at byte positions, in the file's byte order, and where a
 * 64-bit value's low and high words sit. Byte reads rather than
 * Buffer.readUInt32LE(), which validates its argument on every call:
 * callers only read inside the record, and these reads were a fifth of the
 * decoder's time on a 10M-event trace.dat.
 */
interface WordReaders {
  /** Unsigned 32-bit word at p. */
  rd32(b: Buffer, p: number): number;
  /** Signed 32-bit word at p. */
  rdS32(b: Buffer, p: number): number;
  /** Offsets of a 64-bit value's low and high words. */
  loOff: number;
  hiOff: number;
  /** A 4- or 8-byte pointer at p as its 32-bit halves [hi, lo]. */
  pointerAt(b: Buffer, p: number, size: number): [number, number];
}

function wordReaders(littleEndian: boolean): WordReaders {
  const rd32 = littleEndian
    ? (b: Buffer, p: number) => (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16)) + b[p + 3]! * 16777216
    : (b: Buffer, p: number) => (b[p + 3]! | (b[p + 2]! << 8) | (b[p + 1]! << 16)) + b[p]! * 16777216;
  const rdS32 = littleEndian
    ? (b: Buffer, p: number) => b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)
    : (b: Buffer, p: number) => b[p + 3]! | (b[p + 2]! << 8) | (b[p + 1]! << 16) | (b[p]! << 24);
  const loOff = littleEndian ? 0 : 4;
  const hiOff = littleEndian ? 4 : 0;
  return {
    rd32,
    rdS32,
    loOff,
    hiOff,
    pointerAt: (b, p, size) => (size === 8 ? [rd32(b, p + hiOff), rd32(b, p + loOff)] : [0, rd32(b, p)]),
  };
}

/** 64-bit integers: a number up to 2^53 in magnitude, a bigint beyond. */
function wideIntReaders({ rd32, rdS32, loOff, hiOff }: WordReaders): Pick<Helpers, 'u64' | 's64'> {
  return {
    u64(b, p) {
      const lo = rd32(b, p + loOff);
      const hi = rd32(b, p + hiOff);
      if (hi < 0x200000) return hi * TWO_POW_32 + lo;
      return (BigInt(hi) << 32n) | BigInt(lo);
    },
    s64(b, p) {
      const lo = rd32(b, p + loOff);
      const hi = rdS32(b, p + hiOff);
      if (hi >= -0x200000 && hi < 0x200000) return hi * TWO_POW_32 + lo;
      return (BigInt(hi) << 32n) | BigInt(lo);
    },
  };
}

/** A pointer's halves as `0x` and lowercase hex digits without leading zeros, as %p-like `0x%lx` prints it. */
function pointerHex(hi: number, lo: number): string {
  if (hi === 0) return '0x' + lo.toString(16);
  return (
    '0x' + hi.toString(16) + HEX8[lo >>> 24]! + HEX8[(lo >>> 16) & 255]! + HEX8[(lo >>> 8) & 255]! + HEX8[lo & 255]!
  );
}

function pointerReaders({ rd32, loOff, hiOff }: WordReaders): Pick<Helpers, 'ptr64' | 'ptr32'> {
  return {
    ptr64: (b, p) => pointerHex(rd32(b, p + hiOff), rd32(b, p + loOff)),
    ptr32: (b, p) => '0x' + rd32(b, p).toString(16),
  };
}

/** See Helpers.hex. */
function hexOf(v: number | bigint, bytes: number): string {
  if (typeof v === 'number' && v >= 0) return '0x' + v.toString(16);
  return '0x' + BigInt.asUintN(bytes * 8, BigInt(v)).toString(16);
}

/** A function address as %ps (bare name) or %pS (with offset) prints it; 0x-hex where no symbol resolves. */
function symbolReaders(
  { rd32, loOff, hiOff }: WordReaders,
  kallsyms: Kallsyms,
): Pick<Helpers, 'sym64' | 'sym32' | 'symoff64' | 'symoff32'> {
  const symbol64 = (b: Buffer, p: number, withOffset: boolean): string => {
    const hi = rd32(b, p + hiOff);
    const lo = rd32(b, p + loOff);
    return (withOffset ? kallsyms.lookupWithOffset(hi, lo) : kallsyms.lookup(hi, lo)) ?? pointerHex(hi, lo);
  };
  const symbol32 = (b: Buffer, p: number, withOffset: boolean): string => {
    const lo = rd32(b, p);
    return (withOffset ? kallsyms.lookupWithOffset(0, lo) : kallsyms.lookup(0, lo)) ?? '0x' + lo.toString(16);
  };
  return {
    sym64: (b, p) => symbol64(b, p, false),
    sym32: (b, p) => symbol32(b, p, false),
    symoff64: (b, p) => symbol64(b, p, true),
    symoff32: (b, p) => symbol32(b, p, true),
  };
}

const COMM_SLOT_BITS = 12;
const COMM_SLOTS = 1 << COMM_SLOT_BITS;

/** Decodes the NUL-terminated UTF-8 text in [p, end). */
type StringDecoder = (b: Buffer, p: number, end: number) => string;

/**
 * comm-like strings repeat endlessly (same few tasks): interned by a hash of
 * their bytes, verified byte by byte, instead of decoding each occurrence.
 */
function internedStrings(): StringDecoder {
  const cache = new Map<number, { bytes: Uint8Array; s: string }>();
  return (b, p, end) => {
    let e = p;
    let h = 0x811c9dc5;
    while (e < end) {
      const c = b[e]!;
      if (c === 0) break;
      h = Math.imul(h ^ c, 0x01000193);
      e++;
    }
    const len = e - p;
    if (len === 0) return '';
    if (len > 64) return b.toString('utf8', p, e);
    const key = (h ^ len) >>> 0;
    const hit = cache.get(key);
    if (hit !== undefined && hit.bytes.length === len) {
      const hb = hit.bytes;
      let i = 0;
      while (i < len && hb[i] === b[p + i]) i++;
      if (i === len) return hit.s;
    }
    const str = b.toString('utf8', p, e);
    if (cache.size > 1 << 16) cache.clear();
    cache.set(key, { bytes: Uint8Array.prototype.slice.call(b, p, e), s: str });
    return str;
  };
}

/**
 * Where a __data_loc / __rel_loc field's data lies: [start, length], clipped
 * to the record; null when it starts past the record's end.
 */
function dynamicLocation(
  rd32: WordReaders['rd32'],
  b: Buffer,
  recOff: number,
  recLen: number,
  fieldPos: number,
  fieldEnd: number,
  relative: boolean,
): [number, number] | null {
  const v = rd32(b, fieldPos);
  let start = (v & 0xffff) + (relative ? fieldEnd : recOff);
  let len = v >>> 16;
  const recEnd = recOff + recLen;
  if (start > recEnd) return null;
  if (start + len > recEnd) len = recEnd - start;
  if (start < recOff) start = recOff;
  return [start, len];
}

/** Strings: fixed-size, __data_loc, and the text that ends a record (trace_marker). */
function recordText(
  { rd32, rdS32 }: WordReaders,
  decodeStr: StringDecoder,
): Pick<Helpers, 'cstr' | 'cstr16' | 'dynstr' | 'tailstr'> {
  // Task names (16 bytes) by all their bytes as four words, in a
  // direct-mapped table: same bytes, same text, whatever follows the NUL.
  // Cheaper than decodeStr's byte-by-byte hash, Map and check for the two
  // or three names of every scheduler event; a miss decodes as cstr does.
  const words = new Int32Array(COMM_SLOTS * 4);
  const texts: (string | undefined)[] = new Array<string | undefined>(COMM_SLOTS).fill(undefined);
  return {
    cstr: (b, p, max) => decodeStr(b, p, p + max),
    cstr16(b, p) {
      const w0 = rdS32(b, p);
      const w1 = rdS32(b, p + 4);
      const w2 = rdS32(b, p + 8);
      const w3 = rdS32(b, p + 12);
      const mix = Math.imul(Math.imul(Math.imul(w0, 0x9e3779b1) ^ w1, 0x85ebca6b) ^ w2, 0xc2b2ae35) ^ w3;
      const slot = Math.imul(mix, 0x27d4eb2f) >>> (32 - COMM_SLOT_BITS);
      const k = slot * 4;
      if (words[k] === w0 && words[k + 1] === w1 && words[k + 2] === w2 && words[k + 3] === w3) {
        const hit = texts[slot];
        if (hit !== undefined) return hit;
      }
      const text = decodeStr(b, p, p + 16);
      words[k] = w0;
      words[k + 1] = w1;
      words[k + 2] = w2;
      words[k + 3] = w3;
      texts[slot] = text;
      return text;
    },
    dynstr(b, recOff, recLen, fieldPos, fieldEnd, relative) {
      const loc = dynamicLocation(rd32, b, recOff, recLen, fieldPos, fieldEnd, relative);
      if (!loc) return '';
      return decodeStr(b, loc[0], loc[0] + loc[1]);
    },
    tailstr(b, recOff, recLen, p) {
      const end = recOff + recLen;
      if (p >= end) return '';
      let e = b.indexOf(0, p);
      if (e < 0 || e > end) e = end;
      // The kernel ends every trace_marker message with a newline (adding
      // one if the writer did not); the text formats end the line there.
      if (e > p && b[e - 1] === 10) e--;
      return b.toString('utf8', p, e);
    },
  };
}

/** Arrays as `[1,2,3]` text, and stack traces as one frame a line. */
function arrayPrinters(
  { rd32, rdS32, loOff, hiOff }: WordReaders,
  ints: Pick<Helpers, 'u64' | 's64'>,
  ptrs: Pick<Helpers, 'ptr64' | 'ptr32'>,
  syms: Pick<Helpers, 'sym64' | 'sym32'>,
  littleEndian: boolean,
): Pick<Helpers, 'arr' | 'dynarr' | 'tailarr' | 'stack'> {
  const readNum = (b: Buffer, p: number, elem: number, signed: boolean): number | bigint => {
    switch (elem) {
      case 1:
        return signed ? b.readInt8(p) : b.readUInt8(p);
      case 2:
        return signed
          ? littleEndian
            ? b.readInt16LE(p)
            : b.readInt16BE(p)
          : littleEndian
            ? b.readUInt16LE(p)
            : b.readUInt16BE(p);
      case 4:
        return signed ? rdS32(b, p) : rd32(b, p);
      default:
        return signed ? ints.s64(b, p) : ints.u64(b, p);
    }
  };
  const arr = (b: Buffer, p: number, count: number, elem: number, signed: boolean): string => {
    const parts: string[] = [];
    for (let i = 0; i < count; i++) parts.push(String(readNum(b, p + i * elem, elem, signed)));
    return '[' + parts.join(',') + ']';
  };
  return {
    arr,
    dynarr(b, recOff, recLen, fieldPos, fieldEnd, relative, elem, signed) {
      const loc = dynamicLocation(rd32, b, recOff, recLen, fieldPos, fieldEnd, relative);
      if (!loc || elem <= 0) return '[]';
      return arr(b, loc[0], Math.floor(loc[1] / elem), elem, signed);
    },
    tailarr(b, recOff, recLen, p, elem, signed) {
      const end = recOff + recLen;
      if (p >= end) return '[]';
      return arr(b, p, Math.floor((end - p) / elem), elem, signed);
    },
    stack(b, recOff, recLen, p, elem, kernel) {
      // As the kernel's and trace-cmd's printers: the frames fill the record
      // (however many `size` says, 8 declared or not) and end early at an
      // all-ones entry; user stacks also end at a zero entry.
      const end = recOff + recLen;
      const frames: string[] = [];
      for (let q = p; q + elem <= end; q += elem) {
        const lo = rd32(b, q + (elem === 8 ? loOff : 0));
        const hi = elem === 8 ? rd32(b, q + hiOff) : 0;
        if (lo === 0xffffffff && (elem === 4 || hi === 0xffffffff)) break;
        if (!kernel && lo === 0 && hi === 0) break;
        frames.push(
          elem === 8 ? (kernel ? syms.sym64(b, q) : ptrs.ptr64(b, q)) : kernel ? syms.sym32(b, q) : ptrs.ptr32(b, q),
        );
      }
      return frames.join('\n');
    },
  };
}

/**
 * A message without the newline the kernel ends trace_marker and
 * trace_printk text with: the text formats end the line there.
 */
function withoutClosingNewline(text: string): string {
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

/** trace_printk() and trace_puts() messages, from the formats and strings the trace saved. */
function printkMessages(
  { pointerAt }: WordReaders,
  printk: PrintkFormats,
  kallsyms: Kallsyms,
  littleEndian: boolean,
): Pick<Helpers, 'bprint' | 'bputs'> {
  return {
    bprint(b, recOff, recLen, fmtPos, fmtSize, bufPos) {
      const [hi, lo] = pointerAt(b, fmtPos, fmtSize);
      const fmt = printk.lookup(hi, lo);
      if (fmt === null) return `[trace_printk format ${pointerHex(hi, lo)} not in the trace]`;
      return withoutClosingNewline(renderBprint(fmt, b, bufPos, recOff + recLen, littleEndian, fmtSize, kallsyms));
    },
    bputs(b, strPos, strSize) {
      const [hi, lo] = pointerAt(b, strPos, strSize);
      const text = printk.lookup(hi, lo);
      if (text === null) return `[trace_puts string ${pointerHex(hi, lo)} not in the trace]`;
      return withoutClosingNewline(text);
    },
  };
}

/** Wraps a print-fmt renderer with a per-value cache (flag values repeat endlessly). */
function memoSymbolic(render: SymbolicRenderer, signedSize: number | null): SymbolicFn {
  // Most values are small flag sets or enum indexes: an array lookup for
  // those (a Map lookup per field per event showed in profiles), a Map else.
  // The array is made on the first small value: every symbolic field of
  // every format the file saves gets a renderer (~900 of 8 KiB on a
  // `trace-cmd record -e all` file, ~7 MB of the decoding thread's heap),
  // most of them for events that have no record.
  let small: (FieldValue | undefined)[] | null = null;
  const cache = new Map<number | bigint, FieldValue>();
  const hexOfNumber = render.hexOfNumber;
  return (raw) => {
    const isSmall = typeof raw === 'number' && raw >= 0 && raw < SMALL_SYMBOLIC;
    if (!isSmall && hexOfNumber !== undefined && typeof raw === 'number' && raw >= 0) {
      // Integers read from records are whole numbers, and numbers only below 2^53 (u64 and s64 helpers).
      // Values past the small ones rarely repeat (pfns): rendered, not looked up.
      return '0x' + hexOfNumber(raw).toString(16);
    }
    if (isSmall && small === null) small = new Array<FieldValue | undefined>(SMALL_SYMBOLIC).fill(undefined);
    const hit = isSmall ? small![raw] : cache.get(raw);
    if (hit !== undefined) return hit;
    let big = typeof raw === 'bigint' ? raw : BigInt(raw);
    big = BigInt.asUintN(64, big);
    void signedSize;
    const s = render(big);
    const v: FieldValue = s === undefined ? raw : s;
    if (isSmall) small![raw] = v;
    else if (cache.size < 4096) cache.set(raw, v);
    return v;
  };
}

/** Values below this are memoized in an array (integers read from records are whole numbers). */
const SMALL_SYMBOLIC = 1024;

/**
 * For ftrace's bprint and bputs formats: the field the message is read
 * from (bprint: the packed arguments, which end the record; bputs: the
 * string's pointer) and the expression reading it; else null.
 */
function printkMessageOf(fmt: EventFormat): { from: FieldDef; expr: string } | null {
  if (fmt.system !== 'ftrace') return null;
  const field = (name: string) => fmt.fields.find((f) => f.name === name);
  if (fmt.name === 'bprint') {
    const fmtField = field('fmt');
    const buf = field('buf');
    if (!fmtField || !buf || (fmtField.size !== 4 && fmtField.size !== 8)) return null;
    return { from: buf, expr: `h.bprint(b, o, n, o + ${fmtField.offset}, ${fmtField.size}, o + ${buf.offset})` };
  }
  if (fmt.name === 'bputs') {
    const str = field('str');
    if (!str || (str.size !== 4 && str.size !== 8)) return null;
    return { from: str, expr: `h.bputs(b, o + ${str.offset}, ${str.size})` };
  }
  return null;
}

/**
 * Compiles one event format (its generated code: see instantiate()).
 * `asPrinted` (events the text decoders read as printed, fields/index.ts
 * readsAsPrinted): fields in the form the print
 * format shows them, as the text decoders read that text (fields/values.ts
 * printedValue): %pS with its offset, `0x%lx` as 0x-hex text, words of
 * conditionals; a field printed as a number stays a number even when a name
 * is printed beside it. Otherwise fields keep the types typed tables want.
 */
export function compileEvent<R extends DirectRowColumns>(
  fmt: EventFormat,
  helpers: Helpers,
  littleEndian: boolean,
  longSize: number,
  rows: R | null = null,
  asPrinted = false,
  /** Leading columns of a shape row (model/untyped_rows.ts): compile `shaped` for field columns from there. */
  shapeLead: number | null = null,
): CompiledEvent<R> {
  const info = analyzePrintFmt(fmt.printFmt);
  const E = littleEndian ? 'LE' : 'BE';
  const fastParts: string[] = [];
  const safeParts: string[] = [];
  const exprs = new Map<string, FieldExpr>();
  let minLen = 0;
  const stackEvent = fmt.system === 'ftrace' && isStackEvent(fmt.name);
  // Syscall arguments are unsigned longs the kernel prints as numbers
  // ("filename: 0x7fa5689f3140"), pointer-typed or not: integers, as the
  // text decoders read them (fields/syscalls.ts).
  const numericPointers = fmt.system === 'syscalls';
  // trace_printk() / trace_puts(): `ip` and the message as `buf`, as the
  // text decoders read `func: message` (bprint.ts), not the pointers stored.
  const printkMessage = printkMessageOf(fmt);
  const own: EventOwn = { sym: [], hexValues: [] };
  for (const f0 of fmt.fields) {
    const f: FieldDef = numericPointers && f0.kind === 'pointer' ? { ...f0, kind: 'int' } : f0;
    const stackFrames =
      stackEvent && f.name === 'caller' && f.kind === 'array' && (f.elemSize === 4 || f.elemSize === 8);
    let name = f.name;
    let fe: FieldExpr | null;
    if (printkMessage !== null && f.name !== 'ip') {
      if (f !== printkMessage.from) continue;
      name = 'buf';
      fe = { expr: printkMessage.expr, int: null, key: null };
    } else {
      fe = stackFrames
        ? {
            expr: `h.stack(b, o, n, o + ${f.offset}, ${f.elemSize}, ${fmt.name === 'kernel_stack'})`,
            int: null,
            key: null,
          }
        : fieldExpr(f, info, asPrinted, own, E, longSize);
    }
    if (fe === null) continue;
    const { expr } = fe;
    exprs.set(name, fe);
    const key = JSON.stringify(name);
    const literal = literalKey(name);
    // Fields that run to the record's end need only their start in range:
    // a stack of 3 frames under a declared caller[8] is a whole record.
    const end = stackFrames || f.kind === 'tailstring' || f.kind === 'tailarray' ? f.offset : f.offset + f.size;
    if (end > minLen) minLen = end;
    fastParts.push(`${literal}: ${expr}`);
    safeParts.push(
      name === '__proto__'
        ? `if (n >= ${end}) Object.defineProperty(r, ${key}, { value: ${expr}, enumerable: true, writable: true, configurable: true });`
        : `if (n >= ${end}) r[${key}] = ${expr};`,
    );
  }
  const fastSrc = `return function fast(b, o, n) { return { ${fastParts.join(', ')} }; };`;
  const safeSrc = `return function safe(b, o, n) { const r = {}; ${safeParts.join(' ')} return r; };`;

  let direct: CompiledEvent<R>['direct'] = null;
  if (rows !== null) {
    // Only the columns the sink stores are read (fast() reads every field),
    // each with the first of its names this format has, as a lookup in
    // fast()'s object would find it. Columns are integers from the sink.
    const parts = rows.fields.map(({ names, column, kind }) => {
      const fe = names.map((n) => exprs.get(n)).find((x) => x !== undefined);
      return fe === undefined ? `w.absent(${Number(column)});` : columnWrite(fe, Number(column), kind, littleEndian);
    });
    const src = `return function direct(b, o, n, w) { const A = w.arrays, r = w.row; let v, a; ${parts.join(' ')} };`;
    const read = instantiate<DirectReader>(src, helpers, own);
    direct = { rows, read };
  }

  const commRegistrations: CompiledEvent['commRegistrations'] = [];
  if (fmt.system === 'sched') {
    const byName = new Map(fmt.fields.map((f) => [f.name, f]));
    const pairs: [string, string][] =
      fmt.name === 'sched_switch'
        ? [
            ['prev_pid', 'prev_comm'],
            ['next_pid', 'next_comm'],
          ]
        : fmt.name === 'sched_wakeup' || fmt.name === 'sched_wakeup_new'
          ? [['pid', 'comm']]
          : [];
    for (const [p, c] of pairs) {
      const pf = byName.get(p);
      const cf = byName.get(c);
      if (pf && cf && pf.size === 4 && cf.kind === 'string')
        commRegistrations.push({ pidOff: pf.offset, commOff: cf.offset, commSize: cf.size });
    }
  }
  const shaped = shapeLead === null ? null : compileShapeReader([...exprs], shapeLead, littleEndian, helpers, own);
  const ev: CompiledEvent<R> = {
    id: fmt.id,
    name: fmt.name,
    system: fmt.system,
    minLen,
    fast: notCompiledYet,
    safe: notCompiledYet,
    direct,
    commRegistrations,
    shaped,
  };
  compileOnFirstCall(ev, 'fast', fastSrc, helpers, own);
  compileOnFirstCall(ev, 'safe', safeSrc, helpers, own);
  return ev;
}

/** Placeholder of a reader until compileOnFirstCall sets it. */
const notCompiledYet: FieldsReader = () => {
  throw new Error('reader not compiled');
};

/**
 * Sets `ev[which]` to a reader whose code (`src`, given the helpers as `h`)
 * is compiled when it is first called, then put in its place: fast() and
 * safe() serve only events that take the general path or are cut short,
 * and a trace.dat saves the formats of every event of each enabled system
 * (hundreds). Callers that kept the first function reach the compiled one
 * through it.
 *
 * Made here, outside compileEvent, so that the waiting reader keeps only
 * its source: a closure keeps every variable its function's other closures
 * use (V8 gives them one context), and compileEvent's keep its field
 * expressions. A `trace-cmd record -e all` file saves ~2,300 formats that
 * each wait so for the whole decode (see compileShapeReader).
 */
function compileOnFirstCall(
  ev: CompiledEvent,
  which: 'fast' | 'safe',
  src: string,
  helpers: Helpers,
  own: EventOwn,
): void {
  let compiled: FieldsReader | null = null;
  ev[which] = (b, o, n) => {
    if (compiled === null) {
      compiled = instantiate<FieldsReader>(src, helpers, own);
      ev[which] = compiled;
    }
    return compiled(b, o, n);
  };
}

/**
 * Generated sources already made into functions on this thread: source ->
 * a function of (helpers, symbolic renderers, their hexOfNumber) that
 * returns the reader. Why: formats with the same layout (workqueue_execute_start,
 * _end and _activate_work; sched_wakeup, _wakeup_new and _waking; writeback
 * events) have the same source, and readers made by one such function
 * share V8's feedback and optimized code, so V8 compiles that code once
 * instead of once per format (sched_wq.v7: 21 of the field worker's
 * compiles were these readers, 5-10 ms of compile each; --trace-opt). Later
 * files of a process reuse them too.
 */
const readerFactories = new Map<string, (h: Helpers, s: SymbolicFn[], x: EventOwn['hexValues']) => unknown>();
/** Sources kept at most: a kernel saves the formats of ~2000 events; more would be a leak. */
const MAX_READER_FACTORIES = 4096;

/** The reader of `src` for an event whose own renderers are `own` (see readerFactories). */
function instantiate<T>(src: string, helpers: Helpers, own: EventOwn): T {
  let make = readerFactories.get(src);
  if (make === undefined) {
    if (readerFactories.size >= MAX_READER_FACTORIES) readerFactories.clear();
    make = new Function('h', 's', 'x', src) as (h: Helpers, s: SymbolicFn[], x: EventOwn['hexValues']) => unknown;
    readerFactories.set(src, make);
  }
  return make(helpers, own.sym, own.hexValues) as T;
}

/** Fields past which a shape reader is not compiled (3^n kind codes stay exact integers; untyped_rows MAX_FIELDS is 64). */
const MAX_SHAPED_FIELDS = 30;

/**
 * The shape reader of a format whose fast() makes `fields` (name and
 * expression, in fast()'s key order): what the general path
 * (untyped_rows.ts write: kind of each value, shape, row) does with fast()'s
 * object, without the object, the hex text of pointers, and the loops over
 * its keys. Integers and pointers have a kind fixed by the format and go
 * into their columns as their two 32-bit words; the other fields' kinds
 * come from their values. An unsigned 64-bit value of 2^63 or more fits no
 * shape: the reader returns false before writing, as for any value that
 * fits none.
 */
function compileShapeReader(
  fields: [string, FieldExpr][],
  lead: number,
  le: boolean,
  helpers: Helpers,
  own: EventOwn,
): CompiledShapeReader | null {
  // fast()'s object would order integer-like keys first; such names do not occur in formats.
  if (fields.length === 0 || fields.length > MAX_SHAPED_FIELDS || fields.some(([n]) => /^\d+$/.test(n))) return null;
  const checks: string[] = [];
  const values: string[] = [];
  const writes: string[] = [];
  const code: string[] = [];
  let variable = 0;
  const fixedKinds = new Int8Array(fields.length).fill(-1);
  fields.forEach(([, fe], k) => {
    const col = lead + k;
    const store = (lo: string, hi: string) => `a = A[${col}]; a[2 * r] = ${lo}; a[2 * r + 1] = ${hi};`;
    const int = fe.int;
    if (int !== null) {
      if (int.size === 8) {
        const hi = word(int.at, le ? 4 : 0, le);
        if (!int.signed) checks.push(`if (${hi} < 0) return false;`);
        writes.push(store(word(int.at, le ? 0 : 4, le), hi));
      } else {
        writes.push(`v = ${fe.expr}; ${store('v', int.signed ? 'v >> 31' : '0')}`);
      }
      fixedKinds[k] = 0;
    } else if (fe.hexBits && fe.key !== null) {
      writes.push(store(fe.key.lo, fe.key.hi));
      fixedKinds[k] = 1;
    } else if (fe.hexOf !== undefined) {
      // Hex text of a number below 2^53: its two words, without the text (a
      // value read as bigint, or negative, takes the general path).
      checks.push(`const x${k} = ${fe.hexOf.raw}; if (typeof x${k} !== 'number' || x${k} < 0) return false;`);
      writes.push(
        `v = ${fe.hexOf.fn}(x${k}); u = Math.floor(v / ${TWO_POW_32}); ${store(`v - u * ${TWO_POW_32}`, 'u')}`,
      );
      fixedKinds[k] = 1;
    } else {
      const j = variable++;
      values.push(`const d${j} = ${fe.expr}; const k${j} = w.kindOf(d${j}); if (k${j} < 0) return false;`);
      code.push(j === 0 ? `k0` : `k${j} * ${3 ** j}`);
      writes.push(`w.put(${col}, ${k}, k${j}, d${j});`);
    }
  });
  const src =
    `return function shaped(b, o, n, w) { let v, a, u; ${checks.join(' ')} ${values.join(' ')} ` +
    `const c = w.begin(${code.length > 0 ? code.join(' + ') : '0'}); if (c === null) return false; ` +
    `const A = c.arrays, r = c.rows; ${writes.join(' ')} w.end(); return true; };`;
  return shapeReaderCompiledOnFirstCall(
    src,
    helpers,
    own,
    fields.map(([n]) => n),
    fixedKinds,
  );
}

/**
 * A shape reader whose code is compiled on its first record: a trace.dat
 * saves the formats of every event of each enabled system (hundreds), and
 * one new Function per format cost ~0.1-0.15 s CPU a file.
 *
 * Made here, outside compileShapeReader, so that the waiting reader keeps
 * only its source: made there, its closure shared compileShapeReader's
 * context, which holds the arrays of source parts (checks, values, writes)
 * its forEach callback fills. On a `trace-cmd record -e all` file (~2,300
 * formats, most with no record) those parts were ~10 MB of the decoding
 * thread's heap for the whole decode (heap snapshot, issue 29 sixth session).
 */
function shapeReaderCompiledOnFirstCall(
  src: string,
  helpers: Helpers,
  own: EventOwn,
  keys: string[],
  fixedKinds: Int8Array,
): CompiledShapeReader {
  const reader: CompiledShapeReader = {
    read: (b, o, n, w) => {
      reader.read = instantiate<ShapeReader>(src, helpers, own);
      return reader.read(b, o, n, w);
    },
    keys,
    fixedKinds,
  };
  return reader;
}

/** JS source reading one field. */
interface FieldExpr {
  /** The field's value (number, bigint above 2^53, or string), as the fields object holds it. */
  expr: string;
  /** A plain integer field: its size, signedness and position (JS source). */
  int: { size: number; signed: boolean; at: string } | null;
  /** A text field made from an integer (flags, enum, symbol, pointer): that integer's low and high 32 bits (JS source). */
  key: { lo: string; hi: string } | null;
  /** The text is always `0x` and the key's bits in lowercase hex without leading zeros (pointers, `0x%lx`). */
  hexBits?: boolean;
  /**
   * Hex text computed from the field (`0x%lx` of a conditional): for a raw
   * value `raw` (JS source) that is a number of 0 or more, the text is `0x`
   * and the hex of `fn(raw)` (`fn`: JS source of a function, see EventOwn.hexValues).
   */
  hexOf?: { raw: string; fn: string };
}

/**
 * JS source writing field `fe` into column `col` of a DirectRowColumns `w`
 * (A = w.arrays, r = w.row): integers go straight into the arrays, text
 * through w's per-key cache, anything else through w.value().
 */
function columnWrite(fe: FieldExpr, col: number, kind: DirectColumnKind, le: boolean): string {
  const int = fe.int;
  if (int !== null) {
    if (kind === 'i32') {
      // The low 32 bits, as storing a wider number into an Int32Array would keep.
      return `A[${col}][r] = ${int.size === 8 ? word(int.at, le ? 0 : 4, le) : fe.expr};`;
    }
    if (kind === 'i64') {
      if (int.size === 8) {
        // Both halves as they are: exact for every 64-bit value, no bigint.
        return `a = A[${col}]; a[2 * r] = ${word(int.at, le ? 0 : 4, le)}; a[2 * r + 1] = ${word(int.at, le ? 4 : 0, le)};`;
      }
      return `v = ${fe.expr}; a = A[${col}]; a[2 * r] = v; a[2 * r + 1] = ${int.signed ? 'v >> 31' : '0'};`;
    }
    if (kind === 'f64' && int.size <= 4) return `A[${col}][r] = ${fe.expr};`;
  }
  if (kind === 'text' && fe.key !== null)
    return `if (!w.keyed(${col}, ${fe.key.lo}, ${fe.key.hi})) w.text(${col}, ${fe.expr});`;
  return `w.value(${col}, ${fe.expr});`;
}

/** Source of the signed 32-bit word at `at` + `delta`. */
function word(at: string, delta: number, le: boolean): string {
  const p = delta === 0 ? at : `${at} + ${delta}`;
  const byte = (i: number) => `b[${p} + ${le ? i : 3 - i}]`;
  return `(${byte(0)} | (${byte(1)} << 8) | (${byte(2)} << 16) | (${byte(3)} << 24))`;
}

/** The integer key of an integer field of `size` bytes at `at`: its low and high 32-bit words. */
function keyOf(size: number, at: string, num: string, le: boolean): { lo: string; hi: string } {
  if (size === 8) return { lo: word(at, le ? 0 : 4, le), hi: word(at, le ? 4 : 0, le) };
  return { lo: `(${num} | 0)`, hi: '0' };
}

function fieldExpr(
  f: FieldDef,
  info: PrintFmtInfo,
  asPrinted: boolean,
  own: EventOwn,
  E: string,
  longSize: number,
): FieldExpr | null {
  const at = `o + ${f.offset}`;
  const le = E === 'LE';
  const other = (expr: string): FieldExpr => ({ expr, int: null, key: null });
  switch (f.kind) {
    case 'string':
      return other(f.size === 16 ? `h.cstr16(b, ${at})` : `h.cstr(b, ${at}, ${f.size})`);
    case 'dynstring':
      if (f.size < 4) return null;
      return other(`h.dynstr(b, o, n, ${at}, ${at} + ${f.size}, ${f.relative})`);
    case 'dynarray':
      if (f.size < 4) return null;
      return other(`h.dynarr(b, o, n, ${at}, ${at} + ${f.size}, ${f.relative}, ${f.elemSize}, ${f.signed})`);
    case 'array':
      if (f.elemSize <= 0 || ![1, 2, 4, 8].includes(f.elemSize)) return null;
      return other(`h.arr(b, ${at}, ${f.size / f.elemSize}, ${f.elemSize}, ${f.signed})`);
    case 'tailstring':
      return other(`h.tailstr(b, o, n, ${at})`);
    case 'tailarray': {
      const elem = f.elemSize > 0 ? f.elemSize : longSize;
      if (![1, 2, 4, 8].includes(elem)) return null;
      return other(`h.tailarr(b, o, n, ${at}, ${elem}, ${f.signed})`);
    }
    case 'opaque':
      return null;
    case 'pointer':
    case 'int': {
      const size = f.size;
      if (size !== 1 && size !== 2 && size !== 4 && size !== 8) return null;
      const num = numExpr(size, f.signed, at, E);
      if (info.symbolFields.has(f.name) && (size === 8 || size === 4)) {
        const sym = asPrinted && info.symbolOffsetFields.has(f.name) ? 'symoff' : 'sym';
        return { expr: `h.${sym}${size * 8}(b, ${at})`, int: null, key: keyOf(size, at, num, le) };
      }
      if (f.kind === 'pointer' || info.pointerFields.has(f.name)) {
        const key = keyOf(size, at, num, le);
        if (size === 8) return { expr: `h.ptr64(b, ${at})`, int: null, key, hexBits: true };
        if (size === 4) return { expr: `h.ptr32(b, ${at})`, int: null, key, hexBits: true };
      }
      if (asPrinted && info.hexFields.has(f.name)) {
        // A negative 1- or 2-byte value prints in its own width, where its key is 32 sign-extended bits.
        const hexBits = size >= 4 || !f.signed;
        return { expr: `h.hex(${num}, ${size})`, int: null, key: keyOf(size, at, num, le), hexBits };
      }
      // Printed: a field the text shows as a number is that number, even
      // when a flag or enum name is printed beside it (`vec=7 [action=SCHED]`).
      const render = asPrinted
        ? info.numericFields.has(f.name)
          ? undefined
          : info.printedText.get(f.name)
        : info.symbolic.get(f.name);
      if (render) {
        const idx = own.sym.length;
        own.sym.push(memoSymbolic(render, f.signed ? size : null));
        const fe: FieldExpr = { expr: `s[${idx}](${num})`, int: null, key: keyOf(size, at, num, le) };
        if (render.hexOfNumber !== undefined) {
          fe.hexOf = { raw: num, fn: `x[${own.hexValues.length}]` };
          own.hexValues.push(render.hexOfNumber);
        }
        return fe;
      }
      // 8-byte integers come as bigint above 2^53.
      return { expr: num, int: { size, signed: f.signed, at }, key: null };
    }
  }
}

/** Source reading an integer of `size` bytes at `at` (an expression) from `b`, with byte reads (see makeHelpers). */
function numExpr(size: number, signed: boolean, at: string, E: string): string {
  const le = E === 'LE';
  const byte = (i: number) => `b[${at} + ${le ? i : size - 1 - i}]`;
  switch (size) {
    case 1:
      return signed ? `((b[${at}] << 24) >> 24)` : `b[${at}]`;
    case 2:
      return signed ? `(((${byte(0)} | (${byte(1)} << 8)) << 16) >> 16)` : `(${byte(0)} | (${byte(1)} << 8))`;
    case 4:
      return signed
        ? `(${byte(0)} | (${byte(1)} << 8) | (${byte(2)} << 16) | (${byte(3)} << 24))`
        : `((${byte(0)} | (${byte(1)} << 8) | (${byte(2)} << 16)) + ${byte(3)} * 16777216)`;
    default:
      return signed ? `h.s64(b, ${at})` : `h.u64(b, ${at})`;
  }
}
