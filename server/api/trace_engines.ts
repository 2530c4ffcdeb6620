/**
 * Opens each trace's read-only DuckDB once and keeps it, with the facts every
 * window query needs (time base, end, longest durations for range pruning).
 * Queries on one engine run one at a time (one connection per trace, beside
 * the library's, which runs the detectors).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Engine, QueryParams, Row } from '../engine/engine.ts';
import type { LibraryLike } from './library_contract.ts';

export interface TraceMeta {
  /** Absolute ns of the trace's first event: API times are relative to it. */
  base: bigint;
  /** Absolute ns of the last event (end of open slices). */
  last: bigint;
  /** Longest duration per derived table, to bound `ts >= t0 - maxDur` scans. */
  maxDur: Record<'sched_slice' | 'thread_state' | 'slice', bigint>;
  tables: Set<string>;
}

export interface OpenTrace {
  meta: TraceMeta;
  query<T = Row>(sql: string, params?: QueryParams): Promise<T[]>;
  /**
   * The same, as columns (Engine.queryColumns), for results of many rows.
   * Optional: a trace opened without an Engine (an excerpt, a test) reads
   * its rows and overview.ts turns them into columns.
   */
  queryColumns?(sql: string, params?: QueryParams): Promise<Record<string, unknown[]>>;
  /**
   * Optional: the same trace on a connection of its own (`lane`, one of
   * LANES; default `threadSlices`), whose queries run beside this one's
   * instead of after them (two parts one view needs together, as a thread's
   * states and its slices).
   */
  beside?(lane?: Lane): OpenTrace;
}

/**
 * The API's connections to a trace beside its own (Engine.beside lanes; the
 * library's connection, lane 0, runs the detectors and the API's own is
 * lane 1). An upload's first view waits for the overview parts, the threads
 * of interest's summaries and the track list: queued on one connection they
 * were its tail (sched_wq.v7: cpu, slice categories, counters, writepage,
 * then the threads' states, then the track list's queries, 0.4-0.7 s after
 * the findings), while the detectors' connection sat idle after the
 * findings and one of the two cores with it. Four lanes at most, as
 * libuv's pool (four threads by default) runs DuckDB's queries.
 */
export const LANES = {
  /** A thread's slices (beside its states). */
  threadSlices: 2,
  /** The threads' states, and the track list's queries (asked once the findings are in, by then the states' turn is mostly over). */
  threadStates: 3,
  /** The slice categories' overview part (beside the CPUs', counters' and writepage's on the API's own). */
  sliceCategories: 4,
} as const;

export type Lane = (typeof LANES)[keyof typeof LANES];

/**
 * The queue's tail settles to nothing: a tail that resolved to the last
 * query's rows kept them alive for as long as the trace stayed open (2.3 MB
 * of a slice track's answer after a first view of sched_wq.v7, more after a
 * bigger window), on the server's heap through the next upload (issue 29).
 */
const settled = (): void => undefined;

class SerialEngine implements OpenTrace {
  private tail: Promise<void> = Promise.resolve();
  /** The engine may still be opening (meta read from disk): queries wait for it. */
  constructor(
    readonly engine: Promise<Engine>,
    readonly meta: TraceMeta,
  ) {}
  query<T = Row>(sql: string, params?: QueryParams): Promise<T[]> {
    const run = this.tail.then(async () => (await this.engine).query<T>(sql, params));
    this.tail = run.then(settled, settled);
    return run;
  }
  queryColumns(sql: string, params?: QueryParams): Promise<Record<string, unknown[]>> {
    const run = this.tail.then(async () => (await this.engine).queryColumns(sql, params));
    this.tail = run.then(settled, settled);
    return run;
  }
  private readonly others = new Map<Lane, SerialEngine>();
  beside(lane: Lane = LANES.threadSlices): OpenTrace {
    let other = this.others.get(lane);
    if (!other) {
      other = new SerialEngine(
        this.engine.then((e) => e.beside(lane)),
        this.meta,
      );
      this.others.set(lane, other);
    }
    return other;
  }
}

/** Bump when TraceMeta changes: older meta.json files are then ignored. */
const META_VERSION = 1;

export class TraceEngines {
  private readonly open = new Map<string, Promise<SerialEngine>>();
  /**
   * `cacheDirOf`: where a trace's meta is kept on disk, so that after a
   * restart the first answers need not wait for the model to open and be
   * scanned (none: computed on each start).
   */
  constructor(
    private readonly library: LibraryLike,
    private readonly cacheDirOf?: (id: string) => string | null,
  ) {}

  get(id: string): Promise<OpenTrace> {
    let p = this.open.get(id);
    if (!p) {
      p = this.load(id);
      this.open.set(id, p);
      p.catch(() => this.open.delete(id));
    }
    return p;
  }

  /**
   * The API's queries run on a second connection to the library's engine
   * (Engine.beside): the timeline's summaries and windows then run beside
   * the detectors (on the library's own connection) instead of after them.
   */
  private engineOf(id: string): Promise<Engine> {
    return this.library.openEngine(id).then((e) => e.beside());
  }

  private async load(id: string): Promise<SerialEngine> {
    const dir = this.cacheDirOf?.(id) ?? null;
    const file = dir && path.join(dir, `meta-v${META_VERSION}.json`);
    if (file) {
      const meta = await readMeta(file);
      if (meta) {
        const engine = this.engineOf(id);
        engine.catch(() => this.open.delete(id));
        return new SerialEngine(engine, meta);
      }
    }
    const engine = await this.engineOf(id);
    const meta = await computeMeta(engine);
    if (file) void writeMeta(file, meta);
    return new SerialEngine(Promise.resolve(engine), meta);
  }

  /** Forgets one trace's engine and meta (its model was replaced); the library closes the engine. */
  forget(id: string): void {
    this.open.delete(id);
  }

  /** Forgets the engines; the library owns them and closes them (TraceLibrary.close). */
  forgetAll(): void {
    this.open.clear();
  }
}

async function computeMeta(engine: Engine): Promise<TraceMeta> {
  const tables = new Set(
    (await engine.query<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables`)).map(
      (r) => r.name,
    ),
  );
  const info = new Map(
    (await engine.query<{ key: string; value: string }>(`SELECT key, value FROM trace_info`)).map((r) => [
      r.key,
      r.value,
    ]),
  );
  let base = toBig(info.get('first_ts'));
  let last = toBig(info.get('last_ts'));
  if (base === null || last === null) {
    const [r] = await engine.query<{ lo: bigint | null; hi: bigint | null }>(
      `SELECT min(ts) AS lo, max(ts) AS hi FROM ftrace_event`,
    );
    base ??= r?.lo ?? 0n;
    last ??= r?.hi ?? base;
  }
  const maxDur = { sched_slice: 0n, thread_state: 0n, slice: 0n };
  for (const t of Object.keys(maxDur) as Array<keyof typeof maxDur>) {
    if (!tables.has(t)) continue;
    const [r] = await engine.query<{ m: bigint | null; open_from: bigint | null }>(
      `SELECT max(dur) AS m, min(ts) FILTER (WHERE dur < 0) AS open_from FROM ${t}`,
    );
    let m = r?.m ?? 0n;
    if (r?.open_from != null && last - r.open_from > m) m = last - r.open_from;
    maxDur[t] = m;
  }
  return { base, last, maxDur, tables };
}

async function readMeta(file: string): Promise<TraceMeta | null> {
  try {
    const j = JSON.parse(await fs.readFile(file, 'utf8')) as {
      base: string;
      last: string;
      maxDur: Record<string, string>;
      tables: string[];
    };
    return {
      base: BigInt(j.base),
      last: BigInt(j.last),
      maxDur: {
        sched_slice: BigInt(j.maxDur.sched_slice!),
        thread_state: BigInt(j.maxDur.thread_state!),
        slice: BigInt(j.maxDur.slice!),
      },
      tables: new Set(j.tables),
    };
  } catch {
    return null;
  }
}

async function writeMeta(file: string, m: TraceMeta): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(
      tmp,
      JSON.stringify({
        base: String(m.base),
        last: String(m.last),
        maxDur: Object.fromEntries(Object.entries(m.maxDur).map(([k, v]) => [k, String(v)])),
        tables: [...m.tables],
      }),
    );
    await fs.rename(tmp, file);
  } catch {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
  }
}

function toBig(v: string | undefined): bigint | null {
  if (v === undefined || !/^-?\d+$/.test(v.trim())) return null;
  return BigInt(v.trim());
}
