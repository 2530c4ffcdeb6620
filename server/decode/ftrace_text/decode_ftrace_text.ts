/**
 * Streaming decoder for ftrace TEXT: the kernel's tracefs `trace` /
 * `trace_pipe` output and `trace-cmd report` output (normal and `-l`
 * latency format). Auto-detects which from the header lines.
 *
 * Emits to an EventSink in file order: header() once before the first event
 * (tsBaseNs = the first event's whole seconds), then events, lostEvents and
 * skipped, interleaved as they occur in the file. Notices found before the
 * first event are held back and emitted right after header().
 *
 * Returns a summary (lines, events, out-of-order lines, ...). Lines whose
 * per-CPU timestamps go backwards are still ingested in file order and
 * counted in the summary (they are not "skipped").
 */
import {
  DecodeError,
  type DecodedEvent,
  type EventFields,
  type EventSink,
  isDirectRowSink,
  isRawTextSink,
  isStackEvent,
  MAX_CPUS,
  MAX_PID,
  type ProgressFn,
  type RawTextRecords,
  type SkippedInput,
  type TraceFormat,
  type TraceHeader,
} from '../decoded_event.ts';
import { stackFields } from './fields/ftrace.ts';
import { fieldsModeValues, hasFieldsModeValues } from './fields/raw_fields.ts';
import { flat, latin1 } from './fields/intern.ts';
import { hasTypedParser, type EventNameInfo } from './fields/index.ts';
import { hasSchedRows, SchedRows } from './fields/sched_rows.ts';
import { excerpt, LineSplitter } from './line_reader.ts';
import { nativeLineFramer, R_END, R_START, REC_WORDS, type NativeLineFramer } from './native/native_framer.ts';
import { readFramedLine } from './native/read_framed_line.ts';
import {
  eventArgs,
  newEventLine,
  parseLatencyLine,
  parseLostLine,
  parseNormalLine,
  parseNormalLineBytes,
  parseVerboseLatencyLine,
  type EventLine,
  type FlagStyle,
} from './parse_event_line.ts';

export interface DecodeFtraceTextOptions {
  /** Names the input in errors and reports. */
  fileLabel: string;
  /** Size of the (decompressed) input if known, for progress. */
  totalBytes?: number | null;
  onProgress?: ProgressFn;
}

export interface FtraceTextSummary {
  format: TraceFormat;
  /** Lines read (including header and comment lines). */
  lines: number;
  /** Events emitted. */
  events: number;
  /** Event lines whose timestamp is earlier than the previous one on the same CPU. */
  outOfOrderLines: number;
  firstOutOfOrderLine: number | null;
  /**
   * Events with a dedicated parser whose argument text did not parse (kept
   * with fields=null). Events handed to a RawTextSink are parsed, and
   * counted, by the sink.
   */
  unparsedEvents: number;
  /** Unparsed events per event name. */
  unparsedByName: Record<string, number>;
  /** Lines reported via sink.skipped(). */
  skippedLines: number;
  /** Lost-event notices reported via sink.lostEvents(). */
  lostEventNotices: number;
  /** Highest CPU number seen on an event line (-1 if none). */
  maxCpu: number;
  /** Buffer (instance) names seen as line prefixes in multi-buffer trace-cmd reports. */
  instances: string[];
  /** Bytes of input consumed. */
  bytes: number;
}

/** Events without an options/fields value after which a file is taken not to have that layout. */
const FIELDS_LAYOUT_DECIDED_AFTER = 256;
/** Report progress about every this many bytes. */
const PROGRESS_EVERY_BYTES = 8 << 20;
/**
 * If this many lines have been skipped before any event line, the input is
 * not a trace (binary or some other text): stop instead of reading it all.
 */
const MAX_SKIPPED_BEFORE_FIRST_EVENT = 10_000;

type Pending =
  { kind: 'lost'; cpu: number; count: number | null; where: number } | { kind: 'skipped'; problem: SkippedInput };

class FtraceTextDecoder {
  private readonly ev: EventLine = newEventLine();
  private format: TraceFormat | null = null;
  private formatVersion: string | null = null;
  private headerCpus: number | null = null;
  private readonly meta: Record<string, string> = {};
  private readonly emptyCpus: number[] = [];
  private headerSent = false;
  private readonly early: Pending[] = [];
  private baseSecs = 0;
  /** Lines in the kernel's verbose latency format were seen: try that grammar first. */
  private verboseLatency = false;
  /** The options/fields layout: null undecided, see fieldsModeArgs. */
  private fieldsLayout: boolean | null = null;
  private fieldsUndecided = 0;
  /** A `trace-cmd report --debug` layout (seen its `[SUBBUFFER START]` lines): see dropDebugSuffix. */
  private debugLayout = false;
  /** Which line grammar matched last: try it first. */
  private latencyMode = false;
  private instancePrefixes = false;
  private readonly instances = new Set<string>();
  private lastTs: number[] = [];
  /** Event held back so continuation lines (` => func` stack frames) can join its raw text. */
  private held: DecodedEvent | null = null;
  /** The sink's taker of events with their text unparsed (RawTextSink), null if none. */
  private raw: RawTextRecords | null = null;
  private readonly rawTakes = new Map<EventNameInfo, boolean>();
  /** The block of lines raw.page() was last given. */
  private rawPage: Uint8Array | null = null;
  /** The last event went to raw.record(): continuation lines go there too. */
  private lastRaw = false;
  /** Per event name, its lines' rows written without a fields object (SchedRows), null if not. */
  private readonly schedRows = new Map<EventNameInfo, SchedRows | null>();
  /**
   * The last event's row was written by SchedRows: continuation lines after
   * it are dropped, as a held event's are when its typed row is written
   * (only the raw text they would join is not stored).
   */
  private lastDirect = false;
  /** Without a raw taker: the block of lines last decoded into a string, and that string. */
  private blockTextOf: Uint8Array | null = null;
  private blockText = '';

  readonly summary: FtraceTextSummary = {
    format: 'tracefs_text',
    lines: 0,
    events: 0,
    outOfOrderLines: 0,
    firstOutOfOrderLine: null,
    unparsedEvents: 0,
    unparsedByName: {},
    skippedLines: 0,
    lostEventNotices: 0,
    maxCpu: -1,
    instances: [],
    bytes: 0,
  };

  constructor(
    private readonly sink: EventSink,
    private readonly label: string,
  ) {}

  /**
   * libtraceevent 1.7 (trace-cmd 3.x report -l) prints the flags column
   * exactly as the kernel does (checked against trace.dat flags on a real
   * recording): one reading for every producer.
   */
  private get flagStyle(): FlagStyle {
    return 'kernel';
  }

  /** An ASCII line, block[start, end): the common event lines are read on its bytes, the rest as a string. */
  onAsciiLine(block: Uint8Array, start: number, end: number, lineNo: number): void {
    if (
      end > start &&
      block[start] !== 35 &&
      !this.latencyMode &&
      !this.instancePrefixes &&
      parseNormalLineBytes(block, this.flagStyle, this.ev, start, end) &&
      implausibleHead(this.ev) === null
    ) {
      this.summary.lines = lineNo;
      this.acceptEvent(lineNo);
      return;
    }
    this.onLine(latin1(block, start, end), lineNo);
  }

  /**
   * A block of ASCII lines (block[0, n), ending with '\n'), framed by the
   * native framer: each line it read as an event is taken from its record,
   * the others go to onAsciiLine, in order. `lineNo`: the number of the line
   * before the first. Returns the number of lines.
   */
  onAsciiBlock(block: Uint8Array, lineNo: number, framer: NativeLineFramer): number {
    framer.load(block);
    const n = block.length;
    const first = lineNo;
    let from = 0;
    while (from < n) {
      const count = framer.frame(n, from);
      const rec = framer.records;
      let o = 0;
      for (let r = 0; r < count; r++, o += REC_WORDS) {
        lineNo++;
        if (
          rec[o]! !== 0 &&
          !this.latencyMode &&
          !this.instancePrefixes &&
          readFramedLine(block, rec, o, this.ev) &&
          implausibleHead(this.ev) === null
        ) {
          this.summary.lines = lineNo;
          this.acceptEvent(lineNo);
        } else this.onAsciiLine(block, rec[o + R_START]!, rec[o + R_END]!, lineNo);
      }
      from = framer.nextLineStart(block, count);
    }
    return lineNo - first;
  }

  /** Any line, as a string (the definition of every line's reading). */
  onLine(line: string, lineNo: number): void {
    this.summary.lines = lineNo;
    if (line.length === 0) return;
    if (line.charCodeAt(0) === 35) {
      // '#'
      this.onHashLine(line, lineNo);
      return;
    }
    if (this.tryEvent(line, 0, line.length, lineNo)) return;
    this.onOtherLine(line, lineNo);
  }

  private tryEvent(line: string, start: number, end: number, lineNo: number): boolean {
    if (!this.readEventLine(line, start, end)) return false;
    const implausible = implausibleHead(this.ev);
    if (implausible !== null) this.skip(lineNo, implausible, line);
    else this.acceptEvent(lineNo);
    return true;
  }

  /**
   * Reads an event line into this.ev with the grammars in turn, the one that
   * matched last first: the kernel's verbose latency format, the latency
   * layout (trace-cmd report -l, the kernel's latency format), the normal one.
   */
  private readEventLine(line: string, start: number, end: number): boolean {
    const ev = this.ev;
    const style = this.flagStyle;
    if (this.verboseLatency && parseVerboseLatencyLine(line, ev, start, end)) return true;
    if (this.latencyMode) {
      if (parseLatencyLine(line, style, ev, start, end)) return true;
      if (parseNormalLine(line, style, ev, this.instancePrefixes, start, end)) {
        this.latencyMode = false;
        return true;
      }
    } else {
      if (parseNormalLine(line, style, ev, this.instancePrefixes, start, end)) return true;
      if (parseLatencyLine(line, style, ev, start, end)) {
        this.latencyMode = true;
        return true;
      }
    }
    if (!this.verboseLatency && parseVerboseLatencyLine(line, ev, start, end)) {
      this.verboseLatency = true;
      return true;
    }
    return false;
  }

  /** The line just parsed into this.ev is an event. */
  private acceptEvent(lineNo: number): void {
    if (!this.headerSent) this.sendHeader(this.ev);
    if (this.debugLayout) dropDebugSuffix(this.ev);
    this.emitEvent(this.ev, lineNo);
  }

  private onHashLine(line: string, lineNo: number): void {
    const lost = parseLostLine(line);
    if (lost) {
      this.lost(lost.cpu, lost.count, lineNo, line);
      return;
    }
    this.flushHeld();
    if (this.headerSent) return; // comment lines after the start: nothing to learn
    if (this.format === null) this.format = 'tracefs_text';
    // `# tracer: nop`
    let m = /^#\s*tracer:\s*(\S+)/.exec(line);
    if (m) {
      this.meta.tracer = m[1]!;
      return;
    }
    // the kernel's latency format: `# latency: 0 us, #302/302, CPU#0 | (M:PREEMPT(none) VP:0, KP:0, SP:0 HP:0 #P:2)`
    m = /^#\s*latency: .*#P:(\d+)\)\s*$/.exec(line);
    if (m) {
      this.headerCpus = this.plausibleCpuCount(m[1]!, lineNo, line);
      return;
    }
    // `# entries-in-buffer/entries-written: 1234/5678   #P:2`
    m = /^#\s*entries-in-buffer\/entries-written:\s*(\d+)\/(\d+)\s+#P:(\d+)/.exec(line);
    if (m) {
      this.meta.entries_in_buffer = m[1]!;
      this.meta.entries_written = m[2]!;
      this.headerCpus = this.plausibleCpuCount(m[3]!, lineNo, line);
      return;
    }
    // `#                              _-----=> irqs-off/BH-disabled` etc: column legend
  }

  private onOtherLine(line: string, lineNo: number): void {
    const t = line.trim();
    if (t.length === 0) return;
    // stack trace frames belong to the previous event
    if (t.startsWith('=> ') && this.held) {
      this.held.raw = this.held.raw ? this.held.raw + '\n' + t : t;
      return;
    }
    if (t.startsWith('=> ') && this.lastDirect) return;
    if (t.startsWith('=> ') && this.lastRaw) {
      this.raw!.continuation(t);
      return;
    }
    const lost = parseLostLine(t);
    if (lost) {
      this.lost(lost.cpu, lost.count, lineNo, line);
      return;
    }
    this.flushHeld();
    // trace-cmd report header lines
    let m = /^(?:(\S+): )?cpus=(\d+)$/.exec(t);
    if (m) {
      this.setReport();
      if (this.headerCpus === null) this.headerCpus = this.plausibleCpuCount(m[2]!, lineNo, line);
      if (m[1] !== undefined) this.instancePrefixes = true;
      return;
    }
    m = /^version = (\S+)$/.exec(t);
    if (m) {
      this.setReport();
      this.formatVersion = m[1]!;
      return;
    }
    m = /^CPU (\d+) is empty$/.exec(t);
    if (m && Number(m[1]) < MAX_CPUS) {
      this.setReport();
      this.emptyCpus.push(Number(m[1]));
      if (this.headerSent) this.meta.empty_cpus = this.emptyCpus.join(',');
      return;
    }
    if (/^CPU:\d+ \[SUBBUFFER START\]/.test(t)) {
      // trace-cmd report --debug: each event line from here on ends with its record's [delta:offset:size].
      this.debugLayout = true;
      return;
    }
    // An event line of a multi-buffer report whose prefix we did not expect yet.
    if (this.format === 'trace_cmd_report' && !this.instancePrefixes && /^\S+: /.test(t)) {
      this.instancePrefixes = true;
      if (this.tryEvent(line, 0, line.length, lineNo)) return;
      this.instancePrefixes = false;
    }
    this.skip(lineNo, 'not an ftrace event line', line);
  }

  private setReport(): void {
    if (this.format === null || (!this.headerSent && this.format === 'tracefs_text')) this.format = 'trace_cmd_report';
  }

  private sendHeader(ev: EventLine): void {
    if (this.format === null) this.format = 'tracefs_text';
    this.summary.format = this.format;
    this.baseSecs = ev.secs;
    if (this.emptyCpus.length) this.meta.empty_cpus = this.emptyCpus.join(',');
    if (this.latencyMode) this.meta.text_layout = 'latency';
    if (this.verboseLatency) this.meta.text_layout = 'kernel_latency_verbose';
    if (ev.tsInUs) {
      // The kernel's latency format: µs since the trace began, not the trace clock.
      this.meta.text_layout = 'kernel_latency';
      this.meta.timestamps = 'microseconds since the trace began (kernel latency format)';
    }
    if (ev.instance !== null) this.meta.instances = ev.instance;
    const header: TraceHeader = {
      format: this.format,
      formatVersion: this.formatVersion,
      cpus: this.headerCpus,
      tsBaseNs: BigInt(ev.secs) * 1_000_000_000n,
      meta: this.meta,
    };
    this.sink.header(header);
    this.headerSent = true;
    this.raw = isRawTextSink(this.sink) ? this.sink.rawText() : null;
    for (const p of this.early) {
      if (p.kind === 'lost') this.sink.lostEvents(p.cpu, p.count, p.where);
      else this.sink.skipped(p.problem);
    }
    this.early.length = 0;
  }

  private emitEvent(ev: EventLine, lineNo: number): void {
    this.flushHeld();
    const ts = (ev.secs - this.baseSecs) * 1e9 + ev.nsec;
    const cpu = ev.cpu;
    const s = this.summary;
    if (cpu > s.maxCpu) {
      s.maxCpu = cpu;
      while (this.lastTs.length <= cpu) this.lastTs.push(-Infinity);
    }
    if (ts < this.lastTs[cpu]!) {
      s.outOfOrderLines++;
      if (s.firstOutOfOrderLine === null) s.firstOutOfOrderLine = lineNo;
    } else this.lastTs[cpu] = ts;
    if (ev.instance !== null && !this.instances.has(ev.instance)) this.instances.add(flat(ev.instance));
    if (this.fieldsLayout !== false) this.fieldsModeArgs(ev);
    const info = ev.nameInfo!;
    if (this.raw !== null && this.takesRaw(info)) {
      // Framed here; the sink parses the argument text on another thread.
      const bytes = ev.argsBytes;
      if (bytes !== null) {
        if (bytes !== this.rawPage) {
          this.raw.page(bytes, 0, bytes.length);
          this.rawPage = bytes;
        }
        this.raw.record(
          info.name,
          info.system,
          ts,
          cpu,
          ev.pid,
          ev.comm,
          ev.tgid,
          ev.flags,
          ev.preemptCount,
          lineNo,
          ev.argsStart,
          ev.argsEnd - ev.argsStart,
        );
      } else {
        this.raw.recordText(
          info.name,
          info.system,
          ts,
          cpu,
          ev.pid,
          ev.comm,
          ev.tgid,
          ev.flags,
          ev.preemptCount,
          lineNo,
          ev.args,
        );
      }
      this.lastRaw = true;
      s.events++;
      return;
    }
    const block = ev.argsBytes;
    if (block !== null && this.fieldsLayout === false) {
      const rows = this.schedRowsOf(info);
      if (
        rows !== null &&
        rows.write(
          block,
          ev.argsStart,
          ev.argsEnd,
          ts,
          cpu,
          ev.pid,
          ev.comm,
          ev.tgid,
          ev.flags,
          ev.preemptCount,
          lineNo,
        )
      ) {
        this.lastDirect = true;
        s.events++;
        return;
      }
    }
    const name = info.name;
    let args: string;
    let fields: EventFields | null;
    if (block !== null && this.raw === null) {
      // Every event's text is wanted as a string here (no sink takes text
      // raw): one string per block, sliced, is cheaper than one per event.
      if (this.blockTextOf !== block) {
        this.blockText = latin1(block, 0, block.length);
        this.blockTextOf = block;
      }
      args = this.blockText.slice(ev.argsStart, ev.argsEnd);
      fields = info.parse(this.blockText, ev.argsStart, ev.argsEnd, args, block);
    } else {
      // Few events are parsed here (the field worker takes the rest): a
      // string of its own each, no string of the block for the collector.
      args = eventArgs(ev);
      fields = info.parse(ev.argsText!, ev.argsStart, ev.argsEnd, args, null);
    }
    if (fields === null) {
      s.unparsedEvents++;
      s.unparsedByName[name] = (s.unparsedByName[name] ?? 0) + 1;
    }
    this.held = {
      ts,
      cpu,
      pid: ev.pid,
      comm: ev.comm,
      tgid: ev.tgid,
      name,
      system: info.system,
      flags: ev.flags,
      preemptCount: ev.preemptCount,
      fields,
      raw: args,
      where: lineNo,
    };
    s.events++;
  }

  /**
   * The kernel's options/fields layout (6.x) prints every integer twice,
   * `prev_pid=0x45b6 (17846)`: decided on the first events (null until
   * then), and for such a file each event's text is read with its values
   * as decimals (raw_fields.ts fieldsModeValues), as a string.
   */
  private fieldsModeArgs(ev: EventLine): void {
    const args = eventArgs(ev);
    if (this.fieldsLayout === null) {
      if (hasFieldsModeValues(args)) {
        this.fieldsLayout = true;
        this.meta.text_layout = 'fields';
      } else if (++this.fieldsUndecided >= FIELDS_LAYOUT_DECIDED_AFTER) this.fieldsLayout = false;
    }
    if (this.fieldsLayout === true) {
      const text = fieldsModeValues(args);
      ev.args = ev.argsText = text;
      ev.argsStart = 0;
      ev.argsEnd = text.length;
    }
  }

  /** The SchedRows of an event name (asked for on its first line), null if its lines take the parser. */
  private schedRowsOf(info: EventNameInfo): SchedRows | null {
    let rows = this.schedRows.get(info);
    if (rows === undefined) {
      const direct =
        hasSchedRows(info.name) && isDirectRowSink(this.sink) ? this.sink.directRows(info.name, info.system) : null;
      rows = direct === null ? null : SchedRows.of(info.name, direct);
      this.schedRows.set(info, rows);
    }
    return rows;
  }

  private takesRaw(info: EventNameInfo): boolean {
    let t = this.rawTakes.get(info);
    if (t === undefined) this.rawTakes.set(info, (t = this.raw!.takes(info.name)));
    return t;
  }

  flushHeld(): void {
    this.lastRaw = false;
    this.lastDirect = false;
    if (this.held) {
      const e = this.held;
      this.held = null;
      // A stack's frames are its continuation lines, all read by now.
      if (isStackEvent(e.name)) e.fields = stackFields(e.raw ?? '');
      this.sink.event(e);
    }
  }

  private lost(cpu: number, count: number | null, where: number, line: string): void {
    if (cpu >= MAX_CPUS) {
      this.skip(where, `lost-events notice with an implausible CPU number ${cpu}`, line);
      return;
    }
    this.flushHeld();
    this.summary.lostEventNotices++;
    if (this.headerSent) this.sink.lostEvents(cpu, count, where);
    else this.early.push({ kind: 'lost', cpu, count, where });
  }

  /** A header's CPU count, or null (and the line reported) when no machine has that many. */
  private plausibleCpuCount(digits: string, lineNo: number, line: string): number | null {
    const n = Number(digits);
    if (n <= MAX_CPUS) return n;
    this.skip(lineNo, `implausible CPU count ${digits}`, line);
    return null;
  }

  skip(where: number, reason: string, line: string): void {
    this.flushHeld();
    this.summary.skippedLines++;
    const problem: SkippedInput = { where, unit: 'line', reason, excerpt: excerpt(line) };
    if (this.headerSent) this.sink.skipped(problem);
    else {
      this.early.push({ kind: 'skipped', problem });
      if (this.summary.skippedLines >= MAX_SKIPPED_BEFORE_FIRST_EVENT) {
        throw new DecodeError(
          this.label,
          where,
          'line',
          `no ftrace events found in the first ${where} lines (${this.summary.skippedLines} unrecognised lines)`,
        );
      }
    }
  }

  finish(): FtraceTextSummary {
    this.flushHeld();
    if (!this.headerSent) {
      const first = this.early.find((p) => p.kind === 'skipped');
      const where = first && first.kind === 'skipped' ? first.problem.where : Math.max(1, this.summary.lines);
      const what =
        this.summary.lines === 0 ? 'the input is empty' : `${this.summary.lines} lines, none of them an event line`;
      throw new DecodeError(this.label, where, 'line', `no ftrace events found (${what})`);
    }
    this.summary.instances = [...this.instances];
    return this.summary;
  }
}

/**
 * Decodes ftrace text (tracefs or trace-cmd report) from a stream of byte
 * chunks. Throws DecodeError when the input holds no event line at all.
 */
export async function decodeFtraceText(
  chunks: AsyncIterable<Uint8Array>,
  sink: EventSink,
  opts: DecodeFtraceTextOptions,
): Promise<FtraceTextSummary> {
  const dec = new FtraceTextDecoder(sink, opts.fileLabel);
  const framer = nativeLineFramer();
  const splitter = new LineSplitter({
    asciiLine: (block, start, end, lineNo) => dec.onAsciiLine(block, start, end, lineNo),
    asciiBlock: framer !== null ? (block, lineNo) => dec.onAsciiBlock(block, lineNo, framer) : undefined,
    line: (text, lineNo) => dec.onLine(text, lineNo),
    tooLong: (lineNo, _offset, ex, bytes) =>
      dec.skip(lineNo, `line of ${bytes} bytes exceeds the line length limit`, ex),
  });
  const total = opts.totalBytes ?? null;
  let bytes = 0;
  let nextProgress = PROGRESS_EVERY_BYTES;
  for await (const chunk of chunks) {
    splitter.push(chunk);
    bytes += chunk.length;
    if (opts.onProgress && bytes >= nextProgress) {
      opts.onProgress(bytes, total);
      nextProgress = bytes + PROGRESS_EVERY_BYTES;
    }
  }
  splitter.end();
  const summary = dec.finish();
  summary.bytes = bytes;
  opts.onProgress?.(bytes, total);
  return summary;
}

/** Whether an event name has a dedicated field parser (typed event). */
export { hasTypedParser };

/**
 * `trace-cmd report --debug` ends every event line with the record's
 * ` [ts delta:0xoffset in the sub-buffer:size]`, e.g. `... [120] [4378:0x60:64]`:
 * not part of the event's text, and it would fail every parser that reads
 * the text to its end (sched_switch, shrink_slab). Cut off when present.
 */
const DEBUG_SUFFIX = /(?:^| +)\[\d+:0x[0-9a-f]+:\d+\]$/;

function dropDebugSuffix(ev: EventLine): void {
  const { argsStart: s, argsEnd: e } = ev;
  // The suffix is short: look at the end only (a match at the window's start
  // without its blank is not one, unless the window is the whole text).
  const from = Math.max(s, e - 80);
  const tail = ev.argsBytes !== null ? latin1(ev.argsBytes, from, e) : ev.argsText!.slice(from, e);
  const m = DEBUG_SUFFIX.exec(tail);
  if (m === null || (from > s && tail.charCodeAt(m.index) !== 32)) return;
  ev.argsEnd = from + m.index;
  if (ev.argsBytes === null) ev.args = ev.argsText!.slice(s, ev.argsEnd);
}

/** Why an event line's head cannot come from a Linux kernel (see MAX_CPUS, MAX_PID), or null. */
function implausibleHead(ev: EventLine): string | null {
  if (ev.cpu >= MAX_CPUS) return `implausible CPU number ${ev.cpu}`;
  if (ev.pid > MAX_PID) return `implausible pid ${ev.pid}`;
  if (ev.tgid !== null && ev.tgid > MAX_PID) return `implausible tgid ${ev.tgid}`;
  return null;
}
