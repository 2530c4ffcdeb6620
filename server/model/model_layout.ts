/**
 * The shape of the trace model's storage as the pure-JS side sees it: which
 * chunk goes to which table, how a typed table's columns are laid out, and
 * what the builder hands over at the end. Plain data, no DuckDB: it crosses
 * threads (the field worker fills typed tables without loading DuckDB), and
 * the store (model_store.ts) creates the layout from schema.sql.
 */
import type { SkippedInput, TraceHeader } from '../decode/decoded_event.ts';
import type { StringRows } from './args_rows.ts';
import type { ColumnSpec } from './column_chunk.ts';
import type { ShapeResult } from './untyped_rows.ts';

export interface TypedColumn {
  index: number;
  /** The column name, which is also the field name looked up first. */
  name: string;
  /** Other field names that fill this column, in order of preference. */
  aliases: string[];
  /** VARCHAR column: stored as an id into its own dictionary (dicts[dict]), else -1. */
  dict: number;
}

export interface TypedTableLayout {
  table: string;
  /** All storage columns: documented ones, then STORAGE_EXTRA_COLUMNS. */
  columns: ColumnSpec[];
  /** Columns filled from event fields (all but id, ts, cpu, utid, event). */
  fieldColumns: TypedColumn[];
  /** Index of the `event` column (tables receiving several events), else -1. */
  eventColumn: number;
  /** Dictionary of the `event` column, else -1. */
  eventDict: number;
  /** Number of documented columns; storage-only columns follow. */
  width: number;
  /** Documented columns in order, with their dictionary (-1: not a string). */
  viewColumns: { name: string; dict: number }[];
}

/** What a ModelBuilder needs to know about the tables; plain data (crosses threads). */
export interface ModelLayout {
  ftraceEvent: ColumnSpec[];
  args: ColumnSpec[];
  typed: TypedTableLayout[];
  /** Number of per-column string dictionaries (see TypedColumn.dict). */
  dictCount: number;
}

/** Chunk destinations: 0 = _ftrace_event, 1 = _args, 2 + i = typed[i]; shape tables from untyped_rows.ts SHAPE_TABLE_BASE. */
export const FTRACE_EVENT_TABLE = 0;
export const ARGS_TABLE = 1;
export const FIRST_TYPED_TABLE = 2;

export interface ThreadInfo {
  utid: number;
  tid: number;
  name: string | null;
  tgid: number | null;
  /** Relative ts (see DecodedEvent.ts) of the fork / exit, if seen. */
  forkTs: number | null;
  exitTs: number | null;
}

/** Everything the builder learned that is not in the chunks; plain data. */
export interface BuilderResult {
  header: TraceHeader | null;
  eventsTotal: number;
  /** [name, system, count], index = name_id. */
  eventNames: [string, string | null, number][];
  /** Interned strings of args (field names, text values) as `_string` rows, [sid, string] (args_rows.ts). */
  strings: StringRows;
  /** Per-column dictionaries of typed tables: dicts[dict][id] = string. */
  dicts: string[][];
  /** The shape tables of untyped events (untyped_rows.ts), with their dictionaries. */
  shapes: ShapeResult[];
  threads: ThreadInfo[];
  nameHistory: { utid: number; ts: number; name: string }[];
  /** [cpu, events, firstTs, lastTs] (relative ts). */
  cpus: [number, number, number, number][];
  lost: { cpu: number; count: number | null; where: number }[];
  problems: SkippedInput[];
  problemCount: number;
  unparsed: number;
}

/** Bits of the packed `common` column marking an unknown common_flags / preempt_count. */
export const FLAGS_UNKNOWN = 1 << 16;
export const PREEMPT_UNKNOWN = 1 << 17;

/**
 * common_flags (bits 0-7) and preempt_count (bits 8-15) in one integer,
 * null when the source has neither. Both are 8-bit fields in the kernel's
 * record (text: flag bits, and preempt depth | migrate-disable << 4).
 */
export function packCommon(flags: number | null, preemptCount: number | null): number | null {
  if (flags === null && preemptCount === null) return null;
  return (
    (flags === null ? FLAGS_UNKNOWN : flags & 255) |
    (preemptCount === null ? PREEMPT_UNKNOWN : (preemptCount & 255) << 8)
  );
}

/**
 * The dictionaries of both writers: each typed column is written by the
 * main thread or by the field worker, never both (model_builder.ts
 * rawRecords), so each dictionary comes whole from one side.
 */
export function mergeDicts(main: string[][], field: string[][]): string[][] {
  const n = Math.max(main.length, field.length);
  const out: string[][] = [];
  for (let d = 0; d < n; d++) {
    const a = main[d] ?? [];
    const b = field[d] ?? [];
    if (a.length > 0 && b.length > 0)
      throw new Error(`typed column dictionary ${d} was written by both the main thread and the field worker`);
    out.push(a.length > 0 ? a : b);
  }
  return out;
}

/** The flags and preempt count packed by packCommon() (null: unknown). */
export function unpackCommon(common: number | null): [number | null, number | null] {
  if (common === null) return [null, null];
  return [common & FLAGS_UNKNOWN ? null : common & 255, common & PREEMPT_UNKNOWN ? null : (common >> 8) & 255];
}

/** Whether two layouts are the same (they are plain data). */
export function sameLayout(a: ModelLayout, b: ModelLayout): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
