/**
 * Pass 1 over a Perfetto trace: walks every packet once, keeps what is
 * small (process and thread names, interned kernel symbols, clock
 * snapshots, statistics, the config, generic event descriptors) and only
 * the place of each ftrace bundle, per stream (packet sequence x CPU).
 *
 * Pass 2 (decode_perfetto.ts) then reads the bundles of all streams merged
 * by time, the way trace_processor sorts them, holding one bundle per
 * stream: memory grows with the number of bundles (a few dozen bytes
 * each), never with the events.
 *
 * Packets inside `compressed_packets` (deflate) or `zstd_compressed_packets`
 * are indexed the same way; their bundles name the compressed blob they
 * lie in, which pass 2 inflates again (a small cache keeps the last few).
 */
import { inflateSync } from 'node:zlib';
import { Decompress as ZstdDecompress } from 'fzstd';
import type { SkippedInput } from '../decoded_event.ts';
import type protobuf from 'protobufjs';
import {
  F,
  FIRST_GENERIC_EVENT_ID,
  DESCRIPTOR_TYPES,
  fieldNo,
  perfettoType,
  type EventFieldSpec,
} from './perfetto_schema.ts';
import { ProtoError, ProtoReader, utf8Text, WIRE_LEN, WIRE_VARINT } from './proto_reader.ts';

/** Where one ftrace bundle's bytes are. */
export interface BundleRef {
  /** -1: in the file at `off`; else an index into TraceIndex.blobs, `off` within the inflated blob. */
  blob: number;
  off: number;
  len: number;
  /** File offset of the packet holding the bundle (of its compressed blob): `where` of its events. */
  where: number;
  /** Key of TraceIndex.symbols for this bundle's sequence and generation. */
  symbolsKey: string;
  /** boot - ftrace clock offset (ns) to add to the bundle's timestamps (0: ftrace ran on boot time). */
  clockDelta: number;
}

export interface Stream {
  seq: number;
  cpu: number;
  bundles: BundleRef[];
}

export interface CompressedBlob {
  fileOffset: number;
  len: number;
  codec: 'deflate' | 'zstd';
}

export interface GenericEventSpec {
  name: string;
  system: string | null;
  fields: (EventFieldSpec | undefined)[];
}

export interface CpuStatsSnapshot {
  cpu: number;
  overrun: number;
  commitOverrun: number;
  droppedEvents: number;
  entries: number;
}

export interface TraceIndex {
  streams: Stream[];
  blobs: CompressedBlob[];
  /** `${seq}:${generation}` -> iid -> kernel symbol. */
  symbols: Map<string, Map<number, string>>;
  /** Generic event descriptors by `${seq}:${fieldId}`, and by field id alone (first seen). */
  generic: Map<string, GenericEventSpec>;
  /** ProcessTree names: tid -> name, tid -> tgid. */
  threadNames: Map<number, string>;
  threadTgids: Map<number, number>;
  /** Lowest event timestamp of any bundle (boot ns), NaN if none. */
  minTs: number;
  /** TracingServiceEvent.tracing_started packet's timestamp, or null. */
  tracingStartedTs: number | null;
  preserveFtraceBuffer: boolean;
  symbolize: boolean;
  instances: string[];
  /** The config's ftrace_events ('group/name', 'group/*', 'name'), and those the recorder could not enable or did not find. */
  configEvents: string[];
  failedEvents: string[];
  kernelRelease: string | null;
  systemInfo: Record<string, string>;
  /** primary_trace_clock of the clock snapshots (6: BOOTTIME when unset). */
  primaryClock: number;
  /** Clock snapshots: clock id -> timestamp, per snapshot. */
  clockSnapshots: Map<number, number>[];
  ftraceStatsStart: CpuStatsSnapshot[];
  ftraceStatsEnd: CpuStatsSnapshot[];
  ftraceStatsWhere: number;
  /** Packet kinds (TracePacket field names or numbers) not read, with counts. */
  unread: Map<string, number>;
  packets: number;
  problems: SkippedInput[];
  /** Packets whose sequence reported lost packets before them. */
  droppedPacketNotices: number;
}

/** Largest packet accepted (Perfetto writes packets of at most a few MB, compressed ones included). */
const MAX_PACKET_BYTES = 128 << 20;
/** Largest inflated compressed_packets blob accepted. */
export const MAX_INFLATED_BYTES = 256 << 20;
const READ_BYTES = 4 << 20;

/** TracePacket fields read for what they say about the trace but not reported as unread. */
const BOOKKEEPING_FIELDS = new Set([
  36, // synchronization_marker
  89, // trace_uuid
  35, // trace_stats (buffer statistics of the tracing service)
  124, // trace_provenance (which producers wrote which sequences)
  F.packet.serviceEvent,
  F.packet.traceConfig,
  F.packet.clockSnapshot,
  F.packet.systemInfo,
  F.packet.ftraceStats,
  F.packet.processTree,
]);

/** The bookkeeping fields read with protobufjs (the others are only recognised). */
const DECODED_FIELDS = new Set([
  F.packet.serviceEvent,
  F.packet.traceConfig,
  F.packet.clockSnapshot,
  F.packet.systemInfo,
  F.packet.ftraceStats,
  F.packet.processTree,
]);

/** Names of TracePacket data fields for the unread summary (Perfetto's names). */
const PACKET_KIND_NAMES: Record<number, string> = {
  4: 'inode_file_map',
  5: 'chrome_events',
  7: 'sys_stats',
  9: 'process_stats',
  11: 'track_event',
  37: 'profile_packet',
  39: 'android_log',
  43: 'process_descriptor',
  44: 'thread_descriptor',
  60: 'track_descriptor',
  66: 'perf_sample',
  67: 'cpu_info',
  69: 'service_event',
  124: 'trace_provenance',
};

export interface ByteSource {
  readonly size: number;
  /** `into`: a buffer to read into when it is large enough (FileSource.read). */
  read(offset: number, len: number, what: string, into?: Buffer): Promise<Buffer>;
}

function newIndex(): TraceIndex {
  return {
    streams: [],
    blobs: [],
    symbols: new Map(),
    generic: new Map(),
    threadNames: new Map(),
    threadTgids: new Map(),
    minTs: NaN,
    tracingStartedTs: null,
    preserveFtraceBuffer: false,
    symbolize: false,
    instances: [],
    configEvents: [],
    failedEvents: [],
    kernelRelease: null,
    systemInfo: {},
    primaryClock: 6,
    clockSnapshots: [],
    ftraceStatsStart: [],
    ftraceStatsEnd: [],
    ftraceStatsWhere: 0,
    unread: new Map(),
    packets: 0,
    problems: [],
    droppedPacketNotices: 0,
  };
}

class Indexer {
  readonly index = newIndex();
  private readonly streamByKey = new Map<string, Stream>();
  private readonly generation = new Map<number, number>();
  /** Per sequence: last boot - ftrace clock delta seen in a bundle. */
  private readonly clockDelta = new Map<number, number>();

  /** One packet's bytes buf[start, end); `where`: its file offset; `blob`: -1 or the blob it is inflated from. */
  packet(buf: Uint8Array, start: number, end: number, where: number, blob: number, base: number): void {
    const ix = this.index;
    ix.packets++;
    const r = new ProtoReader(buf, start, end);
    let seq = 0;
    let cleared = false;
    let dropped = false;
    let firstOnSequence = false;
    let ts: number | null = null;
    let bundle = -1;
    let bundleEnd = -1;
    let interned = -1;
    let internedEnd = -1;
    const subs: [number, number, number][] = [];
    while (r.next()) {
      const f = r.field;
      if (f === F.packet.sequenceId && r.wire === WIRE_VARINT) seq = r.varint();
      else if (f === F.packet.timestamp && r.wire === WIRE_VARINT) ts = r.varint();
      else if (f === F.packet.sequenceFlags && r.wire === WIRE_VARINT) cleared = (r.varint() & 1) === 1 || cleared;
      else if (f === F.packet.incrementalStateCleared && r.wire === WIRE_VARINT) cleared = r.varint() !== 0 || cleared;
      else if (f === F.packet.previousPacketDropped && r.wire === WIRE_VARINT) {
        dropped = r.varint() !== 0;
      } else if (f === F.packet.firstPacketOnSequence && r.wire === WIRE_VARINT) {
        firstOnSequence = r.varint() !== 0;
      } else if (f === F.packet.ftraceEvents && r.wire === WIRE_LEN) {
        bundle = r.bytes();
        bundleEnd = r.pos;
      } else if (f === F.packet.internedData && r.wire === WIRE_LEN) {
        interned = r.bytes();
        internedEnd = r.pos;
      } else if (r.wire === WIRE_LEN && (f === F.packet.compressedPackets || f === F.packet.zstdCompressedPackets)) {
        const s = r.bytes();
        subs.push([f, s, r.pos]);
      } else if (r.wire === WIRE_LEN && BOOKKEEPING_FIELDS.has(f)) {
        const s = r.bytes();
        if (DECODED_FIELDS.has(f)) subs.push([f, s, r.pos]);
      } else {
        if (r.wire === WIRE_LEN && f !== F.packet.trustedUid) {
          const name = PACKET_KIND_NAMES[f] ?? `field ${f}`;
          ix.unread.set(name, (ix.unread.get(name) ?? 0) + 1);
        }
        r.skip();
      }
    }
    // The service marks each sequence's first packet as following a loss; only later ones mean lost data.
    if (dropped && !firstOnSequence) ix.droppedPacketNotices++;
    if (cleared) this.generation.set(seq, (this.generation.get(seq) ?? 0) + 1);
    const symbolsKey = `${seq}:${this.generation.get(seq) ?? 0}`;
    if (interned >= 0) this.internedData(buf, interned, internedEnd, symbolsKey);
    if (bundle >= 0) this.bundle(buf, bundle, bundleEnd, where, blob, base, seq, symbolsKey);
    for (const [f, s, e] of subs) this.sub(f, buf, s, e, ts, where, blob, base);
  }

  private internedData(buf: Uint8Array, start: number, end: number, key: string): void {
    const r = new ProtoReader(buf, start, end);
    let table = this.index.symbols.get(key);
    while (r.next()) {
      if (r.field !== F.interned.kernelSymbols || r.wire !== WIRE_LEN) {
        r.skip();
        continue;
      }
      const s = r.bytes();
      const e = r.pos;
      const q = new ProtoReader(buf, s, e);
      let iid = 0;
      let str = '';
      while (q.next()) {
        if (q.field === F.interned.iid && q.wire === WIRE_VARINT) iid = q.varint();
        else if (q.field === F.interned.str && q.wire === WIRE_LEN) {
          const a = q.bytes();
          str = utf8Text(buf, a, q.pos);
        } else q.skip();
      }
      if (!table) this.index.symbols.set(key, (table = new Map()));
      table.set(iid, str);
    }
  }

  private bundle(
    buf: Uint8Array,
    start: number,
    end: number,
    where: number,
    blob: number,
    base: number,
    seq: number,
    symbolsKey: string,
  ): void {
    const r = new ProtoReader(buf, start, end);
    let cpu = -1;
    let first = NaN;
    let ftraceClock = 0;
    let ftraceTs: number | null = null;
    let bootTs: number | null = null;
    while (r.next()) {
      const f = r.field;
      if (f === F.bundle.cpu && r.wire === WIRE_VARINT) cpu = r.varint();
      else if (f === F.bundle.event && r.wire === WIRE_LEN) {
        const s = r.bytes();
        if (Number.isNaN(first)) first = firstVarint(buf, s, r.pos, F.event.timestamp);
      } else if (f === F.bundle.compactSched && r.wire === WIRE_LEN) {
        const s = r.bytes();
        const t = compactFirstTimestamp(buf, s, r.pos);
        if (!Number.isNaN(t) && !(t >= first)) first = t;
      } else if (f === F.bundle.ftraceClock && r.wire === WIRE_VARINT) ftraceClock = r.varint();
      else if (f === F.bundle.ftraceTimestamp && r.wire === WIRE_VARINT) ftraceTs = r.varint();
      else if (f === F.bundle.bootTimestamp && r.wire === WIRE_VARINT) bootTs = r.varint();
      else if (f === F.bundle.genericEventDescriptors && r.wire === WIRE_LEN) {
        const s = r.bytes();
        this.descriptor(buf, s, r.pos, seq);
      } else r.skip();
    }
    if (cpu < 0) {
      this.index.problems.push({
        where,
        unit: 'offset',
        reason: 'ftrace bundle without a cpu field: skipped',
        excerpt: '',
      });
      return;
    }
    // ftrace on another clock than boot time: Perfetto's bundles carry a pair
    // of readings; trace_processor fits boot time from them. Same here, per bundle.
    let delta = 0;
    if (ftraceClock > 1) {
      if (ftraceTs !== null && bootTs !== null) this.clockDelta.set(seq, bootTs - ftraceTs);
      delta = this.clockDelta.get(seq) ?? 0;
    }
    const key = `${seq}:${cpu}`;
    let stream = this.streamByKey.get(key);
    if (!stream) {
      stream = { seq, cpu, bundles: [] };
      this.streamByKey.set(key, stream);
      this.index.streams.push(stream);
    }
    stream.bundles.push({ blob, off: base + start, len: end - start, where, symbolsKey, clockDelta: delta });
    if (!Number.isNaN(first)) {
      const t = first + delta;
      if (!(t >= this.index.minTs)) this.index.minTs = t;
    }
  }

  private descriptor(buf: Uint8Array, start: number, end: number, seq: number): void {
    const r = new ProtoReader(buf, start, end);
    let id = 0;
    let system: string | null = null;
    let desc = -1;
    let descEnd = -1;
    while (r.next()) {
      if (r.field === F.descriptor.fieldId && r.wire === WIRE_VARINT) id = r.varint();
      else if (r.field === F.descriptor.groupName && r.wire === WIRE_LEN) {
        const s = r.bytes();
        system = utf8Text(buf, s, r.pos);
      } else if (r.field === F.descriptor.eventDescriptor && r.wire === WIRE_LEN) {
        desc = r.bytes();
        descEnd = r.pos;
      } else r.skip();
    }
    if (id < FIRST_GENERIC_EVENT_ID || desc < 0) return;
    const key = `${seq}:${id}`;
    if (this.index.generic.has(key)) return;
    const d = new ProtoReader(buf, desc, descEnd);
    const spec: GenericEventSpec = { name: '', system, fields: [] };
    while (d.next()) {
      if (d.field === F.descriptor.name && d.wire === WIRE_LEN) {
        const s = d.bytes();
        spec.name = utf8Text(buf, s, d.pos);
      } else if (d.field === F.descriptor.field && d.wire === WIRE_LEN) {
        const s = d.bytes();
        const q = new ProtoReader(buf, s, d.pos);
        let name = '';
        let no = 0;
        let type = 0;
        while (q.next()) {
          if (q.field === F.descriptor.fieldName && q.wire === WIRE_LEN) {
            const a = q.bytes();
            name = utf8Text(buf, a, q.pos);
          } else if (q.field === F.descriptor.fieldNumber && q.wire === WIRE_VARINT) no = q.varint();
          else if (q.field === F.descriptor.fieldType && q.wire === WIRE_VARINT) type = q.varint();
          else q.skip();
        }
        const kind = DESCRIPTOR_TYPES[type];
        if (kind && no > 0 && no < 4096) spec.fields[no] = { name, kind };
      } else d.skip();
    }
    this.index.generic.set(key, spec);
    if (!this.index.generic.has(String(id))) this.index.generic.set(String(id), spec);
  }

  /** A packet field decoded with protobufjs (rare packets), or a compressed run of packets. */
  private sub(
    field: number,
    buf: Uint8Array,
    s: number,
    e: number,
    ts: number | null,
    where: number,
    blob: number,
    base: number,
  ): void {
    const ix = this.index;
    const bytes = buf.subarray(s, e);
    if (field === F.packet.compressedPackets || field === F.packet.zstdCompressedPackets) {
      const codec = field === F.packet.compressedPackets ? 'deflate' : 'zstd';
      if (blob >= 0) {
        ix.problems.push({
          where,
          unit: 'offset',
          reason: 'compressed packets inside compressed packets: skipped',
          excerpt: '',
        });
        return;
      }
      let inflated: Uint8Array;
      try {
        inflated = inflateBlob(codec, bytes);
      } catch (e) {
        ix.problems.push({
          where,
          unit: 'offset',
          reason: `${codec} compressed packets could not be inflated: ${(e as Error).message}`,
          excerpt: '',
        });
        return;
      }
      const id = ix.blobs.length;
      ix.blobs.push({ fileOffset: base + s, len: e - s, codec });
      walkPackets(
        inflated,
        0,
        inflated.length,
        (ps, pe) => this.packet(inflated, ps, pe, where, id, 0),
        (off, reason) =>
          ix.problems.push({
            where,
            unit: 'offset',
            reason: `inside ${codec} compressed packets at ${off}: ${reason}`,
            excerpt: '',
          }),
      );
      return;
    }
    if (field === F.packet.processTree) {
      this.processTree(readProcessTree(buf, s, e));
      return;
    }
    const msg = packetFieldType(field).decode(bytes).toJSON() as Record<string, unknown>;
    if (field === F.packet.clockSnapshot) {
      const snap = new Map<number, number>();
      for (const c of (msg.clocks as { clock_id?: number; timestamp?: string }[] | undefined) ?? []) {
        if (c.clock_id !== undefined && c.timestamp !== undefined) snap.set(c.clock_id, Number(c.timestamp));
      }
      ix.clockSnapshots.push(snap);
      if (typeof msg.primary_trace_clock === 'number') ix.primaryClock = msg.primary_trace_clock;
    } else if (field === F.packet.systemInfo) {
      const u = msg.utsname as Record<string, string> | undefined;
      if (u?.release) ix.kernelRelease = u.release;
      if (u) ix.systemInfo.kernel = [u.sysname, u.release, u.version, u.machine].filter(Boolean).join(' ');
      if (msg.tracing_service_version) ix.systemInfo.perfetto_version = String(msg.tracing_service_version);
      if (msg.num_cpus !== undefined) ix.systemInfo.cpu_count = String(msg.num_cpus);
      if (msg.page_size !== undefined) ix.systemInfo.page_size = String(msg.page_size);
    } else if (field === F.packet.traceConfig) {
      for (const ds of (msg.data_sources as
        { config?: { name?: string; ftrace_config?: Record<string, unknown> } }[] | undefined) ?? []) {
        const fc = ds.config?.ftrace_config;
        if (!fc) continue;
        if (fc.preserve_ftrace_buffer) ix.preserveFtraceBuffer = true;
        if (fc.symbolize_ksyms) ix.symbolize = true;
        ix.instances.push(typeof fc.instance_name === 'string' && fc.instance_name ? fc.instance_name : '(top)');
        for (const e of (fc.ftrace_events as string[] | undefined) ?? []) ix.configEvents.push(e);
      }
    } else if (field === F.packet.serviceEvent) {
      if (msg.tracing_started && ts !== null && ix.tracingStartedTs === null) ix.tracingStartedTs = ts;
    } else if (field === F.packet.ftraceStats) {
      const stats = ((msg.cpu_stats as Record<string, string | number>[] | undefined) ?? []).map((c) => ({
        cpu: Number(c.cpu ?? 0),
        overrun: Number(c.overrun ?? 0),
        commitOverrun: Number(c.commit_overrun ?? 0),
        droppedEvents: Number(c.dropped_events ?? 0),
        entries: Number(c.entries ?? 0),
      }));
      if (msg.phase === 'START_OF_TRACE' || msg.phase === 1) ix.ftraceStatsStart = stats;
      else {
        ix.ftraceStatsEnd = stats;
        ix.ftraceStatsWhere = where;
      }
      if (msg.preserve_ftrace_buffer) ix.preserveFtraceBuffer = true;
      for (const e of (msg.failed_ftrace_events as string[] | undefined) ?? []) {
        ix.failedEvents.push(e);
        ix.problems.push({
          where,
          unit: 'offset',
          reason: `the recorder could not enable ftrace event ${e}`,
          excerpt: '',
        });
      }
      for (const e of (msg.unknown_ftrace_events as string[] | undefined) ?? []) {
        ix.failedEvents.push(e);
        ix.problems.push({ where, unit: 'offset', reason: `the recorder did not know ftrace event ${e}`, excerpt: '' });
      }
    }
  }

  private processTree(msg: Record<string, unknown>): void {
    const ix = this.index;
    // As trace_processor reads it: kernel threads (children of kthreadd, pid 2)
    // named kworker/N:M-queue lose the transient "-queue" (the last work item's
    // queue, which /proc appends); a kernel thread's "cmdline" is its comm.
    const kthreads = new Set<number>();
    for (const p of (msg.processes as
      { pid?: number; ppid?: number; cmdline?: string[]; cmdline_is_comm?: boolean }[] | undefined) ?? []) {
      if (p.pid === undefined) continue;
      ix.threadTgids.set(p.pid, p.pid);
      if (!p.cmdline || p.cmdline.length === 0) continue;
      let joined = p.cmdline.join(' ');
      if (p.ppid === 2) {
        kthreads.add(p.pid);
        const cut = truncateKworker(p.cmdline[0]!);
        if (cut !== p.cmdline[0]) joined = cut;
      }
      if (p.cmdline_is_comm) ix.threadNames.set(p.pid, joined);
    }
    for (const t of (msg.threads as { tid?: number; name?: string; tgid?: number }[] | undefined) ?? []) {
      if (t.tid === undefined) continue;
      if (t.tgid !== undefined && t.tgid > 0) ix.threadTgids.set(t.tid, t.tgid);
      if (t.name !== undefined)
        ix.threadNames.set(t.tid, t.tid === t.tgid && kthreads.has(t.tid) ? truncateKworker(t.name) : t.name);
    }
  }
}

/** `kworker/1:2-events` -> `kworker/1:2` (also `+` separated). */
function truncateKworker(comm: string): string {
  if (!comm.startsWith('kworker/')) return comm;
  const cut = [comm.indexOf('+', 8), comm.indexOf('-', 8)].filter((i) => i >= 0);
  return cut.length ? comm.slice(0, Math.min(...cut)) : comm;
}

const fieldTypes = new Map<number, protobuf.Type>();
/** The protobufjs type of a TracePacket field (looked up once). */
function packetFieldType(field: number): protobuf.Type {
  let t = fieldTypes.get(field);
  if (!t) {
    t = perfettoType(perfettoType('TracePacket').fieldsById[field]!.type);
    fieldTypes.set(field, t);
  }
  return t;
}

const PT = {
  processes: fieldNo('ProcessTree', 'processes'),
  threads: fieldNo('ProcessTree', 'threads'),
  pid: fieldNo('ProcessTree.Process', 'pid'),
  ppid: fieldNo('ProcessTree.Process', 'ppid'),
  cmdline: fieldNo('ProcessTree.Process', 'cmdline'),
  cmdlineIsComm: fieldNo('ProcessTree.Process', 'cmdline_is_comm'),
  tid: fieldNo('ProcessTree.Thread', 'tid'),
  name: fieldNo('ProcessTree.Thread', 'name'),
  tgid: fieldNo('ProcessTree.Thread', 'tgid'),
};

/**
 * A ProcessTree, walked by hand: a recording's first one lists every thread of
 * the machine, and protobufjs' decode + toJSON of it was ~10 ms per packet.
 */
function readProcessTree(buf: Uint8Array, start: number, end: number): Record<string, unknown> {
  const processes: { pid?: number; ppid?: number; cmdline?: string[]; cmdline_is_comm?: boolean }[] = [];
  const threads: { tid?: number; name?: string; tgid?: number }[] = [];
  const r = new ProtoReader(buf, start, end);
  const q = new ProtoReader(buf, start, end);
  while (r.next()) {
    if (r.wire !== WIRE_LEN || (r.field !== PT.processes && r.field !== PT.threads)) {
      r.skip();
      continue;
    }
    const isProcess = r.field === PT.processes;
    const s = r.bytes();
    q.reset(s, r.pos);
    if (isProcess) {
      const p: (typeof processes)[number] = {};
      while (q.next()) {
        if (q.field === PT.pid && q.wire === WIRE_VARINT) p.pid = q.varint() | 0;
        else if (q.field === PT.ppid && q.wire === WIRE_VARINT) p.ppid = q.varint() | 0;
        else if (q.field === PT.cmdlineIsComm && q.wire === WIRE_VARINT) p.cmdline_is_comm = q.varint() !== 0;
        else if (q.field === PT.cmdline && q.wire === WIRE_LEN) {
          const a = q.bytes();
          (p.cmdline ??= []).push(utf8Text(buf, a, q.pos));
        } else q.skip();
      }
      processes.push(p);
    } else {
      const t: (typeof threads)[number] = {};
      while (q.next()) {
        if (q.field === PT.tid && q.wire === WIRE_VARINT) t.tid = q.varint() | 0;
        else if (q.field === PT.tgid && q.wire === WIRE_VARINT) t.tgid = q.varint() | 0;
        else if (q.field === PT.name && q.wire === WIRE_LEN) {
          const a = q.bytes();
          t.name = utf8Text(buf, a, q.pos);
        } else q.skip();
      }
      threads.push(t);
    }
  }
  return { processes, threads };
}

/** The first varint field `no` of the message buf[start, end), or NaN. */
function firstVarint(buf: Uint8Array, start: number, end: number, no: number): number {
  const r = new ProtoReader(buf, start, end);
  while (r.next()) {
    if (r.field === no && r.wire === WIRE_VARINT) return r.varint();
    r.skip();
  }
  return NaN;
}

/** The lowest first timestamp of a CompactSched (its first switch or waking: deltas start from 0). */
function compactFirstTimestamp(buf: Uint8Array, start: number, end: number): number {
  const r = new ProtoReader(buf, start, end);
  let t = NaN;
  while (r.next()) {
    if ((r.field === F.compact.switchTimestamp || r.field === F.compact.wakingTimestamp) && r.wire === WIRE_LEN) {
      const s = r.bytes();
      if (s < r.pos) {
        const v = new ProtoReader(buf, s, r.pos).varint();
        if (!(v >= t)) t = v;
      }
    } else r.skip();
  }
  return t;
}

/** A compressed_packets blob's content, refused past MAX_INFLATED_BYTES (a bomb stops there, not after). */
export function inflateBlob(codec: 'deflate' | 'zstd', bytes: Uint8Array): Uint8Array {
  if (codec === 'deflate') return inflateSync(bytes, { maxOutputLength: MAX_INFLATED_BYTES });
  const chunks: Uint8Array[] = [];
  let total = 0;
  const z = new ZstdDecompress((chunk) => {
    total += chunk.length;
    if (total > MAX_INFLATED_BYTES) throw new Error(`inflates to more than ${MAX_INFLATED_BYTES} bytes`);
    chunks.push(chunk);
  });
  z.push(bytes, true);
  const out = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

/**
 * Walks the `packet` fields of a Trace in buf[start, end): calls onPacket
 * with each packet's bytes; other fields and damage go to onProblem (the
 * walk stops at damage it cannot step over).
 */
export function walkPackets(
  buf: Uint8Array,
  start: number,
  end: number,
  onPacket: (s: number, e: number, off: number) => void,
  onProblem: (off: number, reason: string) => void,
): void {
  const r = new ProtoReader(buf, start, end);
  try {
    while (r.pos < end) {
      const off = r.pos;
      r.next();
      if (r.field === F.trace.packet && r.wire === WIRE_LEN) {
        const s = r.bytes();
        try {
          onPacket(s, r.pos, off);
        } catch (e) {
          if (!(e instanceof ProtoError)) throw e;
          onProblem(off, `damaged packet: ${e.message}`);
        }
      } else {
        onProblem(off, `not a trace packet (field ${r.field}, wire type ${r.wire}): skipped`);
        r.skip();
      }
    }
  } catch (e) {
    if (!(e instanceof ProtoError)) throw e;
    onProblem(r.pos, `damaged trace: ${e.message}; the rest is not read`);
  }
}

/**
 * Pass 1 over the file: packets are read in order through a window of the
 * file (a packet larger than the window widens it, up to MAX_PACKET_BYTES).
 */
export async function indexTrace(src: ByteSource, onProgress?: (done: number) => void): Promise<TraceIndex> {
  const ix = new Indexer();
  const problems = ix.index.problems;
  let pos = 0;
  let win: Buffer = Buffer.alloc(0);
  let winStart = 0;
  // Every window is read into this one buffer (a packet larger than it gets its
  // own): the index keeps no view of a window (strings, numbers, inflated
  // copies), and a fresh buffer per read was ~50 MB of garbage external
  // memory on a 50 MB trace, which V8 answers with full collections.
  let store: Buffer | undefined;
  const ensure = async (at: number, n: number): Promise<boolean> => {
    if (at + n <= winStart + win.length) return true;
    if (at + n > src.size) return false;
    const len = Math.min(src.size - at, Math.max(n, READ_BYTES));
    store ??= Buffer.allocUnsafeSlow(Math.min(READ_BYTES, src.size));
    win = await src.read(at, len, 'packets', store);
    winStart = at;
    return true;
  };
  let tick = 0;
  while (pos < src.size) {
    await ensure(pos, Math.min(11, src.size - pos));
    const head = new ProtoReader(win, pos - winStart, win.length);
    let len: number;
    try {
      head.next();
      if (head.field !== F.trace.packet || head.wire !== WIRE_LEN) {
        // Not a packet: step over the field if its size can be read, else stop.
        problems.push({
          where: pos,
          unit: 'offset',
          reason: `not a trace packet (field ${head.field}, wire type ${head.wire})`,
          excerpt: '',
        });
        if (head.wire !== WIRE_LEN) {
          head.skip();
          pos = winStart + head.pos;
          continue;
        }
      }
      len = head.varint();
    } catch (e) {
      if (!(e instanceof ProtoError)) throw e;
      problems.push({
        where: pos,
        unit: 'offset',
        reason: `damaged packet header: ${e.message}; the rest of the file is not read`,
        excerpt: '',
      });
      break;
    }
    const body = winStart + head.pos;
    if (len > MAX_PACKET_BYTES || body + len > src.size) {
      problems.push({
        where: pos,
        unit: 'offset',
        reason:
          body + len > src.size
            ? `packet of ${len} bytes runs past the end of the file (truncated)`
            : `packet of ${len} bytes is larger than ${MAX_PACKET_BYTES} (damaged)`,
        excerpt: '',
      });
      break;
    }
    await ensure(body, len);
    if (head.field === F.trace.packet) {
      try {
        ix.packet(win, body - winStart, body - winStart + len, pos, -1, winStart);
      } catch (e) {
        if (!(e instanceof ProtoError)) throw e;
        problems.push({ where: pos, unit: 'offset', reason: `damaged packet: ${e.message}`, excerpt: '' });
      }
    }
    pos = body + len;
    if (onProgress && ++tick % 256 === 0) onProgress(pos);
  }
  return ix.index;
}
