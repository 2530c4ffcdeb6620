/**
 * Perfetto trace (a TracePacket stream, as tracebox / perfetto write it)
 * -> DecodedEvent stream: the ftrace data of the trace, as the trace.dat
 * decoder gives it, so the model, detectors and views need nothing new.
 *
 * Two passes over the file (trace_index.ts): the first keeps names,
 * symbols, clocks and statistics and the place of every ftrace bundle; the
 * second merges the bundles of every stream (packet sequence x CPU) by
 * timestamp, ties to the lower CPU, as trace_processor sorts them.
 *
 * What follows trace_processor (so counts, thread names and sched slices
 * agree with it on the same file):
 * - timestamps are the boot clock (ftrace's clock when traced_probes set
 *   it up; bundles recorded on another ftrace clock are fitted to boot
 *   time with the readings they carry); a trace whose clock snapshots name
 *   another primary clock is shifted to it;
 * - events before the service's `tracing_started` are dropped (left-overs
 *   in the kernel's buffer), unless the config preserved the ftrace buffer:
 *   counted and reported as skipped;
 * - compact_sched: a CPU's first compact sched_switch has no previous task
 *   and is dropped, as are compact sched_wakings before it (their waker is
 *   the task running on the CPU): counted and reported;
 * - symbol fields resolve through the kernel symbols the trace interned.
 * Everything not decoded (typed events the protos here do not declare,
 * packets of other kinds, damage) is counted and reported via skipped().
 */
import {
  DecodeError,
  type DecodedEvent,
  type DirectRows,
  isDirectRowSink,
  isRawRecordSink,
  type PerfettoFieldSpec,
  type RawRecords,
  type EventFields,
  type EventSink,
  type FieldValue,
  type ProgressFn,
  type SkippedInput,
  setField,
} from '../decoded_event.ts';
import { FileSource } from '../trace_dat/file_source.ts';
import { TraceDatFormatError } from '../trace_dat/byte_cursor.ts';
import { BundleEvents, COMPACT_SWITCH, COMPACT_WAKING, frameBundle } from './bundle_events.ts';
import { compileFieldReader, readFields, readsSymbols, type FieldReader, type SymbolTable } from './event_fields.ts';
import { gfpTableFits, printTaskState } from './kernel_values.ts';
import { BUILTIN_CLOCK, F, FIRST_GENERIC_EVENT_ID, TYPED_EVENTS, type EventFieldSpec } from './perfetto_schema.ts';

/** An event kind's fields by field number. */
type TypedFields = readonly (EventFieldSpec | undefined)[];
import { ProtoError, ProtoReader, utf8Text, WIRE_LEN, WIRE_VARINT } from './proto_reader.ts';
import { makePlan, writeFields, type DirectPlan } from './raw_fields.ts';
import {
  indexTrace,
  inflateBlob,
  MAX_INFLATED_BYTES,
  type BundleRef,
  type GenericEventSpec,
  type TraceIndex,
} from './trace_index.ts';

export interface DecodePerfettoOptions {
  fileLabel: string;
  onProgress?: ProgressFn;
  /** The file is the decompressed copy of `fileLabel` (a .pftrace.gz): offsets are in the decompressed data. */
  decompressed?: boolean;
}

/** What the decode found besides events (for tests and the CLI's info). */
export interface PerfettoDecodeSummary {
  events: number;
  droppedBeforeTracingStart: number;
  compactSwitchSkipped: number;
  compactWakingSkipped: number;
  notDecoded: number;
  outOfOrder: number;
}

interface StreamState {
  order: number;
  seq: number;
  cpu: number;
  refs: BundleRef[];
  next: number;
  ev: BundleEvents;
  i: number;
  ref: BundleRef | null;
  syms: SymbolTable;
  lastTs: number;
  /**
   * The stream's read-ahead window of the file: a new view per read, into
   * winStore when it fits. Overwriting is safe because a stream reads its next
   * window only once its current bundle's events are all out (a record batch
   * copies a bundle's bytes as its records are added), and a new view is a new
   * object to the identity checks on bundles (record_batch.ts page slots).
   */
  win: Uint8Array;
  winStart: number;
  winStore: Buffer | null;
  /** The event kinds of the stream's sequence, as kindOf found them (shared by its CPUs' streams). */
  kinds: Map<number, EventKind | null>;
}

/** One FtraceEvent field number on one sequence: a typed event, or a generic one through its descriptor. */
interface EventKind {
  name: string;
  system: string | null;
  reader: FieldReader;
  /** Straight into the sink's columns, when it takes this kind so (DirectRowSink): the rows and how fields fill them. */
  rows: DirectRows | null;
  plan: DirectPlan | null;
  /** Its format id when the sink takes its events as raw records (RawRecordSink, decoded on another thread), else -1. */
  raw: number;
  /** Its fields name tasks (noteNames). */
  namesTasks: boolean;
}

const MAX_REPORTS_PER_KIND = 20;
/** compact sched_switch prev_state values below this are printed once into an array (see taskState). */
const SMALL_TASK_STATES = 4096;
/** Largest read-ahead window of a stream in pass 2. */
const READ_WINDOW_BYTES = 4 << 20;

export async function decodePerfetto(
  path: string,
  sink: EventSink,
  opts: DecodePerfettoOptions,
): Promise<PerfettoDecodeSummary> {
  const label = opts.fileLabel;
  const note = opts.decompressed ? ' (offset in the decompressed trace)' : '';
  let src: FileSource;
  try {
    src = await FileSource.open(path);
  } catch (e) {
    throw new DecodeError(label, 0, 'offset', `cannot open: ${(e as Error).message}`);
  }
  try {
    let index: TraceIndex;
    try {
      index = await indexTrace(src, (done) => opts.onProgress?.(done / 2, src.size));
    } catch (e) {
      if (e instanceof TraceDatFormatError) throw new DecodeError(label, e.where, 'offset', e.message + note);
      throw e;
    }
    if (index.streams.length === 0) {
      const first = index.problems[0];
      const kinds = [...index.unread.entries()].map(([k, n]) => `${k} x${n}`).join(', ');
      throw new DecodeError(
        label,
        first?.where ?? 0,
        'offset',
        index.packets === 0
          ? `not a Perfetto trace: no trace packet could be read${first ? ` (${first.reason})` : ''}` + note
          : `Perfetto trace without ftrace data (${index.packets} packets${kinds ? `: ${kinds}` : ''}); stallscope reads the linux.ftrace data source`,
      );
    }
    return await decodeEvents(src, index, sink, opts, note);
  } finally {
    await src.close();
  }
}

async function decodeEvents(
  src: FileSource,
  index: TraceIndex,
  sink: EventSink,
  opts: DecodePerfettoOptions,
  note: string,
): Promise<PerfettoDecodeSummary> {
  const skip = (p: SkippedInput) => sink.skipped(note ? { ...p, reason: p.reason + note } : p);
  const summary: PerfettoDecodeSummary = {
    events: 0,
    droppedBeforeTracingStart: 0,
    compactSwitchSkipped: 0,
    compactWakingSkipped: 0,
    notDecoded: 0,
    outOfOrder: 0,
  };

  // Trace time: boot time, or the primary clock the snapshots name.
  let clockShift = 0;
  const meta: Record<string, string> = { ...index.systemInfo };
  if (index.primaryClock !== BUILTIN_CLOCK.BOOTTIME) {
    const snap = index.clockSnapshots.find((s) => s.has(BUILTIN_CLOCK.BOOTTIME) && s.has(index.primaryClock));
    if (snap) clockShift = snap.get(index.primaryClock)! - snap.get(BUILTIN_CLOCK.BOOTTIME)!;
    meta.clock_note = snap
      ? `boot time shifted by ${clockShift} ns to the primary trace clock ${index.primaryClock}`
      : `primary trace clock ${index.primaryClock} not in any clock snapshot: boot time kept`;
  }
  meta.clock =
    index.primaryClock === BUILTIN_CLOCK.BOOTTIME || clockShift === 0 ? 'boot' : `clock ${index.primaryClock}`;
  meta.trace_clock = meta.clock;
  const dropBefore =
    !index.preserveFtraceBuffer && index.tracingStartedTs !== null ? index.tracingStartedTs : -Infinity;
  const minTs = Math.max(
    Number.isNaN(index.minTs) ? 0 : index.minTs,
    dropBefore === -Infinity ? -Infinity : dropBefore,
  );
  const base = Math.floor(minTs + clockShift);
  const tsBaseNs = BigInt(base);
  const cpus = new Set(index.streams.map((s) => s.cpu));
  const maxCpu = Math.max(...cpus);
  const gfpKnown = gfpTableFits(index.kernelRelease);
  if (!gfpKnown)
    meta.gfp_flags = `kept as numbers: GFP bit names are known for 6.3+ kernels, this is ${index.kernelRelease}`;
  meta.perfetto_streams = String(index.streams.length);
  meta.instances = [...new Set(index.instances)].join(',') || '(top)';
  meta.kernel_symbols = String([...index.symbols.values()].reduce((a, m) => a + m.size, 0));
  // The events the config enabled, as trace.dat's formats list them ('group:name'), so that an
  // enabled event that never fired (no mm_vmscan_write_folio without swap) is "none happened",
  // not "not traced". A group wildcard ('vmscan/*', how Perfetto's own configs enable reclaim)
  // is kept as 'vmscan:*', every event of the group; a bare name ('sched_switch') as itself; an
  // event the recorder could not enable or did not find as '!group:name' (server/findings/
  // coverage.ts reads them). A config entry of another form: no list, the events seen stand
  // for the enabled ones.
  const listed = configEventList(index.configEvents, index.failedEvents);
  if (listed !== null) meta.events = listed;
  if (index.blobs.length > 0) meta.compressed_packets = String(index.blobs.length);
  sink.header({
    format: 'perfetto',
    formatVersion: null,
    cpus: index.systemInfo.cpu_count ? Number(index.systemInfo.cpu_count) : maxCpu + 1,
    tsBaseNs,
    meta,
  });

  // Names the recorder read from /proc (ProcessTree) are the threads' names, as in
  // trace_processor, which also calls the idle task (tid 0) `swapper`.
  if (sink.threadName) {
    sink.threadName(0, 'swapper', null);
    const tids = new Set([...index.threadNames.keys(), ...index.threadTgids.keys()]);
    for (const tid of tids)
      if (tid !== 0) sink.threadName(tid, index.threadNames.get(tid) ?? null, index.threadTgids.get(tid) ?? null);
  }
  for (const p of index.problems) skip(p);
  if (index.droppedPacketNotices > 0) {
    skip({
      where: 0,
      unit: 'offset',
      reason: `${index.droppedPacketNotices} packets say the packets before them on their sequence were lost (Perfetto buffer overrun or reassembly gap)`,
      excerpt: '',
    });
  }
  for (const [kind, n] of index.unread) {
    skip({
      where: 0,
      unit: 'offset',
      reason: `${n} ${kind} packets not read (stallscope reads the ftrace data, process names, clocks and statistics)`,
      excerpt: '',
    });
  }
  // Per-CPU ring buffer overruns over the recording (FtraceStats at start and end).
  for (const end of index.ftraceStatsEnd) {
    const start = index.ftraceStatsStart.find((s) => s.cpu === end.cpu);
    const lost = end.overrun - (start?.overrun ?? 0) + (end.droppedEvents - (start?.droppedEvents ?? 0));
    if (lost > 0) sink.lostEvents(end.cpu, lost, index.ftraceStatsWhere);
    meta[`cpu${end.cpu}_overrun`] = String(end.overrun - (start?.overrun ?? 0));
  }

  // Names: ProcessTree first, then what the events say as they come.
  const comms = new Map<number, string>(index.threadNames);
  const tgids = new Map<number, number>(index.threadTgids);
  const commOf = (pid: number): string | null => (pid === 0 ? '<idle>' : (comms.get(pid) ?? null));

  const streams: StreamState[] = index.streams.map((s, order) => ({
    order,
    seq: s.seq,
    cpu: s.cpu,
    refs: s.bundles,
    next: 0,
    ev: new BundleEvents(),
    i: 0,
    ref: null,
    syms: null,
    lastTs: -Infinity,
    win: new Uint8Array(0),
    winStart: 0,
    winStore: null,
    kinds: new Map(),
  }));
  // Ties between streams go to the lower CPU, then the earlier stream.
  streams.sort((a, b) => a.cpu - b.cpu || a.order - b.order);
  streams.forEach((s, k) => (s.order = k));

  const blobCache = new Map<number, Uint8Array>();
  const totalBytes = index.streams.reduce((a, s) => a + s.bundles.reduce((b, r) => b + r.len, 0), 0);
  let bytesDone = 0;
  const unknownTyped = new Map<number, number>();
  const unknownField = { n: 0 };
  let malformed = 0;
  let bundleErrors = 0;
  let compactDamaged = 0;

  // About 64 MiB of windows in all, 256 KiB to 4 MiB each.
  const windowBytes = Math.max(256 << 10, Math.min(READ_WINDOW_BYTES, Math.floor((64 << 20) / index.streams.length)));
  /** Loads the stream's next bundle with events; false when the stream is done. */
  const load = async (s: StreamState): Promise<boolean> => {
    while (s.next < s.refs.length) {
      const ref = s.refs[s.next++]!;
      let buf: Uint8Array;
      let start: number;
      try {
        if (ref.blob < 0) {
          // Each stream reads ahead through a window of the file (its bundles lie
          // interleaved with other streams' in file order): one read per window,
          // not one per bundle.
          if (ref.off < s.winStart || ref.off + ref.len > s.winStart + s.win.length) {
            s.winStart = ref.off;
            // One buffer per stream, reused: a fresh one per read was ~100 MB of
            // garbage external memory on a 50 MB trace (windows overlap across
            // streams), and V8 answers that with full collections.
            s.winStore ??= Buffer.allocUnsafeSlow(Math.min(windowBytes, src.size));
            s.win = await src.read(
              ref.off,
              Math.min(src.size - ref.off, Math.max(ref.len, windowBytes)),
              'ftrace bundles',
              s.winStore,
            );
          }
          buf = s.win;
          start = ref.off - s.winStart;
        } else {
          let inflated = blobCache.get(ref.blob);
          if (!inflated) {
            const b = index.blobs[ref.blob]!;
            inflated = inflateBlob(b.codec, await src.read(b.fileOffset, b.len, 'compressed packets'));
            // A few inflated blobs (streams interleave within them), at most ~256 MB in all.
            let held = inflated.length;
            for (const v of blobCache.values()) held += v.length;
            while (blobCache.size > 0 && (blobCache.size >= 8 || held > MAX_INFLATED_BYTES)) {
              const oldest = blobCache.keys().next().value!;
              held -= blobCache.get(oldest)!.length;
              blobCache.delete(oldest);
            }
            blobCache.set(ref.blob, inflated);
          }
          buf = inflated;
          start = ref.off;
        }
        frameBundle(buf, start, start + ref.len, ref.clockDelta, s.ev);
      } catch (e) {
        if (!(e instanceof ProtoError) && !(e instanceof TraceDatFormatError)) throw e;
        skip({
          where: ref.where,
          unit: 'offset',
          reason: `cpu ${s.cpu}: damaged ftrace bundle: ${e.message}`,
          excerpt: '',
        });
        continue;
      }
      bytesDone += ref.len;
      malformed += s.ev.malformed;
      bundleErrors += s.ev.errors;
      if (s.ev.compactDamaged) compactDamaged++;
      if (s.ev.lostEvents) sink.lostEvents(s.cpu, null, ref.where);
      s.ref = ref;
      s.syms = index.symbols.get(ref.symbolsKey) ?? null;
      s.i = 0;
      if (s.ev.count > 0) return true;
    }
    return false;
  };

  const active: StreamState[] = [];
  for (const s of streams) if (await load(s)) active.push(s);

  // Per-CPU scheduler state for compact_sched: the task running (prev of the next switch).
  const cpuState = new CpuState();
  const readers = new Map<number | string, FieldReader>();
  const genericReaders = new Map<GenericEventSpec, FieldReader>();
  let progressTick = 0;
  let fieldReader: ProtoReader | null = null;
  // The sink's fast path: rows of typed tables that need only their fields,
  // written column by column without a DecodedEvent (decoded_event.ts DirectRowSink).
  const directSink = isDirectRowSink(sink) ? sink : null;
  const plans = new Map<FieldReader, { rows: DirectRows; plan: DirectPlan } | null>();
  const planOf = (reader: FieldReader, name: string, system: string | null) => {
    let plan = plans.get(reader);
    if (plan === undefined) {
      const rows = directSink?.directRows(name, system) ?? null;
      plan = rows ? { rows, plan: makePlan(reader, rows) } : null;
      plans.set(reader, plan);
    }
    return plan;
  };
  const typedReader = (kind: number, name: string, fields: TypedFields): FieldReader => {
    let reader = readers.get(kind);
    if (!reader) readers.set(kind, (reader = compileFieldReader(name, fields, gfpKnown, true)));
    return reader;
  };
  const genericReader = (spec: GenericEventSpec): FieldReader => {
    let reader = genericReaders.get(spec);
    if (!reader) genericReaders.set(spec, (reader = compileFieldReader(spec.name, spec.fields, gfpKnown, false)));
    return reader;
  };

  // The field worker's share (RawRecordSink, when the sink has one): the kinds
  // whose rows need only their own fields go on as raw records, framed here
  // (time, CPU, task) and their fields read into columns on that thread. Kinds
  // with interned kernel symbols stay here (the tables change mid-trace).
  const rawIdOf = new Map<FieldReader, number>();
  let raw: RawRecords | null = null;
  if (directSink !== null && isRawRecordSink(sink)) {
    const formats: PerfettoFieldSpec['formats'] = [];
    const readerOf: FieldReader[] = [];
    const offer = (name: string, system: string | null, fields: TypedFields, reader: FieldReader, typed: boolean) => {
      if (readsSymbols(name) || planOf(reader, name, system) === null) return;
      readerOf.push(reader);
      formats.push({ id: formats.length, name, system, typed, fields: Array.from(fields, (f) => f ?? null) });
    };
    for (const [kind, typed] of TYPED_EVENTS)
      offer(typed.name, typed.system, typed.fields, typedReader(kind, typed.name, typed.fields), true);
    for (const spec of new Set(index.generic.values()))
      offer(spec.name, spec.system, spec.fields, genericReader(spec), false);
    raw = formats.length > 0 ? sink.rawRecords({ format: 'perfetto', gfpKnown, formats }) : null;
    if (raw !== null) for (const f of formats) if (raw.takes(f.id)) rawIdOf.set(readerOf[f.id]!, f.id);
  }
  /** The page (bundle) raw records were last framed in. */
  let pageBuf: Uint8Array | null = null;
  let pageStart = -1;

  /** What an FtraceEvent field number means on a sequence (null: not decodable), found once per sequence and kind. */
  const kindsBySeq = new Map<number, Map<number, EventKind | null>>();
  const kindOf = (seq: number, kind: number): EventKind | null => {
    const typed = TYPED_EVENTS.get(kind);
    let reader: FieldReader | undefined;
    let name: string;
    let system: string | null;
    if (typed) {
      reader = typedReader(kind, typed.name, typed.fields);
      name = typed.name;
      system = typed.system;
    } else {
      const spec =
        kind >= FIRST_GENERIC_EVENT_ID
          ? (index.generic.get(`${seq}:${kind}`) ?? index.generic.get(String(kind)))
          : undefined;
      if (!spec) return null;
      reader = genericReader(spec);
      name = spec.name;
      system = spec.system;
    }
    const direct = directSink !== null ? planOf(reader, name, system) : null;
    return {
      name,
      system,
      reader,
      rows: direct?.rows ?? null,
      plan: direct?.plan ?? null,
      raw: rawIdOf.get(reader) ?? -1,
      namesTasks: NAMING_EVENTS.has(name),
    };
  };
  for (const s of streams) {
    let kinds = kindsBySeq.get(s.seq);
    if (!kinds) kindsBySeq.set(s.seq, (kinds = new Map()));
    s.kinds = kinds;
  }

  // compact_sched events straight into their tables' columns (DirectRows), as typed events go:
  // per column, the compact field that fills it (-1: none, absent).
  const compactRows = (name: string, fields: readonly string[]) => {
    const rows = directSink?.directRows(name, 'sched') ?? null;
    if (rows === null) return null;
    const pick = Int32Array.from(rows.fields, (f) => f.names.map((n) => fields.indexOf(n)).find((i) => i >= 0) ?? -1);
    const columns = Int32Array.from(rows.fields, (f) => f.column);
    return { rows, pick, columns, values: new Array<FieldValue>(fields.length) };
  };
  type CompactRows = NonNullable<ReturnType<typeof compactRows>>;
  const switchRows = compactRows('sched_switch', [
    'prev_comm',
    'prev_pid',
    'prev_prio',
    'prev_state',
    'next_comm',
    'next_pid',
    'next_prio',
  ]);
  const wakingRows = compactRows('sched_waking', ['comm', 'pid', 'prio', 'target_cpu']);
  const writeCompact = (
    c: CompactRows,
    ts: number,
    cpu: number,
    pid: number,
    comm: string | null,
    flags: number | null,
    where: number,
  ) => {
    const rows = c.rows;
    rows.begin(ts, cpu, pid, comm, flags, null, where);
    for (let i = 0; i < c.pick.length; i++) {
      const p = c.pick[i]!;
      if (p < 0) rows.absent(c.columns[i]!);
      else rows.value(c.columns[i]!, c.values[p]!);
    }
    rows.end();
    summary.events++;
  };
  // prev_state repeats: printed once per value. The states are a few small
  // bit sets: an array lookup for those, a Map for the rest.
  const smallTaskStates: (string | undefined)[] = new Array<string | undefined>(SMALL_TASK_STATES).fill(undefined);
  const taskStates = new Map<number | bigint, string>();
  const taskState = (v: number | bigint): string => {
    if (typeof v === 'number' && v >= 0 && v < SMALL_TASK_STATES) return (smallTaskStates[v] ??= printTaskState(v));
    let t = taskStates.get(v);
    if (t === undefined) {
      t = printTaskState(v);
      if (taskStates.size < 4096) taskStates.set(v, t);
    }
    return t;
  };

  const emitOne = (s: StreamState, k: number): void => {
    const ev = s.ev;
    const rawTs = ev.ts[k]!;
    if (rawTs < dropBefore) {
      summary.droppedBeforeTracingStart++;
      return;
    }
    if (rawTs < s.lastTs) summary.outOfOrder++;
    s.lastTs = rawTs;
    const ts = rawTs + clockShift - base;
    const cpu = s.cpu;
    const kind = ev.kind[k]!;
    const where = s.ref!.where;
    let name: string;
    let system: string | null;
    let fields: EventFields | null;
    let pid: number;
    let flags: number | null = null;
    if (kind === COMPACT_SWITCH) {
      const j = ev.a[k]!;
      const nextPid = ev.switchNextPid[j]!;
      const nextComm = ev.switchNextComm[j]!;
      const nextPrio = ev.switchNextPrio[j]!;
      const prev = cpuState.get(cpu);
      const prevPrio = prev >= 0 ? cpuState.prio[cpu]! : 0;
      cpuState.set(cpu, nextPid, nextPrio);
      setComm(comms, nextPid, nextComm);
      if (prev < 0) {
        summary.compactSwitchSkipped++;
        return;
      }
      pid = prev;
      // The previous task's name, once for the row's task and its prev_comm.
      const prevComm = commOf(prev);
      if (switchRows !== null) {
        const v = switchRows.values;
        v[0] = prevComm ?? '';
        v[1] = prev;
        v[2] = prevPrio;
        v[3] = taskState(ev.switchPrevState[j]!);
        v[4] = nextComm;
        v[5] = nextPid;
        v[6] = nextPrio;
        writeCompact(switchRows, ts, cpu, pid, prevComm, null, where);
        return;
      }
      name = 'sched_switch';
      system = 'sched';
      fields = {
        prev_comm: prevComm ?? '',
        prev_pid: prev,
        prev_prio: prevPrio,
        prev_state: taskState(ev.switchPrevState[j]!),
        next_comm: nextComm,
        next_pid: nextPid,
        next_prio: nextPrio,
      };
    } else if (kind === COMPACT_WAKING) {
      const j = ev.a[k]!;
      const waker = cpuState.get(cpu);
      const wakee = ev.wakingPid[j]!;
      setComm(comms, wakee, ev.wakingComm[j]!);
      if (waker < 0) {
        summary.compactWakingSkipped++;
        return;
      }
      pid = waker;
      flags = ev.wakingFlags[j]! >= 0 ? ev.wakingFlags[j]! : null;
      if (wakingRows !== null) {
        const v = wakingRows.values;
        v[0] = ev.wakingComm[j]!;
        v[1] = wakee;
        v[2] = ev.wakingPrio[j]!;
        v[3] = ev.wakingTargetCpu[j]!;
        writeCompact(wakingRows, ts, cpu, pid, commOf(pid), flags, where);
        return;
      }
      name = 'sched_waking';
      system = 'sched';
      fields = { comm: ev.wakingComm[j]!, pid: wakee, prio: ev.wakingPrio[j]!, target_cpu: ev.wakingTargetCpu[j]! };
    } else {
      pid = ev.pid[k]!;
      flags = ev.flags[k]! >= 0 ? ev.flags[k]! : null;
      const a = ev.a[k]!;
      const b = ev.b[k]!;
      if (kind === F.event.generic) {
        const g = readLegacyGeneric(ev.buf, a, b);
        name = g.name;
        system = null;
        fields = g.fields;
        if (NAMING_EVENTS.has(name)) noteNames(name, fields, comms, tgids, cpuState, cpu);
      } else {
        let known = s.kinds.get(kind);
        if (known === undefined) s.kinds.set(kind, (known = kindOf(s.seq, kind)));
        if (known === null) {
          unknownTyped.set(kind, (unknownTyped.get(kind) ?? 0) + 1);
          summary.notDecoded++;
          return;
        }
        const reader = known.reader;
        name = known.name;
        system = known.system;
        if (known.raw >= 0) {
          if (ev.buf !== pageBuf || ev.start !== pageStart) {
            pageBuf = ev.buf;
            pageStart = ev.start;
            raw!.page(ev.buf, ev.start, ev.end);
          }
          raw!.record(known.raw, ts, cpu, pid, commOf(pid), flags, null, where, a, b - a);
          summary.events++;
          return;
        }
        if (fieldReader === null || fieldReader.buf !== ev.buf) fieldReader = new ProtoReader(ev.buf, a, b);
        const plan = known.plan;
        if (plan !== null) {
          const rows = known.rows!;
          rows.begin(ts, cpu, pid, commOf(pid), flags, null, where);
          writeFields(plan, reader, rows, fieldReader.reset(a, b), s.syms, unknownField);
          rows.end();
          summary.events++;
          return;
        }
        fields = readFields(reader, fieldReader.reset(a, b), s.syms, unknownField);
        if (known.namesTasks) noteNames(name, fields, comms, tgids, cpuState, cpu);
      }
    }
    const event: DecodedEvent = {
      ts,
      cpu,
      pid,
      comm: commOf(pid),
      tgid: tgids.get(pid) ?? null,
      name,
      system,
      flags,
      preemptCount: null,
      fields,
      raw: null,
      where,
    };
    sink.event(event);
    summary.events++;
  };

  // Merge by (timestamp, order) with a binary heap of the streams: a stream emits a
  // run of events until another stream's head is earlier (many CPUs / instances
  // interleave finely, so a linear scan per run would cost O(streams) per event).
  const heap = active;
  const less = (x: StreamState, y: StreamState) => {
    const a = x.ev.ts[x.i]!;
    const b = y.ev.ts[y.i]!;
    return a < b || (a === b && x.order < y.order);
  };
  const siftDown = (i: number) => {
    const n = heap.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && less(heap[l]!, heap[m]!)) m = l;
      if (r < n && less(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(i);
  while (heap.length > 0) {
    const s = heap[0]!;
    // The next stream's head: the smaller child of the root.
    let second: StreamState | null = heap.length > 1 ? heap[1]! : null;
    if (heap.length > 2 && less(heap[2]!, second!)) second = heap[2]!;
    const secondTs = second ? second.ev.ts[second.i]! : Infinity;
    const secondOrder = second ? second.order : Infinity;
    let done = false;
    for (;;) {
      const ev = s.ev;
      let k = s.i;
      for (; k < ev.count; k++) {
        const t = ev.ts[k]!;
        if (t > secondTs || (t === secondTs && s.order > secondOrder)) break;
        try {
          emitOne(s, k);
        } catch (e) {
          if (!(e instanceof ProtoError)) throw e;
          skip({
            where: s.ref!.where,
            unit: 'offset',
            reason: `cpu ${s.cpu}: damaged ftrace event: ${e.message}`,
            excerpt: '',
          });
        }
      }
      s.i = k;
      if (k < ev.count) break;
      if (++progressTick % 16 === 0)
        opts.onProgress?.(src.size / 2 + (bytesDone / Math.max(1, totalBytes)) * (src.size / 2), src.size);
      if (!(await load(s))) {
        done = true;
        break;
      }
      if (s.ev.ts[0]! > secondTs) break;
    }
    if (done) {
      const last = heap.pop()!;
      if (heap.length > 0 && last !== s) heap[0] = last;
    }
    if (heap.length > 0) siftDown(0);
  }

  // Reports: what was not decoded, by kind.
  if (summary.droppedBeforeTracingStart > 0) {
    skip({
      where: 0,
      unit: 'offset',
      reason: `${summary.droppedBeforeTracingStart} ftrace events from before tracing started dropped (left in the kernel's buffer by an earlier session; trace_processor drops them too)`,
      excerpt: '',
    });
  }
  if (summary.compactSwitchSkipped > 0) {
    skip({
      where: 0,
      unit: 'offset',
      reason: `${summary.compactSwitchSkipped} compact sched_switch events dropped: the first on each CPU has no previous task (as trace_processor)`,
      excerpt: '',
    });
  }
  if (summary.compactWakingSkipped > 0) {
    skip({
      where: 0,
      unit: 'offset',
      reason: `${summary.compactWakingSkipped} compact sched_waking events dropped: no sched_switch on their CPU before them names the waker (as trace_processor)`,
      excerpt: '',
    });
  }
  let reported = 0;
  for (const [id, n] of unknownTyped) {
    if (reported++ >= MAX_REPORTS_PER_KIND) break;
    skip({
      where: 0,
      unit: 'offset',
      reason:
        id >= FIRST_GENERIC_EVENT_ID
          ? `${n} generic ftrace events (field ${id}) without their event descriptor: not decoded`
          : `${n} ftrace events of FtraceEvent field ${id}: a typed event stallscope's protos do not declare, not decoded`,
      excerpt: '',
    });
  }
  if (unknownField.n > 0)
    skip({
      where: 0,
      unit: 'offset',
      reason: `${unknownField.n} event fields of unknown number or wire type skipped`,
      excerpt: '',
    });
  if (malformed > 0)
    skip({
      where: 0,
      unit: 'offset',
      reason: `${malformed} ftrace events without a timestamp or event skipped`,
      excerpt: '',
    });
  if (bundleErrors > 0)
    skip({
      where: 0,
      unit: 'offset',
      reason: `the recorder reported ${bundleErrors} errors reading the kernel's ftrace pages (FtraceEventBundle.error)`,
      excerpt: '',
    });
  if (compactDamaged > 0)
    skip({
      where: 0,
      unit: 'offset',
      reason: `${compactDamaged} bundles' compact_sched arrays did not line up: events past the shortest array dropped`,
      excerpt: '',
    });
  if (summary.outOfOrder > 0) meta.out_of_order_events = String(summary.outOfOrder);
  opts.onProgress?.(src.size, src.size);
  return summary;
}

/** Events whose fields name tasks (noteNames): checked once per event before the switch. */
const NAMING_EVENTS = new Set([
  'sched_switch',
  'task_newtask',
  'task_rename',
  'sched_process_fork',
  'sched_process_exit',
]);

/** Thread names and tgids events reveal, and the running task per CPU (for compact wakings). */
function noteNames(
  name: string,
  f: EventFields,
  comms: Map<number, string>,
  tgids: Map<number, number>,
  cpuState: CpuState,
  cpu: number,
): void {
  switch (name) {
    case 'sched_switch': {
      const pp = f.prev_pid;
      const np = f.next_pid;
      if (typeof pp === 'number' && typeof f.prev_comm === 'string') setComm(comms, pp, f.prev_comm);
      if (typeof np === 'number') {
        if (typeof f.next_comm === 'string') setComm(comms, np, f.next_comm);
        cpuState.set(cpu, np, typeof f.next_prio === 'number' ? f.next_prio : 0);
      }
      return;
    }
    case 'task_newtask':
      if (typeof f.pid === 'number' && typeof f.comm === 'string') setComm(comms, f.pid, f.comm);
      return;
    case 'task_rename':
      if (typeof f.pid === 'number' && typeof f.newcomm === 'string') setComm(comms, f.pid, f.newcomm);
      return;
    case 'sched_process_fork':
      if (typeof f.child_pid === 'number' && typeof f.child_comm === 'string')
        setComm(comms, f.child_pid, f.child_comm);
      return;
    case 'sched_process_exit':
      if (typeof f.pid === 'number' && typeof f.tgid === 'number' && f.tgid > 0) tgids.set(f.pid, f.tgid);
      return;
    default:
  }
}

function setComm(comms: Map<number, string>, pid: number, comm: string): void {
  if (comms.get(pid) !== comm) comms.set(pid, comm);
}

/** The task running on each CPU, as the last sched_switch left it (pid -1: none seen yet). */
class CpuState {
  pid = new Int32Array(64).fill(-1);
  prio = new Int32Array(64);
  get(cpu: number): number {
    return cpu < this.pid.length ? this.pid[cpu]! : -1;
  }
  set(cpu: number, pid: number, prio: number): void {
    if (cpu >= this.pid.length) {
      const n = Math.max(cpu + 1, this.pid.length * 2);
      const p = new Int32Array(n).fill(-1);
      p.set(this.pid);
      const q = new Int32Array(n);
      q.set(this.prio);
      this.pid = p;
      this.prio = q;
    }
    this.pid[cpu] = pid;
    this.prio[cpu] = prio;
  }
}

/** A GenericFtraceEvent (Perfetto before v50): its name and fields as recorded. */
function readLegacyGeneric(buf: Uint8Array, start: number, end: number): { name: string; fields: EventFields } {
  const r = new ProtoReader(buf, start, end);
  let name = '';
  const fields: EventFields = {};
  while (r.next()) {
    if (r.field === F.generic.eventName && r.wire === WIRE_LEN) {
      const s = r.bytes();
      name = utf8Text(buf, s, r.pos);
    } else if (r.field === F.generic.field && r.wire === WIRE_LEN) {
      const s = r.bytes();
      const q = new ProtoReader(buf, s, r.pos);
      let key = '';
      let value: FieldValue | null = null;
      while (q.next()) {
        if (q.field === F.generic.name && q.wire === WIRE_LEN) {
          const a = q.bytes();
          key = utf8Text(buf, a, q.pos);
        } else if (q.field === F.generic.strValue && q.wire === WIRE_LEN) {
          const a = q.bytes();
          value = utf8Text(buf, a, q.pos);
        } else if (q.field === F.generic.intValue && q.wire === WIRE_VARINT) {
          const v = q.varint64();
          value = v >= 1n << 63n ? Number(v - (1n << 64n)) : v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
        } else if (q.field === F.generic.uintValue && q.wire === WIRE_VARINT) {
          const v = q.varint64();
          value = v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
        } else q.skip();
      }
      if (key !== '' && value !== null) setField(fields, key, value);
    } else r.skip();
  }
  return { name, fields };
}

/** meta.events for a Perfetto config's ftrace_events (see decodePerfetto), or null when it cannot say. */
export function configEventList(configEvents: readonly string[], failedEvents: readonly string[]): string | null {
  if (configEvents.length === 0) return null;
  const failed = new Set(failedEvents.map((e) => e.replace('/', ':')));
  const entries = new Set<string>();
  for (const e of configEvents) {
    if (/^([\w-]+|\*)\/([\w-]+|\*)$/.test(e)) {
      const name = e.replace('/', ':');
      if (!failed.has(name)) entries.add(name);
    } else if (/^[\w-]+$/.test(e)) {
      entries.add(e);
    } else return null;
  }
  // failed events inside a wildcard's group stay out of it
  for (const f of failed) if (!entries.has(f)) entries.add(`!${f}`);
  return [...entries].sort().join(',');
}
