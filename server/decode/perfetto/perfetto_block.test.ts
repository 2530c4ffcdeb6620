/**
 * A tracebox recording of typed block events (fixtures/perfetto_block.pftrace,
 * fixtures/README.md 23): Perfetto writes block_rq_issue, block_rq_complete,
 * block_rq_insert and block_bio_queue as messages of their own, with dev_t
 * fields in userspace's makedev() encoding. They import with the counts and
 * fields trace_processor_shell reads from the same file, dev in the kernel's
 * encoding as trace.dat has it, and io_latency pairs their requests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openDuckDb } from '../../engine/engine.ts';
import { runDetectors } from '../../findings/run_detectors.ts';
import { ingestFile } from '../../ingest/ingest_file.ts';
import { queryTraceProcessor, type TpRow } from '../../../tests/support/decode/perfetto/test_trace_processor.ts';

const FILE = join(import.meta.dirname, '../../../fixtures/perfetto_block.pftrace');
const dataDir = mkdtempSync(join(tmpdir(), 'stallscope-perfetto-block-'));
let engine: Engine;
let tp: TpRow[][];

beforeAll(async () => {
  tp = queryTraceProcessor(FILE, [
    'select name, count(*) as n from ftrace_event group by name order by name',
    `select ts, extract_arg(arg_set_id, 'dev') as dev, extract_arg(arg_set_id, 'sector') as sector,
       extract_arg(arg_set_id, 'nr_sector') as nr_sector, extract_arg(arg_set_id, 'bytes') as bytes,
       extract_arg(arg_set_id, 'rwbs') as rwbs, extract_arg(arg_set_id, 'comm') as comm
     from ftrace_event where name = 'block_rq_issue' order by ts, sector`,
  ]);
  const { dbPath } = await ingestFile(FILE, { dataDir });
  engine = await openDuckDb(dbPath, { readOnly: true });
}, 120_000);

afterAll(() => {
  engine?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** glibc's major() and minor() of a makedev() value below 2^32, and the kernel's MKDEV (20 minor bits). */
function kernelDev(userspace: number): number {
  const major = (userspace >> 8) & 0xfff;
  const minor = (userspace & 0xff) | ((userspace >> 12) & 0xfff00);
  return major * 2 ** 20 + minor;
}

describe('typed block events from a tracebox recording', () => {
  it('import with the per-event counts trace_processor reports, none skipped', async () => {
    const ours = await engine.query<{ name: string; n: bigint }>(
      'SELECT name, count(*) AS n FROM ftrace_event GROUP BY name ORDER BY name',
    );
    const expected = Object.fromEntries(tp[0]!.map((r) => [r.name, Number(r.n)]));
    expect(Object.fromEntries(ours.map((r) => [r.name, Number(r.n)]))).toEqual(expected);
    expect(expected.block_rq_issue).toBeGreaterThan(100);
    const problems = await engine.query<{ reason: string }>('SELECT reason FROM ingest_problem');
    expect(problems.filter((p) => /FtraceEvent field|unknown number/.test(p.reason))).toEqual([]);
  });

  it("block_rq_issue's fields are trace_processor's, dev in the kernel's encoding (/dev/vda, 254:0)", async () => {
    const ours = await engine.query<Record<string, unknown>>(
      'SELECT ts, dev, sector, nr_sector, bytes, rwbs, comm FROM _event_block_rq_issue ORDER BY ts, sector',
    );
    expect(ours.length).toBe(tp[1]!.length);
    const norm = (r: Record<string, unknown>, dev: number) =>
      [String(r.ts), dev, String(r.sector), Number(r.nr_sector), Number(r.bytes), r.rwbs, r.comm].join('|');
    expect(ours.map((r) => norm(r, Number(r.dev)))).toEqual(tp[1]!.map((r) => norm(r, kernelDev(Number(r.dev)))));
    // By hand: makedev(254, 0) = 254 << 8 = 65024 in the recording, 254 << 20 in the kernel.
    expect(new Set(tp[1]!.map((r) => Number(r.dev)))).toEqual(new Set([65024]));
    expect(new Set(ours.map((r) => Number(r.dev)))).toEqual(new Set([254 * 2 ** 20]));
  });

  it('io_latency pairs the requests of device 254,0', async () => {
    const [req] = await engine.query<{ n: bigint; done: bigint }>(
      'SELECT count(*) AS n, count(complete_ts) AS done FROM block_request',
    );
    const issues = Number(tp[0]!.find((r) => r.name === 'block_rq_issue')!.n);
    const completes = Number(tp[0]!.find((r) => r.name === 'block_rq_complete')!.n);
    expect(Number(req!.n)).toBe(issues);
    expect(Number(req!.done)).toBeGreaterThan(0);
    expect(Number(req!.done)).toBeLessThanOrEqual(completes);
    const run = await runDetectors(engine, { detectors: ['io_latency'] });
    const devices = new Set(run.metrics.filter((m) => m.key !== null && m.metric === 'io.requests').map((m) => m.key));
    expect(devices).toEqual(new Set(['254,0']));
  });
});
