/**
 * The model's events window by window of ids, with their fields, for the
 * Perfetto export: each table that stores events (`_event_source`:
 * `_ftrace_event` with `_args`, each `_stage_<typed>` with its typed view,
 * each `_shape_<n>`) read by its own id ranges, ahead of the windows.
 *
 * Why not the ftrace_event and args views: a window `WHERE id >= lo AND id
 * < hi` over their unions scans every branch's row groups, and a table of
 * fewer than 122,880 rows is one row group spanning all ids, so every window
 * decompressed nearly the whole model again (issue 33: sched_wq.v7's 51
 * windows 5.0-6.6 s of DuckDB). Read per table, a range only decompresses
 * that table's rows around it.
 *
 * Memory: every table is read SOURCE_READ_IDS ids ahead (ids are unique
 * across tables, so all tables together hold about that many events), a
 * table too sparse for that at least enough ids for minRows of its rows.
 */
import { typedTableFor } from '../../model/typed_tables.ts';
import { compareBigints } from '../../engine/union_view_ids.ts';

export type Value = number | bigint | string;
export interface Ev {
  id: bigint;
  ts: bigint;
  cpu: number;
  tid: number;
  name: string;
  system: string | null;
  /** Its fields: names and values [from, to) of this list, in field order; null when it has none (even empty ones). */
  fields: FieldList | null;
  from: number;
  to: number;
  raw: string | null;
}

/**
 * The fields of a read's events, one list for all of them, an event's the
 * range [from, to) of its names and values. With a Map per event, the
 * export of sched_wq.v7 (1M events, no findings) spent 3.8 s of its main
 * thread collecting garbage; with the list 2.4 s (issue 33, load ~13).
 */
export class FieldList {
  readonly names: string[] = [];
  readonly values: Value[] = [];

  /** Starts `e`'s fields at the end of the list (those it has, if any, moved there: a later read adds to them). */
  open(e: Ev): void {
    const at = this.names.length;
    if (e.fields !== null && e.to > e.from) {
      if (e.fields === this && e.to === at) return;
      for (let i = e.from; i < e.to; i++) {
        this.names.push(e.fields.names[i]!);
        this.values.push(e.fields.values[i]!);
      }
      e.from = at;
    } else e.from = e.to = at;
    e.fields = this;
    e.to = this.names.length;
  }

  /** Adds a field to `e`, opened last; a name it has already keeps its place and takes the new value (as Map.set did). */
  add(e: Ev, name: string, v: Value): void {
    for (let i = e.from; i < e.to; i++)
      if (this.names[i] === name) {
        this.values[i] = v;
        return;
      }
    this.names.push(name);
    this.values.push(v);
    e.to++;
  }
}

type Query = <T = Record<string, unknown>>(sql: string) => Promise<T[]>;
type QueryColumns = (sql: string) => Promise<Record<string, unknown[]>>;

/**
 * Ids each table is read ahead by. Events held at once grow with it (about
 * this many across all tables, beside the window being written): CLI export
 * of sched_wq.v7, 40k 228-230 MB, CPU 16.3 s; 100k 306 MB, 15.2 s.
 */
export const SOURCE_READ_IDS = 40_000;
/** Events every read of a sparse table should bring at least, shared among the tables. */
const SPARSE_READ_EVENTS = 20_000;

/** Model field names -> the kernel's `format` names Perfetto uses (typed tables store some under printed names). */
export const FORMAT_NAMES: Record<string, Record<string, string>> = {
  mm_vmscan_lru_shrink_inactive: { nr_activate_anon: 'nr_activate0', nr_activate_file: 'nr_activate1' },
  workqueue_queue_work: { cpu_target: 'cpu' },
  writeback_dirty_folio: { bdi: 'name' },
  writeback_work: { bdi: 'name', kupdate: 'for_kupdate', background: 'for_background' },
  writeback_single_inode: { bdi: 'name', to_write: 'nr_to_write', index: 'writeback_index' },
  global_dirty_state: { dirty: 'nr_dirty', writeback: 'nr_writeback' },
  balance_dirty_pages: { bdi: 'name' },
};
/** A typed view's columns that are not fields. */
export const ROW_COLUMNS = new Set(['id', 'ts', 'cpu', 'utid', 'event']);

export function toValue(v: unknown): Value | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint')
    return v >= -BigInt(Number.MAX_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  if (typeof v === 'number' || typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return String(v);
}

/**
 * The fields of a typed table's events with ids in [lo, hi), onto their
 * events in `byId` (keyed by the id as a number): one column per field, in
 * the view's column order, under the kernel's format names.
 */
export async function readTypedFields(
  cols: QueryColumns,
  table: string,
  list: FieldList,
  byId: Map<number, Ev>,
  lo: bigint,
  hi: bigint,
): Promise<void> {
  const renamed = FORMAT_NAMES[table] ?? {};
  const t = await cols(`SELECT * FROM "${table}" WHERE id >= ${lo} AND id < ${hi}`);
  const fieldCols = Object.keys(t)
    .filter((k) => !ROW_COLUMNS.has(k))
    .map((k) => [renamed[k] ?? k, t[k]!] as const);
  const rowIds = t.id as bigint[];
  for (let i = 0; i < rowIds.length; i++) {
    const e = byId.get(Number(rowIds[i]));
    if (!e) continue;
    // A typed row replaces what the event had: start empty.
    e.fields = null;
    list.open(e);
    for (const [k, col] of fieldCols) {
      const val = toValue(col[i]);
      if (val !== null) list.add(e, k, val);
    }
  }
}

/**
 * Untyped events' fields: the rows with arg_set_id in [lo, hi) of `args`, a
 * statement over the args view or one table's branch of it (an untyped
 * event's arg_set_id is its id), onto their events in `byId`, in each
 * event's field order.
 */
export async function readArgs(
  cols: QueryColumns,
  args: string,
  list: FieldList,
  byId: Map<number, Ev>,
  lo: bigint,
  hi: bigint,
): Promise<void> {
  const a = await cols(
    `SELECT arg_set_id, arg_index, key, int_value, string_value FROM (${args}) WHERE arg_set_id >= ${lo} AND arg_set_id < ${hi}`,
  );
  const sets = (a.arg_set_id as bigint[]).map((x) => Number(x));
  const index = a.arg_index as number[];
  const keys = a.key as string[];
  const ints = a.int_value as (bigint | number | null)[];
  const strs = a.string_value as (string | null)[];
  const order = Array.from(sets, (_, i) => i).sort((x, y) => sets[x]! - sets[y]! || index[x]! - index[y]!);
  let last: Ev | undefined;
  for (const i of order) {
    const e = byId.get(sets[i]!);
    if (!e) continue;
    if (e !== last) {
      list.open(e);
      last = e;
    }
    const v = ints[i] !== null && ints[i] !== undefined ? toValue(ints[i]) : (strs[i] ?? null);
    if (v !== null) list.add(e, keys[i]!, v);
  }
}

interface SourceRow {
  source: string;
  events_sql: string;
  args_sql: string | null;
  fields_view: string | null;
  events: bigint | number;
  lo: bigint | null;
  hi: bigint | null;
}

/** Names and threads the events' name_id and utid point at. */
interface Lookups {
  names: Map<number, { name: string; system: string | null }>;
  tids: Map<number, number>;
}

/** One table's events, read a range of ids at a time. */
class SourceCursor {
  private buffered: Ev[] = [];
  private at = 0;

  constructor(
    private readonly row: SourceRow,
    /** The next id not read yet, and the table's last. */
    private next: bigint,
    private readonly last: bigint,
    private readonly span: bigint,
    /** Whether the table's typed view is in the model (else its events go without fields, as the views gave them). */
    private readonly fieldsView: string | null,
  ) {}

  /** Its events with ids below `hi` not taken yet, into `out`. */
  async take(hi: bigint, cols: QueryColumns, lookups: Lookups, out: Ev[]): Promise<void> {
    for (;;) {
      while (this.at < this.buffered.length && this.buffered[this.at]!.id < hi) out.push(this.buffered[this.at++]!);
      if (this.at < this.buffered.length || this.next > this.last || this.next >= hi) return;
      const to = this.next + this.span;
      this.buffered = await this.read(cols, lookups, this.next, to);
      this.at = 0;
      this.next = to;
    }
  }

  private async read(cols: QueryColumns, lookups: Lookups, lo: bigint, hi: bigint): Promise<Ev[]> {
    const c = await cols(
      `SELECT id, ts, cpu, utid, name_id, arg_set_id, raw FROM (${this.row.events_sql}) WHERE id >= ${lo} AND id < ${hi}`,
    );
    const ids = c.id as bigint[];
    const tss = c.ts as bigint[];
    const cpus = c.cpu as number[];
    const utids = c.utid as (number | null)[];
    const nameIds = c.name_id as (number | null)[];
    const argSets = c.arg_set_id as (bigint | null)[];
    const raws = c.raw as (string | null)[];
    const byId = new Map<number, Ev>();
    const evs: Ev[] = [];
    let untyped = false;
    for (let i = 0; i < ids.length; i++) {
      // The views join _event_name: an event whose name_id it lacks is not in ftrace_event.
      const n = nameIds[i] === null ? undefined : lookups.names.get(Number(nameIds[i]));
      if (n === undefined) continue;
      const utid = utids[i];
      const e: Ev = {
        id: BigInt(ids[i]!),
        ts: BigInt(tss[i]!),
        cpu: Number(cpus[i]),
        tid: (utid === null || utid === undefined ? undefined : lookups.tids.get(Number(utid))) ?? 0,
        name: n.name,
        system: n.system,
        fields: null,
        from: 0,
        to: 0,
        raw: raws[i] ?? null,
      };
      evs.push(e);
      byId.set(Number(ids[i]), e);
      if (argSets[i] !== null && argSets[i] !== undefined) untyped = true;
    }
    const list = new FieldList();
    if (this.fieldsView !== null && evs.some((e) => typedTableFor(e.name) === this.fieldsView))
      await readTypedFields(cols, this.fieldsView, list, byId, lo, hi);
    if (untyped && this.row.args_sql !== null) await readArgs(cols, this.row.args_sql, list, byId, lo, hi);
    return evs.sort((a, b) => compareBigints(a.id, b.id));
  }
}

/** Every event-storing table's cursor. */
export class EventWindows {
  private constructor(
    private readonly cols: QueryColumns,
    private readonly lookups: Lookups,
    private readonly cursors: SourceCursor[],
  ) {}

  /** Null for a model written before `_event_source` (model version 14): read it through the views. */
  static async open(q: Query, cols: QueryColumns): Promise<EventWindows | null> {
    const [has] = await q<{ n: bigint | number }>(
      "SELECT count(*) AS n FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = '_event_source'",
    );
    if (!has || Number(has.n) === 0) return null;
    const sources = await q<Omit<SourceRow, 'events' | 'lo' | 'hi'>>(
      'SELECT source, events_sql, args_sql, fields_view FROM _event_source ORDER BY source',
    );
    if (sources.length === 0) return new EventWindows(cols, { names: new Map(), tids: new Map() }, []);
    const views = new Set(
      (await q<{ view_name: string }>("SELECT view_name FROM duckdb_views() WHERE schema_name = 'main'")).map(
        (v) => v.view_name,
      ),
    );
    // Each table's count and id range: one statement reading only the id columns.
    const stats = await q<{ source: string; events: bigint; lo: bigint | null; hi: bigint | null }>(
      sources
        .map(
          (s) =>
            `SELECT '${s.source.replace(/'/g, "''")}' AS source, count(*) AS events, min(id) AS lo, max(id) AS hi FROM (${s.events_sql})`,
        )
        .join('\nUNION ALL\n'),
    );
    const byName = new Map(stats.map((s) => [s.source, s]));
    const rows: SourceRow[] = sources
      .map((s) => ({ ...s, events: 0, lo: null, hi: null, ...byName.get(s.source) }))
      .filter((s) => Number(s.events) > 0 && s.lo !== null && s.hi !== null);
    const names = new Map(
      (
        await q<{ name_id: number; name: string; system: string | null }>(
          'SELECT name_id, name, system FROM _event_name',
        )
      ).map((n) => [Number(n.name_id), { name: n.name, system: n.system }]),
    );
    const tids = new Map(
      (await q<{ utid: number; tid: number }>('SELECT utid, tid FROM thread')).map((t) => [
        Number(t.utid),
        Number(t.tid),
      ]),
    );
    const minRows = Math.max(256, Math.floor(SPARSE_READ_EVENTS / Math.max(1, rows.length)));
    const cursors = rows.map((s) => {
      const lo = BigInt(s.lo!);
      const hi = BigInt(s.hi!);
      const count = BigInt(s.events);
      // Ids that hold about minRows of this table's events at its mean density.
      const sparse = ((hi - lo + 1n) * BigInt(minRows) + count - 1n) / count;
      const span = sparse > BigInt(SOURCE_READ_IDS) ? sparse : BigInt(SOURCE_READ_IDS);
      const view = s.fields_view !== null && views.has(s.fields_view) ? s.fields_view : null;
      return new SourceCursor(s, lo, hi, span, view);
    });
    return new EventWindows(cols, { names, tids }, cursors);
  }

  /** The events with ids below `hi` not given yet (the windows come in id order), in no order. */
  async readBelow(hi: bigint): Promise<Ev[]> {
    const out: Ev[] = [];
    for (const c of this.cursors) await c.take(hi, this.cols, this.lookups, out);
    return out;
  }
}
