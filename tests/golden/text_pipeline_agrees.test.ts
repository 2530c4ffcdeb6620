// Large text files are ingested with the argument text of most events
// parsed on the field worker (decode_ftrace_text.ts hands them to the
// builder's RawTextSink), small ones on one thread. Whichever way, every
// text fixture must give the same model, table by table, and the same
// summary: unparsed events with their raw text and stack frames, non-ASCII
// task names, CRLF, garbage lines, out-of-order lines, old and new formats.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuckDb, type Engine } from '../../server/engine/engine.ts';
import { ingestFile, type IngestResult } from '../../server/ingest/ingest_file.ts';
import { SHAPE_BASE_FIELD_WORKER } from '../../server/model/untyped_rows.ts';
import { TYPED_TABLES } from '../../server/model/typed_tables.ts';

const FIXTURES = path.resolve(__dirname, '../../fixtures');
const TEXT_FIXTURES = [
  ...fs
    .readdirSync(path.join(FIXTURES, 'handmade'))
    .filter((f) => f.endsWith('.txt') && f !== 'bad_empty.txt')
    .map((f) => `handmade/${f}`),
  'tracefs_tgid.txt',
  'reclaim_kswapd.report.txt',
  'fsync_xfs.report.txt',
];
const TABLES = [
  ...TYPED_TABLES,
  'ftrace_event',
  'args',
  'thread',
  'thread_name_history',
  'process',
  'cpu',
  'lost_events',
  'ingest_problem',
  'sched_slice',
  'thread_state',
  'slice',
  'flow',
  'counter',
];

let dir: string;
let engine: Engine;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-text-pipeline-'));
  engine = await openDuckDb(':memory:');
});
afterAll(() => {
  engine?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function comparable(r: IngestResult): object {
  const { seconds: _s, ingestedAt: _t, ...rest } = r.summary;
  return rest;
}

/** Every table of the two models holds the same rows (as multisets). */
async function expectSameTables(a: IngestResult, b: IngestResult, alias: string): Promise<void> {
  await engine.exec(`ATTACH '${a.dbPath}' AS a_${alias} (READ_ONLY); ATTACH '${b.dbPath}' AS b_${alias} (READ_ONLY)`);
  for (const t of TABLES) {
    const [{ n }] = await engine.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM ((SELECT * FROM a_${alias}.${t} EXCEPT ALL SELECT * FROM b_${alias}.${t}) UNION ALL (SELECT * FROM b_${alias}.${t} EXCEPT ALL SELECT * FROM a_${alias}.${t}))`,
    );
    expect({ table: t, differing: n }).toEqual({ table: t, differing: 0n });
  }
  await engine.exec(`DETACH a_${alias}; DETACH b_${alias}`);
}

describe('text: fields parsed on the field worker give the one-thread model', () => {
  it.each(TEXT_FIXTURES)('%s', async (fixture) => {
    const file = path.join(FIXTURES, fixture);
    const alias = fixture.replace(/\W/g, '_');
    const oneThread = await ingestFile(file, { dataDir: path.join(dir, `${alias}-1`), worker: false });
    const pipeline = await ingestFile(file, { dataDir: path.join(dir, `${alias}-3`), worker: true });
    expect(comparable(pipeline)).toEqual(comparable(oneThread));
    await expectSameTables(oneThread, pipeline, alias);
  });

  it.each(TEXT_FIXTURES)('%s, read in small chunks through the reused read buffers', async (fixture) => {
    // The decoder reads the file into four buffers used over and over
    // (decompress.ts readReusedChunks): anything it kept of a chunk past the
    // next reads would change the model. 1000-byte reads cycle the buffers
    // many times in every fixture and cut lines everywhere.
    const file = path.join(FIXTURES, fixture);
    const alias = fixture.replace(/\W/g, '_');
    const whole = await ingestFile(file, { dataDir: path.join(dir, `${alias}-whole`), worker: true });
    process.env.STALLSCOPE_READ_CHUNK_BYTES = '1000';
    let small: IngestResult;
    try {
      small = await ingestFile(file, { dataDir: path.join(dir, `${alias}-small`), worker: true });
    } finally {
      delete process.env.STALLSCOPE_READ_CHUNK_BYTES;
    }
    expect(comparable(small)).toEqual(comparable(whole));
    await expectSameTables(whole, small, `${alias}_small`);
  });

  it('an unparsed typed event keeps its raw text and stack frames on the field worker', async () => {
    const r = await ingestFile(path.join(FIXTURES, 'handmade/unparsed_typed_frames.txt'), {
      dataDir: path.join(dir, 'frames'),
      worker: true,
    });
    expect(r.summary).toMatchObject({ eventsTotal: 4, unparsedEvents: 1, skippedInputs: 0 });
    await engine.exec(`ATTACH '${r.dbPath}' AS frames (READ_ONLY)`);
    const rows = await engine.query<{ id: bigint; name: string; raw: string | null; source_where: bigint }>(
      'SELECT id, name, raw, source_where FROM frames.ftrace_event ORDER BY id',
    );
    expect(rows.map((x) => [Number(x.id), x.name, x.raw, Number(x.source_where)])).toEqual([
      [0, 'mm_vmscan_lru_shrink_inactive', 'garbled beyond recognition\n=> shrink_lruvec\n=> kswapd', 11],
      [1, 'mm_vmscan_kswapd_sleep', null, 14],
      [2, 'mm_vmscan_lru_shrink_inactive', null, 15],
      [3, 'mm_vmscan_kswapd_wake', null, 17],
    ]);
    const [inactive] = await engine.query<{ n: bigint; priority: number; reclaim_flags: string }>(
      'SELECT count(*) AS n, any_value(priority) AS priority, any_value(reclaim_flags) AS reclaim_flags FROM frames.mm_vmscan_lru_shrink_inactive',
    );
    expect(inactive).toEqual({ n: 1n, priority: 12, reclaim_flags: 'RECLAIM_WB_FILE|RECLAIM_WB_ASYNC' });
    await engine.exec('DETACH frames');
  });

  it('events without a typed table get their args on the field worker, in its own shape tables', async () => {
    // fsync_xfs: a fifth of its events (writeback_mark_inode_dirty, track_foreign_dirty...) have no typed table.
    const r = await ingestFile(path.join(FIXTURES, 'fsync_xfs.report.txt'), {
      dataDir: path.join(dir, 'untyped'),
      worker: true,
    });
    await engine.exec(`ATTACH '${r.dbPath}' AS untyped (READ_ONLY)`);
    // One row per event in the table of its shape (server/model/untyped_rows.ts); the field worker's are numbered from SHAPE_BASE_FIELD_WORKER.
    const tables = await engine.query<{ name: string }>(
      `SELECT table_name AS name FROM duckdb_tables() WHERE database_name = 'untyped' AND starts_with(table_name, '_shape_')`,
    );
    const where = { field_worker: 0n, main: 0n };
    for (const { name } of tables) {
      const [{ n }] = await engine.query<{ n: bigint }>(`SELECT count(*) AS n FROM untyped.${name}`);
      if (Number(name.slice('_shape_'.length)) >= SHAPE_BASE_FIELD_WORKER) where.field_worker += n;
      else where.main += n;
    }
    expect(where.main).toBe(0n);
    // 2,000 and more before shapes became tables only past SHAPE_TABLE_AFTER events (1,134 since).
    expect(where.field_worker).toBeGreaterThan(1_000n);
    const [untypedEvents] = await engine.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM untyped.ftrace_event WHERE name IN ('writeback_mark_inode_dirty', 'track_foreign_dirty', 'writeback_dirty_inode', 'writeback_dirty_inode_start')`,
    );
    // Those not in shape tables: the first SHAPE_TABLE_AFTER (untyped_rows.ts) events of each shape, kept as `_ftrace_event` + `_args` rows.
    const [kept] = await engine.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM untyped._ftrace_event e JOIN untyped._event_name n USING (name_id)
       WHERE n.name IN ('writeback_mark_inode_dirty', 'track_foreign_dirty', 'writeback_dirty_inode', 'writeback_dirty_inode_start')`,
    );
    expect(where.field_worker + kept.n).toBeGreaterThanOrEqual(untypedEvents.n);
    const [dirty] = await engine.query<{ name: string; ino: bigint }>(
      `SELECT max(string_value) FILTER (WHERE key = 'name') AS name, max(int_value) FILTER (WHERE key = 'ino') AS ino
       FROM untyped.args WHERE arg_set_id = (SELECT min(id) FROM untyped.ftrace_event WHERE name = 'writeback_mark_inode_dirty')`,
    );
    expect(dirty.name).toMatch(/^\d+:\d+$/);
    expect(dirty.ino).toBeGreaterThan(0n);
    await engine.exec('DETACH untyped');
  });
});
