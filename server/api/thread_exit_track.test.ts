/**
 * A thread that exits is drawn up to its exit, not to the trace's end.
 * fixtures/memcg_oom.v7.dat: the memcg OOM killer's first victim, memhog
 * 11200, switches out for the last time at 1744.680556956 with prev_state
 * 32 (`trace-cmd report -R -t`), EXIT_ZOMBIE: "Z" by the recording kernel's
 * print fmt (`{ 0x00000020, "Z" }`; trace-cmd 3.1's sched_switch plugin
 * prints "X" from an older table). The trace goes on for another ~136 ms.
 * The thread_state's last row is open (dur -1, as Perfetto keeps it); drawn
 * to the end it was a 136 ms bar of "Z" after the process was gone. Both ways
 * the app gets a thread track are checked: a table scan (zoomed in, or
 * before the overview is built) and the per-trace overview (zoomed out);
 * and a range's state totals (shift+drag) hold no time after the exit.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceLibrary } from '../ingest/library.ts';
import { buildApi } from './create_server.ts';
import type { LibraryLike } from './library_contract.ts';

const OOM = path.resolve(__dirname, '../../fixtures/memcg_oom.v7.dat');
const VICTIM = 11200;

/** From `trace-cmd report -R -t` (raw fields, ns): the victim's last switch-out, its prev_state, the last event. */
function reportFacts(): { exitNs: bigint; lastNs: bigint; exitState: number } {
  const report = execFileSync('trace-cmd', ['report', '-R', '-t', '-i', OOM], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const ns = (ts: string) => {
    const [s, frac] = ts.replace(/:$/, '').split('.');
    return BigInt(s!) * 1_000_000_000n + BigInt(frac!.padEnd(9, '0'));
  };
  let exit: { ts: string; state: string } | null = null;
  let last = '';
  for (const line of report.split('\n')) {
    const m = /\s(\d+\.\d+):\s+(\S+?):?\s+(.*)$/.exec(line);
    if (!m) continue;
    last = m[1]!;
    const sw = m[2] === 'sched_switch' && new RegExp(`prev_pid=${VICTIM} .*prev_state=(\\d+)`).exec(m[3]!);
    if (sw) exit = { ts: m[1]!, state: sw[1]! };
  }
  return { exitNs: ns(exit!.ts), lastNs: ns(last), exitState: Number(exit!.state) };
}

let dataDir: string;
let library: TraceLibrary;
let app: Awaited<ReturnType<typeof buildApi>>['app'];
let id: string;
let end: number;
let utid: number;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-exit-track-'));
  library = await TraceLibrary.open(dataDir);
  id = (await library.ingest(OOM)).id;
  ({ app } = await buildApi({ library: library as unknown as LibraryLike, appDir: path.join(dataDir, 'no-app') }));
  const list = (await app.inject({ url: `/api/traces/${id}/tracks` })).json() as {
    end: number;
    threads: { utid: number; tid: number | null }[];
  };
  end = list.end;
  utid = list.threads.find((t) => t.tid === VICTIM)!.utid;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await library?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function drawnEnd(t0: number, t1: number, px: number): Promise<{ end: number; states: unknown[] }> {
  const r = await app.inject({ url: `/api/traces/${id}/tracks/thread?utid=${utid}&t0=${t0}&t1=${t1}&px=${px}` });
  expect(r.statusCode).toBe(200);
  const { cols } = r.json() as { cols: { ts: number[]; dur: number[]; state: unknown[] } };
  return { end: Math.max(...cols.ts.map((ts, i) => ts + cols.dur[i]!)), states: cols.state };
}

describe('the thread track of a process that exited', () => {
  it('ends at its last switch-out, zoomed in and zoomed out', async () => {
    const { exitNs, lastNs, exitState } = reportFacts();
    expect(exitState).toBe(0x20); // EXIT_ZOMBIE
    const exitAt = Number(exitNs - (lastNs - BigInt(end))); // ns from the trace's start, as the tracks count
    expect(end - exitAt).toBeGreaterThan(100e6); // the trace goes on for >100 ms after the exit
    // Zoomed in around the exit: rows at full resolution (table scan).
    const near = await drawnEnd(exitAt - 5e6, exitAt + 50e6, 1000);
    expect(near.states).toContain('Z');
    expect(near.end).toBeLessThanOrEqual(exitAt + 1);
    // The whole trace, twice: a table scan while the overview is built, then the overview.
    for (const px of [2000, 2001]) {
      if (px === 2001) await new Promise((r) => setTimeout(r, 500));
      const whole = await drawnEnd(0, end, px);
      expect(whole.end, `px ${px}`).toBeLessThanOrEqual(exitAt + end / px + 1);
    }
  });

  it("a range from before its exit to the trace's end holds only the time it lived", async () => {
    const { exitNs, lastNs } = reportFacts();
    const exitAt = Number(exitNs - (lastNs - BigInt(end)));
    const r = await app.inject({
      url: `/api/traces/${id}/range?t0=${exitAt - 2e6}&t1=${end}&tracks=thread%23${utid}`,
    });
    expect(r.statusCode).toBe(200);
    const { threadStates } = r.json() as { threadStates: { utid: number; state: string; durNs: number }[] };
    const mine = threadStates.filter((s) => s.utid === utid);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.map((s) => s.state)).not.toContain('Z');
    expect(mine.reduce((a, s) => a + s.durNs, 0)).toBe(2e6); // the 2 ms before the exit, no more
  });
});
