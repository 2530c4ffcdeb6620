/**
 * A Perfetto event kind's fields straight into its typed table's columns
 * (DirectRowColumns), by code generated for the kind at its first event:
 * one `switch` on the field's tag, one case per field that fills a column,
 * with the column, the store and the integer conversion written into the
 * case, and the columns no field filled marked absent in straight-line code.
 * Used on either thread: the main thread writes the rows the decoder keeps
 * (decode_perfetto.ts, through DirectRows), the field worker those of the
 * records the decoder framed and handed on (raw_fields.ts).
 *
 * Why: a loop over the fields that looks up each field's column, store and
 * converter in per-kind tables (the writer this replaces) was 46% of the
 * decoder + rows' CPU on a 1.3M-event trace (`--cpu-prof`, issue 33); its
 * stores into the columns' arrays and its converter calls saw every kind's
 * columns and converters, so V8 could not specialise them. As the trace.dat
 * decoder compiles a reader per event format (trace_dat/event_decoder.ts).
 *
 * What reaches the generated source: integers only, each checked to be a
 * safe non-negative integer (sourceInt): field numbers and wire types (the
 * indexes of the kind's FieldReader: our protos' numbers for typed events;
 * for a generic event, those its descriptor in the trace declares, which
 * trace_index.ts keeps between 1 and 4095), column indexes and store kinds
 * (the model's layout). Names, the kind's and its fields', never appear in
 * it: converters go in as an array indexed by field number.
 */
import type { DirectRowColumns } from '../decoded_event.ts';
import { INT_LOW32, INT_SIGNED32, type FieldReader, type SymbolTable } from './event_fields.ts';
import type { ProtoReader } from './proto_reader.ts';

/**
 * Writes the fields of one event message (`r` set to its bytes) into the row
 * begun on `rows`: what event() would store for the same fields. Fields the
 * reader does not know (number or wire type) are skipped and counted in
 * `unknown`. Throws ProtoError on damaged bytes, with the row's columns half
 * written and their `seen` marks left (the caller ends or drops the row:
 * finishRow()).
 */
export type EventWriter = (r: ProtoReader, rows: DirectRowColumns, syms: SymbolTable, unknown: { n: number }) => void;

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
  /** Per column, 1 once a field of the current row filled it (cleared by finishRow). */
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

/** Marks the columns no field filled as absent, and clears `seen` for the next row. */
export function finishRow(plan: DirectPlan, rows: DirectRowColumns): void {
  const seen = plan.seen;
  for (const col of plan.columns) {
    if (seen[col] === 1) seen[col] = 0;
    else rows.absent(col);
  }
  for (const col of plan.alwaysAbsent) rows.absent(col);
}

/**
 * The kind's writer, its code generated and compiled at its first call (the
 * field worker makes a writer for every kind it may be given; most never
 * come).
 */
export function compileEventWriter(plan: DirectPlan, reader: FieldReader): EventWriter {
  let compiled: EventWriter | null = null;
  return (r, rows, syms, unknown) => {
    compiled ??= instantiate(writerSource(plan, reader), plan, reader);
    compiled(r, rows, syms, unknown);
  };
}

/** A value the generated source may contain: a safe non-negative integer, as digits. */
function sourceInt(v: number): string {
  if (!Number.isSafeInteger(v) || v < 0) throw new Error(`event writer: ${v} is not a field number or column`);
  return String(v);
}

const TWO_32 = 2 ** 32;

/**
 * The writer's source: a function of (C and W: the reader's converters and
 * wire types by field number, S: plan.seen, F: the shared field writers
 * below) returning the writer.
 * Inline: one-byte tags (fields 1-15) and one-byte integers (below 128),
 * straight into their column. Everything else goes through the shared
 * writers: code made once, not once per kind, so that each kind's writer
 * stays small for V8 to optimize (a writer with the reader's and the rows'
 * methods inlined into every case took 40-280 ms of TurboFan's time each).
 */
function writerSource(plan: DirectPlan, reader: FieldReader): string {
  const cases: string[] = [];
  plan.column.forEach((col, no) => {
    if (col < 0 || reader.convert[no] === undefined) return;
    const tag = sourceInt(no * 8 + sourceIntRange(reader.wire[no]!, 0, 7));
    const c = sourceInt(col);
    const n = sourceInt(no);
    const how = plan.store[no]!;
    let body: string;
    if (how === KEYED_TEXT) body = `p = F.keyed(r, w, p, C, ${n}, ${c}, syms);`;
    else if (how === NUMBER_I32 || how === NUMBER_I64 || how === NUMBER_F64) {
      // A value below 128 is the same number in every int mode.
      const put = how === NUMBER_I64 ? `a = A[${c}]; a[2 * row] = v; a[2 * row + 1] = 0;` : `A[${c}][row] = v;`;
      body =
        `if (p < end && (v = b[p]) < 128) { p++; ${put} } ` +
        `else p = F.number(r, w, p, C, ${n}, ${c}, ${sourceInt(how)}, ${sourceInt(plan.intMode[no]!)}, syms);`;
    } else body = `p = F.value(r, w, p, C, ${n}, ${c}, syms);`;
    cases.push(`case ${tag}: ${body} S[${c}] = 1; break;`);
  });
  const finish = [
    ...plan.columns.map(
      (col) => `if (S[${sourceInt(col)}] === 1) S[${sourceInt(col)}] = 0; else w.absent(${sourceInt(col)});`,
    ),
    ...plan.alwaysAbsent.map((col) => `w.absent(${sourceInt(col)});`),
  ];
  return (
    `return function writeEvent(r, w, syms, unknown) {\n` +
    `const b = r.buf, end = r.end, A = w.arrays, row = w.row;\n` +
    `let p = r.pos, t = 0, v = 0, a;\n` +
    `while (p < end) {\n` +
    `t = b[p];\n` +
    `if (t >= 8 && t < 128) p++; else { p = F.tag(r, p); t = r.field * 8 + r.wire; }\n` +
    `switch (t) {\n${cases.join('\n')}\n` +
    `default: p = F.other(r, p, t, C, W, unknown);\n` +
    `}\n}\n` +
    `r.pos = p;\n${finish.join('\n')}\n};`
  );
}

/** The writers' shared code, for what their inline cases do not take (see writerSource). */
const sharedWriters = {
  /** A tag of two bytes or more, or a damaged one (r.next() throws): r.field and r.wire set, returns the position after it. */
  tag(r: ProtoReader, p: number): number {
    r.pos = p;
    r.next();
    return r.pos;
  },
  /** An integer into its column as rows.value() stores the converter's number; past 2^53, the converter's value. */
  number(
    r: ProtoReader,
    w: DirectRowColumns,
    p: number,
    C: FieldReader['convert'],
    no: number,
    col: number,
    how: number,
    mode: number,
    syms: SymbolTable,
  ): number {
    r.pos = p;
    let v = r.varint();
    if (v > Number.MAX_SAFE_INTEGER) {
      r.pos = p;
      w.value(col, C[no]!(r, syms));
      return r.pos;
    }
    if (mode === INT_SIGNED32) v |= 0;
    else if (mode === INT_LOW32 && v > 0xffffffff) v %= TWO_32;
    const a = w.arrays[col]!;
    const row = w.row;
    if (how === NUMBER_I64) {
      const hi = Math.floor(v / TWO_32);
      a[2 * row] = v - hi * TWO_32;
      a[2 * row + 1] = hi;
    } else a[row] = v;
    return r.pos;
  },
  /**
   * Text made from the varint's bits alone (flags, enumerations, pointers):
   * made and looked up in the column's dictionary only the first time its
   * bits come (per cache slot of the rows).
   */
  keyed(
    r: ProtoReader,
    w: DirectRowColumns,
    p: number,
    C: FieldReader['convert'],
    no: number,
    col: number,
    syms: SymbolTable,
  ): number {
    r.pos = p;
    r.varintWords();
    if (!w.keyed(col, r.lo, r.hi)) {
      r.pos = p;
      w.text(col, C[no]!(r, syms));
    }
    return r.pos;
  },
  /** Any other field: the converter's value, as event() converts it. */
  value(
    r: ProtoReader,
    w: DirectRowColumns,
    p: number,
    C: FieldReader['convert'],
    no: number,
    col: number,
    syms: SymbolTable,
  ): number {
    r.pos = p;
    w.value(col, C[no]!(r, syms));
    return r.pos;
  },
  /** A field without a case: known with its wire type (no column) is skipped; anything else is counted too. */
  other(
    r: ProtoReader,
    p: number,
    tag: number,
    C: FieldReader['convert'],
    W: FieldReader['wire'],
    unknown: { n: number },
  ): number {
    r.pos = p;
    // Tags stop below 2^32 (ProtoReader.next).
    r.field = tag >>> 3;
    r.wire = tag & 7;
    if (C[r.field] === undefined || r.wire !== W[r.field]) unknown.n++;
    r.skip();
    return r.pos;
  },
};

function sourceIntRange(v: number, lo: number, hi: number): number {
  if (!(v >= lo && v <= hi)) throw new Error(`event writer: wire type ${v} out of range`);
  return v;
}

type WriterFactory = (
  C: FieldReader['convert'],
  W: FieldReader['wire'],
  S: Uint8Array,
  F: typeof sharedWriters,
) => EventWriter;

/**
 * Sources already made into functions on this thread. Kinds with the same
 * layout and columns (sched_waking and sched_wakeup; the workqueue events)
 * have the same source, and writers made by one function share V8's
 * feedback and optimized code (as trace.dat's readerFactories).
 */
const writerFactories = new Map<string, WriterFactory>();
/** Sources kept at most (a trace declares a few hundred kinds at most; more would be a leak). */
const MAX_WRITER_FACTORIES = 1024;

function instantiate(src: string, plan: DirectPlan, reader: FieldReader): EventWriter {
  let make = writerFactories.get(src);
  if (make === undefined) {
    if (writerFactories.size >= MAX_WRITER_FACTORIES) writerFactories.clear();
    make = new Function('C', 'W', 'S', 'F', src) as WriterFactory;
    writerFactories.set(src, make);
  }
  return make(reader.convert, reader.wire, plan.seen, sharedWriters);
}
