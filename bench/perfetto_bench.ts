/**
 * Perfetto import speed (`npm run bench -- --only perfetto`, or
 * `npx tsx bench/perfetto_bench.ts [--quick]`): stallscope's decoder alone,
 * the decoder writing model rows (ModelBuilder, chunks dropped: no DuckDB),
 * and a whole ingest (with its phases: decode+append+commit, derive), next
 * to Perfetto's trace_processor_shell loading the same file (`select
 * count(*) from ftrace_event`), same process tree, run alternately. Wall
 * and CPU (user+sys) seconds both: on a shared machine the wall time
 * follows the load, CPU much less.  Files:
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
import { decodeFile } from '../server/decode/decode_file.ts';
import { openDuckDb } from '../server/engine/engine.ts';
import { PooledBuffers } from '../server/model/buffer_source.ts';
import { ModelBuilder } from '../server/model/model_builder.ts';
import type { ModelLayout } from '../server/model/model_layout.ts';
import { ModelStore } from '../server/model/model_store.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'bench/out/perfetto');

export interface PerfettoBenchRow {
  file: string;
  mb: number;
  events: number;
  /** Medians, wall seconds. */
  decodeS: number;
  rowsS: number;
  ingestS: number;
  traceProcessorS: number;
  /** Medians, CPU seconds (user+sys, every thread; trace_processor's from its rusage). */
  decodeCpuS: number;
  rowsCpuS: number;
  ingestCpuS: number;
  traceProcessorCpuS: number;
  /** The whole ingest's phases (wall, medians): decoding with the appends and their commit; derive. */
  ingestDecodeS: number;
  ingestDeriveS: number;
  /** trace_processor's time / stallscope's whole ingest: above 1 means stallscope is faster. */
  ingestSpeedup: number;
  decodeSpeedup: number;
  /** The same on CPU seconds. */
  ingestCpuSpeedup: number;
  decodeCpuSpeedup: number;
}

/**
 * A longer recording made of copies of a real one: copy k's ftrace
 * timestamps are moved by k times the recording's span (plus 1 ms), so the
 * copies follow each other in time on the same streams, as a longer run of
 * the same workload would. Everything else is copied as it is.
 */
export function replicate(src: Uint8Array, copies: number): Uint8Array {
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

/** Wall and CPU seconds of this process (every thread) while fn runs. */
async function timed(fn: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const t = performance.now();
  const c = process.cpuUsage();
  await fn();
  const d = process.cpuUsage(c);
  return { wall: (performance.now() - t) / 1000, cpu: (d.user + d.system) / 1e6 };
}

/** CPU seconds of this process's waited-for children so far (Linux: /proc/self/stat cutime + cstime), NaN elsewhere. */
function childrenCpuSeconds(): number {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of proc(5); f starts at field 3. Ticks of USER_HZ (100 on Linux).
    return (Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return NaN;
  }
}

/** Wall and CPU seconds of a child process run to its end. */
function timedChild(cmd: string, args: string[]): { wall: number; cpu: number } {
  const c = childrenCpuSeconds();
  const t = performance.now();
  execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'] });
  return { wall: (performance.now() - t) / 1000, cpu: childrenCpuSeconds() - c };
}

/** The decoder writing model rows as an ingest does (ModelBuilder), its chunks dropped instead of appended to DuckDB. */
async function decodeIntoRows(file: string, layout: ModelLayout): Promise<void> {
  const buffers = new PooledBuffers();
  const builder = new ModelBuilder(layout, (_table, data) => buffers.give(data.buffer), null, buffers);
  await decodeFile(file, builder, { label: file, scratchDir: OUT });
  builder.finish();
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
  // The model's layout (tables and columns) from a scratch database, for decodeIntoRows.
  const layoutDb = path.join(OUT, 'layout.duckdb');
  fs.rmSync(layoutDb, { force: true });
  const layoutEngine = await openDuckDb(layoutDb, {});
  const layout = (await ModelStore.beginLoad(layoutEngine)).layout;
  const rows: PerfettoBenchRow[] = [];
  try {
    for (const file of [reclaim, compact, large]) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-perfetto-bench-'));
      try {
        const tps: { wall: number; cpu: number }[] = [];
        const dec: { wall: number; cpu: number }[] = [];
        const rws: { wall: number; cpu: number }[] = [];
        const ing: { wall: number; cpu: number }[] = [];
        const ingDecode: number[] = [];
        const ingDerive: number[] = [];
        let events = 0;
        for (let i = 0; i < runs; i++) {
          tps.push(timedChild(tp, ['-q', q, file]));
          dec.push(
            await timed(async () => {
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
          rws.push(await timed(() => decodeIntoRows(file, layout)));
          let seconds: { decode: number; derive: number } = { decode: NaN, derive: NaN };
          ing.push(
            await timed(async () => {
              seconds = (await ingestFile(file, { dataDir, force: true })).summary.seconds;
            }),
          );
          ingDecode.push(seconds.decode);
          ingDerive.push(seconds.derive);
        }
        const m = (xs: { wall: number; cpu: number }[], k: 'wall' | 'cpu') => median(xs.map((x) => x[k]));
        const r3 = (x: number) => +x.toFixed(3);
        const row: PerfettoBenchRow = {
          file: path.relative(ROOT, file),
          mb: +(fs.statSync(file).size / 2 ** 20).toFixed(1),
          events,
          decodeS: r3(m(dec, 'wall')),
          rowsS: r3(m(rws, 'wall')),
          ingestS: r3(m(ing, 'wall')),
          traceProcessorS: r3(m(tps, 'wall')),
          decodeCpuS: r3(m(dec, 'cpu')),
          rowsCpuS: r3(m(rws, 'cpu')),
          ingestCpuS: r3(m(ing, 'cpu')),
          traceProcessorCpuS: r3(m(tps, 'cpu')),
          ingestDecodeS: r3(median(ingDecode)),
          ingestDeriveS: r3(median(ingDerive)),
          ingestSpeedup: +(m(tps, 'wall') / m(ing, 'wall')).toFixed(2),
          decodeSpeedup: +(m(tps, 'wall') / m(dec, 'wall')).toFixed(2),
          ingestCpuSpeedup: +(m(tps, 'cpu') / m(ing, 'cpu')).toFixed(2),
          decodeCpuSpeedup: +(m(tps, 'cpu') / m(dec, 'cpu')).toFixed(2),
        };
        rows.push(row);
        const ws = (w: number, c: number) => `${w.toFixed(2)}/${c.toFixed(2)} s`;
        log(
          `${row.file.padEnd(48)} ${String(row.mb).padStart(6)} MB ${String(row.events).padStart(9)} events (wall/CPU)  ` +
            `decode ${ws(row.decodeS, row.decodeCpuS)}  rows ${ws(row.rowsS, row.rowsCpuS)}  ` +
            `ingest ${ws(row.ingestS, row.ingestCpuS)} (decode+append ${row.ingestDecodeS.toFixed(2)} s, derive ${row.ingestDeriveS.toFixed(2)} s)  ` +
            `trace_processor ${ws(row.traceProcessorS, row.traceProcessorCpuS)}  ` +
            `-> ingest ${row.ingestSpeedup}x (CPU ${row.ingestCpuSpeedup}x), decode ${row.decodeSpeedup}x (CPU ${row.decodeCpuSpeedup}x) its speed  (load ${os.loadavg()[0]!.toFixed(2)})`,
        );
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }
  } finally {
    layoutEngine.close();
    fs.rmSync(layoutDb, { force: true });
    fs.rmSync(`${layoutDb}.wal`, { force: true });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchPerfetto({ quick: process.argv.includes('--quick') });
}
