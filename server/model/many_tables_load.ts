/**
 * A load of many event kinds, each with fields of its own, through the
 * store's own path (UntypedRows into ModelStore's shape tables, one
 * transaction, appenders closed and COMMIT as the store worker does), into a
 * database file: what the -e all recording's ~390 tables are to DuckDB's
 * memory cap. Used by bench/commit_per_table.ts, which measures the lowest
 * cap at which it commits (ingest_memory.ts COMMIT_BYTES_PER_COLUMN).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EventFields } from '../decode/decoded_event.ts';
import { openDuckDb, type Engine } from '../engine/engine.ts';
import type { BuilderResult } from './model_layout.ts';
import { ModelStore } from './model_store.ts';
import { SHAPE_TABLE_BASE, UntypedRows } from './untyped_rows.ts';

export interface ManyTablesLoad {
  /** Event kinds, each named synth_<k> with fields k<k>_f0... of its own (so a shape table each). */
  kinds: number;
  fieldsPerKind: number;
  eventsPerKind: number;
  /** DuckDB's cap while appending. */
  loadLimit: string;
  /** DuckDB's cap for closing the appenders and the COMMIT, from the load's stored columns (ModelStore.storedColumns). */
  commitLimit: (storedColumns: number) => string;
  /** Database block size (ingest_memory.ts ingestBlockSize); DuckDB's default if unset. */
  blockSize?: number;
}

/** The name of kind `k`. */
export function kindName(k: number): string {
  return `synth_${k}`;
}

/** The fields of the `n`th event of kind `k`: integers, and every third field a string. */
export function kindFields(k: number, n: number, fieldsPerKind: number): EventFields {
  const f: EventFields = {};
  for (let j = 0; j < fieldsPerKind; j++) f[`k${k}_f${j}`] = j % 3 === 2 ? `s${n % 7}` : n * (j + 1);
  return f;
}

/**
 * What a load of untyped rows alone hands the store at `finish`: `rows`'
 * strings and shapes, the event names with their counts, thread 0 and
 * nothing else (no header, typed tables, CPUs or problems).
 */
export function untypedRowsResult(rows: UntypedRows, eventNames: [string, string, number][]): BuilderResult {
  return {
    header: null,
    eventsTotal: eventNames.reduce((n, [, , count]) => n + count, 0),
    eventNames,
    strings: rows.stringRows(),
    dicts: [],
    shapes: rows.shapeResults(),
    threads: [{ utid: 0, tid: 0, name: null, tgid: null, forkTs: null, exitTs: null }],
    nameHistory: [],
    cpus: [],
    lost: [],
    problems: [],
    problemCount: 0,
    unparsed: 0,
  };
}

/**
 * Loads and commits; returns the open database (the caller closes it and
 * deletes `dir`), the cap the COMMIT ran at and the stored columns. Events
 * are interleaved kind by kind, as a recording's are.
 */
export async function loadManyTables(
  o: ManyTablesLoad,
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-many-tables-')),
): Promise<{ engine: Engine; dir: string; commitLimit: string; storedColumns: number }> {
  const engine = await openDuckDb(path.join(dir, 'trace.duckdb'), {
    memoryLimit: o.loadLimit,
    tempDirectory: path.join(dir, 'spill'),
    blockSize: o.blockSize,
    threads: 1,
  });
  try {
    const store = await ModelStore.beginLoad(engine);
    // Every kind a table from its first event (not SHAPE_TABLE_AFTER): a load of T tables is what this measures.
    const rows = new UntypedRows(
      store.layout,
      (t, d) => store.append(t, d),
      SHAPE_TABLE_BASE,
      0,
      undefined,
      undefined,
      0,
    );
    rows.setBase(1_000_000_000n, false);
    let id = 0;
    for (let n = 0; n < o.eventsPerKind; n++)
      for (let k = 0; k < o.kinds; k++, id++)
        rows.write(id, id * 10, id % 2, 0, k, 1, 0, 100 + id, null, kindFields(k, n, o.fieldsPerKind));
    rows.flush();
    // Shape tables are created as their first chunk arrives (asynchronously): storedColumns waits for all.
    const storedColumns = await store.storedColumns();
    const commitLimit = o.commitLimit(storedColumns);
    await engine.exec(`SET memory_limit = '${commitLimit}'`);
    await store.commitLoad(
      untypedRowsResult(
        rows,
        Array.from({ length: o.kinds }, (_, k) => [kindName(k), 'synth', o.eventsPerKind]),
      ),
    );
    return { engine, dir, commitLimit, storedColumns };
  } catch (err) {
    engine.close();
    throw err;
  }
}
