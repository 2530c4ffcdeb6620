// A trace of many event kinds, some with a few events and some with many:
// every event lands in `ftrace_event` and `args` with its own fields,
// whether its shape became a table (past SHAPE_TABLE_AFTER events,
// untyped_rows.ts) or its events stayed `_ftrace_event` + `_args` rows; and
// only shapes past SHAPE_TABLE_AFTER hold a table. The expected rows are
// read from the trace's own lines, not from the model.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { duckDbAllocatedBytes } from '../engine/allocator_decay.ts';
import { openDuckDb, type Engine } from '../engine/engine.ts';
import { ColumnAppender, OpenAppenders, StagingChunks, UnflushedChunks } from '../model/column_appender.ts';
import { ColumnChunk, type ColumnKind, type ColumnSpec } from '../model/column_chunk.ts';
import { SHAPE_TABLE_AFTER } from '../model/untyped_rows.ts';
import { ingestFile } from './ingest_file.ts';

const K = SHAPE_TABLE_AFTER;
/** Events per kind: below, at and past the threshold, and far past it. */
const COUNTS = [1, 3, K - 1, K, K + 1, 2 * K + 3, 700];
const WORDS = ['alpha', 'beta', 'gamma'];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-many-kinds-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * Tracefs text: kind k has COUNTS[k] events, round-robin in time while it
 * has any left. `mixed_kind` prints `ptr` as hex or as `(null)` (two shapes
 * of one name, counted down apart).
 */
function manyKindsTrace(): string {
  const lines = ['# tracer: nop', '#'];
  const kinds = COUNTS.map((n, k) => ({ name: `kind_${k}_event`, n }));
  kinds.push({ name: 'mixed_kind', n: 3 * K });
  let us = 0;
  for (let i = 0; kinds.some((k) => k.n > i); i++) {
    for (const [k, kind] of kinds.entries()) {
      if (i >= kind.n) continue;
      us++;
      const ts = `${200 + Math.floor(us / 1e6)}.${String(us % 1e6).padStart(6, '0')}`;
      const ptr = kind.name === 'mixed_kind' && i % 3 === 0 ? '(null)' : `0x${(0xffff0000 + i * 64).toString(16)}`;
      lines.push(
        `          worker-${300 + (k % 5)}    [00${k % 2}] ..... ${ts}: ${kind.name}: ` +
          `nr=${i * 7 + k} ptr=${ptr} name=${WORDS[i % 3]} len=${4096 + i}`,
      );
    }
  }
  return lines.join('\n') + '\n';
}

interface Line {
  tsNs: bigint;
  name: string;
  args: [string, string][];
}

/** The events as the text prints them: time, name and each key=value, in order. */
function parseLines(text: string): Line[] {
  const out: Line[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*\S+-\d+\s+\[\d+\]\s+\S+\s+(\d+)\.(\d{6}): (\w+): (.*)$/.exec(line);
    if (m === null) continue;
    out.push({
      tsNs: BigInt(m[1]!) * 1_000_000_000n + BigInt(m[2]!) * 1000n,
      name: m[3]!,
      args: m[4]!.split(' ').map((kv) => kv.split('=') as [string, string]),
    });
  }
  return out;
}

/** A value's kind as a shape stores it: integer, 0x-hex or text. */
function kindOfText(v: string): string {
  return /^-?\d+$/.test(v) ? 'int' : /^0x[0-9a-f]+$/.test(v) ? 'hex' : 'str';
}

const trace = path.join(dir, 'many_kinds.txt');
const text = manyKindsTrace();
fs.writeFileSync(trace, text);
const lines = parseLines(text);

describe('a trace of many event kinds, few events in most', () => {
  for (const worker of [false, true]) {
    it(`every event in the views with its fields; tables only for shapes past ${K} events (${worker ? 'store and field workers' : 'one thread'})`, async () => {
      const r = await ingestFile(trace, { dataDir: path.join(dir, `data-${worker}`), worker });
      const engine = await openDuckDb(path.join(dir, `data-${worker}`, 'traces', r.id, 'trace.duckdb'), {
        readOnly: true,
      });
      try {
        const counts = new Map<string, number>();
        for (const l of lines) counts.set(l.name, (counts.get(l.name) ?? 0) + 1);
        const byName = await engine.query<{ name: string; n: bigint }>(
          'SELECT name, count(*) AS n FROM ftrace_event GROUP BY name ORDER BY name',
        );
        expect(byName.map((x) => [x.name, Number(x.n)])).toEqual([...counts].sort(([a], [b]) => (a < b ? -1 : 1)));
        // Every event's fields, in the trace's order.
        const rows = await engine.query<{ ts: bigint; name: string; key: string; v: string }>(
          `SELECT e.ts, e.name, a.key, coalesce(a.string_value, CAST(a.int_value AS VARCHAR)) AS v
           FROM ftrace_event e JOIN args a ON a.arg_set_id = e.arg_set_id
           ORDER BY e.ts, a.arg_index`,
        );
        const expected = lines.flatMap((l) => l.args.map(([key, v]) => [l.tsNs, l.name, key, v]));
        expect(rows.length).toBe(expected.length);
        expect(rows.map((x) => [BigInt(x.ts), x.name, x.key, x.v])).toEqual(expected);
        // Shape tables: one per (name, keys, kinds) with more than K events.
        const perShape = new Map<string, number>();
        for (const l of lines) {
          const sig = `${l.name} ${l.args.map(([key, v]) => `${key}:${kindOfText(v)}`).join(' ')}`;
          perShape.set(sig, (perShape.get(sig) ?? 0) + 1);
        }
        const tables = await engine.query<{ n: bigint; rows: bigint }>(
          `SELECT count(*) AS n, sum(estimated_size) AS rows FROM duckdb_tables() WHERE table_name LIKE '\\_shape\\_%' ESCAPE '\\'`,
        );
        const past = [...perShape.values()].filter((n) => n > K);
        expect(Number(tables[0]!.n)).toBe(past.length);
        // Their rows: all but the first K of each such shape.
        expect(Number(tables[0]!.rows)).toBe(past.reduce((s, n) => s + n - K, 0));
      } finally {
        engine.close();
      }
    });
  }
});

// A real `trace-cmd record -e all` (fixtures/recording/record_all_events_small.sh):
// the formats of every event the kernel has and ~220 names with events, so a
// model of many tables and columns. Its counts come from `trace-cmd report`
// (awk, fixtures/all_events_small.counts.json).
describe('a `trace-cmd record -e all` recording (fixtures/all_events_small.v7.dat)', () => {
  const root = path.resolve(import.meta.dirname, '../..');
  const fixture = path.join(root, 'fixtures/all_events_small.v7.dat');
  const counts = JSON.parse(fs.readFileSync(path.join(root, 'fixtures/all_events_small.counts.json'), 'utf8')) as {
    events_by_name: Record<string, number>;
    events_total: number;
  };
  /** The recording's model, ingested once for both cases (store and field workers). */
  let ingested: Promise<string> | null = null;
  const model = () =>
    (ingested ??= ingestFile(fixture, { dataDir: path.join(dir, 'data-all'), worker: true }).then((r) =>
      path.join(dir, 'data-all', 'traces', r.id, 'trace.duckdb'),
    ));

  it('every event in ftrace_event, per name as trace-cmd report counts them (store and field workers)', async () => {
    const engine = await openDuckDb(await model(), { readOnly: true });
    try {
      const byName = await engine.query<{ name: string; n: bigint }>(
        'SELECT name, count(*) AS n FROM ftrace_event GROUP BY name ORDER BY name',
      );
      expect(Object.fromEntries(byName.map((x) => [x.name, Number(x.n)]))).toEqual(counts.events_by_name);
      expect(byName.reduce((n, x) => n + Number(x.n), 0)).toBe(counts.events_total);
    } finally {
      engine.close();
    }
  }, 120_000);

  /**
   * DuckDB's appender allocates a 2048-row data chunk per column when it
   * opens, outside its memory cap, and frees it only when destroyed; a
   * load's appenders once stayed open from their table's creation to the
   * store's finish, so that memory followed the number of tables. Here the
   * recording's tables (typed, shape, events and args: their columns and rows
   * as its model holds them) are loaded again, their rows interleaved 1024 at
   * a time as a recording's are, through appenders bounded by a budget well
   * under what all of them would hold; DuckDB's bytes outside its buffer pool
   * (jemalloc's allocated bytes less duckdb_memory()'s) must stay within it.
   */
  it("appending to every table of its model keeps DuckDB's appender chunks within the open appenders' budget, and every row arrives", async () => {
    const source = await model();
    expect(duckDbAllocatedBytes(), "DuckDB's jemalloc mallctl").not.toBeNull();
    const engine = await openDuckDb(path.join(dir, 'reload.duckdb'), {
      memoryLimit: '64MB',
      tempDirectory: path.join(dir, 'reload-spill'),
      threads: 1,
    });
    try {
      await engine.exec(`ATTACH '${source}' AS src (READ_ONLY)`);
      const tables = await loadTables(engine);
      const allOpen = tables.reduce((n, t) => n + 2 * chunkBytesOf(t.columns), 0);
      const budget = 4 * 1048576;
      // The bound means something only if all the tables' appenders would hold far more.
      expect(allOpen).toBeGreaterThan(3 * budget);
      await engine.exec('BEGIN TRANSACTION');
      for (const t of tables) await engine.exec(`CREATE TABLE ${t.name} AS SELECT * FROM src.main.${t.name} LIMIT 0`);
      const outsidePool = async () => {
        const [row] = await engine.query<{ pool: bigint }>(
          'SELECT sum(memory_usage_bytes) AS pool FROM duckdb_memory()',
        );
        return duckDbAllocatedBytes()! - Number(row!.pool);
      };
      const before = await outsidePool();
      const open = new OpenAppenders(budget);
      const staging = new StagingChunks();
      // Each chunk flushed at once: no appended rows held unflushed outside the pool.
      const unflushed = new UnflushedChunks(1 << 30, 1);
      const appenders = await Promise.all(
        tables.map((t) =>
          ColumnAppender.create(engine.connection, t.name, t.columns, t.structFrom, unflushed, staging, open),
        ),
      );
      let most = 0;
      for (let from = 0; tables.some((t) => t.rows.length > from); from += 1024) {
        for (const [i, t] of tables.entries()) {
          if (from >= t.rows.length) continue;
          const chunk = new ColumnChunk(t.columns, (d) => appenders[i]!.append(d));
          for (const row of t.rows.slice(from, from + 1024)) {
            chunk.startRow();
            row.forEach((v, c) => chunk.set(c, v as string | number | bigint | boolean | null));
            chunk.endRow();
          }
          chunk.flush();
          // A turn of the event loop, as the store worker takes between chunks: the bindings' finalizers run there.
          await new Promise((resolve) => setImmediate(resolve));
          most = Math.max(most, (await outsidePool()) - before);
        }
      }
      for (const a of appenders) a.close();
      expect(open.stats.closed).toBeGreaterThan(0);
      // The budget, plus one appender opened past it (the largest table's two chunks) and 1 MiB of DuckDB's own.
      // With every appender open (the budget never binding, as before it existed) it grew by 22.3 MB.
      const largest = Math.max(...tables.map((t) => 2 * chunkBytesOf(t.columns)));
      expect(most).toBeLessThan(budget + largest + 1048576);
      for (const t of tables) {
        const [diff] = await engine.query<{ n: bigint; missing: bigint; extra: bigint }>(
          `SELECT (SELECT count(*) FROM ${t.name}) AS n,
                  (SELECT count(*) FROM (FROM src.main.${t.name} EXCEPT ALL FROM ${t.name})) AS missing,
                  (SELECT count(*) FROM (FROM ${t.name} EXCEPT ALL FROM src.main.${t.name})) AS extra`,
        );
        expect([t.name, Number(diff!.n), Number(diff!.missing), Number(diff!.extra)]).toEqual([
          t.name,
          t.rows.length,
          0,
          0,
        ]);
      }
      await engine.exec('COMMIT');
    } finally {
      engine.close();
    }
  }, 120_000);
});

/** Bytes of one 2048-row vector per column, as DuckDB allocates an appender's chunk (16 KiB a BIGINT). */
function chunkBytesOf(columns: readonly ColumnSpec[]): number {
  const width: Record<ColumnKind, number> = { i32: 4, i64: 8, f64: 8, str: 16, bool: 1 };
  return columns.reduce((n, c) => n + 2048 * width[c.kind], 0);
}

interface ModelTable {
  name: string;
  /** Flat: a STRUCT's fields from structFrom on. */
  columns: ColumnSpec[];
  structFrom: number;
  rows: unknown[][];
}

/** The tables an ingest's load appends to, with rows, read from the model attached as `src`: columns flattened as the store's chunks are. */
async function loadTables(engine: Engine): Promise<ModelTable[]> {
  const names = await engine.query<{ name: string }>(
    `SELECT table_name AS name FROM duckdb_tables()
     WHERE database_name = 'src' AND estimated_size > 0
       AND (table_name IN ('_ftrace_event', '_args') OR regexp_matches(table_name, '^_(stage|shape)_'))
     ORDER BY table_name`,
  );
  const kindOf: Record<string, ColumnKind> = {
    BIGINT: 'i64',
    INTEGER: 'i32',
    DOUBLE: 'f64',
    VARCHAR: 'str',
    BOOLEAN: 'bool',
  };
  const out: ModelTable[] = [];
  for (const { name } of names) {
    const cols = await engine.query<{ column_name: string; data_type: string }>(
      `SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = 'src' AND table_name = '${name}' ORDER BY column_index`,
    );
    const last = cols[cols.length - 1]!;
    const struct = last.data_type.startsWith('STRUCT(');
    const plain = struct ? cols.slice(0, -1) : cols;
    const select = plain.map((c) => `"${c.column_name}"`).concat(struct ? [`"${last.column_name}".*`] : []);
    const described = await engine.query<{ column_name: string; column_type: string }>(
      `DESCRIBE SELECT ${select.join(', ')} FROM src.main.${name}`,
    );
    const columns = described.map((c) => {
      const kind = kindOf[c.column_type];
      if (kind === undefined) throw new Error(`${name}.${c.column_name}: no chunk kind for ${c.column_type}`);
      return { name: c.column_name, kind };
    });
    const rows = (await engine.connection.runAndReadAll(`SELECT ${select.join(', ')} FROM src.main.${name}`)).getRows();
    out.push({ name, columns, structFrom: plain.length, rows: rows as unknown[][] });
  }
  return out;
}
