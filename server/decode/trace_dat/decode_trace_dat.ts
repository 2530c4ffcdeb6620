/**
 * trace-cmd trace.dat (versions 6 and 7) -> DecodedEvent stream.
 *
 * Reads the metadata (read_file_header.ts), compiles a field reader per event
 * format (event_decoder.ts), then merges the per-CPU ring-buffer streams by
 * timestamp (ties: lower CPU first), the order `trace-cmd report` prints, so
 * event ids line up with the report text. Memory stays bounded: each CPU
 * holds one block (a few pages or one decompressed chunk).
 */
import {
  DecodeError,
  DecompressionBombError,
  type DecodedEvent,
  type DirectRows,
  isDirectRowSink,
  isRawRecordSink,
  isShapeRowSink,
  type FramedShapeRows,
  type EventSink,
  type ProgressFn,
  type RawFieldSpec,
  type RawRecords,
  type SkippedInput,
} from '../decoded_event.ts';
import { hexExcerpt, TraceDatFormatError } from './byte_cursor.ts';
import { CpuStream, NATIVE_BATCH_BYTES } from './cpu_stream.ts';
import { defaultDecompressBudget, TraceDatBombError, type DecompressBudget } from './decompress.ts';
import { defaultBombGuard } from '../decompress.ts';
import { compileEvent, makeHelpers, type CompiledEvent } from './event_decoder.ts';
import { FormatParseError, parseEventFormat, parseHeaderPage, type EventFormat } from './event_format.ts';
import { FileSource } from './file_source.ts';
import { readsAsPrinted } from '../ftrace_text/fields/index.ts';
import { PrintkFormats } from './bprint.ts';
import { Kallsyms } from './kallsyms.ts';
import { readTraceDatHeader, type TraceDatInfo } from './read_file_header.ts';
import { TscToNs } from './tsc_to_ns.ts';

export interface DecodeTraceDatOptions {
  fileLabel: string;
  onProgress?: ProgressFn;
  /**
   * The file is the decompressed copy of `fileLabel` (a .dat.gz, ...): its
   * offsets are not the named file's, and every error and skipped input says so.
   */
  decompressed?: boolean;
}

/** What an offset's reason says when the offsets are in the decompressed data. */
function offsetNote(opts: DecodeTraceDatOptions): string {
  return opts.decompressed ? ' (offset in the decompressed trace.dat)' : '';
}

/** RecordMerge.run's order of "no second stream": above any stream's order, and a V8 small integer. */
const NO_ORDER = 0x3fffffff;

/** Unknown-id records reported individually before switching to a summary. */
const MAX_UNKNOWN_REPORTS = 100;

export async function decodeTraceDat(path: string, sink: EventSink, opts: DecodeTraceDatOptions): Promise<void> {
  const label = opts.fileLabel;
  let src: FileSource;
  const streams: CpuStream[] = [];
  try {
    src = await FileSource.open(path);
  } catch (e) {
    throw new DecodeError(label, 0, 'offset', `cannot open: ${(e as Error).message}` + offsetNote(opts));
  }
  try {
    // One budget for the file: its compressed sections and every CPU stream's chunks (decompress.ts).
    const budget = defaultDecompressBudget(defaultBombGuard());
    let info: TraceDatInfo;
    try {
      info = await readTraceDatHeader(src, budget);
    } catch (e) {
      if (e instanceof TraceDatBombError)
        throw new DecompressionBombError(label, e.where, 'offset', e.message + offsetNote(opts));
      if (e instanceof TraceDatFormatError)
        throw new DecodeError(label, e.where, 'offset', e.message + offsetNote(opts));
      throw new DecodeError(
        label,
        0,
        'offset',
        `unreadable trace.dat header: ${(e as Error).message}` + offsetNote(opts),
      );
    }
    try {
      await decodeBody(src, info, sink, opts, streams, budget);
    } catch (e) {
      if (e instanceof TraceDatBombError)
        throw new DecompressionBombError(label, e.where, 'offset', e.message + offsetNote(opts));
      throw e;
    }
  } finally {
    for (const s of streams) s.close();
    await src.close();
  }
}

/**
 * pid -> comm from saved_cmdlines ("<pid> <comm>" lines), plus a bitmap of
 * known pids so the per-sched_switch "is this pid known?" check is one array read.
 */
class CommTable {
  readonly map = new Map<number, string>();
  private readonly known = new Uint8Array(1 << 22); // pid_max on 64-bit kernels

  has(pid: number): boolean {
    return pid >= 0 && pid < this.known.length ? this.known[pid] === 1 : this.map.has(pid);
  }

  set(pid: number, comm: string): void {
    this.map.set(pid, comm);
    if (pid >= 0 && pid < this.known.length) this.known[pid] = 1;
  }

  static parse(text: string | null): CommTable {
    const t = new CommTable();
    if (!text) return t;
    for (const line of text.split('\n')) {
      const sp = line.indexOf(' ');
      if (sp <= 0) continue;
      const pid = Number(line.slice(0, sp));
      if (Number.isInteger(pid)) t.set(pid, line.slice(sp + 1));
    }
    return t;
  }
}

/**
 * The file's data after its header: compile the readers, open one stream per
 * buffer and CPU, send the trace's header, then merge the streams into the sink.
 * Problems found before the header is sent (unparsable formats, truncated CPU
 * data) wait in `deferred` and follow it, so the sink always sees the header first.
 */
async function decodeBody(
  src: FileSource,
  info: TraceDatInfo,
  sink: EventSink,
  opts: DecodeTraceDatOptions,
  streams: CpuStream[],
  budget: DecompressBudget,
): Promise<void> {
  const note = offsetNote(opts);
  const skip = (p: SkippedInput) => sink.skipped(note ? { ...p, reason: p.reason + note } : p);
  const deferred: SkippedInput[] = [...info.problems];
  const flushProblems = () => {
    for (const p of deferred) skip(p);
    deferred.length = 0;
  };

  const readers = compileReaders(info, sink, deferred, opts);
  const common = commonFieldLayout(readers.formats, info.littleEndian, opts);
  const comms = CommTable.parse(info.cmdlines);

  // Lost-event notes found while opening the streams wait for the header.
  let headerSent = false;
  const lostQueue: [number, number | null, number][] = [];
  const lost = (cpu: number, count: number | null, where: number) => {
    if (headerSent) sink.lostEvents(cpu, count, where);
    else lostQueue.push([cpu, count, where]);
  };
  const opened = openCpuStreams(src, info, budget, streams, (p) => deferred.push(p), lost);
  const tsBaseNs = await setTimestampBase(streams, opened.tsc, info.tsOffset);

  sink.header({
    format: 'trace_dat',
    formatVersion: String(info.version),
    cpus: info.cpuCount ?? (opened.maxCpu >= 0 ? opened.maxCpu + 1 : null),
    tsBaseNs,
    meta: traceMeta(info, opened.instanceNames, readers),
  });
  headerSent = true;
  for (const [c, n, w] of lostQueue) sink.lostEvents(c, n, w);
  const raw = rawRecordsFor(sink, info, readers);
  flushProblems();

  // Prime: first page with records of each stream.
  const active: CpuStream[] = [];
  for (const s of streams) {
    if (s.nextPageSync() || (await s.refill())) active.push(s);
  }
  flushProblems();

  const totals = await mergeStreams({
    active,
    streams,
    totalBytes: opened.totalBytes,
    readers,
    common,
    comms,
    raw,
    sink,
    skip,
    deferred,
    flushProblems,
    onProgress: opts.onProgress,
  });
  flushProblems();
  reportTotals(totals, src.size, skip);
}

/** Every format's compiled reader by event id, and the shape rows of the events a shape reader writes. */
interface CompiledReaders {
  formats: EventFormat[];
  /** The format texts as read, for a sink that decodes fields on another thread. */
  formatTexts: RawFieldSpec['formats'];
  /** The readers compiled so far (compileLate fills it as ids first appear). */
  byId: (CompiledEvent<DirectRows> | undefined)[];
  /** Events without a typed table whose fields a shape reader writes straight into the sink's rows. */
  shapeRowsById: (FramedShapeRows | null | undefined)[];
  /**
   * Compiles the reader of event `id` at its first record (undefined: no
   * format has that id, or its reader did not compile, which is then
   * reported through `skip`). A trace.dat saves the format of every event of
   * each enabled system, hundreds to thousands, and holds records of a few:
   * compiling them all before the first record was 30-35 ms of a 4k-event
   * file's main thread (fixtures/memcg_oom.v7.dat, `node --cpu-prof`).
   */
  compileLate: (id: number, skip: (p: SkippedInput) => void) => CompiledEvent<DirectRows> | undefined;
  /** Formats taken raw by the sink's other thread (rawRecordsFor): compiled here to framedOnly(). */
  takenRaw: Uint8Array | null;
  kallsyms: Kallsyms;
}

/**
 * Parses every event format (a format that fails is reported, not fatal);
 * each reader is compiled at its event's first record (compileLate).
 */
function compileReaders(
  info: TraceDatInfo,
  sink: EventSink,
  deferred: SkippedInput[],
  opts: DecodeTraceDatOptions,
): CompiledReaders {
  const formats: EventFormat[] = [];
  const formatTexts: RawFieldSpec['formats'] = [];
  for (const f of info.formats) {
    try {
      const parsed = parseEventFormat(f.text, f.system);
      formats.push(parsed);
      formatTexts.push({ id: parsed.id, name: parsed.name, system: parsed.system, text: f.text });
    } catch (e) {
      if (!(e instanceof FormatParseError)) throw e;
      deferred.push({
        where: f.where,
        unit: 'offset',
        reason: `unparsable ${f.system} event format: ${e.message}`,
        excerpt: f.text.slice(0, 200),
      });
    }
  }
  if (formats.length === 0)
    throw new DecodeError(opts.fileLabel, 0, 'offset', 'no readable event formats' + offsetNote(opts));
  // Parsed on the first symbol lookup: many traces look none up on this thread.
  const kallsyms = Kallsyms.lazy(info.kallsyms);
  const printk = PrintkFormats.parse(info.printk);
  const helpers = makeHelpers(info.littleEndian, kallsyms, printk);
  const byId: (CompiledEvent<DirectRows> | undefined)[] = new Array(65536);
  const directSink = isDirectRowSink(sink) ? sink : null;
  const shapeSink = isShapeRowSink(sink) ? sink : null;
  const shapeRowsById: (FramedShapeRows | null | undefined)[] = new Array(65536);
  // The formats not compiled yet, by id (the last of a duplicated id wins, as when all were compiled in order).
  const pending = new Map<number, EventFormat>();
  for (const f of formats) pending.set(f.id, f);
  const readers: CompiledReaders = {
    formats,
    formatTexts,
    byId,
    shapeRowsById,
    takenRaw: null,
    kallsyms,
    compileLate(id, skip) {
      const f = pending.get(id);
      if (f === undefined) return undefined;
      pending.delete(id);
      try {
        const rows = directSink?.directRows(f.name, f.system) ?? null;
        const ev = compileEvent(
          f,
          helpers,
          info.littleEndian,
          info.longSize,
          rows,
          rows === null && readsAsPrinted(f.name, f.system),
          rows === null && shapeSink !== null ? shapeSink.shapeLead : null,
        );
        if (readers.takenRaw?.[id] === 1) return (byId[id] = framedOnly(ev));
        if (ev.shaped !== null)
          shapeRowsById[id] = shapeSink!.shapeRows(f.name, f.system, ev.shaped.keys, ev.shaped.fixedKinds);
        return (byId[id] = ev);
      } catch (e) {
        skip({
          where: 0,
          unit: 'offset',
          reason: `cannot compile reader for ${f.system}:${f.name}: ${(e as Error).message}`,
          excerpt: '',
        });
        return undefined;
      }
    },
  };
  return readers;
}

/** Byte offsets of the fields every record starts with, and the shortest record that holds them. */
interface CommonFieldLayout {
  littleEndian: boolean;
  typeOff: number;
  flagsOff: number;
  preemptOff: number;
  pidOff: number;
  commonLen: number;
}

/** Common fields are the same for all events; take their layout from the first format that has them. */
function commonFieldLayout(
  formats: EventFormat[],
  littleEndian: boolean,
  opts: DecodeTraceDatOptions,
): CommonFieldLayout {
  const common = formats.find((f) => f.commonFields.length > 0)?.commonFields ?? [];
  const cf = (name: string, dOff: number, dSize: number) => {
    const f = common.find((c) => c.name === name);
    return f ? { off: f.offset, size: f.size } : { off: dOff, size: dSize };
  };
  const typeF = cf('common_type', 0, 2);
  const flagsF = cf('common_flags', 2, 1);
  const preemptF = cf('common_preempt_count', 3, 1);
  const pidF = cf('common_pid', 4, 4);
  if (typeF.size !== 2 || flagsF.size !== 1 || preemptF.size !== 1 || pidF.size !== 4) {
    throw new DecodeError(opts.fileLabel, 0, 'offset', 'unsupported common field layout' + offsetNote(opts));
  }
  return {
    littleEndian,
    typeOff: typeF.off,
    flagsOff: flagsF.off,
    preemptOff: preemptF.off,
    pidOff: pidF.off,
    commonLen: Math.max(typeF.off + 2, flagsF.off + 1, preemptF.off + 1, pidF.off + 4),
  };
}

interface OpenedStreams {
  instanceNames: string[];
  maxCpu: number;
  /** Bytes of CPU data present in the file: what progress counts against. */
  totalBytes: number;
  tsc: TscToNs | null;
}

/** One stream per buffer (top instance first) and CPU with data; CPU data past the end is reported. */
function openCpuStreams(
  src: FileSource,
  info: TraceDatInfo,
  budget: DecompressBudget,
  streams: CpuStream[],
  report: (p: SkippedInput) => void,
  lost: (cpu: number, count: number | null, where: number) => void,
): OpenedStreams {
  const layout = parseHeaderPage(info.headerPage, info.longSize);
  const instanceNames: string[] = [];
  let maxCpu = -1;
  let totalBytes = 0;
  // Bound read-ahead memory on many-CPU traces: about 64 MiB in flight overall.
  const nStreams = info.buffers.reduce((a, b) => a + b.cpus.filter((c) => c.size > 0).length, 0);
  // (Under 1 MiB only past 32 streams, so that one batch per stream fits the decompression budget.)
  const batchBytes = Math.max(
    64 << 10,
    Math.min(NATIVE_BATCH_BYTES, Math.floor((64 << 20) / (2 * Math.max(1, nStreams)))),
  );
  // One converter for all streams: they share the base.
  const tsc = info.tsc2nsec !== null ? new TscToNs(info.tsc2nsec) : null;
  for (const b of info.buffers) {
    if (b.cpus.some((c) => c.size > 0)) instanceNames.push(b.name === '' ? '(top)' : b.name);
    for (const c of b.cpus) {
      if (c.size <= 0) continue;
      if (c.offset >= src.size) {
        report({
          where: src.size,
          unit: 'offset',
          reason: `cpu ${c.cpu} data at offset ${c.offset} lies beyond the end of the file (truncated)`,
          excerpt: '',
        });
        continue;
      }
      maxCpu = Math.max(maxCpu, c.cpu);
      totalBytes += Math.min(c.size, src.size - c.offset);
      streams.push(
        new CpuStream({
          src,
          cpu: c.cpu,
          order: streams.length,
          offset: c.offset,
          size: c.size,
          compressed: b.compressed,
          algorithm: info.compression?.name ?? 'none',
          pageSize: b.pageSize,
          layout,
          littleEndian: info.littleEndian,
          report,
          lost,
          batchBytes,
          tsc,
          budget,
        }),
      );
    }
  }
  return { instanceNames, maxCpu, totalBytes, tsc };
}

/**
 * Base timestamp: the earliest first-page timestamp, so relative ts stay small
 * exact numbers. Returns the base in absolute ns (what the header carries).
 */
async function setTimestampBase(streams: CpuStream[], tsc: TscToNs | null, tsOffset: bigint): Promise<bigint> {
  let baseHi = -1;
  let baseLo = 0;
  for (const s of streams) {
    const t = await s.firstPageTimestamp();
    if (t && (baseHi < 0 || t.hi < baseHi || (t.hi === baseHi && t.lo < baseLo))) {
      baseHi = t.hi;
      baseLo = t.lo;
    }
  }
  if (baseHi < 0) {
    baseHi = 0;
    baseLo = 0;
  }
  for (const s of streams) s.base = { hi: baseHi, lo: baseLo };
  tsc?.setBase({ hi: baseHi, lo: baseLo });
  // trace-cmd adds the OFFSET option after converting cycles to ns.
  return (tsc !== null ? tsc.baseInNs : (BigInt(baseHi) << 32n) | BigInt(baseLo)) + tsOffset;
}

/** The trace's metadata as the model's trace_info rows: machine, clock, recorder, enabled events. */
function traceMeta(info: TraceDatInfo, instanceNames: string[], readers: CompiledReaders): Record<string, string> {
  const meta: Record<string, string> = {
    page_size: String(info.pageSize),
    long_size: String(info.longSize),
    endian: info.littleEndian ? 'little' : 'big',
    compression: info.compression
      ? `${info.compression.name}${info.compression.version ? ' ' + info.compression.version : ''}`
      : 'none',
  };
  if (info.uname) meta.kernel = info.uname;
  const clock = info.traceClock || info.buffers.find((b) => b.clock)?.clock;
  if (clock) {
    meta.clock = clock;
    meta.trace_clock = clock;
  }
  if (info.traceCmdVersion) meta.trace_cmd_version = info.traceCmdVersion;
  if (info.date) meta.date = info.date;
  if (info.cpuCount !== null) meta.cpu_count = String(info.cpuCount);
  if (info.tsOffset !== 0n) meta.ts_offset = info.tsOffset.toString();
  if (info.tsc2nsec) {
    const { mult, shift, offset } = info.tsc2nsec;
    meta.tsc2nsec = `TSC cycles converted to ns: (cycles * ${mult}) >> ${shift} (offset ${offset} not applied, as trace-cmd)`;
  }
  if (instanceNames.length > 0) meta.instances = instanceNames.join(',');
  meta.kallsyms_entries = String(readers.kallsyms.size);
  // The events the recording enabled (trace-cmd saves the format of exactly those): what a
  // detector's @requires is checked against, so "enabled, none happened" is not "not traced".
  meta.events = readers.formats
    .filter((f) => f.system !== 'ftrace')
    .map((f) => `${f.system}:${f.name}`)
    .sort()
    .join(',');
  return meta;
}

/** A sink that decodes fields on another thread takes some formats' records raw: which, by id. */
function rawRecordsFor(
  sink: EventSink,
  info: TraceDatInfo,
  readers: CompiledReaders,
): { records: RawRecords; taken: Uint8Array } | null {
  if (!isRawRecordSink(sink)) return null;
  const records = sink.rawRecords({
    format: 'trace_dat',
    littleEndian: info.littleEndian,
    longSize: info.longSize,
    formats: readers.formatTexts,
    kallsyms: info.kallsyms,
    printk: info.printk,
  });
  if (records === null) return null;
  const taken = new Uint8Array(65536);
  for (const f of readers.formats) if (records.takes(f.id)) taken[f.id] = 1;
  readers.takenRaw = taken;
  return { records, taken };
}

/**
 * What this thread still needs of a format whose records the sink takes raw
 * (MergeCursor.emit: their length against minLen, and the comms they
 * register): not its readers, which the sink's other thread compiles for
 * itself. Why: each compiled event keeps its readers' generated sources and
 * its fields' renderers for the whole decode (~6 KB a format), and a
 * `trace-cmd record -e all` file saves 2,323 formats, most of them taken
 * raw (every event without a typed table).
 */
function framedOnly(ev: CompiledEvent<DirectRows>): CompiledEvent<DirectRows> {
  return {
    id: ev.id,
    name: ev.name,
    system: ev.system,
    minLen: ev.minLen,
    fast: decodedElsewhere,
    safe: decodedElsewhere,
    direct: null,
    commRegistrations: ev.commRegistrations,
    shaped: null,
  };
}

/** The readers of a format taken raw: never called (its fields are decoded on the sink's thread). */
function decodedElsewhere(): never {
  throw new Error('the fields of a record taken raw are decoded on the sink thread');
}

interface MergeInput {
  active: CpuStream[];
  streams: CpuStream[];
  totalBytes: number;
  readers: CompiledReaders;
  common: CommonFieldLayout;
  comms: CommTable;
  raw: { records: RawRecords; taken: Uint8Array } | null;
  sink: EventSink;
  skip: (p: SkippedInput) => void;
  deferred: SkippedInput[];
  flushProblems: () => void;
  onProgress: ProgressFn | undefined;
}

/** Records skipped without a report each, summed for one report at the end. */
interface MergeTotals {
  unknownCount: number;
  shortCount: number;
  progress: () => void;
}

/**
 * The merge: RecordMerge.run() emits records until a stream's block is used
 * up; here that stream is refilled (or dropped at its end), the event loop
 * gets a turn now and then, and progress is reported.
 *
 * Why two functions: V8 compiles the record loop once it is hot and throws
 * the compiled code away when a path it has not run yet is taken. These
 * paths (the first progress report, a stream's end) ran first after the
 * loop was compiled, and each threw away and recompiled the whole merge,
 * the decode's largest function (`node --trace-deopt`, sched_wq.v7: 4-6
 * compiles of ~20 KB). Here they cost a recompile of this small function.
 */
async function mergeStreams(input: MergeInput): Promise<MergeTotals> {
  const { active, streams, totalBytes, deferred, flushProblems, onProgress } = input;
  const merge = new RecordMerge(input);
  let progressTick = 0;
  const bytesDone = () => streams.reduce((a, s) => a + s.bytesDone, 0);
  let lastYield = performance.now();
  for (let s = merge.run(); s !== null; s = merge.run()) {
    // Let the event loop run now and then: read-ahead completions and the zstd
    // pipe's output are only drained while we are not decoding (awaiting a resolved
    // promise does not poll I/O), and a full pipe stalls the decompressor.
    const now = performance.now();
    if (now - lastYield > 0.5) {
      await new Promise<void>((r) => setImmediate(r));
      lastYield = performance.now();
    }
    if (++progressTick % 16 === 0 && onProgress) onProgress(bytesDone(), totalBytes);
    const more = await s.refill();
    if (deferred.length > 0) flushProblems();
    if (!more) active.splice(active.indexOf(s), 1);
  }
  return {
    unknownCount: merge.unknownCount,
    shortCount: merge.shortCount,
    progress: () => onProgress?.(bytesDone(), totalBytes),
  };
}

/**
 * The merge loop: emit runs of records from the stream with the earliest head
 * until another stream's head is earlier (ties: lower order first), handing
 * each record to the sink by the fastest path it offers. run() picks the
 * stream and walks its pages, emit() is the record loop of one page.
 *
 * Why emit() is a method of its own, called per page: V8 compiles a hot
 * function for its next call, and the loop running now separately (OSR).
 * When the record loop ran a whole block per call, each of its compiles
 * (the first, and one after each path first taken later) was made twice;
 * a page is short enough that the next call takes the compiled code.
 */
class RecordMerge {
  unknownCount = 0;
  shortCount = 0;
  // consecutive records mostly come from the same task: skip the map lookup then
  private lastPid = -1;
  private lastComm: string | null = null;
  private readonly active: CpuStream[];
  private readonly sink: EventSink;
  private readonly skip: (p: SkippedInput) => void;
  private readonly byId: CompiledReaders['byId'];
  private readonly shapeRowsById: CompiledReaders['shapeRowsById'];
  private readonly compileLate: CompiledReaders['compileLate'];
  private readonly common: CommonFieldLayout;
  private readonly comms: CommTable;
  private readonly raw: RawRecords | null;
  private readonly takenRaw: Uint8Array;

  constructor(input: MergeInput) {
    this.active = input.active;
    this.sink = input.sink;
    this.skip = input.skip;
    this.byId = input.readers.byId;
    this.shapeRowsById = input.readers.shapeRowsById;
    this.compileLate = input.readers.compileLate;
    this.common = input.common;
    this.comms = input.comms;
    this.raw = input.raw?.records ?? null;
    this.takenRaw = input.raw?.taken ?? new Uint8Array(65536);
  }

  /** Emits records until a stream's block is used up: that stream (refill it), or null when no stream is left. */
  run(): CpuStream | null {
    const active = this.active;
    while (active.length > 0) {
      let best = active[0]!;
      let bestTs = best.recs.ts[best.idx]!;
      let secondTs = Infinity;
      // No second stream: an order above every stream's, a small integer as they are
      // (Infinity here, once one stream was left, threw the compiled loop away).
      let secondOrder = NO_ORDER;
      // `active` is in stream order, so of equal timestamps the one found first has the
      // lower order: strict comparisons keep it (no order comparison a tie alone would run).
      for (let i = 1; i < active.length; i++) {
        const s = active[i]!;
        const t = s.recs.ts[s.idx]!;
        if (t < bestTs) {
          secondTs = bestTs;
          secondOrder = best.order;
          best = s;
          bestTs = t;
        } else if (t < secondTs) {
          secondTs = t;
          secondOrder = s.order;
        }
      }
      const s = best;
      // A record at secondTs still goes first when this stream's order is the lower.
      const winsTie = s.order < secondOrder;
      for (;;) {
        const i = this.emit(s, secondTs, winsTie);
        s.idx = i;
        if (i < s.recs.count) break;
        // Page done: next page in this block, else the caller reads the next block.
        if (!s.nextPageSync()) return s;
        if (s.recs.ts[s.idx]! > secondTs) break;
      }
    }
    return null;
  }

  /** Emits the records of s's current page from s.idx while they precede secondTs; returns where it stopped. */
  private emit(s: CpuStream, secondTs: number, winsTie: boolean): number {
    const { sink, skip, byId, shapeRowsById, comms, raw, takenRaw } = this;
    const { littleEndian: le, typeOff, flagsOff, preemptOff, pidOff, commonLen } = this.common;
    let lastPid = this.lastPid;
    let lastComm = this.lastComm;
    let shapeRows: FramedShapeRows | null | undefined;
    const recs = s.recs;
    const cpu = s.cpu;
    const buf = s.block;
    if (raw !== null) raw.page(buf, s.pageStart, s.pageStart + s.pageSize);
    const tsA = recs.ts;
    const offA = recs.dataOff;
    const lenA = recs.dataLen;
    const count = recs.count;
    let i = s.idx;
    for (; i < count; i++) {
      const ts = tsA[i]!;
      if (ts > secondTs || (ts === secondTs && !winsTie)) break;
      const off = offA[i]!;
      const len = lenA[i]!;
      const where = s.recordWhere(recs.recOff[i]!);
      if (len < commonLen) {
        skip({
          where,
          unit: 'offset',
          reason: `cpu ${cpu}: record of ${len} bytes is too short for an event`,
          excerpt: hexExcerpt(buf, off, 16),
        });
        continue;
      }
      // Byte reads: Buffer.readUInt16LE() validates its argument on each of millions of calls.
      const type = le
        ? buf[off + typeOff]! | (buf[off + typeOff + 1]! << 8)
        : (buf[off + typeOff]! << 8) | buf[off + typeOff + 1]!;
      const ev = byId[type] ?? this.compileLate(type, skip);
      if (ev === undefined) {
        this.unknownCount++;
        if (this.unknownCount <= MAX_UNKNOWN_REPORTS) {
          skip({
            where,
            unit: 'offset',
            reason: `cpu ${cpu}: unknown event id ${type}`,
            excerpt: hexExcerpt(buf, off, 16),
          });
        }
        continue;
      }
      const p = off + pidOff;
      const pid = le
        ? buf[p]! | (buf[p + 1]! << 8) | (buf[p + 2]! << 16) | (buf[p + 3]! << 24)
        : (buf[p]! << 24) | (buf[p + 1]! << 16) | (buf[p + 2]! << 8) | buf[p + 3]!;
      let comm: string | null;
      if (pid === lastPid) comm = lastComm;
      else {
        comm = pid === 0 ? '<idle>' : (comms.map.get(pid) ?? null);
        lastPid = pid;
        lastComm = comm;
      }
      const direct = ev.direct;
      if (takenRaw[type] === 1) {
        // Framed here, fields decoded by the sink's other thread (short records too).
        if (len < ev.minLen) this.shortCount++;
        raw!.record(type, ts, cpu, pid, comm, buf[off + flagsOff]!, buf[off + preemptOff]!, where, off, len);
      } else if (direct !== null && len >= ev.minLen) {
        // The sink's fast path: fields straight from the record into its columns.
        const rows = direct.rows;
        rows.begin(ts, cpu, pid, comm, buf[off + flagsOff]!, buf[off + preemptOff]!, where);
        direct.read(buf, off, len, rows);
        rows.end();
      } else if (len >= ev.minLen && (shapeRows = shapeRowsById[type]) != null) {
        // No typed table: straight into its shape's row, else (a value fitting no shape) as event() would.
        const w = shapeRows.frame(ts, cpu, pid, comm, buf[off + flagsOff]!, buf[off + preemptOff]!, where);
        if (!ev.shaped!.read(buf, off, len, w)) shapeRows.general(ev.fast(buf, off, len));
      } else {
        let fields;
        if (len >= ev.minLen) fields = ev.fast(buf, off, len);
        else {
          this.shortCount++;
          fields = ev.safe(buf, off, len);
        }
        const event: DecodedEvent = {
          ts,
          cpu,
          pid,
          comm,
          tgid: null,
          name: ev.name,
          system: ev.system,
          flags: buf[off + flagsOff]!,
          preemptCount: buf[off + preemptOff]!,
          fields,
          raw: null,
          where,
        };
        sink.event(event);
      }
      if (ev.commRegistrations.length > 0 && registerComms(ev, buf, off, len, le, comms)) lastPid = -1;
    }
    this.lastPid = lastPid;
    this.lastComm = lastComm;
    return i;
  }
}

/** One report each for the records skipped in bulk, then the last progress tick. */
function reportTotals(totals: MergeTotals, fileSize: number, skip: (p: SkippedInput) => void): void {
  if (totals.unknownCount > MAX_UNKNOWN_REPORTS) {
    skip({
      where: fileSize,
      unit: 'offset',
      reason: `${totals.unknownCount - MAX_UNKNOWN_REPORTS} more records with unknown event ids skipped (first ${MAX_UNKNOWN_REPORTS} reported individually)`,
      excerpt: '',
    });
  }
  if (totals.shortCount > 0) {
    skip({
      where: fileSize,
      unit: 'offset',
      reason: `${totals.shortCount} records were shorter than their event format: fields beyond the record end omitted`,
      excerpt: '',
    });
  }
  totals.progress();
}

/**
 * trace-cmd's sched_switch/sched_wakeup plugin registers the comms it prints
 * for pids the saved cmdlines do not know; later events of those pids then
 * show that comm in the report. Do the same so comm matches the report.
 */
function registerComms(
  ev: CompiledEvent,
  buf: Buffer,
  off: number,
  len: number,
  le: boolean,
  comms: CommTable,
): boolean {
  let added = false;
  for (const r of ev.commRegistrations) {
    if (r.pidOff + 4 > len || r.commOff + r.commSize > len) continue;
    const pid = le ? buf.readInt32LE(off + r.pidOff) : buf.readInt32BE(off + r.pidOff);
    if (pid === 0 || comms.has(pid)) continue;
    let e = off + r.commOff;
    const end = e + r.commSize;
    const start = e;
    while (e < end && buf[e] !== 0) e++;
    comms.set(pid, buf.toString('utf8', start, e));
    added = true;
  }
  return added;
}
