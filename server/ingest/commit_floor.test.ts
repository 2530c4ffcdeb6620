// The store COMMIT's floor (ingest_memory.ts withCommitFloor): a load of
// hundreds of event kinds commits at the cap the floor gives, however low
// the cap from the resident bytes (commitMemoryLimit) came out. Without it,
// `trace-cmd record -e all` (390 tables) failed at the load's 40MB: "could
// not allocate block of size 16.0 KiB".
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeFile } from '../decode/decode_file.ts';
import { openDuckDb } from '../engine/engine.ts';
import { ModelBuilder } from '../model/model_builder.ts';
import { ModelStore } from '../model/model_store.ts';
import { SHAPE_TABLE_AFTER } from '../model/untyped_rows.ts';
import {
  COMMIT_BYTES_PER_COLUMN,
  COMMIT_FLOOR_BASE_BYTES,
  commitCapAfterLoad,
  deriveMemoryLimit,
  LOAD_BYTES_PER_SHAPE_COLUMN,
  withCommitFloor,
  withLoadFloor,
} from './ingest_memory.ts';

const MB = 1048576;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Tracefs text of `kinds` event names, each with six fields, `perKind` events each, round-robin in time. */
function manyKindsTrace(kinds: number, perKind: number): string {
  const lines = ['# tracer: nop', '#'];
  let us = 0;
  for (let i = 0; i < perKind; i++) {
    for (let k = 0; k < kinds; k++) {
      us++;
      const ts = `${100 + Math.floor(us / 1e6)}.${String(us % 1e6).padStart(6, '0')}`;
      lines.push(
        `          worker-${300 + (k % 7)}    [00${k % 2}] ..... ${ts}: kind_${k}_event: ` +
          `dev=${k} ino=${i * 13} idx=${i} len=${4096 + k} flags=0x${(k * 16 + 1).toString(16)} name=file${i % 5}`,
      );
    }
  }
  return lines.join('\n') + '\n';
}

describe('the COMMIT cap after a load', () => {
  it("is derive's unless the load spilled rows the COMMIT reads back", () => {
    // many_systems.v7: nothing spilled; the block-heavy 2.2M-event trace.dat: 113 MB.
    expect(commitCapAfterLoad('61MB', '128MB', 0)).toBe('128MB');
    expect(commitCapAfterLoad('41MB', '128MB', 113 * MB)).toBe('41MB');
  });
});

describe("derive's cap", () => {
  it("is derive's own while it fits under 350 MB with the resident bytes, what is left past that, never under 64MB", () => {
    // 350 - 150 - 32 - 32 = 136 MB of room: 128MB fits.
    expect(deriveMemoryLimit(150 * MB, '128MB', 32 * MB)).toBe('128MB');
    // writeback_flood.x128.v7 starts derive at ~186 MB: 350 - 186 - 32 - 32 = 100 MB.
    expect(deriveMemoryLimit(186 * MB, '128MB', 32 * MB)).toBe('100MB');
    expect(deriveMemoryLimit(186 * MB, '128MB', 0)).toBe('128MB');
    // The -e all recording holds ~480 MB.
    expect(deriveMemoryLimit(480 * MB, '128MB', 0)).toBe('64MB');
  });
});

describe("the load's floor", () => {
  it('leaves the cap alone while it holds the shape tables, else raises it to their columns', () => {
    // trace-cmd record -e all: ~2,100 shape-table columns load at the store's 40MB.
    expect(withLoadFloor('40MB', 2100)).toBeNull();
    // 400 kinds of 4 fields x 2,500 events (4,400 columns) failed at 40MB and loaded at 56-64MB.
    const floor = COMMIT_FLOOR_BASE_BYTES + 4400 * LOAD_BYTES_PER_SHAPE_COLUMN;
    expect(withLoadFloor('40MB', 4400)).toBe(`${Math.ceil(floor / MB)}MB`);
    expect(floor / MB).toBeGreaterThan(56);
    expect(floor / MB).toBeLessThanOrEqual(64);
    // A size it cannot read is left to DuckDB.
    expect(withLoadFloor('40 megabytes', 9000)).toBeNull();
  });
});

describe('the COMMIT floor', () => {
  it('is the cap given when it is enough, else the floor from the columns', () => {
    expect(withCommitFloor('128MB', 100)).toBe('128MB');
    const floor = COMMIT_FLOOR_BASE_BYTES + 4000 * COMMIT_BYTES_PER_COLUMN;
    expect(withCommitFloor('40MB', 4000)).toBe(`${Math.ceil(floor / MB)}MB`);
  });

  it('commits 300 event kinds at a 16MB load cap, every event in its place', async () => {
    const KINDS = 300;
    // Past SHAPE_TABLE_AFTER, so that every kind is a table (before it, its events are `_args` rows).
    const PER_KIND = SHAPE_TABLE_AFTER + 40;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-floor-'));
    dirs.push(dir);
    const trace = path.join(dir, 'many_kinds.txt');
    fs.writeFileSync(trace, manyKindsTrace(KINDS, PER_KIND));
    // One thread and a cap far below what 300 tables need at COMMIT, as on the
    // store worker when the process held much at `finish`.
    const engine = await openDuckDb(path.join(dir, 'trace.duckdb'), {
      threads: 1,
      memoryLimit: '16MB',
      tempDirectory: path.join(dir, 'spill'),
    });
    try {
      const store = await ModelStore.beginLoad(engine);
      const builder = new ModelBuilder(store.layout, (table, data) => store.append(table, data));
      await decodeFile(trace, builder, { label: 'many_kinds.txt', scratchDir: dir });
      const result = builder.finish(); // hands over the last chunks, as before the store worker's `finish`
      const columns = await store.storedColumns();
      // Each kind's table: the shape's lead columns, the printed text and six fields.
      expect(columns).toBeGreaterThanOrEqual(KINDS * 6);
      const cap = withCommitFloor('16MB', columns);
      await engine.exec(`SET memory_limit = '${cap}'`);
      const summary = await store.commitLoad(result);
      expect(summary.eventsTotal).toBe(KINDS * PER_KIND);
      // Reading the views back is not the COMMIT's business: the app's read engine has its own cap.
      await engine.exec("SET memory_limit = '256MB'");
      const names = await engine.query<{ name: string; n: bigint }>(
        'SELECT name, count(*) AS n FROM ftrace_event GROUP BY name',
      );
      expect(names.length).toBe(KINDS);
      for (const r of names) expect(Number(r.n)).toBe(PER_KIND);
      // idx runs 0..PER_KIND-1 in every kind.
      const [{ idx_sum }] = await engine.query<{ idx_sum: bigint }>(
        "SELECT sum(int_value) AS idx_sum FROM args WHERE key = 'idx'",
      );
      expect(Number(idx_sum)).toBe((KINDS * PER_KIND * (PER_KIND - 1)) / 2);
    } finally {
      engine.close();
    }
  });
});
