/**
 * The Perfetto decoder on small traces written here, one case each for what
 * the real recordings (perfetto_recordings.test.ts) do not hold: generic
 * events of two sequences numbered alike, legacy GenericFtraceEvent,
 * deflate-compressed packets, a bundle on another ftrace clock, events from
 * before tracing started, a typed event the protos do not declare, lost
 * events, interned and missing kernel symbols, compact_sched, a truncated
 * file, and content sniffing.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { ProtoWriter } from '../../export/perfetto/proto_writer.ts';
import { decodeFile } from '../decode_file.ts';
import { CollectingSink } from '../../../tests/support/decode/ftrace_text/collecting_sink.ts';
import { sniffInput } from '../sniff.ts';
import { openDuckDb } from '../../engine/engine.ts';
import { ingestFile } from '../../ingest/ingest_file.ts';
import { F, perfettoType } from './perfetto_schema.ts';

const dir = mkdtempSync(join(tmpdir(), 'stallscope-perfetto-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURES = join(import.meta.dirname, '../../../fixtures');

/** A packet from a protobufjs object (rare packets). */
function packet(obj: Record<string, unknown>): Uint8Array {
  const T = perfettoType('TracePacket');
  return T.encode(T.fromObject(obj)).finish();
}

interface TestEvent {
  ts: number;
  pid: number;
  /** FtraceEvent field number and the event message's fields [no, value]. */
  id: number;
  fields: [number, number | bigint | string][];
}

function bundlePacket(
  seq: number,
  cpu: number,
  events: TestEvent[],
  extra?: (w: ProtoWriter) => void,
  bundleExtra?: (w: ProtoWriter) => void,
): Uint8Array {
  const w = new ProtoWriter();
  w.nested(F.packet.ftraceEvents, () => {
    w.uintField(F.bundle.cpu, cpu);
    for (const e of events) {
      w.nested(F.bundle.event, () => {
        w.uintField(F.event.timestamp, e.ts);
        w.uintField(F.event.pid, e.pid);
        w.nested(e.id, () => {
          for (const [no, v] of e.fields) {
            if (typeof v === 'string') w.stringField(no, v);
            else w.uintField(no, v);
          }
        });
      });
    }
    bundleExtra?.(w);
  });
  w.uintField(F.packet.sequenceId, seq);
  extra?.(w);
  return w.finish().slice();
}

function descriptor(
  w: ProtoWriter,
  id: number,
  system: string,
  name: string,
  fields: [string, number, number][],
): void {
  w.nested(F.bundle.genericEventDescriptors, () => {
    w.uintField(F.descriptor.fieldId, id);
    w.stringField(F.descriptor.groupName, system);
    w.nested(F.descriptor.eventDescriptor, () => {
      w.stringField(F.descriptor.name, name);
      for (const [n, no, type] of fields) {
        w.nested(F.descriptor.field, () => {
          w.stringField(F.descriptor.fieldName, n);
          w.uintField(F.descriptor.fieldNumber, no);
          w.uintField(F.descriptor.fieldType, type);
        });
      }
    });
  });
}

function trace(packets: Uint8Array[]): Buffer {
  const w = new ProtoWriter();
  for (const p of packets) w.bytesField(F.trace.packet, p);
  return Buffer.from(w.finish());
}

async function decode(bytes: Buffer, name = 't.pftrace'): Promise<CollectingSink> {
  const file = join(dir, name);
  writeFileSync(file, bytes);
  const sink = new CollectingSink();
  await decodeFile(file, sink, { label: name, scratchDir: dir });
  return sink;
}

const KSWAPD_WAKE = 48;
const SHRINK_START = 443;
const T0 = 1_000_000_000;

describe('Perfetto decoder, hand-written traces', () => {
  it('generic events: each sequence its own descriptors; legacy GenericFtraceEvent; kernel symbols', async () => {
    const seq1 = bundlePacket(
      1,
      0,
      [
        {
          ts: T0 + 10,
          pid: 45,
          id: 65536,
          fields: [
            [1, 0],
            [2, 32],
            [3, 9],
          ],
        },
        {
          ts: T0 + 20,
          pid: 45,
          id: SHRINK_START,
          fields: [
            [8, 1],
            [7, 0xffff888101234500n],
            [11, 12],
          ],
        },
        { ts: T0 + 30, pid: 45, id: SHRINK_START, fields: [[8, 0xffffffff81234567n]] },
      ],
      (w) =>
        w.nested(F.packet.internedData, () =>
          w.nested(F.interned.kernelSymbols, () => {
            w.uintField(F.interned.iid, 1);
            w.stringField(F.interned.str, 'super_cache_scan');
          }),
        ),
      (w) =>
        descriptor(w, 65536, 'vmscan', 'mm_vmscan_lru_shrink_inactive', [
          ['nid', 1, 3],
          ['nr_scanned', 2, 3],
          ['reclaim_flags', 3, 4],
        ]),
    );
    const seq2 = bundlePacket(2, 1, [{ ts: T0 + 15, pid: 7, id: 65536, fields: [[1, '7:0']] }], undefined, (w) =>
      descriptor(w, 65536, 'writeback', 'writeback_dirty_folio', [['name', 1, 9]]),
    );
    const legacy = bundlePacket(1, 1, [], undefined, (w) =>
      w.nested(F.bundle.event, () => {
        w.uintField(F.event.timestamp, T0 + 40);
        w.uintField(F.event.pid, 9);
        w.nested(F.event.generic, () => {
          w.stringField(F.generic.eventName, 'my_event');
          w.nested(F.generic.field, () => {
            w.stringField(F.generic.name, 'x');
            w.uintField(F.generic.intValue, -5n);
          });
          w.nested(F.generic.field, () => {
            w.stringField(F.generic.name, 's');
            w.stringField(F.generic.strValue, 'hello');
          });
        });
      }),
    );
    const sink = await decode(trace([seq1, seq2, legacy]));
    expect(sink.headers[0]!.format).toBe('perfetto');
    expect(sink.headers[0]!.tsBaseNs).toBe(BigInt(T0 + 10));
    expect(sink.events.map((e) => [e.ts, e.cpu, e.name, e.system])).toEqual([
      [0, 0, 'mm_vmscan_lru_shrink_inactive', 'vmscan'],
      [5, 1, 'writeback_dirty_folio', 'writeback'],
      [10, 0, 'mm_shrink_slab_start', 'vmscan'],
      [20, 0, 'mm_shrink_slab_start', 'vmscan'],
      [30, 1, 'my_event', null],
    ]);
    expect(sink.events[0]!.fields).toEqual({
      nid: 0,
      nr_scanned: 32,
      reclaim_flags: 'RECLAIM_WB_ANON|RECLAIM_WB_ASYNC',
    });
    expect(sink.events[1]!.fields).toEqual({ name: '7:0' });
    expect(sink.events[2]!.fields).toEqual({ shrink: 'super_cache_scan', shr: '0xffff888101234500', priority: 12 });
    expect(sink.events[3]!.fields).toEqual({ shrink: '0xffffffff81234567' });
    expect(sink.events[4]!.fields).toEqual({ x: -5, s: 'hello' });
    expect(sink.skips).toEqual([]);
  });

  it('deflate- and zstd-compressed packets, another ftrace clock, events before tracing started, an undeclared typed event, lost events', async () => {
    const inner = trace([
      bundlePacket(1, 0, [
        {
          ts: T0 + 100,
          pid: 1,
          id: KSWAPD_WAKE,
          fields: [
            [1, 0],
            [2, 3],
          ],
        },
      ]),
    ]);
    const compressed = packet({ compressed_packets: deflateSync(inner), trusted_packet_sequence_id: 1 });
    const zstdInner = trace([bundlePacket(1, 3, [{ ts: T0 + 150, pid: 4, id: KSWAPD_WAKE, fields: [[1, 0]] }])]);
    const zstd = packet({
      zstd_compressed_packets: execFileSync('zstd', ['-q', '-c'], { input: zstdInner }),
      trusted_packet_sequence_id: 1,
    });
    const started = packet({
      timestamp: T0 + 50,
      service_event: { tracing_started: true },
      trusted_packet_sequence_id: 9,
    });
    const early = bundlePacket(
      1,
      1,
      [
        { ts: T0 + 10, pid: 2, id: KSWAPD_WAKE, fields: [[1, 0]] },
        { ts: T0 + 60, pid: 2, id: 11, fields: [[1, 5]] }, // cpu_frequency: not declared
        { ts: T0 + 70, pid: 2, id: KSWAPD_WAKE, fields: [[1, 1]] },
      ],
      undefined,
      (w) => w.uintField(F.bundle.lostEvents, 1),
    );
    // A bundle recorded on the ftrace `global` clock, 1000 ns behind boot time.
    const global = bundlePacket(
      1,
      2,
      [{ ts: T0 + 200 - 1000, pid: 3, id: KSWAPD_WAKE, fields: [[1, 0]] }],
      undefined,
      (w) => {
        w.uintField(F.bundle.ftraceClock, 2);
        w.uintField(F.bundle.ftraceTimestamp, 5000);
        w.uintField(F.bundle.bootTimestamp, 6000);
      },
    );
    const sink = await decode(trace([started, compressed, early, global, zstd]));
    expect(sink.events.map((e) => [e.ts + Number(sink.headers[0]!.tsBaseNs), e.cpu, e.pid])).toEqual([
      [T0 + 70, 1, 2],
      [T0 + 100, 0, 1],
      [T0 + 150, 3, 4],
      [T0 + 200, 2, 3],
    ]);
    const reasons = sink.skips.map((s) => s.reason);
    expect(reasons).toContain(
      "1 ftrace events from before tracing started dropped (left in the kernel's buffer by an earlier session; trace_processor drops them too)",
    );
    expect(reasons.some((r) => r.startsWith('1 ftrace events of FtraceEvent field 11'))).toBe(true);
    expect(sink.lost).toEqual([{ cpu: 1, count: null, where: expect.any(Number) }]);
  });

  it('compact_sched: deltas, interned comms, the previous task from the previous switch on the CPU', async () => {
    const w = new ProtoWriter();
    w.nested(F.packet.ftraceEvents, () => {
      w.uintField(F.bundle.cpu, 0);
      w.nested(F.bundle.compactSched, () => {
        w.stringField(F.compact.internTable, 'kswapd0');
        w.stringField(F.compact.internTable, 'dd');
        const packed = (no: number, vals: (number | bigint)[]) => {
          const p = new ProtoWriter();
          for (const v of vals) p.varint64(v);
          w.bytesField(no, p.finish().slice());
        };
        packed(F.compact.switchTimestamp, [T0, 100, 100]);
        packed(F.compact.switchPrevState, [0, 1, 0x100]);
        packed(F.compact.switchNextPid, [45, 99, 45]);
        packed(F.compact.switchNextPrio, [120, 120, 120]);
        packed(F.compact.switchNextCommIndex, [0, 1, 0]);
        packed(F.compact.wakingTimestamp, [T0 - 5, 55]);
        packed(F.compact.wakingPid, [99, 99]);
        packed(F.compact.wakingTargetCpu, [0, 0]);
        packed(F.compact.wakingPrio, [120, 120]);
        packed(F.compact.wakingCommIndex, [1, 1]);
        packed(F.compact.wakingCommonFlags, [1, 1]);
      });
    });
    w.uintField(F.packet.sequenceId, 1);
    const sink = await decode(trace([w.finish().slice()]));
    // ts from the earliest (dropped) waking, T0 - 5
    expect(sink.headers[0]!.tsBaseNs).toBe(BigInt(T0 - 5));
    expect(sink.events.map((e) => [e.ts, e.name, e.pid, e.fields])).toEqual([
      [55, 'sched_waking', 45, { comm: 'dd', pid: 99, prio: 120, target_cpu: 0 }],
      [
        105,
        'sched_switch',
        45,
        {
          prev_comm: 'kswapd0',
          prev_pid: 45,
          prev_prio: 120,
          prev_state: 'S',
          next_comm: 'dd',
          next_pid: 99,
          next_prio: 120,
        },
      ],
      [
        205,
        'sched_switch',
        99,
        {
          prev_comm: 'dd',
          prev_pid: 99,
          prev_prio: 120,
          prev_state: 'R+',
          next_comm: 'kswapd0',
          next_pid: 45,
          next_prio: 120,
        },
      ],
    ]);
    expect(sink.skips.map((s) => s.reason)).toEqual([
      '1 compact sched_switch events dropped: the first on each CPU has no previous task (as trace_processor)',
      '1 compact sched_waking events dropped: no sched_switch on their CPU before them names the waker (as trace_processor)',
    ]);
  });

  it('a truncated file: the packets before the cut, and where it was cut', async () => {
    const full = trace([
      bundlePacket(1, 0, [{ ts: T0, pid: 1, id: KSWAPD_WAKE, fields: [[1, 0]] }]),
      bundlePacket(1, 0, [{ ts: T0 + 5, pid: 1, id: KSWAPD_WAKE, fields: [[1, 0]] }]),
    ]);
    const cut = full.subarray(0, full.length - 3);
    const sink = await decode(Buffer.from(cut));
    expect(sink.events).toHaveLength(1);
    expect(sink.skips[0]!.reason).toMatch(/runs past the end of the file \(truncated\)/);
    expect(sink.skips[0]!.where).toBeGreaterThan(0);
  });

  it('typed rows written from the message hold protobuf values: int32 and int64 past their range, pointers past 2^53', async () => {
    // mm_shrink_slab_end: new_scan (1) int64, retval (2) int32, shr (3) a pointer,
    // total_scan (5) int64, unused_scan (6) int64, nid (7) int32. A negative int32
    // or int64 is a 10-byte varint; an int32 keeps the low 32 bits of its varint.
    const SHRINK_END = 444;
    const end = (ts: number, fields: [number, number | bigint][]): TestEvent => ({
      ts,
      pid: 7,
      id: SHRINK_END,
      fields,
    });
    const file = join(dir, 'shrink_end.pftrace');
    writeFileSync(
      file,
      trace([
        bundlePacket(1, 0, [
          end(T0 + 1, [
            [1, 2 ** 40 + 3],
            [2, 2n ** 64n - 1n],
            [3, 0x1234],
            [5, 2n ** 64n - 5n],
            [6, 7],
            [7, 2 ** 32 + 2],
          ]),
          end(T0 + 2, [
            [2, 2 ** 31 + 5],
            [3, 0x1234],
          ]),
          end(T0 + 3, [[3, 0xffff888012345678n]]),
        ]),
      ]),
    );
    const { dbPath } = await ingestFile(file, { dataDir: join(dir, 'data') });
    const engine = await openDuckDb(dbPath, { readOnly: true });
    try {
      const rows = await engine.query(
        'SELECT new_scan, retval, shr, total_scan, unused_scan, nid FROM mm_shrink_slab_end ORDER BY ts',
      );
      expect(rows).toEqual([
        { new_scan: 2n ** 40n + 3n, retval: -1n, shr: '0x1234', total_scan: -5n, unused_scan: 7n, nid: 2 },
        { new_scan: null, retval: -(2n ** 31n) + 5n, shr: '0x1234', total_scan: null, unused_scan: null, nid: null },
        { new_scan: null, retval: null, shr: '0xffff888012345678', total_scan: null, unused_scan: null, nid: null },
      ]);
    } finally {
      engine.close();
    }
  });

  it('sniffs Perfetto traces by content, plain and inside gzip; text stays text', async () => {
    const real = readFileSync(join(FIXTURES, 'perfetto_reclaim.pftrace'));
    expect(sniffInput(real.subarray(0, 8192))).toEqual({ compression: null, format: 'perfetto' });
    expect(sniffInput(gzipSync(real.subarray(0, 1000)))).toEqual({ compression: 'gzip', format: 'unknown' });
    expect(sniffInput(readFileSync(join(FIXTURES, 'tracefs_plain.txt')).subarray(0, 8192)).format).toBe('text');
    expect(sniffInput(Buffer.from('\n# tracer: nop\n#\n')).format).toBe('text');
    expect(sniffInput(Buffer.from([0x0a, 0x05, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f])).format).toBe('unknown');
    const sink = await decode(
      gzipSync(trace([bundlePacket(1, 0, [{ ts: T0, pid: 1, id: KSWAPD_WAKE, fields: [[1, 0]] }])])),
      'x.gz',
    );
    expect(sink.events.map((e) => e.name)).toEqual(['mm_vmscan_kswapd_wake']);
  });
});
