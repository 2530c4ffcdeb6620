/**
 * The thread that decodes the fields of events the main thread framed
 * (model_builder.ts rawRecords / rawText) into typed rows, whose chunks it
 * posts straight to the store worker: trace.dat records, with readers
 * compiled from the file's formats, or text events' argument text, with the
 * text decoder's own parsers.
 *
 * Why a thread: on a large trace the main thread (decoding and filling
 * columns) was the bottleneck while the store worker waited half the time.
 * With the fields decoded here the ingest is a three-stage pipeline, main
 * (framing) -> field worker -> store worker (DuckDB), whose stages the OS
 * spreads over the cores.
 */
import { parentPort } from 'node:worker_threads';
import { getHeapStatistics } from 'node:v8';
import { latin1 } from '../decode/ftrace_text/fields/intern.ts';
import { isStackEvent } from '../decode/decoded_event.ts';
import { stackFields } from '../decode/ftrace_text/fields/ftrace.ts';
import { KeptRaw, RAW_KEPT, RAW_UNSURE } from '../decode/ftrace_text/kept_raw.ts';
import { readsGenericKv, writebackBdiSpec } from '../decode/ftrace_text/fields/index.ts';
import type { KvSpec } from '../decode/ftrace_text/fields/kv_spec.ts';
import {
  KV_HEX,
  KV_INT,
  KV_STR,
  UntypedKvScan,
  type KvSeqInfo,
  type ScannedFields,
} from '../decode/ftrace_text/fields/untyped_kv.ts';
import { blockTextScanFor } from '../decode/ftrace_text/fields/block_bytes.ts';
import { SoftirqTextScan, isSoftirqEvent } from '../decode/ftrace_text/fields/softirq_bytes.ts';
import {
  directTextWriter,
  textFieldParser,
  workqueueTextWriter,
  type TextColumnWriter,
  type TextFieldParser,
} from '../decode/ftrace_text/raw_text_fields.ts';
import type { KvColumnWriter } from '../decode/ftrace_text/fields/kv_columns.ts';
import type { EventFields } from '../decode/decoded_event.ts';
import {
  compileRawFieldReaders,
  compileUntypedFieldReaders,
  type RawFieldReader,
  type UntypedFieldReader,
} from '../decode/trace_dat/raw_field_readers.ts';
import type { BufferSource } from '../model/buffer_source.ts';
import { chunkTransferList, type ChunkData } from '../model/column_chunk.ts';
import { OpenChunkBudget } from '../model/open_chunk_budget.ts';
import { SID_BASE_FIELD_WORKER, type StringRows } from '../model/args_rows.ts';
import {
  SHAPE_BASE_FIELD_WORKER,
  SHAPE_LEAD,
  SHAPE_TABLE_BASE,
  UntypedRows,
  type ShapeResult,
  type ShapeRows,
} from '../model/untyped_rows.ts';
import { CONTINUATION, OWN_TEXT, RecordBatchReader } from '../model/record_batch.ts';
import { TableRowWriter, TypedRows } from '../model/typed_rows.ts';
import { typedTableFor } from '../model/typed_tables.ts';
import {
  BATCHES_CONSUMED_KIB,
  FIELD_FAILED,
  type FieldToStore,
  type FieldWorkerInput,
  type FromFieldWorker,
  type ToFieldWorker,
} from './field_protocol.ts';
import { FAILED, FIELD_CHUNKS_CONSUMED_KIB } from './store_protocol.ts';
import { chunkBytes, InFlightBudget, releaseInFlight } from './in_flight_bytes.ts';
import { RecycledBuffers, sendBuffersBack } from './recycled_buffers.ts';
import { takeBlockedMs } from './wait_for_counter.ts';
import { threadCpuNs } from './thread_cpu.ts';
import { nativeKvScanner } from '../decode/ftrace_text/native/native_kv_scanner.ts';
import { serveJobs } from './job_loop.ts';
import { heapBound, IN_FLIGHT_BUDGET_BYTES, OPEN_CHUNKS_BUDGET_BYTES } from './ingest_memory.ts';
import { perfettoFieldDecoder } from '../decode/perfetto/raw_fields.ts';

const port = parentPort!;

function reply(m: FromFieldWorker): void {
  port.postMessage(m);
}

/** Decodes one batch; finish() writes whatever is held back. */
interface BatchDecoder {
  decode(r: RecordBatchReader): void;
  finish(): void;
  /** Events whose fields did not parse (kept as raw text in _ftrace_event). */
  unparsed: number;
  /** Its args dictionary, as `_string` rows (text events without a typed table). */
  strings(): StringRows;
  /** The shape tables it wrote (untyped_rows.ts), with their dictionaries. */
  shapes(): ShapeResult[];
}

/** One trace's batches: returns the job's message handler; onEnd() once its last chunk went to the store. */
function startJob(input: FieldWorkerInput, onEnd: () => void): (m: ToFieldWorker) => void {
  const control = new Int32Array(input.control);
  const storeControl = new Int32Array(input.storeControl);
  const storePort = input.storePort;
  let failed = false;
  const fail = (err: unknown) => {
    failed = true;
    Atomics.store(control, FIELD_FAILED, 1);
    Atomics.notify(control, BATCHES_CONSUMED_KIB);
    reply({ type: 'error', message: (err as Error)?.message ?? String(err) });
    // Not reusable: the main thread terminates this thread.
  };
  // The chunks' bytes posted to the store and not yet appended: bounded, so memory stays so however far the store lags.
  const inFlight = new InFlightBudget(
    storeControl,
    FIELD_CHUNKS_CONSUMED_KIB,
    FAILED,
    IN_FLIGHT_BUDGET_BYTES / 1024,
    'the store worker',
  );
  const toStore = (m: FieldToStore, transfer: ArrayBuffer[] = []) => storePort.postMessage(m, transfer);
  const postChunk = (table: number, data: ChunkData) => {
    const kib = inFlight.reserve(chunkBytes(data));
    toStore({ type: 'chunk', table, data, kib }, chunkTransferList(data));
  };
  let decoder: BatchDecoder;
  let typed: TypedRows;
  // The store sends each chunk's buffer back on its port.
  let recycled: RecycledBuffers;
  // The chunks' buffers being filled, bounded whatever the number of tables.
  let chunkMemory: OpenChunkBudget;
  try {
    recycled = new RecycledBuffers(storePort);
    chunkMemory = new OpenChunkBudget(OPEN_CHUNKS_BUDGET_BYTES, recycled);
    typed = new TypedRows(input.layout, postChunk, chunkMemory);
    typed.setBase(BigInt(input.tsBaseNs));
    const tables = new Set(input.tables);
    const writerFor = (name: string): TableRowWriter | null => {
      const table = typedTableFor(name);
      const target = table !== null && tables.has(table) ? typed.target(table) : undefined;
      return target ? new TableRowWriter(typed, target, name) : null;
    };
    decoder =
      input.spec.format === 'text'
        ? textDecoder(input.layout, BigInt(input.tsBaseNs), writerFor, postChunk, chunkMemory)
        : input.spec.format === 'perfetto'
          ? perfettoFieldDecoder(input.spec, writerFor)
          : traceDatDecoder(input, writerFor, postChunk, chunkMemory);
  } catch (err) {
    fail(err);
    return () => undefined;
  }

  // Its promoted garbage, collected as it grows (ingest_memory.ts WORKER_HEAP_SLACK_MB).
  const boundHeap = heapBound();
  // Under $STALLSCOPE_TIMING, this thread's CPU for the job (on text inputs the critical thread).
  const cpuStart = process.env.STALLSCOPE_TIMING ? threadCpuNs() : null;
  if (cpuStart !== null) takeBlockedMs(); // this job's waits only
  // Under $STALLSCOPE_TIMING: the most external memory (ArrayBuffers) this thread held after a batch.
  let peakExternal = 0;
  return (m: ToFieldWorker) => {
    if (failed) return;
    try {
      if (m.type === 'batch') {
        decoder.decode(new RecordBatchReader(m.batch));
        boundHeap();
        if (cpuStart !== null) peakExternal = Math.max(peakExternal, getHeapStatistics().external_memory);
        // Decoded into rows (nothing keeps a view of it): main fills it again.
        // Sent back before its bytes are released, so that a producer the
        // release wakes finds them on its port instead of allocating more.
        sendBuffersBack(input.batchReturn, [m.batch.ints, m.batch.nums, m.batch.bytes]);
        releaseInFlight(control, BATCHES_CONSUMED_KIB, m.kib);
      } else if (m.type === 'finish') {
        decoder.finish();
        typed.flush();
        // The store closes the channel once it has read `end` (closing it here could drop it); main closes batchReturn.
        toStore({
          type: 'end',
          dicts: typed.dictLists(),
          strings: decoder.strings(),
          shapes: decoder.shapes(),
          unparsed: decoder.unparsed,
        });
        if (cpuStart !== null)
          process.stderr.write(
            `[timing] field worker: ${((threadCpuNs()! - cpuStart) / 1e6).toFixed(0)} CPU ms` +
              [...takeBlockedMs()].map(([who, ms]) => `; blocked on ${who} ${ms.toFixed(0)} ms`).join('') +
              `; ${inFlight.describe('chunks to the store')}; ${chunkMemory.describe()}; ${recycled.describe()}` +
              `; external memory at most ${(peakExternal / 1048576).toFixed(1)} MB\n`,
          );
        onEnd();
        reply({ type: 'done' });
      } else if (m.type === 'abort') {
        failed = true;
        storePort.close();
        port.close(); // the thread ends: an aborted one is not reused
      } else {
        throw new Error('field worker: a job arrived before the last one ended');
      }
    } catch (err) {
      fail(err);
    }
  };
}

/**
 * trace.dat records: readers compiled from the file's formats, by event id:
 * typed rows, and the fields of events without a typed table into rows of
 * their shape (untyped_rows.ts), as the main thread would have decoded them.
 */
function traceDatDecoder(
  input: FieldWorkerInput,
  rowsFor: (name: string) => TableRowWriter | null,
  postChunk: (table: number, data: ChunkData) => void,
  chunkMemory: BufferSource,
): BatchDecoder {
  const spec = input.spec;
  if (spec.format !== 'trace_dat') throw new Error('not a trace.dat spec');
  const typedReaderOf = compileRawFieldReaders(spec, rowsFor);
  /** By format id: its typed-row reader (null: the format has no typed table here), compiled at its first record. */
  const readers: (RawFieldReader<TableRowWriter> | null | undefined)[] = [];
  const untypedReaderOf = compileUntypedFieldReaders(spec, (name) => typedTableFor(name) === null, SHAPE_LEAD);
  /** By format id: its reader, compiled when the batches name the format (before its first record). */
  const untypedReaders: (UntypedFieldReader | undefined)[] = [];
  const untyped = new UntypedRows(
    input.layout,
    postChunk,
    SHAPE_TABLE_BASE + SHAPE_BASE_FIELD_WORKER,
    SID_BASE_FIELD_WORKER,
    chunkMemory,
  );
  untyped.setBase(BigInt(input.tsBaseNs), false);
  /** name_id of untyped events by format id (the batches name them: model_builder.ts rawRecords). */
  const nameIdOf: number[] = [];
  /** By format id: the rows its shape reader writes (made when the batches name it). */
  const shapeRowsOf: (ShapeRows | undefined)[] = [];
  const formatIdOf = new Map(spec.formats.map((f) => [`${f.system}\u0000${f.name}`, f.id]));
  return {
    unparsed: 0,
    decode(r) {
      for (const [nameId, name, system] of r.batch.names) {
        const formatId = formatIdOf.get(`${system}\u0000${name}`);
        if (formatId === undefined) throw new Error(`field worker: no event format ${system}:${name}`);
        nameIdOf[formatId] = nameId;
        untypedReaders[formatId] = untypedReaderOf(formatId);
        const shaped = untypedReaders[formatId]?.shaped;
        if (shaped) shapeRowsOf[formatId] = untyped.shapeRows(nameId, shaped.keys, shaped.fixedKinds);
      }
      const count = r.batch.count;
      const bytes = r.bytes;
      for (let i = 0; i < count; i++) {
        const format = r.format(i);
        let reader = readers[format];
        if (reader === undefined) reader = readers[format] = typedReaderOf(format);
        if (reader !== null) {
          const rows = reader.rows;
          rows.startRow(r.id(i), r.ts(i), r.cpu(i), r.utid(i), r.common(i), r.where(i));
          reader.read(bytes, r.offset(i), r.length(i));
          rows.end();
          continue;
        }
        const u = untypedReaders[format];
        if (u === undefined) throw new Error(`field worker: no reader for event format id ${format}`);
        const off = r.offset(i);
        const len = r.length(i);
        const sr = shapeRowsOf[format];
        if (sr !== undefined && len >= u.minLen) {
          // Straight into its shape's row, unless a value fits no shape or a dictionary is nearly full.
          r.headerInto(i, sr);
          if (u.shaped!.read(bytes, off, len, sr)) continue;
        }
        const fields = len >= u.minLen ? u.fast(bytes, off, len) : u.safe(bytes, off, len);
        untyped.writePacked(
          r.id(i),
          r.ts(i),
          r.cpu(i),
          r.utid(i),
          nameIdOf[format]!,
          r.common(i),
          r.where(i),
          null,
          fields,
        );
      }
    },
    finish() {
      untyped.flush();
    },
    strings: () => untyped.stringRows(),
    shapes: () => untyped.shapeResults(),
  };
}

// Jobs, one after the other (worker_pool.ts keeps this thread between ingests).
serveJobs<FieldWorkerInput, Exclude<ToFieldWorker, { type: 'job' }>>(port, startJob);

/**
 * An untyped event whose text is positional, not key=value, read from its
 * bytes as its parser reads it (block_bytes.ts, softirq_bytes.ts), for its
 * shape row. Its `raw`: block texts never print back (their I/O priority),
 * so they are taken once KeptRaw keeps every text of the name; a softirq
 * reader takes only texts that print back, so softirq texts are taken once
 * KeptRaw has seen the name print back.
 */
interface PrintedTextReader {
  readonly scan: ScannedFields & { scan(b: Uint8Array, s: number, e: number): boolean };
  /** Its shape rows by key sequence. */
  readonly shapes: Map<string, ShapeRows>;
  /** Whether a text it takes keeps its raw text (else: it prints back, raw null). */
  readonly keepsRaw: boolean;
  /** Whether KeptRaw's answer is known without the fields (keepsAll / printedBack): it then stays so. */
  rawKnown: boolean;
}

function printedTextReader(name: string): PrintedTextReader | null {
  const block = blockTextScanFor(name);
  if (block !== null) return { scan: block, shapes: new Map(), keepsRaw: true, rawKnown: false };
  if (isSoftirqEvent(name)) return { scan: new SoftirqTextScan(), shapes: new Map(), keepsRaw: false, rawKnown: false };
  return null;
}

/**
 * Text events: each record's argument text parsed by its event's parser into
 * its typed table's row. Events without a typed table, and events whose text
 * does not parse, go to _ftrace_event with their raw text (and the former to
 * _args with their key=value fields, in this thread's string dictionary),
 * held back until the next event so that continuation lines join the raw
 * text, as decodeFtraceText does.
 */
function textDecoder(
  layout: FieldWorkerInput['layout'],
  tsBaseNs: bigint,
  writerFor: (name: string) => TableRowWriter | null,
  postChunk: (table: number, data: ChunkData) => void,
  chunkMemory: BufferSource,
): BatchDecoder {
  /** Per name id: its parser, and its typed table's writer (null: no typed table). */
  const names: (
    | {
        name: string;
        parse: TextFieldParser;
        rows: TableRowWriter | null;
        direct: KvColumnWriter | null;
        /** Its text straight into its typed row's columns (direct, or the workqueue writer), else null. */
        columns: TextColumnWriter | null;
        stack: boolean;
        /** An untyped key=value event's shape rows by key sequence (UntypedKvScan); null: not such an event. */
        kvShapes: Map<string, ShapeRows> | null;
        /** A writeback event's `bdi NAME:` parser spec (UntypedKvScan.scanBdi), else null. */
        bdiSpec: KvSpec | null;
        /** Its events the scan did not take, up to the first one it took (-1 from then on). */
        kvMisses: number;
        /** Key sequences (KvSeqInfo.sig) the native reader was given for its events: scan_kv.c reads them then. */
        nativeSigs: Set<string> | null;
        /** An untyped event's reader of its positional text (block, softirq), else null. */
        printed: PrintedTextReader | null;
      }
    | undefined
  )[] = [];
  const keptRaw = new KeptRaw();
  const untyped = new UntypedRows(
    layout,
    postChunk,
    SHAPE_TABLE_BASE + SHAPE_BASE_FIELD_WORKER,
    SID_BASE_FIELD_WORKER,
    chunkMemory,
  );
  untyped.setBase(tsBaseNs, true);
  /**
   * The event held for continuation lines (`held` true); `fields`: an
   * untyped event's (written to _args), null: text that did not parse. One
   * object, refilled: most events of a text without typed tables pass
   * through it, and an object each was garbage the worker collected while
   * the main thread waited for it.
   */
  let held = false;
  const h: {
    id: number;
    ts: number;
    cpu: number;
    utid: number;
    nameId: number;
    common: number | null;
    where: number;
    raw: string;
    fields: EventFields | null;
  } = { id: 0, ts: 0, cpu: 0, utid: 0, nameId: 0, common: null, where: 0, raw: '', fields: null };
  const flushHeld = () => {
    if (!held) return;
    held = false;
    // As decodeFtraceText: a stack's frames are its continuation lines, all read by now.
    const n = names[h.nameId]!;
    if (n.stack) h.fields = stackFields(h.raw);
    // Its text only where the fields do not print it back (kept_raw.ts).
    const raw = keptRaw.of(n.name, h.raw, h.fields);
    // The batch's packed flags and preempt count, as they came (no array per event to unpack them).
    untyped.writePacked(h.id, h.ts, h.cpu, h.utid, h.nameId, h.common, h.where, raw, h.fields);
    h.fields = null;
  };
  const kvScan = new UntypedKvScan();
  /** Events of a name the scan may fail to take, before any it took, until the name is left to the general path. */
  const KV_GIVE_UP = 64;
  /** Whether writeScannedRow's last false was a shape not yet a table (ShapeRows.deferred). */
  let kvDeferred = false;
  /**
   * Event i (untyped, its text b[s, e) of the page, read by kvScan) as a row
   * of its shape, as writePacked would write it from the fields its parser
   * reads and KeptRaw's raw; false (nothing written): the general path takes it.
   */
  const writeKvShaped = (
    r: RecordBatchReader,
    i: number,
    name: string,
    kvShapes: Map<string, ShapeRows>,
    nameId: number,
    b: Buffer,
    s: number,
    e: number,
  ): boolean => {
    const keep = keptRaw.ofScan(name, kvScan, b);
    if (keep === RAW_UNSURE) return false;
    return writeScannedRow(r, i, kvShapes, nameId, kvScan, b, keep === RAW_KEPT ? latin1(b, s, e) : null);
  };
  /**
   * Event i's fields as a scan read them from b (its shape rows by key
   * sequence in `shapes`), with `raw` as KeptRaw gives it: the row
   * writePacked would write from the parser's fields; false (nothing
   * written): the general path takes it.
   */
  const writeScannedRow = (
    r: RecordBatchReader,
    i: number,
    shapes: Map<string, ShapeRows>,
    nameId: number,
    scan: ScannedFields,
    b: Buffer,
    raw: string | null,
  ): boolean => {
    const info = scan.info;
    let sr = shapes.get(info.sig);
    if (sr === undefined) {
      // A name prints one or two key sequences; text pasted from many kernels is bounded here.
      if (shapes.size >= 16) return false;
      sr = untyped.shapeRows(nameId, info.keys!, new Int8Array(info.keys!.length).fill(-1));
      shapes.set(info.sig, sr);
    }
    r.headerInto(i, sr);
    sr.raw = raw;
    if (sr.begin(scan.code) === null) {
      kvDeferred = sr.deferred;
      return false;
    }
    const { kinds, starts, ends, nums } = scan;
    const m = info.keys!.length;
    for (let k = 0; k < m; k++) {
      const kind = kinds[k]!;
      const col = sr.column(k);
      if (kind === KV_INT) sr.put(col, k, KV_INT, nums[k]!);
      else if (kind === KV_HEX) sr.putHexBytes(col, b, starts[k]!, ends[k]!);
      else if (kind === KV_STR) sr.putTextBytes(col, k, b, starts[k]!, ends[k]!);
      // `(nil)`: what the parser reads, not the bytes.
      else sr.put(col, k, KV_HEX, '0x0');
    }
    sr.end();
    return true;
  };
  // key=value texts of learned key sequences are read in native code, a batch at a time (null: all in JavaScript).
  const native = nativeKvScanner();
  native?.reset();
  let anyDirect = false;
  /** By native plan handle: the untyped key sequence it reads (addUntypedPlan). */
  const untypedPlanInfo: KvSeqInfo[] = [];
  /** Key sequences per event name the native reader takes at most (scan_kv.c PLANS_PER_NAME). */
  const NATIVE_SEQS_PER_NAME = 8;
  /**
   * The key sequence kvScan just read, given to the native reader (at most
   * NATIVE_SEQS_PER_NAME per name): from the next batch on it reads the name's
   * texts of that sequence. Whether it took a new one.
   */
  const learnNative = (sigs: Set<string> | null, nameId: number): boolean => {
    if (sigs === null || sigs.size >= NATIVE_SEQS_PER_NAME || sigs.has(kvScan.info.sig)) return false;
    sigs.add(kvScan.info.sig);
    const h = native!.addUntypedPlan(nameId, kvScan.entry!.rules);
    if (h >= 0) untypedPlanInfo[h] = kvScan.info;
    return h >= 0;
  };
  const self: BatchDecoder = {
    unparsed: 0,
    decode(r) {
      for (const [id, name] of r.batch.names) {
        const rows = writerFor(name);
        // An event of a typed table this job does not fill would land in _ftrace_event instead: a framing bug.
        if (rows === null && typedTableFor(name) !== null)
          throw new Error(`field worker: no typed table takes event ${name}`);
        const direct = rows !== null ? directTextWriter(name, rows) : null;
        if (direct !== null && native !== null) {
          direct.useNative(native, id);
          anyDirect = true;
        }
        const stack = isStackEvent(name);
        const untypedText = rows === null && !stack;
        const bdiSpec = untypedText ? writebackBdiSpec(name) : null;
        const kvShapes =
          untypedText && (bdiSpec !== null || readsGenericKv(name)) ? new Map<string, ShapeRows>() : null;
        const columns = direct ?? (rows !== null ? workqueueTextWriter(name, rows) : null);
        names[id] = {
          name,
          parse: textFieldParser(name),
          rows,
          direct,
          columns,
          stack,
          kvShapes,
          bdiSpec,
          kvMisses: 0,
          nativeSigs: kvShapes !== null && bdiSpec === null && native !== null ? new Set() : null,
          printed: untypedText ? printedTextReader(name) : null,
        };
      }
      const bytes = r.bytes;
      const bytesBuffer = bytes.buffer;
      const bytesOffset = bytes.byteOffset;
      // The pages are ASCII (RawTextRecords.page).
      const count = r.batch.count;
      const read = native !== null && (anyDirect || untypedPlanInfo.length > 0) ? native.scan(r.ints, count, bytes) : 0;
      const nativePlan = read > 0 ? native!.plan : null;
      for (let i = 0; i < count; i++) {
        const format = r.format(i);
        const s = r.offset(i);
        const e = s + r.length(i);
        if (format === CONTINUATION) {
          if (held) {
            const frame = bytes.toString('utf8', s, e);
            // As decodeFtraceText: an event with no text of its own (`<stack trace>`) starts with its first frame.
            h.raw = h.raw ? `${h.raw}\n${frame}` : frame;
          }
          continue;
        }
        flushHeld();
        const n = names[format];
        if (n === undefined) throw new Error(`field worker: no parser for event name id ${format}`);
        const pageBytes = r.kind(i) !== OWN_TEXT;
        const direct = n.direct;
        if (nativePlan !== null && direct !== null && nativePlan[i]! >= 0) {
          const plan = direct.nativePlan(nativePlan[i]!);
          if (plan !== null) {
            const rows = n.rows!;
            rows.startRow(r.id(i), r.ts(i), r.cpu(i), r.utid(i), r.common(i), r.where(i));
            direct.writeNative(plan, native!.vals, native!.base[i]!);
            rows.end();
            continue;
          }
        }
        const columns = n.columns;
        if (pageBytes && columns !== null && columns.scan(bytes, s, e)) {
          const rows = n.rows!;
          rows.startRow(r.id(i), r.ts(i), r.cpu(i), r.utid(i), r.common(i), r.where(i));
          columns.write();
          rows.end();
          continue;
        }
        // A block or softirq event's text straight into its shape row, read as its parser reads it,
        // once KeptRaw's answer for it is known without the fields, and when nothing is to join it.
        const printed = n.printed;
        if (
          pageBytes &&
          printed !== null &&
          i + 1 < count &&
          r.format(i + 1) !== CONTINUATION &&
          (printed.rawKnown ||
            (printed.rawKnown = printed.keepsRaw ? keptRaw.keepsAll(n.name) : keptRaw.printedBack(n.name))) &&
          printed.scan.scan(bytes, s, e) &&
          writeScannedRow(
            r,
            i,
            printed.shapes,
            format,
            printed.scan,
            bytes,
            printed.keepsRaw ? latin1(bytes, s, e) : null,
          )
        )
          continue;
        // An untyped event's key=value text straight into its shape row, when nothing is to join it
        // (a continuation line would change its raw text: the last event of a batch is held as before).
        if (pageBytes && n.kvShapes !== null && i + 1 < count && r.format(i + 1) !== CONTINUATION) {
          kvDeferred = false;
          let scanned: boolean;
          const handle = nativePlan !== null ? nativePlan[i]! : -1;
          if (handle >= 0) {
            // Read by scan_kv.c, as kvScan.scan reads it.
            native!.untypedInto(kvScan, untypedPlanInfo[handle]!, i, s);
            scanned = true;
          } else {
            scanned = n.bdiSpec !== null ? kvScan.scanBdi(bytes, s, e, n.bdiSpec) : kvScan.scan(bytes, s, e);
            if (scanned) learnNative(n.nativeSigs, format);
          }
          if (scanned && writeKvShaped(r, i, n.name, n.kvShapes, format, bytes, s, e)) {
            n.kvMisses = -1;
            continue;
          }
          // A name whose text is not key=value (raw_syscalls' `NR 202 (...)`) stops being scanned: each try was
          // the parser's own first steps done twice (+5% decode CPU on a report of 2.5M such events).
          // (An event kept as `_args` rows while its shape is not a table yet is no miss.)
          if (n.kvMisses >= 0 && !kvDeferred && ++n.kvMisses >= KV_GIVE_UP) n.kvShapes = null;
        }
        let text: string;
        let fields;
        if (!pageBytes) {
          // Not from an ASCII block: parsed from its string, as the decoder would.
          text = bytes.toString('utf8', s, e);
          fields = n.parse(text, 0, text.length, text, null);
        } else {
          // Its own string (no string of the whole batch: most events never need one),
          // and a plain Uint8Array view of its bytes: the parsers only index it, and
          // Buffer's subarray (a FastBuffer through its species constructor) cost ~3x as much.
          text = latin1(bytes, s, e);
          fields = n.parse(text, 0, e - s, text, new Uint8Array(bytesBuffer, bytesOffset + s, e - s));
          // A key=value name the scan has not taken yet, its sequence pushed out of the generic parser's few
          // recent ones by other names' (many_systems: irq_handler_*, timer_cancel, all given up): the parser
          // just made it the most recent, so the scan reads this text now, and the native reader learns it.
          if (
            fields !== null &&
            n.kvMisses >= 0 &&
            n.kvShapes !== null &&
            n.nativeSigs !== null &&
            kvScan.scan(bytes, s, e) &&
            keptRaw.ofScan(n.name, kvScan, bytes) !== RAW_UNSURE &&
            learnNative(n.nativeSigs, format)
          )
            n.kvMisses = -1;
        }
        if (fields === null) self.unparsed++;
        const rows = n.rows;
        if (fields === null || rows === null) {
          r.headerInto(i, h);
          h.nameId = format;
          h.raw = text;
          h.fields = fields;
          held = true;
          continue;
        }
        rows.startRow(r.id(i), r.ts(i), r.cpu(i), r.utid(i), r.common(i), r.where(i));
        rows.allFields(fields);
        rows.end();
      }
    },
    finish() {
      flushHeld();
      untyped.flush();
    },
    strings: () => untyped.stringRows(),
    shapes: () => untyped.shapeResults(),
  };
  return self;
}
