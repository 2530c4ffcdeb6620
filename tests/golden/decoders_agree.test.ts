// One real recording (fixtures/README.md: reclaim_kswapd), four files: the
// trace.dat v7 (zstd) and v6 (uncompressed) trace-cmd wrote, and the
// `trace-cmd report` / `report -l` text of it. Whatever decoder reads it,
// the model must hold the same events with the same field values.
//
// Expected counts come from trace-cmd itself (reclaim_kswapd.counts.json,
// made with awk over `trace-cmd report`), not from stallscope.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuckDb, type Engine } from '../../server/engine/engine.ts';
import { decodeFile } from '../../server/decode/decode_file.ts';
import {
  estimatedEvents,
  ingestFile,
  STORE_WORKER_MIN_EVENTS,
  type IngestResult,
} from '../../server/ingest/ingest_file.ts';
import { ModelWriter } from '../../server/model/model_writer.ts';
import { TYPED_TABLES } from '../../server/model/typed_tables.ts';
import { workerBuildDifferences, WORKER_BUILD_TABLES } from './attached_models.ts';

const FIXTURES = path.resolve(__dirname, '../../fixtures');
const counts = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'reclaim_kswapd.counts.json'), 'utf8')) as {
  events_by_name: Record<string, number>;
  events_total: number;
  cpus: number;
};

const FILES = {
  v7: 'reclaim_kswapd.v7.dat',
  v6: 'reclaim_kswapd.v6.dat',
  report: 'reclaim_kswapd.report.txt',
  reportL: 'reclaim_kswapd.report-l.txt',
} as const;

let dataDir: string;
const results: Partial<Record<keyof typeof FILES, IngestResult>> = {};
let engine: Engine;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-agree-'));
  for (const [key, file] of Object.entries(FILES)) {
    results[key as keyof typeof FILES] = await ingestFile(path.join(FIXTURES, file), { dataDir });
  }
  engine = await openDuckDb(':memory:');
  for (const [key, r] of Object.entries(results)) {
    await engine.exec(`ATTACH '${r!.dbPath}' AS ${key} (READ_ONLY)`);
  }
}, 180_000);

/** Rows in one table and not the other, either way (as multisets). */
async function differingRows(a: string, b: string): Promise<bigint> {
  const [{ n }] = await engine.query<{ n: bigint }>(
    `SELECT count(*) AS n FROM ((SELECT * FROM ${a} EXCEPT ALL SELECT * FROM ${b}) UNION ALL (SELECT * FROM ${b} EXCEPT ALL SELECT * FROM ${a}))`,
  );
  return n;
}

afterAll(() => {
  engine?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('reclaim_kswapd: every decoder agrees with trace-cmd', () => {
  for (const key of Object.keys(FILES) as (keyof typeof FILES)[]) {
    it(`${FILES[key]}: counts per event name equal trace-cmd report's`, () => {
      const s = results[key]!.summary;
      expect(s.eventsByName).toEqual(counts.events_by_name);
      expect(s.eventsTotal).toBe(counts.events_total);
      expect(s.cpus).toBe(counts.cpus);
      expect(s.skippedInputs).toBe(0);
      expect(s.unparsedEvents).toBe(0);
    });
  }

  it('trace.dat v6 and v7 decode to identical typed rows, to the nanosecond', async () => {
    for (const table of TYPED_TABLES) {
      const [{ n }] = await engine.query<{ n: bigint }>(
        `SELECT count(*) AS n FROM ((SELECT * FROM v7.${table} EXCEPT ALL SELECT * FROM v6.${table})
           UNION ALL (SELECT * FROM v6.${table} EXCEPT ALL SELECT * FROM v7.${table}))`,
      );
      expect({ table, differing: n }).toEqual({ table, differing: 0n });
    }
  });

  it("report text and trace.dat give the same field values (at the text's microsecond precision)", async () => {
    for (const table of TYPED_TABLES) {
      // Columns both have. The binary has fields the kernel's print format
      // omits (kswapd_wake.zid); the text has values computed at print time
      // from the clock (writeback_single_inode.age).
      const columns = await engine.query<{ column_name: string }>(
        `SELECT column_name FROM (DESCRIBE report.${table}) WHERE column_name NOT IN ('id', 'utid')`,
      );
      const printed: string[] = [];
      for (const { column_name: c } of columns) {
        const [{ n }] = await engine.query<{ n: bigint }>(`SELECT count("${c}") AS n FROM report.${table}`);
        const [{ total }] = await engine.query<{ total: bigint }>(`SELECT count(*) AS total FROM report.${table}`);
        const [{ inDat }] = await engine.query<{ inDat: bigint }>(`SELECT count("${c}") AS inDat FROM v7.${table}`);
        if (n === total && inDat === total) printed.push(c);
      }
      const fromDat = printed
        .map((c) =>
          c === 'ts'
            ? 'CAST(round(ts / 1000) * 1000 AS BIGINT) AS ts'
            : // trace-cmd's sched_switch plugin prints a preempted task as R, the kernel as R+.
              c === 'prev_state'
              ? `replace(prev_state, '+', '') AS prev_state`
              : `"${c}"`,
        )
        .join(', ');
      const fromText = printed.map((c) => `"${c}"`).join(', ');
      const [{ n }] = await engine.query<{ n: bigint }>(
        `SELECT count(*) AS n FROM (SELECT ${fromDat} FROM v7.${table} EXCEPT ALL SELECT ${fromText} FROM report.${table})`,
      );
      expect({ table, differing: n }).toEqual({ table, differing: 0n });
    }
  });

  /**
   * `trace-cmd report FLAG` of the v7 file, made by the trace-cmd the tests
   * run with: its first lines must show the variant (`looksLike`), and it must
   * read into the plain report's model: every event parsed, the same rows in
   * `tables`, and the same ftrace_event rows but for `eventsExcept`.
   */
  async function reportVariantDifferences(
    flag: string,
    looksLike: RegExp,
    tables: string[],
    eventsExcept: string | null,
  ) {
    const file = path.join(dataDir, `reclaim_kswapd.report${flag}.txt`);
    fs.writeFileSync(
      file,
      execFileSync('trace-cmd', ['report', flag, path.join(FIXTURES, FILES.v7)], { maxBuffer: 1 << 28 }),
    );
    expect(fs.readFileSync(file, 'latin1')).toMatch(looksLike);
    const r = await ingestFile(file, { dataDir });
    expect(r.summary.eventsByName).toEqual(counts.events_by_name);
    expect(r.summary.skippedInputs).toBe(0);
    expect(r.summary.unparsedEvents).toBe(0);
    await engine.exec(`ATTACH '${r.dbPath}' AS variant (READ_ONLY)`);
    try {
      const out: { table: string; differing: bigint }[] = [];
      for (const table of tables)
        out.push({ table, differing: await differingRows(`variant.${table}`, `report.${table}`) });
      const events = (db: string) =>
        `(SELECT * ${eventsExcept ? `EXCLUDE (${eventsExcept})` : ''} FROM ${db}.ftrace_event)`;
      out.push({ table: 'ftrace_event', differing: await differingRows(events('variant'), events('report')) });
      // and the same model when built on the worker threads, as large files are
      for (const d of await workerBuildDifferences(engine, 'variant', file, [...tables, 'ftrace_event']))
        out.push({ table: `worker ${d.table}`, differing: d.differing });
      return out;
    } finally {
      await engine.exec('DETACH variant');
    }
  }

  const MODEL_TABLES = [...TYPED_TABLES, 'thread', 'thread_state', 'sched_slice', 'args'];
  const noneDiffer = (tables: string[]) =>
    [...tables, 'ftrace_event', ...[...tables, 'ftrace_event'].map((t) => `worker ${t}`)].map((table) => ({
      table,
      differing: 0n,
    }));

  it('`trace-cmd report --ts-diff` text reads into the same model as the plain report', async () => {
    // --ts-diff puts `(+ns since the previous event)` between the timestamp and the name.
    const d = await reportVariantDifferences(
      '--ts-diff',
      /^ +smallfiles-15104 +\[001\] +5200\.905061: \(\+96775\) sched_waking: /m,
      MODEL_TABLES,
      null,
    );
    expect(d).toEqual(noneDiffer(MODEL_TABLES));
  });

  it('`trace-cmd report --debug` text reads into the same model as the plain report', async () => {
    // --debug adds `CPU:N [SUBBUFFER START] [...]` lines and ends each event
    // line with its record's `[delta:0xoffset:size]`; only the events' line
    // numbers (source_where) move.
    const d = await reportVariantDifferences(
      '--debug',
      /^ +smallfiles-15104 +\[001\] +5200\.905068: sched_switch: +smallfiles:15104 \[120\] R ==> node:14383 \[120\] \[4378:0x60:64\]$/m,
      MODEL_TABLES,
      'source_where',
    );
    expect(d).toEqual(noneDiffer(MODEL_TABLES));
  });

  it('ids are file order: the report text and the trace.dat number events alike', async () => {
    const [{ n }] = await engine.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM v7.ftrace_event a JOIN report.ftrace_event b USING (id)
       WHERE a.name <> b.name OR a.cpu <> b.cpu OR CAST(round(a.ts / 1000) * 1000 AS BIGINT) <> b.ts`,
    );
    expect(n).toBe(0n);
  });

  // Large files append on a store worker thread, small ones (these) load on
  // one thread (STORE_WORKER_MIN_EVENTS). With the store worker, trace.dat
  // also goes through the field worker: the main thread frames records,
  // the field worker decodes their fields (ingest/field_worker.ts). Every
  // way must build the same model.
  it.each([
    ['v7', FILES.v7],
    ['v6', FILES.v6],
    ['report', FILES.report],
  ] as const)('%s built with the store worker (worker: true) equals the one-thread build', async (alias, file) => {
    const f = path.join(FIXTURES, file);
    expect(await estimatedEvents(f, fs.statSync(f).size)).toBeLessThan(STORE_WORKER_MIN_EVENTS);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-worker-'));
    const r = await ingestFile(path.join(FIXTURES, file), { dataDir: dir, worker: true });
    expect(r.summary.eventsByName).toEqual(counts.events_by_name);
    // An alias per case: a failed case never reaches its DETACH.
    const onWorker = `onWorker_${alias}`;
    await engine.exec(`ATTACH '${r.dbPath}' AS ${onWorker} (READ_ONLY)`);
    const tables = WORKER_BUILD_TABLES;
    for (const table of tables) {
      expect({ table, differing: await differingRows(`${onWorker}.${table}`, `${alias}.${table}`) }).toEqual({
        table,
        differing: 0n,
      });
    }
    await engine.exec(`DETACH ${onWorker}`);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('trace.dat rows written straight from records (DirectRowSink) equal those built from decoded events', async () => {
    // ModelWriter offers no directRows(), so the decoder hands it a
    // DecodedEvent per event: the general path every decoder has.
    const dbPath = path.join(dataDir, 'via-events.duckdb');
    const own = await openDuckDb(dbPath);
    const writer = await ModelWriter.create(own);
    await decodeFile(path.join(FIXTURES, FILES.v6), writer, { label: FILES.v6, scratchDir: dataDir });
    await writer.finish();
    own.close();
    await engine.exec(`ATTACH '${dbPath}' AS viaEvents (READ_ONLY)`);
    for (const table of [...TYPED_TABLES, 'thread', 'ftrace_event']) {
      expect({ table, differing: await differingRows(`viaEvents.${table}`, `v6.${table}`) }).toEqual({
        table,
        differing: 0n,
      });
    }
    const [{ n }] = await engine.query<{ n: bigint }>(
      'SELECT count(*) AS n FROM viaEvents.mm_vmscan_lru_shrink_inactive',
    );
    expect(n).toBeGreaterThan(1000n);
    await engine.exec('DETACH viaEvents');
  });

  it('a shrinker call reads the same from binary and text', async () => {
    // First super_cache_scan start in the report text, checked by eye against
    // fixtures/reclaim_kswapd.report.txt.
    const [line] = fs
      .readFileSync(path.join(FIXTURES, FILES.report), 'utf8')
      .split('\n')
      .filter((l) => l.includes('mm_shrink_slab_start:') && l.includes('super_cache_scan'));
    const m = /cache items (\d+) delta (\d+) total_scan (\d+) priority (\d+)/.exec(line)!;
    const ts = /\s(\d+)\.(\d{6}): mm_shrink_slab_start/.exec(line)!;
    const tsUs = BigInt(ts[1]) * 1_000_000n + BigInt(ts[2]);
    const [row] = await engine.query<Record<string, unknown>>(
      `SELECT shrink, cache_items, delta, total_scan, priority FROM v7.mm_shrink_slab_start
       WHERE CAST(round(ts / 1000) AS BIGINT) = $us AND shrink = 'super_cache_scan'`,
      { us: tsUs },
    );
    expect(row).toEqual({
      shrink: 'super_cache_scan',
      cache_items: BigInt(m[1]),
      delta: BigInt(m[2]),
      total_scan: BigInt(m[3]),
      priority: Number(m[4]),
    });
  });
});
