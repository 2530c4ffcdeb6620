// trace.dat recorded with the TSC clock and a TSC2NSEC option (`trace-cmd
// record -C tsc2nsec`): timestamps are cycles, which trace-cmd converts to
// ns. This VM cannot record one (trace-cmd: "TSC to nanosecond is not
// supported": no perf time conversion here), so the option is added to a
// real recording (test_v7_file.ts withOptionsV7), which makes its
// nanoseconds read as cycles; `trace-cmd report -t` of that file is the
// reference for every event's time, to the nanosecond.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDuckDb } from '../../engine/engine.ts';
import { ingestFile } from '../../ingest/ingest_file.ts';
import { optionRecord, withOptionsV7 } from '../../../tests/support/decode/trace_dat/test_v7_file.ts';

const FIXTURE = path.resolve(__dirname, '../../../fixtures/reclaim_kswapd.v7.dat');
const TSC2NSEC = 14;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-tsc-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

function withTsc2Nsec(name: string, mult: number, shift: number, offset: bigint): string {
  const data = Buffer.alloc(16);
  data.writeUInt32LE(mult, 0);
  data.writeUInt32LE(shift, 4);
  data.writeBigUInt64LE(offset, 8);
  const file = path.join(scratch, `${name}.dat`);
  fs.writeFileSync(file, withOptionsV7(fs.readFileSync(FIXTURE), optionRecord(TSC2NSEC, data)));
  return file;
}

/** Every event's time as `trace-cmd report -t` prints it, in ns, in file order. */
function reportTimes(file: string): bigint[] {
  const text = execFileSync('trace-cmd', ['report', '-t', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return [...text.matchAll(/\] +(\d+)\.(\d{9}): /g)].map((m) => BigInt(m[1]!) * 1_000_000_000n + BigInt(m[2]!));
}

async function modelTimes(file: string, worker = false): Promise<{ times: bigint[]; meta: Record<string, string> }> {
  const r = await ingestFile(file, { dataDir: path.join(scratch, worker ? 'data-worker' : 'data'), worker });
  const engine = await openDuckDb(r.dbPath, { readOnly: true });
  try {
    const rows = await engine.query<{ ts: bigint }>('SELECT ts FROM ftrace_event ORDER BY id');
    return { times: rows.map((x) => x.ts), meta: r.summary.meta };
  } finally {
    engine.close();
  }
}

describe('TSC2NSEC: cycles to ns as trace-cmd converts them', () => {
  it.each([
    // a 3 GHz TSC (mult / 2^shift just under 1/3); the offset does not change trace-cmd's times
    ['3 GHz', 357913941, 30, 5_000_000_000_000n],
    ['2.5x', 5, 1, 0n],
  ])('%s: every event at the nanosecond trace-cmd report -t prints', async (name, mult, shift, offset) => {
    const file = withTsc2Nsec(name.replace(/\W/g, '_'), mult, shift, offset);
    const expected = reportTimes(file);
    expect(expected.length).toBe(21_007);
    const { times, meta } = await modelTimes(file);
    expect(times).toEqual(expected);
    expect(meta.tsc2nsec).toBe(
      `TSC cycles converted to ns: (cycles * ${mult}) >> ${shift} (offset ${offset} not applied, as trace-cmd)`,
    );
    // and not the file's own times: the option changed them
    expect(times[0]).not.toBe(reportTimes(FIXTURE)[0]);
    // the same on the worker threads (large files)
    expect((await modelTimes(file, true)).times).toEqual(expected);
  });

  it('without the option, times are the clock as recorded', async () => {
    const { times, meta } = await modelTimes(FIXTURE);
    expect(times).toEqual(reportTimes(FIXTURE));
    expect(meta.tsc2nsec).toBeUndefined();
  });
});
