/**
 * Decode-speed check: `npx tsx bench/decode/bench_trace_dat.ts FILE.dat`
 * Decodes into a sink that only counts, and prints events/s and MB/s (file
 * bytes and uncompressed ring-buffer bytes). Compare with
 * `time trace-cmd report FILE.dat > /dev/null`.
 */
import { stat } from 'node:fs/promises';
import { cpuUsage } from 'node:process';
import type { EventSink } from '../../server/decode/decoded_event.ts';
import { decodeTraceDat } from '../../server/decode/trace_dat/decode_trace_dat.ts';

const path = process.argv[2];
if (!path) {
  console.error('usage: bench_trace_dat.ts FILE.dat');
  process.exit(2);
}
let events = 0;
let skipped = 0;
let lost = 0;
let dataBytes = 0;
const sink: EventSink = {
  header() {},
  event() {
    events++;
  },
  lostEvents() {
    lost++;
  },
  skipped() {
    skipped++;
  },
};
const size = (await stat(path)).size;
const cpu0 = cpuUsage();
const t0 = performance.now();
await decodeTraceDat(path, sink, {
  fileLabel: path,
  onProgress: (done, total) => {
    dataBytes = total ?? done;
  },
});
const wall = (performance.now() - t0) / 1000;
const cpu = cpuUsage(cpu0);
const cpuS = (cpu.user + cpu.system) / 1e6;
console.log(
  JSON.stringify({
    file: path,
    events,
    skipped,
    lost,
    wall_s: +wall.toFixed(3),
    cpu_s_main_process: +cpuS.toFixed(3),
    events_per_s: Math.round(events / wall),
    events_per_cpu_s: Math.round(events / cpuS),
    file_MB_per_s: +(size / 1e6 / wall).toFixed(1),
    cpu_data_MB_in_file: +(dataBytes / 1e6).toFixed(1),
  }),
);
