/**
 * Perfetto import speed (`npm run bench -- --only perfetto`, or
 * `npx tsx bench/perfetto_bench.ts [--quick]`): stallscope's decoder alone
 * and a whole ingest, next to Perfetto's trace_processor_shell loading the
 * same file (`select count(*) from ftrace_event`, wall time, same process
 * tree, run alternately), on:
 *
 * - the two real tracebox recordings in fixtures/ (compact_sched off with
 *   interned symbols; compact_sched on with a second ftrace instance);
 * - a longer recording made of 40 copies of the first one, one after the
 *   other in time on the same streams (~50 MB, 1.3M events; --quick: 8).
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
import { ProtoReader, WIRE_LEN, WIRE_VARINT } from '../server/decode/perfetto/proto_reader.ts';
import { traceProcessorShell } from '../tests/support/decode/perfetto/test_trace_processor.ts';
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

/**
 * A longer recording made of copies of a real one: copy k's ftrace
 * timestamps are moved by k times the recording's span (plus 1 ms), so the
 * copies follow each other in time on the same streams, as a longer run of
 * the same workload would. Everything else is copied as it is.
 */
function replicate(src: Uint8Array, copies: number): Uint8Array {
  let lo = Infinity;
  let hi = -Infinity;
  forEachEventTs(src, (t) => {
    if (t < lo) lo = t;
    if (t > hi) hi = t;
  });
  const span = hi - lo + 1_000_000;
  const w = new ProtoWriter();
  for (let k = 0; k < copies; k++) {
    const shift = k * span;
    eachField(src, 0, src.length, (no, wire, s, e, tagStart) => {
      if (no !== F.trace.packet || wire !== WIRE_LEN) return;
      w.nested(F.trace.packet, () =>
        eachField(src, s, e, (pno, pwire, ps, pe, ptag) => {
          if (pno !== F.packet.ftraceEvents || pwire !== WIRE_LEN) return w.raw(src.subarray(ptag, pe));
          w.nested(F.packet.ftraceEvents, () =>
            eachField(src, ps, pe, (bno, bwire, bs, be, btag) => {
              if (bno === F.bundle.event && bwire === WIRE_LEN) {
                w.nested(F.bundle.event, () =>
                  eachField(src, bs, be, (eno, ewire, es, ee, etag) => {
                    if (eno === F.event.timestamp && ewire === WIRE_VARINT)
                      w.uintField(F.event.timestamp, new ProtoReader(src, es, ee).varint() + shift);
                    else w.raw(src.subarray(etag, ee));
                  }),
                );
              } else if (bno === F.bundle.compactSched && bwire === WIRE_LEN) {
                w.nested(F.bundle.compactSched, () =>
                  eachField(src, bs, be, (cno, cwire, cs, ce, ctag) => {
                    // Delta-encoded: only the first timestamp of each array is absolute.
                    if (
                      (cno === F.compact.switchTimestamp || cno === F.compact.wakingTimestamp) &&
                      cwire === WIRE_LEN &&
                      ce > cs
                    ) {
                      const r = new ProtoReader(src, cs, ce);
                      const p = new ProtoWriter();
                      p.varint(r.varint() + shift);
                      while (r.pos < ce) p.varint(r.varint());
                      w.bytesField(cno, p.finish().slice());
                    } else w.raw(src.subarray(ctag, ce));
                  }),
                );
              } else w.raw(src.subarray(btag, be));
            }),
          );
        }),
      );
      void tagStart;
    });
  }
  return w.finish();
}

/** Calls fn(field, wire, valueStart, valueEnd, tagStart) for each field of buf[start, end) (values of varints: their bytes). */
function eachField(
  buf: Uint8Array,
  start: number,
  end: number,
  fn: (no: number, wire: number, s: number, e: number, tagStart: number) => void,
): void {
  const r = new ProtoReader(buf, start, end);
  for (;;) {
    const tagStart = r.pos;
    if (!r.next()) return;
    const no = r.field;
    const wire = r.wire;
    if (wire === WIRE_LEN) {
      const s = r.bytes();
      fn(no, wire, s, r.pos, tagStart);
    } else {
      const s = r.pos;
      r.skip();
      fn(no, wire, s, r.pos, tagStart);
    }
  }
}

/** Every ftrace event timestamp of a trace (regular events; compact arrays' first ones). */
function forEachEventTs(buf: Uint8Array, fn: (ts: number) => void): void {
  eachField(buf, 0, buf.length, (no, wire, s, e) => {
    if (no !== F.trace.packet || wire !== WIRE_LEN) return;
    eachField(buf, s, e, (pno, pwire, ps, pe) => {
      if (pno !== F.packet.ftraceEvents || pwire !== WIRE_LEN) return;
      eachField(buf, ps, pe, (bno, bwire, bs, be) => {
        if (bno === F.bundle.event && bwire === WIRE_LEN)
          eachField(
            buf,
            bs,
            be,
            (eno, ewire, es, ee) =>
              eno === F.event.timestamp && ewire === WIRE_VARINT && fn(new ProtoReader(buf, es, ee).varint()),
          );
      });
    });
  });
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

export async function benchPerfetto(
  opts: { quick?: boolean; runs?: number; log?: (s: string) => void } = {},
): Promise<PerfettoBenchRow[]> {
  const log = opts.log ?? ((s: string) => process.stdout.write(`${s}\n`));
  const runs = opts.runs ?? (opts.quick ? 1 : 3);
  fs.mkdirSync(OUT, { recursive: true });
  const reclaim = path.join(ROOT, 'fixtures/perfetto_reclaim.pftrace');
  const compact = path.join(OUT, 'perfetto_compact.pftrace');
  fs.writeFileSync(compact, gunzipSync(fs.readFileSync(path.join(ROOT, 'fixtures/perfetto_compact.pftrace.gz'))));
  const copies = opts.quick ? 8 : 40;
  const large = path.join(OUT, `perfetto_reclaim.x${copies}.seq.pftrace`);
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
            await decodePerfetto(
              file,
              {
                header() {},
                event() {
                  n++;
                },
                lostEvents() {},
                skipped() {},
              },
              { fileLabel: file },
            );
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
