/**
 * io_latency on hand-written block requests: which writes count as in flight
 * during a slow read. A write is in flight when it was issued by the read's
 * completion (at the same ns: issued first) and not completed before the
 * read's issue (at the same ns: completed after). The detector leaves out of
 * its running counts the writes that cannot be in flight for any slow read
 * (completed before every one started, or issued after every one ended):
 * these rows sit on both sides of those bounds.
 *
 * Device 8,0: slow read R1 issued at 100 ms, completed at 200 ms. In flight:
 * a write never completed (issued 50), one issued 90 completed 150, one
 * completed exactly at R1's issue (100): 3. Not: one completed at 5 ms.
 * Device 8,16: slow read R2 issued 400, completed 420. In flight: issued 380
 * completed 800, issued 410 completed 430, issued exactly at R2's
 * completion (420): 3. Not: one completed at 20 ms, one issued at 500 ms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import { findingsOf, insert, newTraceDb } from './sql_test_db.ts';

const T = 1_000_000_000_000n;
const ms = (x: number) => T + BigInt(Math.round(x * 1_000_000));
const SDA = (8 << 20) | 0;
const SDB = (8 << 20) | 16;

let db: Engine;

beforeAll(async () => {
  db = await newTraceDb();
  // The ingest makes this view per trace (model_store.ts createEventFieldViews), not schema.sql: no such events here.
  await db.exec(
    `CREATE TABLE _event_writeback_dirty_inode_enqueue (id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER, dev BIGINT)`,
  );
  await insert(db, '_event_name', [
    { name_id: 1, name: 'block_rq_issue', system: 'block' },
    { name_id: 2, name: 'block_rq_complete', system: 'block' },
  ]);
  await insert(db, 'thread', [
    { utid: 1, tid: 500, name: 'reader' },
    { utid: 2, tid: 12, name: 'kworker/u8:0' },
  ]);
  let id = 100;
  const rq = (dev: number, op: string, issue: number, complete: number | null, utid: number, comm: string) => {
    id += 2;
    return {
      issue_id: id,
      complete_id: complete === null ? null : id + 1,
      dev,
      sector: id * 8,
      nr_sector: 8,
      bytes: 4096,
      rwbs: op === 'R' ? 'RS' : 'W',
      op,
      utid,
      comm,
      cpu: 0,
      issue_ts: ms(issue),
      complete_ts: complete === null ? null : ms(complete),
      error: 0,
    };
  };
  await insert(db, 'block_request', [
    rq(SDA, 'W', 0, 5, 2, 'kworker/u8:0'), // completed before every slow read: not in flight
    rq(SDA, 'W', 50, null, 2, 'kworker/u8:0'), // never completed: in flight
    rq(SDA, 'W', 60, 100, 2, 'kworker/u8:0'), // completed at R1's issue: in flight
    rq(SDA, 'W', 90, 150, 2, 'kworker/u8:0'),
    rq(SDA, 'R', 100, 200, 1, 'reader'), // R1: 100 ms
    rq(SDB, 'W', 10, 20, 2, 'kworker/u8:0'), // completed before every slow read: not in flight
    rq(SDB, 'W', 380, 800, 2, 'kworker/u8:0'),
    rq(SDB, 'R', 400, 420, 1, 'reader'), // R2: 20 ms
    rq(SDB, 'W', 410, 430, 2, 'kworker/u8:0'),
    rq(SDB, 'W', 420, 700, 2, 'kworker/u8:0'), // issued at R2's completion: in flight
    rq(SDB, 'W', 500, 600, 2, 'kworker/u8:0'), // issued after every slow read: not in flight
  ]);
}, 60_000);

afterAll(() => db?.close());

describe('io_latency: writes in flight during a slow read', () => {
  it('counts the writes issued by the read completion and not completed before its issue, ties included', async () => {
    const found = await findingsOf(db, 'io_latency');
    expect(found.map((f) => [f.values.device, f.values.slow_reads, f.values.writes_in_flight])).toEqual([
      ['8,0', 1n, 3n],
      ['8,16', 1n, 3n],
    ]);
  });
});
