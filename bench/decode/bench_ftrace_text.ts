/**
 * Text decode speed check:
 *
 *   npx tsx bench/decode/bench_ftrace_text.ts [--only decode|builder] [--repeat N] FILE.txt...
 *
 * For each file (plain or compressed: read through openDecompressed):
 * - decode:  decodeFtraceText into a sink that only counts events;
 * - builder: decodeFtraceText into a ModelBuilder whose chunk consumer does
 *   nothing (the JS side of ingest without DuckDB appends). The layout comes
 *   from one ModelStore created on an in-memory DuckDB.
 * Prints one JSON line per run: MB/s and events/s, per wall second and per
 * CPU second of this process (the machine may be shared: compare CPU).
 */
import { stat } from 'node:fs/promises';
import { cpuUsage } from 'node:process';
import type { EventSink } from '../../server/decode/decoded_event.ts';
import { openDecompressed } from '../../server/decode/decompress.ts';
import { decodeFtraceText } from '../../server/decode/ftrace_text/decode_ftrace_text.ts';

const args = process.argv.slice(2);
const files: string[] = [];
let only: string | null = null;
let repeat = 1;
for (let i = 0; i < args.length; i++) {
  const a = args[i]!;
  if (a === '--only') only = args[++i]!;
  else if (a === '--repeat') repeat = Number(args[++i]);
  else files.push(a);
}
if (files.length === 0) {
  console.error('usage: bench_ftrace_text.ts [--only decode|builder] [--repeat N] FILE.txt...');
  process.exit(2);
}

function countingSink(): EventSink & { events: number } {
  return {
    events: 0,
    header() {},
    event() {
      this.events++;
    },
    lostEvents() {},
    skipped() {},
  };
}

async function layout() {
  const { openDuckDb } = await import('../../server/engine/engine.ts');
  const { ModelStore } = await import('../../server/model/model_store.ts');
  const engine = await openDuckDb(':memory:');
  const store = await ModelStore.create(engine);
  return store.layout;
}

async function run(mode: 'decode' | 'builder', file: string): Promise<void> {
  const size = (await stat(file)).size;
  let sink: EventSink;
  let count: () => number;
  let finish: () => void = () => {};
  if (mode === 'decode') {
    const s = countingSink();
    sink = s;
    count = () => s.events;
  } else {
    const { ModelBuilder } = await import('../../server/model/model_builder.ts');
    const b = new ModelBuilder(await layout(), () => {});
    sink = b;
    count = () => b.eventCount;
    finish = () => void b.finish();
  }
  const cpu0 = cpuUsage();
  const t0 = performance.now();
  const summary = await decodeFtraceText(openDecompressed(file), sink, { fileLabel: file });
  finish();
  const wall = (performance.now() - t0) / 1000;
  const cpu = cpuUsage(cpu0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const events = count();
  const mb = summary.bytes / 1e6;
  console.log(
    JSON.stringify({
      mode,
      file,
      file_MB: +(size / 1e6).toFixed(1),
      text_MB: +mb.toFixed(1),
      events,
      format: summary.format,
      skipped: summary.skippedLines,
      unparsed: summary.unparsedEvents,
      wall_s: +wall.toFixed(3),
      cpu_s: +cpuS.toFixed(3),
      MB_per_s: +(mb / wall).toFixed(1),
      MB_per_cpu_s: +(mb / cpuS).toFixed(1),
      events_per_s: Math.round(events / wall),
      events_per_cpu_s: Math.round(events / cpuS),
    }),
  );
}

for (let r = 0; r < repeat; r++) {
  for (const file of files) {
    if (only === null || only === 'decode') await run('decode', file);
    if (only === null || only === 'builder') await run('builder', file);
  }
}
process.exit(0);
