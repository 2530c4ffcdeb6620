/**
 * Per-trace overview (a one-level mipmap): every slice-like and counter
 * track summarised once at a base resolution B (ns per bucket, a power of two
 * >= span / OVERVIEW_BUCKETS), kept in memory. Zoomed-out windows (request
 * resolution >= B) are then answered by re-aggregating these rows in JS,
 * O(buckets) whatever the trace size; zoomed-in windows still query DuckDB,
 * where a narrow time range is cheap.
 *
 * Built with one scan per table right after ingest (before the job reports
 * done), and kept on disk beside the model (`<traceDir>/overview/`), so the
 * first view after a server restart needs no scan either. A part missing on
 * disk (or a directory that cannot be written) is simply built again.
 *
 * Re-aggregation follows track_queries.ts: a row at least one output column
 * wide stays a slice with its id; the rest merge per output column, keeping
 * the payload of the longest contributor (`maxdur`).
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  BUCKET_PICK,
  binnedSql,
  durExpr,
  threadStateDurExpr,
  type Columns,
  type TrackData,
  type Window,
} from './track_queries.ts';
import { LANES, type OpenTrace } from './trace_engines.ts';
import { ByteLru } from './byte_lru.ts';

/** Buckets per track at the base resolution (about 8 screens of 4k columns). */
export const OVERVIEW_BUCKETS = 32_768;

type Cell = number | string | null;

/** The kinds of track whose first-view answers are built ahead (first_view_tracks.ts). */
export type AheadKind = 'cpu' | 'slice' | 'thread' | 'counter';
type Rows = Record<string, Cell[]>;

/**
 * A trace's overview, built lazily one track kind at a time (and, for
 * threads, one thread at a time: only threads that are shown get summarised).
 */
export class Overview {
  /** Base resolution, ns per bucket. */
  readonly res: bigint;
  private readonly parts = new Map<string, Promise<Map<string, Rows>>>();
  readonly counterRange = new Map<string, { lo: number; hi: number }>();
  /** Bytes of the parts built so far (roughly: 8 per number, the length of each string). */
  bytes = 0;
  /** Called when a part is built (Overviews keeps the total within its budget). */
  onGrow: (() => void) | null = null;

  /** `cacheDir`: where built parts are kept across restarts (null: memory only). */
  constructor(
    private readonly tr: OpenTrace,
    private readonly cacheDir: string | null = null,
  ) {
    const span = tr.meta.last - tr.meta.base + 1n;
    let res = 1n;
    while (res * BigInt(OVERVIEW_BUCKETS) < span) res *= 2n;
    this.res = res;
  }

  /** The file a part is kept in (its name says the format version and the base resolution). */
  private cacheFile(name: string): string | null {
    return (
      this.cacheDir && path.join(this.cacheDir, `v${CACHE_VERSION}-res${this.res}`, `${name.replace('#', '-')}.bin`)
    );
  }

  /** A part from disk, else built (and then written to disk, without waiting). */
  private async cached(name: string, build: () => Promise<Map<string, Rows>>): Promise<Map<string, Rows>> {
    const file = this.cacheFile(name);
    if (file) {
      const m = await readPart(file);
      if (m) return m;
    }
    const started = performance.now();
    const m = await build();
    if (process.env.STALLSCOPE_TIMING)
      process.stderr.write(`[timing] overview ${name} ${(performance.now() - started).toFixed(0)} ms\n`);
    if (file) this.keep(file, m);
    return m;
  }

  /** Part writes waiting for releaseWrites(), or null: written as they are built. */
  private heldWrites: Array<[string, Map<string, Rows>]> | null = null;

  /**
   * Parts built from now on are written to disk only at releaseWrites():
   * while an upload's first view is being built, encoding and writing them
   * (~80-90 ms of this thread's CPU on a 1M-event trace) is work that view
   * does not need (the files serve the views after a restart).
   */
  holdWrites(): void {
    this.heldWrites ??= [];
  }

  /** Writes the held parts (and every later one as it is built); resolves when the held ones are on disk. */
  async releaseWrites(): Promise<void> {
    const held = this.heldWrites;
    this.heldWrites = null;
    await Promise.all((held ?? []).map(([file, m]) => writePart(file, m)));
  }

  private keep(file: string, m: Map<string, Rows>): void {
    if (this.heldWrites) this.heldWrites.push([file, m]);
    else void writePart(file, m);
  }

  /**
   * Answers of single tracks built before an upload's job is done, for the
   * windows its first view is expected to ask (first_view_tracks.ts), keyed
   * by kind, track and window. Kept until endFirstView(): a few MB at most
   * (two windows' CPUs, slice categories, threads of interest and counters),
   * and after the first view the route's answer cache holds what was asked.
   */
  private firstView = new Map<string, TrackData>();

  /** A track's answer built ahead for window `w`, if any. */
  firstViewAnswer(kind: AheadKind, key: number | string, w: Window): TrackData | undefined {
    return this.firstView.size ? this.firstView.get(`${kind}|${key}|${w.t0}|${w.t1}|${w.px}`) : undefined;
  }

  keepFirstViewAnswer(kind: AheadKind, key: number | string, w: Window, data: TrackData): void {
    this.firstView.set(`${kind}|${key}|${w.t0}|${w.t1}|${w.px}`, data);
  }

  /** The first view is served: the answers built ahead for it go. */
  endFirstView(): void {
    this.firstView = new Map();
  }

  /** Parts whose build finished (answers from them cost no query). */
  private readonly done = new Set<string>();

  private part(name: string, build: () => Promise<Map<string, Rows>>): Promise<Map<string, Rows>> {
    let p = this.parts.get(name);
    if (!p) {
      p = this.cached(name, build);
      this.track(name, p);
    }
    return p;
  }

  private track(name: string, p: Promise<Map<string, Rows>>): void {
    this.parts.set(name, p);
    p.then(
      (m) => {
        this.done.add(name);
        this.bytes += partBytes(m);
        this.onGrow?.();
      },
      () => this.parts.delete(name),
    );
  }

  /**
   * Every part built so far is kept on disk (none under way, none held back
   * by holdWrites): dropping this overview from memory loses nothing that
   * reading the files back (no scan) cannot give again.
   */
  get keptOnDisk(): boolean {
    return this.cacheDir !== null && this.heldWrites === null && this.done.size === this.parts.size;
  }

  /** Is everything a request for `kind` (and these threads) needs built already? */
  isReady(kind: 'cpu' | 'thread' | 'slice' | 'counter' | 'instant', utids: number[] = []): boolean {
    if (kind === 'thread') return utids.every((u) => this.done.has(`state#${u}`) && this.done.has(`slice#${u}`));
    return this.done.has(kind === 'instant' ? 'writepage' : kind);
  }

  /** Is everything a request for `kind` needs built, or on disk (read in a moment, no scan)? */
  isReadySoon(kind: 'cpu' | 'thread' | 'slice' | 'counter' | 'instant', utids: number[] = []): boolean {
    if (this.isReady(kind, utids)) return true;
    if (!this.cacheDir) return false;
    const names =
      kind === 'thread'
        ? utids.flatMap((u) => [`state#${u}`, `slice#${u}`])
        : [kind === 'instant' ? 'writepage' : kind];
    return names.every((n) => this.done.has(n) || existsSync(this.cacheFile(n)!));
  }

  /** Starts building what a request for `kind` needs, without waiting. */
  prepare(kind: 'cpu' | 'thread' | 'slice' | 'counter' | 'instant', utids: number[] = []): void {
    const p =
      kind === 'cpu'
        ? this.cpu()
        : kind === 'thread'
          ? this.threads(utids)
          : kind === 'slice'
            ? this.slice()
            : kind === 'counter'
              ? this.counter()
              : this.writepage();
    p.catch(() => undefined);
  }

  private get b() {
    const { base, last } = this.tr.meta;
    return { a0: base, a1: last + 1n, res: this.res, base, last };
  }

  cpu(): Promise<Map<string, Rows>> {
    return this.part('cpu', async () => {
      if (!this.tr.meta.tables.has('sched_slice')) return new Map();
      const d = durExpr(this.tr.meta.last);
      return readSplit(
        this.tr,
        binnedSql(
          `SELECT cpu AS k, id, ts, ${d} AS dur, ${d} AS maxdur, utid FROM sched_slice`,
          [
            { col: 'maxdur', agg: 'max(dur)' },
            { col: 'utid', agg: `arg_max(utid, ${BUCKET_PICK})` },
          ],
          this.b,
        ),
        [...SLICE_COLS, 'utid'],
      );
    });
  }

  /** States and slices of some threads (each summarised once). */
  async threads(utids: number[]): Promise<{ states: Map<string, Rows>; slices: Map<string, Rows> }> {
    let missing = utids.filter((u) => !this.parts.has(`state#${u}`));
    // Threads summarised before (this run or an earlier one): from disk.
    if (missing.length && this.cacheDir) {
      const fromDisk = await Promise.all(
        missing.map(async (u) => {
          const [st, sl] = await Promise.all([
            readPart(this.cacheFile(`state#${u}`)!),
            readPart(this.cacheFile(`slice#${u}`)!),
          ]);
          return { u, st, sl };
        }),
      );
      for (const { u, st, sl } of fromDisk) {
        if (!st || !sl || this.parts.has(`state#${u}`)) continue;
        this.track(`state#${u}`, Promise.resolve(st));
        this.track(`slice#${u}`, Promise.resolve(sl));
      }
      missing = missing.filter((u) => !this.parts.has(`state#${u}`));
    }
    if (missing.length) {
      const both = (async () => {
        const d = durExpr(this.tr.meta.last);
        const sd = threadStateDurExpr(this.tr.meta.last);
        const list = missing.map((u) => String(Math.trunc(u))).join(', ');
        // States and slices each on a connection of their own (when the trace has them): both scans run at
        // once, and not behind the parts queued on the API's connection (an upload's prewarmTrace).
        const [states, slices] = await Promise.all([
          this.tr.meta.tables.has('thread_state')
            ? readSplit(
                this.tr.beside?.(LANES.threadStates) ?? this.tr,
                binnedSql(
                  `SELECT utid AS k, id, ts, ${sd} AS dur, ${sd} AS maxdur, state FROM thread_state WHERE utid IN (${list})`,
                  [
                    { col: 'maxdur', agg: 'max(dur)' },
                    { col: 'state', agg: `arg_max(state, ${BUCKET_PICK})` },
                  ],
                  this.b,
                ),
                [...SLICE_COLS, 'state'],
              )
            : new Map<string, Rows>(),
          this.tr.meta.tables.has('slice')
            ? readSplit(
                this.tr.beside?.() ?? this.tr,
                binnedSql(sliceSrc(d, 'utid', `WHERE utid IN (${list})`), slicePayload(true), this.b, ', depth'),
                SLICE_ROW_COLS,
              )
            : new Map<string, Rows>(),
        ]);
        if (this.cacheDir) {
          for (const u of missing) {
            const k = String(u);
            this.keep(this.cacheFile(`state#${u}`)!, new Map(states.has(k) ? [[k, states.get(k)!]] : []));
            this.keep(this.cacheFile(`slice#${u}`)!, new Map(slices.has(k) ? [[k, slices.get(k)!]] : []));
          }
        }
        return { states, slices };
      })();
      for (const u of missing) {
        this.track(
          `state#${u}`,
          both.then((x) => new Map(x.states.has(String(u)) ? [[String(u), x.states.get(String(u))!]] : [])),
        );
        this.track(
          `slice#${u}`,
          both.then((x) => new Map(x.slices.has(String(u)) ? [[String(u), x.slices.get(String(u))!]] : [])),
        );
      }
    }
    const states = new Map<string, Rows>();
    const slices = new Map<string, Rows>();
    for (const u of utids) {
      for (const [k, v] of await this.parts.get(`state#${u}`)!) states.set(k, v);
      for (const [k, v] of await this.parts.get(`slice#${u}`)!) slices.set(k, v);
    }
    return { states, slices };
  }

  slice(): Promise<Map<string, Rows>> {
    return this.part('slice', async () => {
      if (!this.tr.meta.tables.has('slice')) return new Map();
      const d = durExpr(this.tr.meta.last);
      return readSplit(
        this.tr.beside?.(LANES.sliceCategories) ?? this.tr,
        binnedSql(sliceSrc(d, 'category', ''), slicePayload(false), this.b),
        SLICE_ROW_COLS,
      );
    });
  }

  counter(): Promise<Map<string, Rows>> {
    return this.part('counter', async () => {
      if (!this.tr.meta.tables.has('counter')) return new Map();
      const { base } = this.tr.meta;
      return readSplit(
        this.tr,
        `SELECT track_id AS k, CASE WHEN count(*) = 1 THEN any_value(id) END AS id, min(ts) - ${base} AS ts, count(*) AS n,
                min(value) AS lo, max(value) AS hi, arg_max(value, (ts, id)) AS last
         FROM counter GROUP BY track_id, (ts - ${base}) // ${this.res}`,
        ['id', 'ts', 'n', 'lo', 'hi', 'last'],
      );
    }).then((m) => {
      if (this.counterRange.size === 0) {
        for (const [k, r] of m) {
          let lo = Infinity;
          let hi = -Infinity;
          for (const v of r.lo as number[]) lo = Math.min(lo, v);
          for (const v of r.hi as number[]) hi = Math.max(hi, v);
          this.counterRange.set(k, { lo, hi });
        }
      }
      return m;
    });
  }

  writepage(): Promise<Map<string, Rows>> {
    return this.part('writepage', async () => {
      if (!this.tr.meta.tables.has('mm_vmscan_write_folio')) return new Map();
      const { base } = this.tr.meta;
      return readSplit(
        this.tr,
        `SELECT 0 AS k, CASE WHEN count(*) = 1 THEN any_value(id) END AS id, min(ts) - ${base} AS ts, count(*) AS n,
                any_value(cpu) AS cpu, any_value(utid) AS utid
         FROM mm_vmscan_write_folio GROUP BY (ts - ${base}) // ${this.res}`,
        ['id', 'ts', 'n', 'cpu', 'utid'],
      );
    });
  }
}

/** Bump when the rows of a part change meaning, or the file format: older files are then ignored. */
const CACHE_VERSION = 4; // 4: a thread's exit state (Z, X) no longer drawn to the trace's end

/*
 * A part on disk: uint32 LE header length, the JSON header
 * `{keys: [{k, n, cols: [{c, f64 | json: [offset, bytes]}]}]}`, then the
 * columns: numbers as float64 (null as NaN), anything else as JSON text.
 * Reading 32k-bucket numeric columns this way is several times cheaper than
 * JSON.parse (and makes far less garbage), which is most of a cold first view.
 */
async function readPart(file: string): Promise<Map<string, Rows> | null> {
  let buf: Buffer;
  try {
    buf = await fs.readFile(file);
  } catch {
    return null;
  }
  try {
    const hlen = buf.readUInt32LE(0);
    const head = JSON.parse(buf.toString('utf8', 4, 4 + hlen)) as {
      keys: Array<{
        k: string;
        n: number;
        cols: Array<{ c: string; f64?: [number, number]; json?: [number, number] }>;
      }>;
    };
    const body = 4 + hlen;
    const out = new Map<string, Rows>();
    for (const key of head.keys) {
      const rows: Rows = {};
      for (const col of key.cols) {
        if (col.f64) {
          const [off, n] = col.f64;
          const f = new Float64Array(
            buf.buffer.slice(buf.byteOffset + body + off, buf.byteOffset + body + off + n * 8),
          );
          const a: Cell[] = new Array(n);
          for (let i = 0; i < n; i++) {
            const v = f[i]!;
            a[i] = v !== v ? null : v;
          }
          rows[col.c] = a;
        } else {
          const [off, len] = col.json!;
          rows[col.c] = JSON.parse(buf.toString('utf8', body + off, body + off + len)) as Cell[];
        }
      }
      out.set(key.k, rows);
    }
    return out;
  } catch {
    return null; // damaged: built again
  }
}

function encodePart(m: Map<string, Rows>): Buffer {
  const chunks: Buffer[] = [];
  let size = 0;
  const keys = [];
  for (const [k, rows] of m) {
    const cols = [];
    let n = 0;
    for (const [c, values] of Object.entries(rows)) {
      n = values.length;
      if (values.every((v) => v === null || typeof v === 'number')) {
        const f = new Float64Array(values.length);
        for (let i = 0; i < values.length; i++) f[i] = values[i] === null ? NaN : (values[i] as number);
        cols.push({ c, f64: [size, values.length] });
        const b = Buffer.from(f.buffer);
        chunks.push(b);
        size += b.length;
      } else {
        const b = Buffer.from(JSON.stringify(values));
        const pad = (8 - (b.length % 8)) % 8; // keep float64 columns aligned
        cols.push({ c, json: [size, b.length] });
        chunks.push(b, Buffer.alloc(pad));
        size += b.length + pad;
      }
    }
    keys.push({ k, n, cols });
  }
  const head = Buffer.from(JSON.stringify({ keys }));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length);
  return Buffer.concat([len, head, ...chunks]);
}

async function writePart(file: string, m: Map<string, Rows>): Promise<void> {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(tmp, encodePart(m));
    await fs.rename(tmp, file);
  } catch {
    // A read-only data directory: the overview is rebuilt after each restart instead.
    await fs.rm(tmp, { force: true }).catch(() => undefined);
  }
}

const SLICE_COLS = ['id', 'ts', 'dur', 'n', 'maxdur'];
const SLICE_ROW_COLS = [...SLICE_COLS, 'name', 'category', 'utid', 'depth', 'begin_id', 'end_id'];

function sliceSrc(d: string, key: string, where: string): string {
  return `SELECT ${key} AS k, id, ts, ${d} AS dur, ${d} AS maxdur, name, category, utid, depth, begin_id, end_id FROM slice ${where}`;
}

function slicePayload(byDepth: boolean) {
  return [
    { col: 'maxdur', agg: 'max(dur)' },
    { col: 'name', agg: `arg_max(name, ${BUCKET_PICK})` },
    { col: 'category', agg: `arg_max(category, ${BUCKET_PICK})` },
    { col: 'utid', agg: `arg_max(utid, ${BUCKET_PICK})` },
    { col: 'depth', agg: byDepth ? 'depth' : '0' },
    { col: 'begin_id', agg: 'CASE WHEN count(*) = 1 THEN any_value(begin_id) END' },
    { col: 'end_id', agg: 'CASE WHEN count(*) = 1 THEN any_value(end_id) END' },
  ];
}

/**
 * Columns of the parts that hold numbers. They are read as DOUBLE, so DuckDB
 * hands over JS numbers: a BIGINT would come as a bigint per value, each then
 * turned into a number (as exact: both round to the nearest double), which
 * with an object per row was half of building a part (~66k rows for the
 * threads of interest on a 1M-event trace).
 */
const NUMERIC_COLS = new Set([
  'id',
  'ts',
  'dur',
  'n',
  'maxdur',
  'utid',
  'depth',
  'begin_id',
  'end_id',
  'cpu',
  'lo',
  'hi',
  'last',
]);

/** Runs a part's query (columns k, ts and `cols`) and splits it per key k, in (k, ts) order. */
async function readSplit(tr: OpenTrace, sql: string, cols: string[]): Promise<Map<string, Rows>> {
  if (!tr.queryColumns) return split(await tr.query(`SELECT * FROM (${sql}) ORDER BY k, ts`), cols);
  const q = (c: string) => `"${c}"`;
  const select = ['k', ...cols.map((c) => (NUMERIC_COLS.has(c) ? `CAST(${q(c)} AS DOUBLE) AS ${q(c)}` : q(c)))];
  return splitColumns(await tr.queryColumns(`SELECT ${select.join(', ')} FROM (${sql}) ORDER BY k, ts`), cols);
}

/** No value of from[i..j) needs converting to a Cell (a bigint, or undefined for null). */
function isPlainRun(from: unknown[], i: number, j: number): boolean {
  for (let r = i; r < j; r++) {
    const v = from[r];
    if (typeof v === 'bigint' || v === undefined) return false;
  }
  return true;
}

/** split() for columns: rows of one key are consecutive, so each key's values are copied in one run. */
function splitColumns(columns: Record<string, unknown[]>, cols: string[]): Map<string, Rows> {
  const out = new Map<string, Rows>();
  const k = columns.k ?? [];
  for (let i = 0; i < k.length;) {
    let j = i + 1;
    while (j < k.length && k[j] === k[i]) j++;
    const key = String(k[i]);
    let g = out.get(key);
    if (!g) {
      g = Object.fromEntries(cols.map((c) => [c, [] as Cell[]]));
      out.set(key, g);
    }
    for (const c of cols) {
      const from = columns[c]!;
      // A run with nothing to convert (the numbers come as DOUBLE: readSplit) is copied whole, not pushed
      // value by value: 55 -> 11 CPU ms for a first view's parts on a cold JIT, with far less garbage.
      if (g[c]!.length === 0 && isPlainRun(from, i, j)) {
        g[c] = from.slice(i, j) as Cell[];
        continue;
      }
      const to = g[c]!;
      for (let r = i; r < j; r++) {
        const v = from[r];
        to.push(typeof v === 'bigint' ? Number(v) : ((v as Cell) ?? null));
      }
    }
    i = j;
  }
  return out;
}

function split(rows: Record<string, unknown>[], cols: string[]): Map<string, Rows> {
  const out = new Map<string, Rows>();
  for (const r of rows) {
    const k = String(r.k);
    let g = out.get(k);
    if (!g) {
      g = Object.fromEntries(cols.map((c) => [c, [] as Cell[]]));
      out.set(k, g);
    }
    for (const c of cols) {
      const v = r[c];
      g[c]!.push(typeof v === 'bigint' ? Number(v) : ((v as Cell) ?? null));
    }
  }
  return out;
}

/** Can this window be answered from the overview? */
export function servesWindow(ov: Overview, w: Window): boolean {
  return (w.t1 - w.t0) / BigInt(w.px) >= ov.res;
}

function windowOf(w: Window) {
  const t0 = Number(w.t0);
  const t1 = Number(w.t1);
  const res = Number((w.t1 - w.t0) / BigInt(w.px));
  return { t0, t1, res: Math.max(1, res) };
}

function out(w: Window, res: number, cols: Columns, rows: number, extra?: Record<string, unknown>): TrackData {
  return { t0: Number(w.t0), t1: Number(w.t1), px: w.px, res, rows, cols, extra };
}

/** One output column's merge of summary rows (per group, when grouped). */
interface Acc {
  ts: number;
  end: number;
  n: number;
  /** The longest contributor's `maxdur` and row (its payload is kept). */
  best: number;
  i: number;
  id: Cell;
  bucket: number;
}

/**
 * Re-aggregates slice rows (ts-sorted; `n` > 1 for base buckets) for a window:
 * returns columns `id, ts, dur, n` plus `payload`, sorted by ts.
 *
 * A row at least one output column wide (and a single slice) stays itself;
 * the rest merge per output column (and per `groupCol` value). The rows come
 * ts-sorted, so a group's column only grows until the group moves to a later
 * one: each group keeps one open merge, found by its value, not a Map keyed
 * by a string built per row (that and a closure per output row were most of a
 * first view's threads-of-interest answer: 100-240 ms on sched_wq.v7).
 * Output order is that of a stable sort by ts of [kept rows, merges in the
 * order they were opened], here a merge of the two (each already ts-sorted).
 */
export function reaggSlices(
  r: Rows | undefined,
  w: Window,
  payload: string[],
  groupCol?: string,
): { cols: Columns; rows: number } {
  const { t0, t1, res } = windowOf(w);
  const cols: Columns = Object.fromEntries(['id', 'ts', 'dur', 'n', ...payload].map((c) => [c, [] as Cell[]]));
  if (!r) return { cols, rows: 0 };
  const ts = r.ts as number[];
  const dur = r.dur as number[];
  const n = r.n as number[];
  const maxdur = r.maxdur as number[];
  const ids = r.id!;
  const group = groupCol ? r[groupCol]! : null;
  const raw: number[] = [];
  const accs: Acc[] = [];
  const open = new Map<Cell, Acc>();
  let last: Acc | undefined; // the open merge when ungrouped
  let prevTs = -Infinity;
  let sorted = true;
  for (let i = 0; i < ts.length; i++) {
    const s = ts[i]!;
    const e = s + dur[i]!;
    if (e <= t0 || s >= t1) continue;
    if (s < prevTs) sorted = false;
    prevTs = s;
    if (n[i] === 1 && dur[i]! >= res) {
      raw.push(i);
      continue;
    }
    const bucket = Math.floor((s - t0) / res);
    const g = group ? group[i]! : null;
    const a = group ? open.get(g) : last;
    if (!a || a.bucket !== bucket) {
      const made: Acc = { ts: s, end: e, n: n[i]!, best: maxdur[i]!, i, id: n[i] === 1 ? ids[i]! : null, bucket };
      accs.push(made);
      if (group) open.set(g, made);
      else last = made;
    } else mergeRow(a, i, e, n, maxdur);
  }
  // Unsorted rows (never from readSplit) could reopen a group's column: merge them as a key per column would.
  if (!sorted) return reaggUnsorted(r, w, payload, groupCol);
  const pay = payload.map((p) => ({ from: r[p]!, to: cols[p]!, isId: p === 'begin_id' || p === 'end_id' }));
  const cId = cols.id!;
  const cTs = cols.ts!;
  const cDur = cols.dur!;
  const cN = cols.n!;
  let x = 0;
  let y = 0;
  while (x < raw.length || y < accs.length) {
    if (y >= accs.length || (x < raw.length && ts[raw[x]!]! <= accs[y]!.ts)) {
      const i = raw[x++]!;
      cId.push(ids[i]!);
      cTs.push(ts[i]!);
      cDur.push(dur[i]!);
      cN.push(1);
      for (const p of pay) p.to.push(p.from[i] ?? null);
    } else {
      const a = accs[y++]!;
      cId.push(a.id);
      cTs.push(a.ts);
      cDur.push(Math.max(1, a.end - a.ts));
      cN.push(a.n);
      const keepIds = a.n === 1;
      for (const p of pay) p.to.push(!keepIds && p.isId ? null : (p.from[a.i] ?? null));
    }
  }
  return { cols, rows: raw.length + accs.length };
}

/** Adds summary row `i` (ending at `e`) to merge `a`: its span, count, and the longest contributor's row. */
function mergeRow(a: Omit<Acc, 'bucket'>, i: number, e: number, n: number[], maxdur: number[]): void {
  a.end = Math.max(a.end, e);
  a.n += n[i]!;
  a.id = null;
  if (maxdur[i]! > a.best) {
    a.best = maxdur[i]!;
    a.i = i;
  }
}

/** reaggSlices for rows not sorted by ts: a merge per (output column, group) key, then a stable sort by ts. */
function reaggUnsorted(r: Rows, w: Window, payload: string[], groupCol?: string): { cols: Columns; rows: number } {
  const { t0, t1, res } = windowOf(w);
  const cols: Columns = Object.fromEntries(['id', 'ts', 'dur', 'n', ...payload].map((c) => [c, [] as Cell[]]));
  const accs = new Map<string, Omit<Acc, 'bucket'>>();
  const raw: number[] = [];
  const ts = r.ts as number[];
  const dur = r.dur as number[];
  const n = r.n as number[];
  const maxdur = r.maxdur as number[];
  for (let i = 0; i < ts.length; i++) {
    const s = ts[i]!;
    const e = s + dur[i]!;
    if (e <= t0 || s >= t1) continue;
    if (n[i] === 1 && dur[i]! >= res) {
      raw.push(i);
      continue;
    }
    const key = `${Math.floor((s - t0) / res)}${groupCol ? `|${r[groupCol]![i]}` : ''}`;
    const a = accs.get(key);
    if (!a) accs.set(key, { ts: s, end: e, n: n[i]!, best: maxdur[i]!, i, id: n[i] === 1 ? r.id![i]! : null });
    else mergeRow(a, i, e, n, maxdur);
  }
  const items: Array<{ ts: number; row: () => void }> = [];
  const push = (id: Cell, s: number, du: number, nn: number, src: number, keepIds: boolean) => {
    cols.id!.push(id);
    cols.ts!.push(s);
    cols.dur!.push(du);
    cols.n!.push(nn);
    for (const p of payload) {
      const v = r[p]![src] ?? null;
      cols[p]!.push(!keepIds && (p === 'begin_id' || p === 'end_id') ? null : v);
    }
  };
  for (const i of raw) items.push({ ts: ts[i]!, row: () => push(r.id![i]!, ts[i]!, dur[i]!, 1, i, true) });
  for (const a of accs.values())
    items.push({ ts: a.ts, row: () => push(a.id, a.ts, Math.max(1, a.end - a.ts), a.n, a.i, a.n === 1) });
  items.sort((x, y) => x.ts - y.ts);
  for (const it of items) it.row();
  return { cols, rows: items.length };
}

export async function cpuFromOverview(ov: Overview, w: Window, keys: number[]): Promise<Map<number, TrackData>> {
  const res = windowOf(w).res;
  const cpu = await ov.cpu();
  return new Map(
    keys.map((k) => {
      const ahead = ov.firstViewAnswer('cpu', k, w);
      if (ahead) return [k, ahead];
      const { cols, rows } = reaggSlices(cpu.get(String(k)), w, ['utid']);
      cols.end_state = new Array(rows).fill(null);
      return [k, out(w, res, cols, rows)];
    }),
  );
}

export async function threadFromOverview(ov: Overview, w: Window, keys: number[]): Promise<Map<number, TrackData>> {
  const res = windowOf(w).res;
  const { states, slices } = await ov.threads(keys);
  return new Map(
    keys.map((k) => {
      const ahead = ov.firstViewAnswer('thread', k, w);
      if (ahead) return [k, ahead];
      const st = reaggSlices(states.get(String(k)), w, ['state']);
      st.cols.cpu = new Array(st.rows).fill(null);
      const sl = reaggSlices(slices.get(String(k)), w, ['name', 'category', 'depth', 'begin_id', 'end_id'], 'depth');
      return [k, out(w, res, st.cols, st.rows, { slices: sl.cols, sliceRows: sl.rows })];
    }),
  );
}

export async function sliceFromOverview(ov: Overview, w: Window, keys: string[]): Promise<Map<string, TrackData>> {
  const res = windowOf(w).res;
  const slice = await ov.slice();
  return new Map(
    keys.map((k) => {
      const ahead = ov.firstViewAnswer('slice', k, w);
      if (ahead) return [k, ahead];
      const { cols, rows } = reaggSlices(slice.get(k), w, ['name', 'utid', 'depth', 'begin_id', 'end_id']);
      return [k, out(w, res, cols, rows)];
    }),
  );
}

/** Counter columns for a window: per column min/max/last, plus the value in force at t0. */
export async function counterFromOverview(ov: Overview, w: Window, keys: number[]): Promise<Map<number, TrackData>> {
  const { t0, t1, res } = windowOf(w);
  const counter = await ov.counter();
  return new Map(
    keys.map((k) => {
      const ahead = ov.firstViewAnswer('counter', k, w);
      if (ahead) return [k, ahead];
      const r = counter.get(String(k));
      const cols: Columns = { id: [], ts: [], n: [], lo: [], hi: [], last: [] };
      let prev: { ts: number; value: number } | null = null;
      let j = Number.NaN;
      if (r) {
        const ts = r.ts as number[];
        for (let i = 0; i < ts.length; i++) {
          const s = ts[i]!;
          if (s < t0) {
            prev = { ts: s, value: r.last![i] as number };
            continue;
          }
          if (s >= t1) break;
          const b = Math.floor((s - t0) / res);
          const at = cols.ts!.length - 1;
          if (b === j) {
            cols.n![at] = (cols.n![at] as number) + (r.n![i] as number);
            cols.lo![at] = Math.min(cols.lo![at] as number, r.lo![i] as number);
            cols.hi![at] = Math.max(cols.hi![at] as number, r.hi![i] as number);
            cols.last![at] = r.last![i]!;
            cols.id![at] = null;
          } else {
            j = b;
            for (const c of ['id', 'ts', 'n', 'lo', 'hi', 'last']) cols[c]!.push(r[c]![i]!);
          }
        }
      }
      const range = ov.counterRange.get(String(k));
      return [k, out(w, res, cols, cols.ts!.length, { prev, lo: range?.lo ?? 0, hi: range?.hi ?? 0 })];
    }),
  );
}

export async function writepageFromOverview(ov: Overview, w: Window): Promise<TrackData> {
  const { t0, t1, res } = windowOf(w);
  const r = (await ov.writepage()).get('0');
  const cols: Columns = { id: [], ts: [], n: [], cpu: [], utid: [] };
  let j = Number.NaN;
  if (r) {
    const ts = r.ts as number[];
    for (let i = 0; i < ts.length; i++) {
      const s = ts[i]!;
      if (s < t0 || s >= t1) continue;
      const b = Math.floor((s - t0) / res);
      const at = cols.ts!.length - 1;
      if (b === j) {
        cols.n![at] = (cols.n![at] as number) + (r.n![i] as number);
        cols.id![at] = null;
      } else {
        j = b;
        for (const c of ['id', 'ts', 'n', 'cpu', 'utid']) cols[c]!.push(r[c]![i]!);
      }
    }
  }
  return out(w, res, cols, cols.ts!.length);
}

/** Memory a part takes, roughly: 8 bytes a number, a string's length, 16 per array. */
function partBytes(m: Map<string, Rows>): number {
  let n = 0;
  for (const [k, rows] of m) {
    n += k.length + 64;
    for (const col of Object.values(rows)) {
      n += 16 + col.length * 8;
      // A column is one SQL column (or a run of one): text or numbers, with NULLs. Only text has lengths to
      // add; walking the numbers cell by cell too cost a first view 25-54 ms of this thread (the parts'
      // 170-200k cells on a cold JIT) while the detectors ran.
      if (isTextColumn(col)) for (const v of col) if (typeof v === 'string') n += v.length;
    }
  }
  return n;
}

/** Whether a column's first non-NULL cell is text. */
function isTextColumn(col: Cell[]): boolean {
  for (const v of col) if (v !== null) return typeof v === 'string';
  return false;
}

/**
 * One overview per trace (its parts are built on first use and kept), within
 * a budget in bytes for all traces: past it the least recently used traces'
 * overviews are dropped whole (requests under way keep theirs; the next one
 * reads its parts back from the files kept beside the model).
 */
export class Overviews {
  private readonly byTrace: ByteLru<string, Overview>;

  /** `cacheDirOf`: where a trace's overview is kept on disk (none: memory only). `maxBytes`: the budget. */
  constructor(
    private readonly cacheDirOf?: (id: string) => string | null,
    maxBytes = 128 << 20,
  ) {
    this.byTrace = new ByteLru(maxBytes, (_id, o) => {
      o.onGrow = null;
    });
  }

  /** Bytes of all overviews kept. */
  get bytes(): number {
    return this.byTrace.bytes;
  }

  get maxBytes(): number {
    return this.byTrace.maxBytes;
  }

  /** Another budget: past it the least recently used overviews go now. */
  setBudget(maxBytes: number): void {
    this.byTrace.setBudget(maxBytes);
  }

  get(id: string, tr: OpenTrace): Overview {
    let o = this.byTrace.get(id);
    if (!o) {
      const created = new Overview(tr, this.cacheDirOf?.(id) ?? null);
      created.onGrow = () => this.byTrace.resize(id, created.bytes);
      this.byTrace.set(id, created, 0);
      o = created;
    }
    return o;
  }

  /**
   * Drops the overviews whose parts are all kept on disk, whatever the
   * budget: while a model is built (routes/traces.ts leanCachesWhileLoading)
   * the first trace's overview (9-10 MB of the heap after sched_wq.v7's first
   * view) would otherwise stay live through the next upload's peak; a later
   * view reads its parts back from the files. Returns how many went.
   */
  dropKeptOnDisk(): number {
    let dropped = 0;
    this.byTrace.deleteWhere((id) => {
      const o = this.byTrace.peek(id);
      if (!o?.keptOnDisk) return false;
      o.onGrow = null;
      dropped++;
      return true;
    });
    return dropped;
  }

  /** Forgets one trace's summaries (its model was replaced). */
  forget(id: string): void {
    const o = this.byTrace.peek(id);
    if (o) o.onGrow = null;
    this.byTrace.delete(id);
  }

  /** Builds the parts a first view needs: CPUs, slice categories, counters, writepage, and the given threads. */
  async warm(id: string, tr: OpenTrace, utids: number[]): Promise<void> {
    const o = this.get(id, tr);
    await Promise.all([o.cpu(), o.slice(), o.counter(), o.writepage(), o.threads(utids)]);
  }
}
