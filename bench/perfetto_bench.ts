/**
 * Perfetto import speed (`npm run bench -- --only perfetto`, or
 * `npx tsx bench/perfetto_bench.ts [--quick]`): stallscope's decoder alone
 * and a whole ingest, next to Perfetto's trace_processor_shell loading the
 * same file (`select count(*) from ftrace_event`, wall time, same process
 * tree, run alternately), on:
 *
 * - the two real tracebox recordings in fixtures/ (compact_sched off with
 *   interned symbols; compact_sched on with a second ftrace instance);
 * - a larger file made of copies of the first recording, each copy's
 *   packets on sequences of its own (so each copy is a stream of its own,
 *   as with many CPUs or ftrace instances): 40 copies, ~50 MB, 1.3M events
 *   (--quick: 8 copies).
 *
 * Goal (issue 33): faster than trace_processor_shell loading the same file.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { decodePerfetto } from '../server/decode/perfetto/decode_perfetto.ts';
import { F } from '../server/decode/perfetto/perfetto_schema.ts';
import { ProtoReader, WIRE_VARINT } from '../server/decode/perfetto/proto_reader.ts';
import { traceProcessorShell } from '../server/decode/perfetto/test_trace_processor.ts';
import { ProtoWriter } from '../server/export/perfetto/proto_writer.ts';
import { ingestFile } from '../server/ingest/ingest_file.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'bench/out/perfetto');

export interface PerfettoBenchRow {
  file: string;
  mb: number;
  events: number;
  decodeS: number;
  ingestS: number;
  traceProcessorS: number;
  /** trace_processor's time / stallscope's whole ingest: above 1 means stallscope is faster. */
  ingestSpeedup: number;
  decodeSpeedup: number;
}

/** Copies of a trace's packets, copy k's sequence ids moved by k * 1000. */
function replicate(src: Uint8Array, copies: number): Uint8Array {
  const w = new ProtoWriter();
  for (let k = 0; k < copies; k++) {
    const r = new ProtoReader(src, 0, src.length);
    while (r.next()) {
      const s = r.bytes();
      const e = r.pos;
      const p = new ProtoWriter();
      const q = new ProtoReader(src, s, e);
      while (q.next()) {
        const start = q.pos;
        if (q.field === F.packet.sequenceId && q.wire === WIRE_VARINT) {
          p.uintField(F.packet.sequenceId, q.varint() + k * 1000);
          continue;
        }
        // other fields as they are: re-emit tag and bytes
        const tagStart = lastTagStart(src, start, q.field, q.wire);
        q.skip();
        p.raw(src.subarray(tagStart, q.pos));
      }
      w.bytesField(F.trace.packet, p.finish().slice());
    }
  }
  return w.finish();
}

/** Where the tag of the field read last began (tags of these fields are 1-3 bytes). */
function lastTagStart(buf: Uint8Array, afterTag: number, field: number, wire: number): number {
  let n = field * 8 + wire;
  let len = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    len++;
  }
  void buf;
  return afterTag - len;
}

function seconds(fn: () => void): number {
  const t = performance.now();
  fn();
  return (performance.now() - t) / 1000;
}

async function secondsAsync(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchPerfetto(opts: { quick?: boolean; runs?: number; log?: (s: string) => void } = {}): Promise<PerfettoBenchRow[]> {
  const log = opts.log ?? ((s: string) => process.stdout.write(`${s}\n`));
  const runs = opts.runs ?? (opts.quick ? 1 : 3);
  fs.mkdirSync(OUT, { recursive: true });
  const reclaim = path.join(ROOT, 'fixtures/perfetto_reclaim.pftrace');
  const compact = path.join(OUT, 'perfetto_compact.pftrace');
  fs.writeFileSync(compact, gunzipSync(fs.readFileSync(path.join(ROOT, 'fixtures/perfetto_compact.pftrace.gz'))));
  const copies = opts.quick ? 8 : 40;
  const large = path.join(OUT, `perfetto_reclaim.x${copies}.pftrace`);
  if (!fs.existsSync(large)) fs.writeFileSync(large, replicate(fs.readFileSync(reclaim), copies));
  const tp = traceProcessorShell();
  const q = path.join(OUT, 'count.sql');
  fs.writeFileSync(q, 'select count(*) from ftrace_event;\n');
  const rows: PerfettoBenchRow[] = [];
  for (const file of [reclaim, compact, large]) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-perfetto-bench-'));
    try {
      const dec: number[] = [];
      const ing: number[] = [];
      const tps: number[] = [];
      let events = 0;
      for (let i = 0; i < runs; i++) {
        tps.push(seconds(() => execFileSync(tp, ['-q', q, file], { stdio: ['ignore', 'pipe', 'ignore'] })));
        dec.push(
          await secondsAsync(async () => {
            let n = 0;
            await decodePerfetto(file, { header() {}, event() { n++; }, lostEvents() {}, skipped() {} }, { fileLabel: file });
            events = n;
          }),
        );
        ing.push(await secondsAsync(() => ingestFile(file, { dataDir, force: true })));
      }
      const row: PerfettoBenchRow = {
        file: path.relative(ROOT, file),
        mb: +(fs.statSync(file).size / 2 ** 20).toFixed(1),
        events,
        decodeS: +median(dec).toFixed(3),
        ingestS: +median(ing).toFixed(3),
        traceProcessorS: +median(tps).toFixed(3),
        ingestSpeedup: +(median(tps) / median(ing)).toFixed(2),
        decodeSpeedup: +(median(tps) / median(dec)).toFixed(2),
      };
      rows.push(row);
      log(
        `${row.file.padEnd(48)} ${String(row.mb).padStart(6)} MB ${String(row.events).padStart(9)} events  decode ${row.decodeS.toFixed(2)} s  ingest ${row.ingestS.toFixed(2)} s  ` +
          `trace_processor ${row.traceProcessorS.toFixed(2)} s  -> ingest ${row.ingestSpeedup}x, decode ${row.decodeSpeedup}x its speed  (load ${os.loadavg()[0]!.toFixed(2)})`,
      );
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchPerfetto({ quick: process.argv.includes('--quick') });
}
