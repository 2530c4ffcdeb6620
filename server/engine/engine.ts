/**
 * Every query in stallscope goes through this one small interface, so
 * detectors, the API and the CLI never depend on how DuckDB is reached
 * (the same idea as Perfetto UI's Engine).
 */
// First: DuckDB reads its allocator's settings from the environment at its first allocation.
import './allocator_env.ts';
import os from 'node:os';
import {
  DuckDBBigIntVector,
  DuckDBConnection,
  DuckDBDoubleVector,
  DuckDBFloatVector,
  DuckDBInstance,
  DuckDBIntegerVector,
  DuckDBSmallIntVector,
  DuckDBTinyIntVector,
  DuckDBUBigIntVector,
  DuckDBUIntegerVector,
  DuckDBUSmallIntVector,
  DuckDBUTinyIntVector,
  type DuckDBMaterializedResult,
  type DuckDBValue,
  type DuckDBVector,
  JSDuckDBValueConverter,
} from '@duckdb/node-api';

/**
 * DuckDB threads of a trace's read-only engine: half the cores. Its queries
 * are small (a 1M-event trace's detectors and timeline parts each scan a few
 * hundred thousand rows) and come two at a time: the detectors on the
 * engine's connection and the timeline parts beside them (Engine.beside), so
 * a thread pool of every core per query spends more in scheduling and
 * partitioned operators than it gains. Half the cores each keeps the cores
 * busy without that (on 2 cores: one thread per query, the two connections
 * side by side).
 */
export const READ_ENGINE_THREADS = Math.max(1, Math.floor(os.availableParallelism() / 2));

/** A row with JS values: BIGINT columns come back as bigint, lists as arrays. */
export type Row = Record<string, unknown>;

export type QueryParams = Record<string, DuckDBValue> | DuckDBValue[];

export interface Engine {
  /** Runs one statement and returns its rows (BIGINT as bigint). Rejects on SQL error. */
  query<T = Row>(sql: string, params?: QueryParams): Promise<T[]>;
  /**
   * Runs one statement and returns its columns (name -> values, BIGINT as
   * bigint): for large results, no object per row.
   */
  queryColumns(sql: string, params?: QueryParams): Promise<Record<string, unknown[]>>;
  /** Runs one or more statements, discarding results. */
  exec(sql: string): Promise<void>;
  /**
   * A second connection to the same database, so its queries run beside
   * this one's instead of after them (the timeline's summaries while the
   * detectors run). One per engine and `lane` (1, the default, 2, ...),
   * made on first call; closed with this engine (its own close() does
   * nothing).
   */
  beside(lane?: number): Promise<Engine>;
  /** The underlying connection, for appenders (the writer) only. */
  readonly connection: DuckDBConnection;
  /**
   * Closes the database: now, or once the queries and statements still
   * running have ended (closing under a running query deadlocks DuckDB,
   * see DuckDbEngine.close).
   */
  close(): void;
  /**
   * Optional (a releasable engine, openReleasable): runs `f` with the
   * database kept open, for work that relies on what its connections hold
   * between statements (TEMP macros and tables of a detector run).
   */
  hold?<T>(f: () => Promise<T>): Promise<T>;
  /**
   * Optional: what this connection's TEMP objects belong to; a new object
   * once they are gone (a released engine opened again). Absent: the engine
   * itself (sessionOf).
   */
  readonly session?: object;
  /**
   * Optional (an engine opened with a memoryLimit): after `error`, if it is
   * DuckDB's Out of Memory error, lifts the cap (DuckDB's default again,
   * until the database is closed) and resolves true: the caller may run the
   * statement again. Else resolves false.
   */
  uncapAfter?(error: unknown): Promise<boolean>;
}

/**
 * DuckDB's error when a statement needs more than its memory_limit and
 * cannot spill the rest (not every operator can).
 */
export function isOutOfMemory(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('Out of Memory Error');
}

/** Runs `f`, and once more after an Out of Memory error that lifted the engine's cap (Engine.uncapAfter). */
export async function withUncapRetry<T>(engine: Engine, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (!(await engine.uncapAfter?.(e))) throw e;
    return f();
  }
}

/** Runs `f` with the engine's database kept open (Engine.hold), or just runs it. */
export function holdWhile<T>(engine: Engine, f: () => Promise<T>): Promise<T> {
  return engine.hold ? engine.hold(f) : f();
}

/** What the TEMP objects made on this engine's connection belong to (Engine.session). */
export function sessionOf(engine: Engine): object {
  return engine.session ?? engine;
}

export interface OpenOptions {
  readOnly?: boolean;
  /** DuckDB `threads` setting; default: DuckDB's (all cores). */
  threads?: number;
  /** DuckDB `memory_limit`, e.g. '2GB'. */
  memoryLimit?: string;
  /** Where DuckDB spills when over memoryLimit. */
  tempDirectory?: string;
  /**
   * A statement that fails with DuckDB's Out of Memory error under
   * memoryLimit lifts it and runs again (Engine.uncapAfter): for read
   * engines, whose cap bounds the process's memory but must not cost an
   * answer. Not for the ingest's engines: their caps are what keeps a load
   * within its budget, and a failure there says so.
   */
  liftCapOnOutOfMemory?: boolean;
  /**
   * No file, directory or URL besides the database (DuckDB's
   * enable_external_access=false, which cannot be turned back on), and no
   * extension autoloading: for engines that run SQL a user wrote (saved
   * detectors, `--queries`). See server/query/sandbox.ts.
   */
  noExternalAccess?: boolean;
  /** Block size (bytes) of a database file this creates (ingest_memory.ts ingestBlockSize); DuckDB's default if unset. */
  blockSize?: number;
}

/** Opens (or creates) a DuckDB database file; ':memory:' for an in-memory one. */
export async function openDuckDb(path: string, opts: OpenOptions = {}): Promise<Engine> {
  const config: Record<string, string> = {};
  if (opts.readOnly) config.access_mode = 'READ_ONLY';
  if (opts.threads) config.threads = String(opts.threads);
  if (opts.memoryLimit) config.memory_limit = opts.memoryLimit;
  if (opts.tempDirectory) config.temp_directory = opts.tempDirectory;
  // Only for a file this creates: an existing file keeps the block size it was written with.
  if (opts.blockSize) config.default_block_size = String(opts.blockSize);
  if (opts.noExternalAccess) {
    // In this order: DuckDB refuses to change the extension settings once external access is off.
    config.autoload_known_extensions = 'false';
    config.autoinstall_known_extensions = 'false';
    config.enable_external_access = 'false';
  }
  const instance = await DuckDBInstance.create(path, config);
  const connection = await instance.connect();
  return new DuckDbEngine(instance, connection, null, Boolean(opts.memoryLimit && opts.liftCapOnOutOfMemory));
}

/** An Engine that can give its database back while nobody uses it (openReleasable). */
export interface ReleasableEngine extends Engine {
  /**
   * Closes the database now if no call is running (else does nothing: it
   * is in use); the next call opens it again. The engine stays usable.
   */
  releaseIfIdle(): boolean;
}

/**
 * A read engine whose DuckDB instance can be closed while idle and opened
 * again on its next call: an open instance keeps its buffer pool, catalog and
 * allocator arenas (~40 MB RSS on a 1M-event trace after its first view,
 * though duckdb_memory() counts 14), and a server that opened one trace
 * carried them through the next upload's ingest (issue 29: 364-391 MB peak on
 * the second upload against 323-338 MB on a fresh server). Calls are counted
 * here, not only in the instance, so that a call that is waiting for the
 * instance to open is not closed under.
 */
export async function openReleasable(path: string, opts: OpenOptions = {}): Promise<ReleasableEngine> {
  return new Releasable(() => openDuckDb(path, opts), await openDuckDb(path, opts));
}

class Releasable implements ReleasableEngine {
  private current: Promise<Engine> | null;
  private opened: Engine | null;
  private calls = 0;
  private closed = false;
  private readonly lanes = new Map<number, Engine>();
  /** Per lane (0: this engine's own connection), what its TEMP objects belong to: new ones after each release. */
  private readonly sessions = new Map<number, object>();

  constructor(
    private readonly openInstance: () => Promise<Engine>,
    first: Engine,
  ) {
    this.current = Promise.resolve(first);
    this.opened = first;
  }

  get connection(): DuckDBConnection {
    if (!this.opened) throw new Error('the engine is released: run a query through it first');
    return this.opened.connection;
  }

  private instance(): Promise<Engine> {
    if (this.closed) return Promise.reject(new Error('engine closed'));
    if (!this.current) {
      const p = this.openInstance();
      this.current = p;
      p.then(
        (e) => {
          if (this.current === p) this.opened = e;
        },
        () => {
          if (this.current === p) this.current = null;
        },
      );
    }
    return this.current;
  }

  private async run<T>(call: (e: Engine) => Promise<T>): Promise<T> {
    this.calls++;
    try {
      return await call(await this.instance());
    } finally {
      this.calls--;
      if (this.calls === 0 && this.closed) this.drop();
    }
  }

  sessionOfLane(lane: number): object {
    let s = this.sessions.get(lane);
    if (!s) this.sessions.set(lane, (s = {}));
    return s;
  }

  get session(): object {
    return this.sessionOfLane(0);
  }

  hold<T>(f: () => Promise<T>): Promise<T> {
    return this.run(() => f());
  }

  query<T = Row>(sql: string, params?: QueryParams): Promise<T[]> {
    return this.run((e) => e.query<T>(sql, params));
  }
  queryColumns(sql: string, params?: QueryParams): Promise<Record<string, unknown[]>> {
    return this.run((e) => e.queryColumns(sql, params));
  }
  exec(sql: string): Promise<void> {
    return this.run((e) => e.exec(sql));
  }
  uncapAfter(error: unknown): Promise<boolean> {
    return this.run(async (e) => (await e.uncapAfter?.(error)) ?? false);
  }

  /** A lane of whichever instance is open when each of its calls runs. */
  beside(lane = 1): Promise<Engine> {
    let e = this.lanes.get(lane);
    if (!e) {
      const on = <T>(call: (l: Engine) => Promise<T>) => this.run(async (i) => call(await i.beside(lane)));
      const session = () => this.sessionOfLane(lane);
      e = {
        query: (sql, params) => on((l) => l.query(sql, params)),
        queryColumns: (sql, params) => on((l) => l.queryColumns(sql, params)),
        exec: (sql) => on((l) => l.exec(sql)),
        uncapAfter: (error) => this.uncapAfter(error),
        beside: (other) => this.beside(other),
        hold: (f) => this.hold(f),
        get session() {
          return session();
        },
        get connection(): DuckDBConnection {
          throw new Error('a lane of a releasable engine has no fixed connection');
        },
        close: () => undefined,
      };
      this.lanes.set(lane, e);
    }
    return Promise.resolve(e);
  }

  releaseIfIdle(): boolean {
    if (this.calls > 0 || !this.current) return false;
    this.drop();
    return true;
  }

  close(): void {
    this.closed = true;
    if (this.calls === 0) this.drop();
  }

  private drop(): void {
    const p = this.current;
    const opened = this.opened;
    this.current = null;
    this.opened = null;
    this.sessions.clear();
    // Open: closed now (no call runs, see releaseIfIdle). Still opening: once it is.
    if (opened) opened.close();
    else
      void p?.then(
        (e) => e.close(),
        () => undefined,
      );
  }
}

class DuckDbEngine implements Engine {
  /**
   * `owner`: the engine this one is beside(): its calls count as the owner's, which closes both.
   * `capped`: opened with a memory_limit to lift after an Out of Memory error (uncapAfter, OpenOptions.liftCapOnOutOfMemory).
   */
  constructor(
    private readonly instance: DuckDBInstance,
    readonly connection: DuckDBConnection,
    private readonly owner: DuckDbEngine | null = null,
    private readonly capped = false,
  ) {}

  /**
   * The cap bounds the process's memory; a statement it makes fail (an
   * operator that cannot spill, on a trace larger than the cap was sized
   * for) runs again without it rather than fail the detectors or a view.
   */
  async uncapAfter(error: unknown): Promise<boolean> {
    if (this.owner) return this.owner.uncapAfter(error);
    if (!this.capped || !isOutOfMemory(error)) return false;
    // Once per database; a statement that failed beside the first waits for the same lift, then runs again too.
    this.uncapping ??= this.uncap();
    await this.uncapping;
    return true;
  }

  private uncapping: Promise<void> | null = null;

  private async uncap(): Promise<void> {
    // On a connection of its own: this engine's may be running another statement.
    const c = await this.track(this.instance.connect());
    try {
      // DuckDB's default (80% of the machine's memory), set explicitly: RESET changes the setting but not the buffer pool's limit.
      await this.track(c.run(`SET GLOBAL memory_limit = '${Math.floor((os.totalmem() * 0.8) / 1048576)}MB'`));
    } finally {
      c.closeSync();
    }
    process.stderr.write(`stallscope: a query needed more than the engine's memory limit; it ran again without\n`);
  }

  /** Calls running on DuckDB's side (on libuv's thread pool). */
  private running = 0;
  private closeWhenIdle = false;
  private closed = false;

  async query<T = Row>(sql: string, params?: QueryParams): Promise<T[]> {
    const reader = await withUncapRetry(this, () => this.track(this.connection.runAndReadAll(sql, params)));
    return reader.getRowObjectsJS() as T[];
  }

  async queryColumns(sql: string, params?: QueryParams): Promise<Record<string, unknown[]>> {
    return columnsOf(await withUncapRetry(this, () => this.track(this.connection.run(sql, params))));
  }

  async exec(sql: string): Promise<void> {
    await withUncapRetry(this, () => this.track(this.connection.run(sql)));
  }

  private readonly lanes = new Map<number, Promise<DuckDbEngine>>();
  private readonly laneConnections: DuckDBConnection[] = [];

  beside(lane = 1): Promise<Engine> {
    if (this.owner) return this.owner.beside(lane);
    let e = this.lanes.get(lane);
    if (!e) {
      e = this.track(
        this.instance.connect().then((c) => {
          this.laneConnections.push(c);
          return new DuckDbEngine(this.instance, c, this);
        }),
      );
      this.lanes.set(lane, e);
    }
    return e;
  }

  /**
   * A connection closed under a running query deadlocks: the query's pool
   * thread drops the last reference to its client context and destroys it
   * while holding the context's lock, which the destructor takes again. The
   * thread never returns, and a worker thread or process waiting for it
   * never ends (found in the store worker, store_worker.ts closeEngine). So
   * with calls running, the close waits for the last of them.
   */
  close(): void {
    if (this.owner) return;
    if (this.running > 0) {
      this.closeWhenIdle = true;
      return;
    }
    this.closeNow();
  }

  private closeNow(): void {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.laneConnections) c.closeSync(); // their calls are counted here: none is running
    this.connection.closeSync();
    this.instance.closeSync();
  }

  private async track<T>(call: Promise<T>): Promise<T> {
    if (this.owner) return this.owner.track(call);
    this.running++;
    try {
      return await call;
    } finally {
      if (--this.running === 0 && this.closeWhenIdle) this.closeNow();
    }
  }
}

/**
 * A result's columns as the package's getColumnsObjectJS() gives them, but
 * DOUBLE columns read straight from their vectors' Float64Array (and validity
 * bits): per value, the package looks up a converter and tests validity with
 * BigInt arithmetic, which made converting a first view's timeline parts
 * (hundreds of thousands of numbers) several times the cost of the rest.
 */
function columnsOf(result: DuckDBMaterializedResult): Record<string, unknown[]> {
  const names = result.deduplicatedColumnNames();
  const columns = names.map(() => [] as unknown[]);
  for (let c = 0, chunks = result.chunkCount; c < chunks; c++) {
    const chunk = result.getChunk(c);
    for (let i = 0; i < names.length; i++) appendValues(chunk.getColumnVector(i), columns[i]!);
  }
  return Object.fromEntries(names.map((n, i) => [n, columns[i]!]));
}

/**
 * Vectors whose values are a typed array of the JS values the package's
 * converter gives (numbers; bigints for BIGINT and UBIGINT): read straight,
 * with the validity bits read as bytes. Through getItem and the converter,
 * each value paid a call and a validity test that builds bigints (the
 * Perfetto export's 1M events: ~1.5 s of its main thread, issue 33).
 */
const PLAIN_VECTORS = [
  DuckDBDoubleVector,
  DuckDBFloatVector,
  DuckDBIntegerVector,
  DuckDBSmallIntVector,
  DuckDBTinyIntVector,
  DuckDBUIntegerVector,
  DuckDBUSmallIntVector,
  DuckDBUTinyIntVector,
  DuckDBBigIntVector,
  DuckDBUBigIntVector,
];

function plainItems(vector: DuckDBVector): ArrayLike<number | bigint> | null {
  if (!PLAIN_VECTORS.some((k) => vector instanceof k)) return null;
  const items = (vector as unknown as { items?: unknown }).items;
  if (!ArrayBuffer.isView(items) || items instanceof DataView) return null;
  const a = items as unknown as ArrayLike<number | bigint>;
  return a.length === vector.itemCount ? a : null;
}

function appendValues(vector: DuckDBVector, to: unknown[]): void {
  // The package keeps these private: read them only when they have the shape this code knows, else convert each value.
  const own = vector as unknown as { validity?: { data?: unknown; offset?: unknown } };
  const valid = own.validity?.data;
  const items =
    own.validity?.offset === 0 && (valid === null || valid instanceof BigUint64Array) ? plainItems(vector) : null;
  if (items !== null) {
    if (valid === null) {
      for (let r = 0; r < items.length; r++) to.push(items[r]);
    } else {
      const v = valid as BigUint64Array;
      const bits = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
      for (let r = 0; r < items.length; r++) to.push((bits[r >> 3]! >> (r & 7)) & 1 ? items[r] : null);
    }
    return;
  }
  const type = vector.type;
  // Read once, not twice per value: in the CLI's bundle (bin/cli_bundle.mjs) each read of a package import
  // is a getter call (this function's thread CPU while a first view of sched_wq.v7 was built: 82-87 -> 67-73 ms).
  const convert = JSDuckDBValueConverter;
  for (let r = 0, n = vector.itemCount; r < n; r++) to.push(convert(vector.getItem(r), type, convert));
}

/**
 * JSON text with bigints written as exact integer literals, so ns timestamps
 * past 2^53 survive for consumers that parse integers exactly (jq, Python).
 */
export function toJson(value: unknown, indent?: number): string {
  const marker = '\u0000bigint:';
  const text = JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `${marker}${v.toString()}` : v), indent);
  return text.replace(/"\\u0000bigint:(-?\d+)"/g, '$1');
}

/** Converts bigint-valued fields to numbers when exact, else strings (for browser JSON). */
export function jsSafe(value: unknown): unknown {
  if (typeof value === 'bigint') {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (Array.isArray(value)) return value.map(jsSafe);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = jsSafe(v);
    return out;
  }
  return value;
}
