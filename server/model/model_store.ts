/**
 * The DuckDB side of the trace model: creates the schema and the compact
 * storage behind typed tables, appends finished column chunks, and at the
 * end writes the small whole-trace tables (threads, cpus, strings...).
 *
 * Its counterpart model_builder.ts turns events into chunks without touching
 * DuckDB, so the two can run on different threads (ingest/store_worker.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SkippedInput } from '../decode/decoded_event.ts';
import type { Engine } from '../engine/engine.ts';
import { appendRows, ColumnAppender, OpenAppenders, StagingChunks, UnflushedChunks } from './column_appender.ts';
import type { ChunkData, ColumnKind, ColumnSpec } from './column_chunk.ts';
import {
  FLAGS_UNKNOWN,
  PREEMPT_UNKNOWN,
  type BuilderResult,
  type ModelLayout,
  type TypedColumn,
  type TypedTableLayout,
} from './model_layout.ts';
import { DERIVE_EVENT_VIEWS, eventViewName } from './derive_event_views.ts';
import { EVENT_TABLE, FIELD_ALIASES, TYPED_TABLES, typedTableFor } from './typed_tables.ts';
import { SHAPE_TABLE_BASE, type ShapeDecl, type ShapeResult } from './untyped_rows.ts';

export * from './model_layout.ts';

const QUERIES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../queries');
export const SCHEMA_SQL_PATH = path.join(QUERIES_DIR, 'schema.sql');

/**
 * Columns a typed table's storage has beyond its documented ones, for
 * `ftrace_event`. Every stored value costs on the ingest's critical path, so
 * nothing derivable is stored: the event's name_id follows from the `event`
 * column (or is the table's one event name), and common_flags and
 * preempt_count (8 bits each) share one column, see packCommon().
 */
const STORAGE_EXTRA_COLUMNS: ColumnSpec[] = [
  { name: 'common', kind: 'i32' },
  { name: 'source_where', kind: 'i64' },
];

/**
 * A typed table's storage (`_stage_<table>`) keeps its first KEY_COLUMNS
 * columns (id, ts, cpu, utid: the join keys) as columns of their own, and
 * every other column as a field of one STRUCT column, `f`.
 *
 * Why: while appending, DuckDB keeps HyperLogLog distinct-count statistics
 * of every plain column, and none of a STRUCT's fields. On the store
 * thread, the ingest's busiest, the statistics took ~1.1 of ~6.9 CPU-s for
 * a 10M-event trace.dat, and an INSERT of 5M 14-column rows ran 2.0-2.6 s
 * plain against 1.6-1.9 s so. The optimizer wants distinct counts for join
 * keys, which stay plain; a filter on a field still uses the field's
 * min/max zone maps. The views show the documented columns as before.
 */
const KEY_COLUMNS = 4;

/** Column definitions for CREATE TABLE or STRUCT(...). */
function columnDdl(specs: ColumnSpec[]): string {
  return specs
    .map(
      (s) =>
        `"${s.name}" ${s.kind === 'i32' ? 'INTEGER' : s.kind === 'f64' ? 'DOUBLE' : s.kind === 'str' ? 'VARCHAR' : 'BIGINT'}`,
    )
    .join(', ');
}

/** A shape table's name (untyped_rows.ts): `_shape_<n>`. */
function shapeTableName(table: number): string {
  return `_shape_${table - SHAPE_TABLE_BASE}`;
}

/** How the view and ftrace_event select storage column `index` of a typed table (aliased `s`). */
function stageColumn(index: number, name: string): string {
  return index < KEY_COLUMNS ? `s."${name}"` : `s.f."${name}"`;
}

export interface WriterSummary {
  format: string;
  formatVersion: string | null;
  cpus: number;
  eventsTotal: number;
  eventsByName: Record<string, number>;
  firstTsNs: bigint | null;
  lastTsNs: bigint | null;
  lostEvents: number;
  lostEventNotices: number;
  unparsedEvents: number;
  skippedInputs: number;
  firstSkipped: SkippedInput[];
  meta: Record<string, string>;
}

const FTRACE_EVENT_COLUMNS: ColumnSpec[] = [
  { name: 'id', kind: 'i64' },
  { name: 'ts', kind: 'i64' },
  { name: 'cpu', kind: 'i32' },
  { name: 'utid', kind: 'i32' },
  { name: 'name_id', kind: 'i32' },
  { name: 'common_flags', kind: 'i32' },
  { name: 'preempt_count', kind: 'i32' },
  { name: 'arg_set_id', kind: 'i64' },
  { name: 'raw', kind: 'str' },
  { name: 'source_where', kind: 'i64' },
];

const ARGS_COLUMNS: ColumnSpec[] = [
  { name: 'arg_set_id', kind: 'i64' },
  { name: 'arg_index', kind: 'i32' },
  { name: 'key_sid', kind: 'i32' },
  { name: 'int_value', kind: 'i64' },
  { name: 'string_sid', kind: 'i32' },
  { name: 'key_str', kind: 'str' },
  { name: 'str', kind: 'str' },
];

/** A chunk waiting for a shape table to be created, and who to tell once it is appended. */
interface QueuedChunk {
  table: number;
  data: ChunkData;
  done: (() => void) | undefined;
}

export class ModelStore {
  /** Appenders of the shape tables (untyped_rows.ts), by chunk destination. */
  private readonly shapeAppenders = new Map<number, ColumnAppender>();
  /**
   * Chunks that arrived while a shape table was being created (an async
   * statement on this connection, which the appenders must not touch
   * meanwhile), in order; null when none is.
   */
  private queued: QueuedChunk[] | null = null;
  private draining: Promise<void> | null = null;
  private drainError: unknown = null;
  /** Called if creating a shape table fails (the store worker fails its load; in process, finish() throws). */
  onAsyncError: (err: unknown) => void = () => undefined;

  private constructor(
    private readonly engine: Engine,
    readonly layout: ModelLayout,
    private readonly appenders: ColumnAppender[],
    /** What all of this load's appenders hold unflushed, bounded in sum. */
    private readonly unflushed: UnflushedChunks,
    /** The chunks this load's appenders stage rows in, one per list of column types. */
    private readonly staging: StagingChunks,
    /** This load's open DuckDB appenders, bounded in what their own chunks hold. */
    readonly openAppenders: OpenAppenders,
  ) {}

  /**
   * Creates the schema in an empty database and opens the appenders.
   * `schemaSqlPath` is passed by the store worker, whose bundled code cannot
   * find queries/ from its own location.
   */
  static async create(engine: Engine, schemaSqlPath = SCHEMA_SQL_PATH): Promise<ModelStore> {
    await engine.exec(fs.readFileSync(schemaSqlPath, 'utf8'));
    const typed = await createTypedStorage(engine);
    const dictCount = typed.reduce((n, t) => Math.max(n, ...t.viewColumns.map((c) => c.dict + 1)), 0);
    return ModelStore.onSchema(engine, { ftraceEvent: FTRACE_EVENT_COLUMNS, args: ARGS_COLUMNS, typed, dictCount });
  }

  /** Opens the appenders of a schema create() made, whose layout is `layout`. */
  private static async onSchema(engine: Engine, layout: ModelLayout): Promise<ModelStore> {
    const con = engine.connection;
    const unflushed = new UnflushedChunks();
    const staging = new StagingChunks();
    const open = new OpenAppenders();
    const appenders = [
      await ColumnAppender.create(con, '_ftrace_event', layout.ftraceEvent, undefined, unflushed, staging, open),
      await ColumnAppender.create(con, '_args', layout.args, undefined, unflushed, staging, open),
    ];
    for (const t of layout.typed)
      appenders.push(
        await ColumnAppender.create(con, `_stage_${t.table}`, t.columns, KEY_COLUMNS, unflushed, staging, open),
      );
    return new ModelStore(engine, layout, appenders, unflushed, staging, open);
  }

  /**
   * An ingest's load: schema and events in one transaction, so appended row
   * groups are written straight to the database file once, instead of to the
   * WAL at every appender flush and again at the checkpoint. End it with
   * commitLoad().
   */
  static async beginLoad(engine: Engine, schemaSqlPath = SCHEMA_SQL_PATH): Promise<ModelStore> {
    await ModelStore.beginTransaction(engine);
    return ModelStore.create(engine, schemaSqlPath);
  }

  /**
   * beginLoad() on a database that already holds the schema, committed and
   * empty: a copy of a schema template (ingest/schema_template.ts) made by
   * this code, whose layout is `layout` (the layout cache's, made by the
   * same code).
   */
  static async beginLoadOnSchema(
    engine: Engine,
    layout: ModelLayout,
    schemaSqlPath = SCHEMA_SQL_PATH,
  ): Promise<ModelStore> {
    await ModelStore.beginTransaction(engine);
    // createShapeViews copies the args view's text, as DuckDB renders it, into
    // _event_source; a view read back from a file renders otherwise (`CAST(NULL
    // AS DOUBLE)` where one made in this session has `"DOUBLE"`), so it is made
    // again here, as a fresh schema makes it.
    const argsView = /^CREATE VIEW args AS\n[\s\S]*?;$/m.exec(fs.readFileSync(schemaSqlPath, 'utf8'));
    if (!argsView) throw new Error('schema.sql: no CREATE VIEW args statement');
    await engine.exec(argsView[0].replace(/^CREATE VIEW/, 'CREATE OR REPLACE VIEW'));
    return ModelStore.onSchema(engine, layout);
  }

  private static async beginTransaction(engine: Engine): Promise<void> {
    // Write each full row group as it fills. By default DuckDB buffers five
    // per table (~600k rows) before writing them, so at COMMIT up to five
    // row groups per table were still to be compressed, on one thread while
    // every other ingest thread waited: COMMIT took 1.2-1.35 s of a
    // 10M-event trace.dat ingest, 0.4 s with this (ingest median of five
    // alternating runs 14.79 -> 13.98 s), and less is held in memory.
    await engine.exec('SET write_buffer_row_group_count = 1');
    await engine.exec('BEGIN TRANSACTION');
  }

  /**
   * finish(), then commits the load beginLoad() started, checkpointing as it
   * commits. DuckDB checkpoints at COMMIT only when it estimates the WAL
   * would pass checkpoint_threshold (16 MiB), and it estimated a 1M-event
   * trace.dat's load below that: the COMMIT wrote a 35 MB WAL (the row
   * groups not yet written to the file), and closing the database then
   * checkpointed it into the file. With the threshold at 0 the COMMIT
   * writes the tables to the file once and no WAL: the same 20 MB file;
   * COMMIT + close 480-590 -> 340-380 CPU ms (sched_wq.v7, 3 alternating
   * pairs; the issue 29 note).
   */
  async commitLoad(r: BuilderResult): Promise<WriterSummary> {
    const summary = await this.finish(r);
    await this.engine.exec("SET checkpoint_threshold = '0B'");
    try {
      await this.engine.exec('COMMIT');
    } catch (err) {
      // The COMMIT's error is the one to report, not a failing RESET's.
      await this.engine.exec('RESET checkpoint_threshold').catch(() => {});
      throw err;
    }
    await this.engine.exec('RESET checkpoint_threshold');
    return summary;
  }

  /**
   * Appends a chunk: now, or (after a shape table's first chunk, which
   * declares it) once the tables being created exist; `done` is called once
   * it is appended (its buffer may then be reused).
   */
  append(table: number, data: ChunkData, done?: () => void): void {
    if (this.queued === null && data.shape === undefined) {
      this.appendNow(table, data);
      done?.();
      return;
    }
    (this.queued ??= []).push({ table, data, done });
    this.draining ??= this.drain().catch((err: unknown) => {
      // Nothing drains any more: storedColumns() and finish() must see the
      // error, not wait on a settled drain forever (an await loop).
      this.drainError = err;
      this.queued = null;
      this.draining = null;
      this.onAsyncError(err);
    });
  }

  private appendNow(table: number, data: ChunkData): void {
    if (table < SHAPE_TABLE_BASE) {
      this.appenders[table].append(data);
      return;
    }
    const a = this.shapeAppenders.get(table);
    if (a === undefined)
      throw new Error(`model store: a chunk for shape table ${table - SHAPE_TABLE_BASE} came before its declaration`);
    a.append(data);
  }

  /** Creates the declared shape tables and appends the queued chunks, in order. */
  private async drain(): Promise<void> {
    for (;;) {
      const q = this.queued!.shift();
      if (q === undefined) break;
      if (q.data.shape !== undefined && !this.shapeAppenders.has(q.table)) await this.createShape(q.data.shape);
      this.appendNow(q.table, q.data);
      q.done?.();
    }
    this.queued = null;
    this.draining = null;
  }

  private async createShape(d: ShapeDecl): Promise<void> {
    const name = shapeTableName(d.table);
    await this.engine.exec(
      `CREATE TABLE ${name} (${columnDdl(d.columns.slice(0, KEY_COLUMNS))}, f STRUCT(${columnDdl(d.columns.slice(KEY_COLUMNS))}))`,
    );
    this.shapeAppenders.set(
      d.table,
      await ColumnAppender.create(
        this.engine.connection,
        name,
        d.columns,
        KEY_COLUMNS,
        this.unflushed,
        this.staging,
        this.openAppenders,
      ),
    );
    this.shapeColumns += d.columns.length;
    if (this.onShapeTable) await this.onShapeTable(this.shapeColumns);
  }

  /** Rows each appender of this load holds before it flushes (column_appender.ts FLUSH_EVERY_ROWS, ONE_THREAD_FLUSH_EVERY_ROWS). */
  flushEveryRows(rows: number): void {
    this.unflushed.flushEveryRows = rows;
  }

  /** Columns of the shape tables this load has opened so far (each holds an appender and its blocks until the COMMIT). */
  private shapeColumns = 0;
  /**
   * Called after each shape table is opened, with the shape tables' columns
   * so far; awaited before that table's first rows are appended (the store
   * worker raises the load's cap there: ingest_memory.ts withLoadFloor).
   */
  onShapeTable: ((shapeColumns: number) => Promise<void>) | null = null;

  /** Columns (a STRUCT's fields counted each) of the tables this load appended rows to: what the COMMIT must pin (ingest_memory.ts withCommitFloor). */
  async storedColumns(): Promise<number> {
    while (this.draining !== null) await this.draining; // shape tables still being created
    let n = 0;
    for (const a of this.appenders) if (a.count > 0) n += a.columns.length;
    for (const a of this.shapeAppenders.values()) if (a.count > 0) n += a.columns.length;
    return n;
  }

  /** Closes the appenders and writes the whole-trace tables. */
  async finish(r: BuilderResult): Promise<WriterSummary> {
    while (this.draining !== null) await this.draining;
    if (this.drainError !== null) throw this.drainError;
    for (const a of this.appenders) a.close();
    for (const a of this.shapeAppenders.values()) a.close();
    const con = this.engine.connection;
    const base = r.header?.tsBaseNs ?? 0n;
    const abs = (rel: number) => base + BigInt(rel);

    await appendRows(
      con,
      '_string',
      [
        { name: 'sid', kind: 'i32' },
        { name: 'str', kind: 'str' },
      ],
      r.strings,
    );
    // Every typed view in one exec: 31 statements one by one cost each a
    // round trip to DuckDB's thread pool (13 vs 24 CPU ms median, the issue 29 note).
    const views: string[] = [];
    for (const t of this.layout.typed) views.push(await typedViewSql(this.engine, t, r.dicts));
    await writeViewWords(this.engine, this.layout.typed, r.dicts);
    await this.engine.exec(views.join(';\n'));
    await appendRows(
      con,
      '_event_name',
      [
        { name: 'name_id', kind: 'i32' },
        { name: 'name', kind: 'str' },
        { name: 'system', kind: 'str' },
      ],
      r.eventNames.map(([name, system], id) => [id, name, system]),
    );
    const argsBranches = await createShapeViews(this.engine, r.shapes);
    await createEventFieldViews(this.engine, r.shapes, r);
    const eventBranches = await createFtraceEventView(this.engine, this.layout.typed, r);
    await writeEventSources(con, eventBranches, argsBranches);

    const tgids = [...new Set(r.threads.map((t) => t.tgid).filter((g): g is number => g !== null))].sort(
      (a, b) => a - b,
    );
    const upidOf = new Map(tgids.map((pid, i) => [pid, i]));
    const byTid = new Map(r.threads.map((t) => [t.tid, t]));
    await appendRows(
      con,
      'thread',
      [
        { name: 'utid', kind: 'i32' },
        { name: 'tid', kind: 'i32' },
        { name: 'name', kind: 'str' },
        { name: 'upid', kind: 'i32' },
        { name: 'start_ts', kind: 'i64' },
        { name: 'end_ts', kind: 'i64' },
        { name: 'is_main_thread', kind: 'bool' },
      ],
      r.threads.map((t) => [
        t.utid,
        t.tid,
        t.tid === 0 ? (t.name ?? 'swapper') : t.name,
        t.tgid === null ? null : upidOf.get(t.tgid)!,
        t.forkTs === null ? null : abs(t.forkTs),
        t.exitTs === null ? null : abs(t.exitTs),
        t.tgid === null ? null : t.tgid === t.tid,
      ]),
    );
    await appendRows(
      con,
      'process',
      [
        { name: 'upid', kind: 'i32' },
        { name: 'pid', kind: 'i32' },
        { name: 'name', kind: 'str' },
      ],
      tgids.map((pid) => [upidOf.get(pid)!, pid, byTid.get(pid)?.name ?? null]),
    );
    await appendRows(
      con,
      'thread_name_history',
      [
        { name: 'utid', kind: 'i32' },
        { name: 'ts', kind: 'i64' },
        { name: 'name', kind: 'str' },
      ],
      r.nameHistory.map((h) => [h.utid, abs(h.ts), h.name]),
    );
    const cpuRows = [...r.cpus].sort((a, b) => a[0] - b[0]);
    await appendRows(
      con,
      'cpu',
      [
        { name: 'ucpu', kind: 'i32' },
        { name: 'cpu', kind: 'i32' },
        { name: 'event_count', kind: 'i64' },
        { name: 'first_ts', kind: 'i64' },
        { name: 'last_ts', kind: 'i64' },
      ],
      cpuRows.map(([cpu, n, first, last]) => [cpu, cpu, n, abs(first), abs(last)]),
    );
    await appendRows(
      con,
      'lost_events',
      [
        { name: 'cpu', kind: 'i32' },
        { name: 'ts', kind: 'i64' },
        { name: 'count', kind: 'i64' },
        { name: 'source_where', kind: 'i64' },
      ],
      r.lost.map((l) => [l.cpu, null, l.count, l.where]),
    );
    await appendRows(
      con,
      'ingest_problem',
      [
        { name: 'source_where', kind: 'i64' },
        { name: 'unit', kind: 'str' },
        { name: 'reason', kind: 'str' },
        { name: 'excerpt', kind: 'str' },
      ],
      r.problems.map((p) => [p.where, p.unit, p.reason, p.excerpt]),
    );

    let firstTs: bigint | null = null;
    let lastTs: bigint | null = null;
    for (const [, , first, last] of cpuRows) {
      if (firstTs === null || abs(first) < firstTs) firstTs = abs(first);
      if (lastTs === null || abs(last) > lastTs) lastTs = abs(last);
    }
    const eventsByName: Record<string, number> = {};
    for (const [name, , count] of [...r.eventNames].sort((a, b) => a[0].localeCompare(b[0])))
      eventsByName[name] = count;
    const maxCpu = cpuRows.length ? cpuRows[cpuRows.length - 1][0] + 1 : 0;
    return {
      format: r.header?.format ?? 'unknown',
      formatVersion: r.header?.formatVersion ?? null,
      cpus: Math.max(r.header?.cpus ?? 0, maxCpu),
      eventsTotal: r.eventsTotal,
      eventsByName,
      firstTsNs: firstTs,
      lastTsNs: lastTs,
      lostEvents: r.lost.reduce((s, l) => s + (l.count ?? 0), 0),
      lostEventNotices: r.lost.length,
      unparsedEvents: r.unparsed,
      skippedInputs: r.problemCount,
      firstSkipped: r.problems.slice(0, 10),
      meta: { ...(r.header?.meta ?? {}) },
    };
  }
}

/**
 * Replaces the typed tables from schema.sql by compact storage: VARCHAR
 * columns become ids into a per-column dictionary (a comm or flags string is
 * stored once, not per event). The views of the documented columns are
 * created at the end (typedViewSql), when the dictionaries are known.
 * One catalogue query and one DDL batch for all tables: per-table
 * information_schema queries cost ~6 ms each, a fifth of a small ingest.
 */
async function createTypedStorage(engine: Engine): Promise<TypedTableLayout[]> {
  const rows = await engine.query<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT table_name, column_name, data_type FROM duckdb_columns()
     WHERE schema_name = 'main' AND table_name IN (${TYPED_TABLES.map(sqlString).join(', ')})
     ORDER BY table_name, column_index`,
  );
  const colsOf = new Map<string, { column_name: string; data_type: string }[]>();
  for (const r of rows) {
    let list = colsOf.get(r.table_name);
    if (!list) colsOf.set(r.table_name, (list = []));
    list.push(r);
  }
  let dictCount = 0;
  const ddl: string[] = [];
  const layouts = TYPED_TABLES.map((table): TypedTableLayout => {
    const cols = colsOf.get(table) ?? [];
    const leading = cols
      .slice(0, 4)
      .map((c) => c.column_name)
      .join(',');
    if (leading !== 'id,ts,cpu,utid') throw new Error(`schema.sql: ${table} must start with id, ts, cpu, utid`);
    const aliases = FIELD_ALIASES[table] ?? {};
    const columns: ColumnSpec[] = [];
    const fieldColumns: TypedColumn[] = [];
    const viewColumns: { name: string; dict: number }[] = [];
    let eventColumn = -1;
    let eventDict = -1;
    cols.forEach((c, index) => {
      const isString = c.data_type === 'VARCHAR';
      const dict = isString ? dictCount++ : -1;
      const kind: ColumnKind = isString || c.data_type === 'INTEGER' ? 'i32' : c.data_type === 'DOUBLE' ? 'f64' : 'i64';
      columns.push({ name: c.column_name, kind });
      viewColumns.push({ name: c.column_name, dict });
      if (c.column_name === 'event') {
        eventColumn = index;
        eventDict = dict;
      } else if (index >= 4)
        fieldColumns.push({ index, name: c.column_name, aliases: aliases[c.column_name] ?? [], dict });
    });
    // name_id is not stored: a table receiving several event names must say which in `event`.
    if (eventColumn < 0 && Object.values(EVENT_TABLE).includes(table)) {
      throw new Error(
        `schema.sql: ${table} receives several events (typed_tables.ts EVENT_TABLE) and needs an event column`,
      );
    }
    const width = columns.length;
    columns.push(...STORAGE_EXTRA_COLUMNS);
    ddl.push(
      `DROP TABLE ${table}; CREATE TABLE _stage_${table} (${columnDdl(columns.slice(0, KEY_COLUMNS))}, f STRUCT(${columnDdl(columns.slice(KEY_COLUMNS))}));`,
    );
    return { table, columns, fieldColumns, eventColumn, eventDict, width, viewColumns };
  });
  await engine.exec(ddl.join('\n'));
  return layouts;
}

/**
 * Dictionaries up to this size are looked up by index in a list (which
 * DuckDB drops when the column is not selected). A join (the fallback for
 * larger ones) is paid by every query of the view.
 */
const INLINE_DICT_MAX = 20_000;

/**
 * Dictionaries up to this size are list literals in the view's SQL; larger
 * ones are read from `_view_words` by a scalar subquery. DuckDB binds a
 * literal's every element each time a query names the view: ~15 us a word,
 * e.g. 11 CPU ms per reference of workqueue_execute_start/end on
 * sched_wq.v7 (~700 work pointers), 75 ms at 5,000 words, paid by derive and
 * every detector query; the subquery binds in ~0.1 ms and its lookup ran
 * faster too (1M rows, 700 words: 37 vs 64 CPU ms).
 */
const LITERAL_DICT_MAX = 64;

/** Whether the view reads dictionary `words` from `_view_words` (see LITERAL_DICT_MAX). */
function wordsInTable(words: readonly string[]): boolean {
  return words.length > LITERAL_DICT_MAX && words.length <= INLINE_DICT_MAX;
}

/**
 * `_view_words`: one row per dictionary the typed views read by a scalar
 * subquery (dict = its index in the builder's dicts; words in id order).
 */
async function writeViewWords(engine: Engine, typed: TypedTableLayout[], dicts: string[][]): Promise<void> {
  const rows: [number, number, string][] = [];
  for (const t of typed) {
    for (const c of t.viewColumns) {
      const words = c.dict < 0 ? [] : (dicts[c.dict] ?? []);
      if (wordsInTable(words)) words.forEach((w, i) => rows.push([c.dict, i, w]));
    }
  }
  if (rows.length === 0) return;
  await engine.exec('CREATE TABLE _view_word_rows (dict INTEGER, id INTEGER, str VARCHAR)');
  await appendRows(
    engine.connection,
    '_view_word_rows',
    [
      { name: 'dict', kind: 'i32' },
      { name: 'id', kind: 'i32' },
      { name: 'str', kind: 'str' },
    ],
    rows,
  );
  await engine.exec(
    `CREATE TABLE _view_words AS SELECT dict, list(str ORDER BY id) AS words FROM _view_word_rows GROUP BY dict;
     DROP TABLE _view_word_rows`,
  );
}

/**
 * The typed table's view: exactly the documented columns, strings resolved.
 * Returns its CREATE VIEW (run with the others); writes the dictionary
 * tables it joins now.
 */
async function typedViewSql(engine: Engine, t: TypedTableLayout, dicts: string[][]): Promise<string> {
  const select: string[] = [];
  const joins: string[] = [];
  for (const [index, c] of t.viewColumns.entries()) {
    const stored = stageColumn(index, c.name);
    if (c.dict < 0) {
      select.push(`${stored} AS "${c.name}"`);
      continue;
    }
    const words = dicts[c.dict] ?? [];
    if (words.length === 0) {
      select.push(`CAST(NULL AS VARCHAR) AS "${c.name}"`);
    } else if (wordsInTable(words)) {
      select.push(`list_extract((SELECT words FROM _view_words WHERE dict = ${c.dict}), ${stored} + 1) AS "${c.name}"`);
    } else if (words.length <= INLINE_DICT_MAX) {
      select.push(`list_extract([${words.map(sqlString).join(',')}], ${stored} + 1) AS "${c.name}"`);
    } else {
      const dictTable = `_dict_${t.table}_${c.name}`;
      await writeDictTable(engine, dictTable, words);
      joins.push(`LEFT JOIN ${dictTable} d_${c.name} ON d_${c.name}.id = ${stored}`);
      select.push(`d_${c.name}.str AS "${c.name}"`);
    }
  }
  return `CREATE VIEW ${t.table} AS SELECT ${select.join(', ')} FROM _stage_${t.table} s ${joins.join(' ')}`;
}

function sqlString(s: string): string {
  return `'${s.replace(/\u0000/g, '').replace(/'/g, "''")}'`;
}

/** ftrace_event: every event, untyped and typed, each stored once (see schema.sql). */
async function createFtraceEventView(
  engine: Engine,
  typed: TypedTableLayout[],
  r: BuilderResult,
): Promise<Map<string, string>> {
  const nameIds = new Map(r.eventNames.map(([name], id) => [name, id]));
  const unpack = (c: string) =>
    `CASE WHEN ${c} & ${FLAGS_UNKNOWN} = 0 THEN ${c} & 255 END, CASE WHEN ${c} & ${PREEMPT_UNKNOWN} = 0 THEN (${c} >> 8) & 255 END`;
  const sources: [string, string][] = [
    [
      '_ftrace_event',
      'SELECT id, ts, cpu, utid, name_id, common_flags, preempt_count, arg_set_id, raw, source_where FROM _ftrace_event',
    ],
    ...r.shapes.map((sh): [string, string] => {
      const raw = sh.columns.some((c) => c.name === 'raw') ? 's.f.raw' : 'NULL';
      const table = shapeTableName(sh.table);
      return [
        table,
        `SELECT s.id, s.ts, s.cpu, s.utid, ${sh.nameId}, ${unpack('s.f.common')}, s.id, ${raw}, s.f.source_where FROM ${table} s`,
      ];
    }),
    ...typed.map((t): [string, string] => {
      const c = 's.f.common';
      const common = `CASE WHEN ${c} & ${FLAGS_UNKNOWN} = 0 THEN ${c} & 255 END, CASE WHEN ${c} & ${PREEMPT_UNKNOWN} = 0 THEN (${c} >> 8) & 255 END`;
      return [
        `_stage_${t.table}`,
        `SELECT s.id, s.ts, s.cpu, s.utid, ${nameIdOf(t, r, nameIds)}, ${common}, NULL, NULL, s.f.source_where FROM _stage_${t.table} s`,
      ];
    }),
  ];
  const branches = sources.map(([, sql]) => sql);
  await engine.exec(
    `CREATE OR REPLACE VIEW ftrace_event AS
     SELECT e.id, e.ts, e.cpu, e.cpu AS ucpu, e.utid, n.name, n.system, e.common_flags,
            e.preempt_count, e.arg_set_id, e.raw, e.source_where
     FROM (${branches.join('\n UNION ALL ')}) e JOIN _event_name n USING (name_id)`,
  );
  return new Map(sources);
}

/** The columns of the ftrace_event view's union (before its name join) and of `args`, as `_event_source` names them. */
const EVENT_SOURCE_COLUMNS = 'id, ts, cpu, utid, name_id, common_flags, preempt_count, arg_set_id, raw, source_where';
const ARGS_SOURCE_COLUMNS = 'arg_set_id, arg_index, flat_key, key, int_value, string_value, real_value, value_type';

/**
 * `_event_source`: per table that stores events, its branch of the
 * ftrace_event view's union and of the args view's, as statements of their
 * own (schema.sql). A reader that walks every event in id order (the
 * Perfetto export) reads each table by its own id ranges: through the views'
 * unions, every id range scans every branch's row groups again, since a
 * small table's one row group spans all ids (issue 33).
 */
async function writeEventSources(
  con: Engine['connection'],
  events: Map<string, string>,
  args: Map<string, string[]>,
): Promise<void> {
  const fieldsView = (source: string) => (source.startsWith('_stage_') ? source.slice('_stage_'.length) : null);
  await appendRows(
    con,
    '_event_source',
    [
      { name: 'source', kind: 'str' },
      { name: 'events_sql', kind: 'str' },
      { name: 'args_sql', kind: 'str' },
      { name: 'fields_view', kind: 'str' },
    ],
    [...events].map(([source, sql]) => {
      const own = args.get(source) ?? [];
      return [
        source,
        `SELECT * FROM (${sql}) b(${EVENT_SOURCE_COLUMNS})`,
        own.length === 0 ? null : `SELECT * FROM (${own.join('\nUNION ALL\n')}) a(${ARGS_SOURCE_COLUMNS})`,
        fieldsView(source),
      ];
    }),
  );
}

/** SQL for the name_id of a typed table's rows: by its `event` column, else its one event name. */
function nameIdOf(t: TypedTableLayout, r: BuilderResult, nameIds: Map<string, number>): string {
  if (t.eventColumn >= 0) {
    const ids = (r.dicts[t.eventDict] ?? []).map((name) => nameIds.get(name) ?? 'NULL');
    return ids.length === 0
      ? 'NULL::INTEGER'
      : `list_extract([${ids.join(', ')}]::INTEGER[], ${stageColumn(t.eventColumn, 'event')} + 1)`;
  }
  const names = r.eventNames.filter(([name, , count]) => count > 0 && typedTableFor(name) === t.table);
  return names.length === 1 ? String(nameIds.get(names[0][0])) : 'NULL::INTEGER';
}

/**
 * The `args` view over `_args` (schema.sql's definition) and every shape
 * table (untyped_rows.ts): one branch per field, with the row `_args` would
 * hold for it. Large text dictionaries become tables (as typedViewSql).
 * Returns each source table's branches (`_args`' under `_ftrace_event`, whose
 * events it holds the fields of) for writeEventSources.
 */
async function createShapeViews(engine: Engine, shapes: ShapeResult[]): Promise<Map<string, string[]>> {
  const [{ sql }] = await engine.query<{ sql: string }>(
    `SELECT sql FROM duckdb_views() WHERE view_name = 'args' AND schema_name = 'main'`,
  );
  const base = /^CREATE VIEW args AS\s+([\s\S]*?);?\s*$/i.exec(sql.trim());
  if (!base) throw new Error(`schema.sql: cannot read the args view's definition: ${sql.slice(0, 80)}`);
  // `_args` holds the fields of the events in `_ftrace_event`.
  const perTable = new Map<string, string[]>([['_ftrace_event', [base[1]!]]]);
  if (shapes.length === 0) return perTable;
  const branches = [base[1]!];
  for (const sh of shapes) {
    const table = shapeTableName(sh.table);
    const own: string[] = [];
    perTable.set(table, own);
    for (const [k, f] of sh.fields.entries()) {
      const dictTable = shapeDictTable(sh, k);
      if (dictTable !== null) {
        await writeDictTable(engine, dictTable, sh.dicts[k] ?? []);
      }
      const { intValue, stringValue, join } = shapeFieldSql(sh, k, 'd');
      const key = sqlString(f.key);
      const branch = `SELECT s.id, ${k}, ${key}, ${key}, ${intValue}, ${stringValue}, NULL::DOUBLE, '${f.kind === 'int' ? 'int' : 'string'}' FROM ${table} s${join}`;
      branches.push(branch);
      own.push(branch);
    }
  }
  await engine.exec(`CREATE OR REPLACE VIEW args AS\n${branches.join('\nUNION ALL\n')}`);
  return perTable;
}

/** The table holding a shape's text field `k`'s dictionary, when too large to inline (else null). */
function shapeDictTable(sh: ShapeResult, k: number): string | null {
  if (sh.fields[k]!.kind !== 'str' || (sh.dicts[k] ?? []).length <= INLINE_DICT_MAX) return null;
  return `_dict${shapeTableName(sh.table)}_v${k}`;
}

/**
 * A shape's field `k` as `args` reads it (int_value, string_value), over the
 * shape table aliased `s`; a large dictionary is joined as `dictAlias`.
 */
function shapeFieldSql(
  sh: ShapeResult,
  k: number,
  dictAlias: string,
): { intValue: string; stringValue: string; join: string } {
  const v = `s.f.v${k}`;
  const kind = sh.fields[k]!.kind;
  if (kind === 'int') return { intValue: v, stringValue: 'NULL::VARCHAR', join: '' };
  if (kind === 'hex') return { intValue: 'NULL::BIGINT', stringValue: `'0x' || lower(hex(${v}))`, join: '' };
  if (kind === 'text') return { intValue: 'NULL::BIGINT', stringValue: v, join: '' };
  const dictTable = shapeDictTable(sh, k);
  if (dictTable !== null) {
    return {
      intValue: 'NULL::BIGINT',
      stringValue: `${dictAlias}.str`,
      join: ` LEFT JOIN ${dictTable} ${dictAlias} ON ${dictAlias}.id = ${v}`,
    };
  }
  const words = sh.dicts[k] ?? [];
  return {
    intValue: 'NULL::BIGINT',
    stringValue: `list_extract([${words.map(sqlString).join(',')}]::VARCHAR[], ${v} + 1)`,
    join: '',
  };
}

/**
 * The derive SQL's event views (derive_event_views.ts): per event, a branch
 * per shape of that event reading its columns directly, and one over the
 * events of that name kept in `_ftrace_event`/`_args` (pivoted as a query
 * over `args` would). Created for every declared event, also when the trace
 * has none (then empty). After createShapeViews (its dictionary tables).
 */
async function createEventFieldViews(engine: Engine, shapes: ShapeResult[], r: BuilderResult): Promise<void> {
  for (const view of DERIVE_EVENT_VIEWS) {
    const cols = view.columns;
    const branches: string[] = [];
    for (const sh of shapes) {
      if (r.eventNames[sh.nameId]?.[0] !== view.event) continue;
      const joins: string[] = [];
      const select = cols.map((c) => {
        const values = c.keys.flatMap((key) => {
          const k = sh.fields.findIndex((f) => f.key === key);
          if (k < 0) return [];
          const sql = shapeFieldSql(sh, k, `d${k}`);
          if (sql.join !== '' && !joins.includes(sql.join)) joins.push(sql.join);
          return [c.kind === 'int' ? sql.intValue : `coalesce(${sql.stringValue}, CAST(${sql.intValue} AS VARCHAR))`];
        });
        const value =
          values.length === 0 ? 'NULL' : values.length === 1 ? values[0]! : `coalesce(${values.join(', ')})`;
        return `${value}::${c.kind === 'int' ? 'BIGINT' : 'VARCHAR'} AS "${c.name}"`;
      });
      branches.push(
        `SELECT s.id, s.ts, s.cpu, s.utid, ${select.join(', ')} FROM ${shapeTableName(sh.table)} s${joins.join('')}`,
      );
    }
    // The same columns from `_args` (schema.sql's args view), for events that fit no shape.
    const keys = [...new Set(cols.flatMap((c) => c.keys))].map(sqlString).join(', ');
    const pivot = cols.map((c) => {
      const per = c.keys.map((key) =>
        c.kind === 'int'
          ? `max(a.int_value) FILTER (WHERE a.key = ${sqlString(key)})`
          : `max(coalesce(a.string_value, CAST(a.int_value AS VARCHAR))) FILTER (WHERE a.key = ${sqlString(key)})`,
      );
      return `${per.length === 1 ? per[0] : `coalesce(${per.join(', ')})`}::${c.kind === 'int' ? 'BIGINT' : 'VARCHAR'} AS "${c.name}"`;
    });
    branches.push(
      `SELECT e.id, e.ts, e.cpu, e.utid, ${pivot.join(', ')}
       FROM _ftrace_event e
       JOIN _event_name n ON n.name_id = e.name_id AND n.name = ${sqlString(view.event)}
       JOIN (SELECT a.arg_set_id, coalesce(k.str, a.key_str) AS key, a.int_value, coalesce(v.str, a.str) AS string_value
             FROM _args a LEFT JOIN _string k ON k.sid = a.key_sid LEFT JOIN _string v ON v.sid = a.string_sid) a
         ON a.arg_set_id = e.arg_set_id AND a.key IN (${keys})
       GROUP BY e.id, e.ts, e.cpu, e.utid`,
    );
    await engine.exec(`CREATE OR REPLACE VIEW ${eventViewName(view.event)} AS\n${branches.join('\nUNION ALL\n')}`);
  }
}

/** A dictionary table of a column stored as string ids: row i is (i, words[i]). */
async function writeDictTable(engine: Engine, table: string, words: readonly string[]): Promise<void> {
  await engine.exec(`CREATE TABLE ${table} (id INTEGER, str VARCHAR)`);
  await appendRows(
    engine.connection,
    table,
    [
      { name: 'id', kind: 'i32' },
      { name: 'str', kind: 'str' },
    ],
    words.map((w, i) => [i, w]),
  );
}
