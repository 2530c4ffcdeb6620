/**
 * Peak memory of the ingest of a block-heavy trace.dat v7 of ~2.2M events:
 * the shape whose store COMMIT, estimated under the large-file threshold
 * (server/ingest/ingest_memory.ts LARGE_LOAD_EVENTS), read back its spilled
 * rows at derive's cap and peaked at 358-397 MB (issue-29bm note: a
 * recording of ext4 fsync loops and 200 us timers, 35% block events).
 *
 *   npx tsx bench/memory_check_block.ts   (~1 min; writes bench/out/writeback_flood.x<N>.{v6,v7}.dat, ~0.2 GB)
 *
 * Made from the committed fixtures/writeback_flood.v7.dat (17,237 events,
 * 42% block_*, fixtures/writeback_flood.counts.json): converted to v6 by
 * trace-cmd, its per-CPU pages written N times with their timestamps moved
 * past the previous copy (make_large_traces.ts writeLargeV6), converted back
 * to v7 zstd, and the copy's event count checked against trace-cmd report.
 * The ingest runs in its own child process (peak_rss.ts).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { countReportEvents } from './corpus.ts';
import { fixtureFacts, OUT_DIR, ROOT, runTraceCmd, writeLargeV6 } from './make_large_traces.ts';
import { ingestPeakRssLine } from './peak_rss.ts';

const FIXTURE = path.join(ROOT, 'fixtures', 'writeback_flood.v7.dat');
/** Events of the copy: about the recording that showed the peak (2.2M), under LARGE_LOAD_EVENTS once estimated. */
const TARGET_EVENTS = 2_200_000;

async function main(): Promise<void> {
  const counts = JSON.parse(fs.readFileSync(path.join(ROOT, 'fixtures', 'writeback_flood.counts.json'), 'utf8')) as {
    events_total: number;
  };
  const copies = Math.ceil(TARGET_EVENTS / counts.events_total);
  const v6 = path.join(OUT_DIR, 'writeback_flood.v6.dat');
  const large6 = path.join(OUT_DIR, `writeback_flood.x${copies}.v6.dat`);
  const large7 = path.join(OUT_DIR, `writeback_flood.x${copies}.v7.dat`);
  await fsp.mkdir(OUT_DIR, { recursive: true });
  if (!fs.existsSync(large7)) {
    await runTraceCmd(
      ['convert', '--file-version', '6', '--compression', 'none', '-i', FIXTURE, '-o', v6],
      '/dev/null',
    );
    const facts = await fixtureFacts(v6);
    if (facts.events !== counts.events_total)
      throw new Error(
        `${path.basename(v6)}: ${facts.events} events, writeback_flood.counts.json ${counts.events_total}`,
      );
    await writeLargeV6(v6, facts, copies, large6);
    await runTraceCmd(
      ['convert', '--file-version', '7', '--compression', 'zstd', '-i', large6, '-o', `${large7}.tmp`],
      '/dev/null',
    );
    const report = `${large7}.report`;
    try {
      await runTraceCmd(['report', '-i', `${large7}.tmp`], report);
      const n = await countReportEvents(report);
      if (n !== copies * counts.events_total)
        throw new Error(
          `${path.basename(large7)}: trace-cmd report prints ${n} events, expected ${copies} x ${counts.events_total}`,
        );
    } finally {
      await fsp.rm(report, { force: true });
      await fsp.rm(v6, { force: true });
      await fsp.rm(large6, { force: true });
    }
    await fsp.rename(`${large7}.tmp`, large7);
  }
  process.stdout.write(`${await ingestPeakRssLine(large7)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
