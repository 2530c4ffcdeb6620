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
 *
 * Device 8,32: blk-mq dispatching from kblockd. Every request there is
 * issued by `kworker/0:1H` (kblockd); block_rq_insert names who queued it:
 * the flusher `kworker/u8:0` for two writes, `dd` for one, `reader` for the
 * slow read R3 (issued 1000, completed 1050). One more write was issued by
 * kblockd with no insert traced: it stays kblockd's. So the finding names
 * the flusher first (2 writes), then dd and kblockd (1 each), and the
 * reader as its task, not kblockd.
 *
 * Devices 8,48 and 8,64: a 4 MiB read (8192 sectors) taking 20 ms, as
 * readahead does at device speed. On 8,48 two 8 KiB writes overlap it: they
 * cannot explain 20 ms, so no finding. On 8,64 two 2 MiB writes overlap it
 * (4 MiB, the read's own size): a finding.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../server/engine/engine.ts';
import { findingsOf, insert, newTraceDb } from './sql_test_db.ts';

const T = 1_000_000_000_000n;
const ms = (x: number) => T + BigInt(Math.round(x * 1_000_000));
const SDA = (8 << 20) | 0;
const SDB = (8 << 20) | 16;
const SDC = (8 << 20) | 32;
const SDD = (8 << 20) | 48;
const SDE = (8 << 20) | 64;

/** One block_request row; ids (issue, completion) numbered in call order. */
let id = 100;
const rq = (
  dev: number,
  op: string,
  issue: number,
  complete: number | null,
  utid: number,
  comm: string,
  sectors = 8,
) => {
  id += 2;
  return {
    issue_id: id,
    complete_id: complete === null ? null : id + 1,
    dev,
    sector: id * 8,
    nr_sector: sectors,
    bytes: sectors * 512,
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

/**
 * A trace database with the two views the ingest makes per trace
 * (model_store.ts createEventFieldViews, not schema.sql), empty, and the
 * block events' names.
 */
async function blockTraceDb(): Promise<Engine> {
  const engine = await newTraceDb();
  await engine.exec(
    `CREATE TABLE _event_writeback_dirty_inode_enqueue (id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER, dev BIGINT, ino BIGINT);
     CREATE TABLE _event_block_rq_insert (id BIGINT, ts BIGINT, cpu INTEGER, utid INTEGER, dev BIGINT, sector BIGINT,
       nr_sector BIGINT, bytes BIGINT, rwbs VARCHAR, comm VARCHAR, error BIGINT)`,
  );
  await insert(engine, '_event_name', [
    { name_id: 1, name: 'block_rq_issue', system: 'block' },
    { name_id: 2, name: 'block_rq_complete', system: 'block' },
  ]);
  return engine;
}

let db: Engine;

beforeAll(async () => {
  db = await blockTraceDb();
  await insert(db, 'thread', [
    { utid: 1, tid: 500, name: 'reader' },
    { utid: 2, tid: 12, name: 'kworker/u8:0' },
    { utid: 3, tid: 90, name: 'kworker/0:1H' },
    { utid: 4, tid: 4242, name: 'dd' },
  ]);
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
  // Device 8,32: every request issued by kblockd (utid 3), queued by another task.
  const KBLOCKD = 3;
  const queued: Record<string, unknown>[] = [];
  const viaKblockd = (
    op: string,
    issue: number,
    complete: number | null,
    queuedBy: { utid: number; comm: string } | null,
  ) => {
    const row = { ...rq(SDC, op, issue, complete, KBLOCKD, 'kworker/0:1H'), insert_id: null as number | null };
    if (queuedBy) {
      row.insert_id = 10_000 + row.issue_id;
      queued.push({ id: row.insert_id, ts: ms(issue - 1), cpu: 0, utid: queuedBy.utid, dev: SDC, comm: queuedBy.comm });
    }
    return row;
  };
  await insert(db, 'block_request', [
    viaKblockd('W', 990, 1100, { utid: 2, comm: 'kworker/u8:0' }),
    viaKblockd('W', 995, 1100, { utid: 2, comm: 'kworker/u8:0' }),
    viaKblockd('W', 996, 1100, { utid: 4, comm: 'dd' }),
    viaKblockd('W', 997, 1100, null),
    viaKblockd('R', 1000, 1050, { utid: 1, comm: 'reader' }), // R3: 50 ms
  ]);
  await insert(db, '_event_block_rq_insert', queued);
  await insert(db, 'block_request', [
    rq(SDD, 'W', 1995, 2005, 2, 'kworker/u8:0', 16),
    rq(SDD, 'W', 2010, 2030, 2, 'kworker/u8:0', 16),
    rq(SDD, 'R', 2000, 2020, 1, 'reader', 8192), // 4 MiB in 20 ms, 16 KiB of writes beside it
    rq(SDE, 'W', 1995, 2005, 2, 'kworker/u8:0', 4096),
    rq(SDE, 'W', 2010, 2030, 2, 'kworker/u8:0', 4096),
    rq(SDE, 'R', 2000, 2020, 1, 'reader', 8192), // 4 MiB in 20 ms, 4 MiB of writes beside it
  ]);
}, 60_000);

afterAll(() => db?.close());

describe('io_latency: writes in flight during a slow read', () => {
  it('counts the writes issued by the read completion and not completed before its issue, ties included', async () => {
    const found = await findingsOf(db, 'io_latency');
    expect(found.map((f) => [f.values.device, f.values.slow_reads, f.values.writes_in_flight])).toEqual([
      ['8,0', 1n, 3n],
      ['8,16', 1n, 3n],
      ['8,32', 1n, 4n],
      ['8,64', 1n, 2n],
    ]);
  });

  it('a read is behind writes only when the writes in flight add up to its own size', async () => {
    const found = (await findingsOf(db, 'io_latency')).find((f) => f.values.device === '8,64');
    expect(found?.values.write_bytes_in_flight).toBe(4n << 20n);
    expect(found?.values.max_latency_ns).toBe(20_000_000n);
  });

  it('names the tasks that queued the requests, not kblockd which dispatched them', async () => {
    const found = (await findingsOf(db, 'io_latency')).find((f) => f.values.device === '8,32');
    expect(found?.values.write_issuers).toBe('kworker/u8:0 (2), dd (1), kworker/0:1H (1)');
    expect(found?.values.reader).toBe('reader');
    expect([found?.tid, found?.comm]).toEqual([500, 'reader']);
    expect(found?.title).toContain('written by kworker/u8:0');
  });
});

describe('io_latency: kblockd as the writer when block_rq_insert was not traced', () => {
  let bare: Engine;
  beforeAll(async () => {
    bare = await blockTraceDb();
    await insert(bare, 'thread', [
      { utid: 1, tid: 500, name: 'reader' },
      { utid: 3, tid: 90, name: 'kworker/1:1H' },
    ]);
    await insert(bare, 'block_request', [
      rq(SDA, 'W', 95, 150, 3, 'kworker/1:1H'),
      rq(SDA, 'R', 100, 130, 1, 'reader'), // 30 ms with a write dispatched by kblockd beside it
    ]);
  }, 60_000);
  afterAll(() => bare?.close());

  it('says the writer shown is kblockd and which event would name who queued the writes', async () => {
    const [found] = await findingsOf(bare, 'io_latency');
    expect(found?.title).toContain(
      'written by kworker/1:1H (kblockd; trace block:block_rq_insert to see who queued them)',
    );
  });

  it('says nothing of the kind when the inserts were traced (kblockd then did queue them)', async () => {
    const [withInserts] = await findingsOf(db, 'io_latency');
    expect(withInserts?.title).not.toContain('kblockd;');
  });
});

describe("io_latency: the flusher's reason goes with the flusher's writes only", () => {
  // One device, the flusher last started for vmscan (writeback_start on its bdi, '8:0') before either episode.
  // Episode 1 (100 ms): the writes in flight are a task's own (fsync: python3 issued them). Episode 2, 5 s later:
  // the flusher kworker/u8:0 issued them.
  let wb: Engine;
  beforeAll(async () => {
    wb = await blockTraceDb();
    await insert(wb, 'thread', [
      { utid: 1, tid: 500, name: 'reader' },
      { utid: 2, tid: 12, name: 'kworker/u8:0' },
      { utid: 5, tid: 777, name: 'python3' },
    ]);
    await insert(wb, 'writeback_work', [
      { id: 1, ts: ms(10), cpu: 0, utid: 2, event: 'writeback_start', bdi: '8:0', reason: 'vmscan' },
    ]);
    await insert(wb, 'block_request', [
      rq(SDA, 'W', 95, 150, 5, 'python3'),
      rq(SDA, 'R', 100, 130, 1, 'reader'), // 30 ms behind python3's write
      rq(SDA, 'W', 5095, 5150, 2, 'kworker/u8:0'),
      rq(SDA, 'R', 5100, 5130, 1, 'reader'), // 30 ms behind the flusher's write
    ]);
  }, 60_000);
  afterAll(() => wb?.close());

  it("a task's own writes are not said to be for the flusher's reason; the value keeps the reason", async () => {
    const found = await findingsOf(wb, 'io_latency');
    expect(found.map((f) => [f.values.write_issuers, f.values.flusher_reason])).toEqual([
      ['python3 (1)', 'vmscan'],
      ['kworker/u8:0 (1)', 'vmscan'],
    ]);
    expect(found[0]?.title).toMatch(/written by python3\)$/);
    expect(found[0]?.title).not.toContain('for vmscan writeback');
    expect(found[1]?.title).toContain('written by kworker/u8:0 for vmscan writeback');
  });
});
