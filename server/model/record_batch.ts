/**
 * Raw records on their way from the main thread, which frames them (id,
 * thread, time, CPU), to the field worker, which decodes their fields into
 * typed rows (ingest/field_worker.ts): trace.dat records (RawRecordSink) or
 * the argument text of text events (RawTextSink). A batch is three
 * transferable buffers, so handing it over copies nothing.
 *
 * Record bytes travel as copies of the page they lie in (a ring-buffer page,
 * or a block of text lines), from the first record a batch takes onward,
 * once per batch: copying each record on its own (tens of bytes) cost
 * 110-330 ns per record, 1-3 s of main-thread time on a 10M-event
 * trace.dat; a page (~60 records) costs about as much as one.
 */

import { NEW_BUFFERS, type BufferSource } from './buffer_source.ts';

/** One batch as it crosses threads. */
export interface RecordBatchData {
  count: number;
  /**
   * Per record: format (trace.dat event id, or the text event's name_id;
   * CONTINUATION for a continuation line), cpu, utid, common (packCommon,
   * COMMON_NULL for none), byte offset in `bytes`, length, kind (PAGE_BYTES:
   * in a copied page; OWN_TEXT: its own UTF-8 text).
   */
  ints: ArrayBuffer;
  /** Per record: id, ts (relative ns), where (byte offset or line number). */
  nums: ArrayBuffer;
  /** The pages the records lie in (and continuation lines' UTF-8 text), back to back. */
  bytes: ArrayBuffer;
  /** How much of `bytes` is used. */
  bytesUsed: number;
  /** Text records: [name_id, name, system] of the names first used in this batch. */
  names: [number, string, string | null][];
}

/** `format` of a record that is a continuation line of the record before it (text only). */
export const CONTINUATION = -1;
/** `common` of a record whose source has neither flags nor preempt count. */
export const COMMON_NULL = -1;
/** A record's bytes lie in a copied page (trace.dat bytes, or ASCII text). */
export const PAGE_BYTES = 0;
/** A record's text is its own, UTF-8 (continuation lines; text events not in an ASCII block). */
export const OWN_TEXT = 1;

const INTS = 7;
const NUMS = 3;
/** Records per batch: ~40 ms of the field worker's work, so the threads hand over often. */
export const BATCH_RECORDS = 8192;
/**
 * Records in the first batch. Why fewer: its flush then runs before V8
 * optimizes add() and the merge loop it is inlined into; the first flush
 * after 8192 records came after, and V8 threw that code away ("Insufficient
 * type feedback" at add()'s flush, `node --trace-deopt`) and compiled it
 * again. The field worker starts sooner too.
 */
const FIRST_BATCH_RECORDS = 256;
/** Pages remembered per batch: one per CPU the merge alternates between, with room to spare. */
const PAGE_SLOTS = 16;

export class RecordBatchWriter {
  private ints!: Int32Array<ArrayBuffer>;
  private nums!: Float64Array<ArrayBuffer>;
  private bytes!: Uint8Array<ArrayBuffer>;
  private count = 0;
  /** Records at which the batch is handed over (FIRST_BATCH_RECORDS, then BATCH_RECORDS). */
  private limit = FIRST_BATCH_RECORDS;
  private bytePos = 0;
  private names: [number, string, string | null][] = [];
  /** The current page (page()); where its copy is in `bytes` (-1: none in this batch) and which page offset that is. */
  private pageBuf: Uint8Array | null = null;
  private pageStart = 0;
  private pageEnd = 0;
  private pageCopy = -1;
  private pageCopyBase = 0;
  /** Pages copied into this batch: [buf, start, position in bytes, page offset copied from]. */
  private readonly slotBuf: (Uint8Array | null)[] = new Array<Uint8Array | null>(PAGE_SLOTS).fill(null);
  private readonly slotStart = new Float64Array(PAGE_SLOTS);
  private readonly slotCopy = new Float64Array(PAGE_SLOTS);
  private readonly slotBase = new Float64Array(PAGE_SLOTS);
  private slotNext = 0;

  /**
   * `batchBytes`: page bytes per batch, at least one page (trace.dat: 1 MiB =
   * 256 pages of 4 KiB, a batch holds ~140; text: a block of lines is up to 1 MiB).
   */
  constructor(
    private readonly onBatch: (batch: RecordBatchData) => void,
    private readonly batchBytes = 1 << 20,
    private readonly memory: BufferSource = NEW_BUFFERS,
  ) {
    this.takeBuffers();
  }

  /**
   * The next batch's buffers (the old ones are transferred to another
   * thread). Every byte a batch hands on is written first, so they need not
   * be zeroed.
   */
  private takeBuffers(): void {
    this.ints = new Int32Array(this.memory.take(BATCH_RECORDS * INTS * 4, false));
    this.nums = new Float64Array(this.memory.take(BATCH_RECORDS * NUMS * 8, false));
    this.bytes = new Uint8Array(this.memory.take(this.batchBytes, false));
  }

  /** The records added next lie in buf[start, end). */
  page(buf: Uint8Array, start: number, end: number): void {
    this.pageBuf = buf;
    this.pageStart = start;
    this.pageEnd = end;
    this.pageCopy = -1;
    // Merging CPUs comes back to the same pages: reuse a copy already in this batch.
    for (let k = 0; k < PAGE_SLOTS; k++) {
      if (this.slotBuf[k] === buf && this.slotStart[k] === start) {
        this.pageCopy = this.slotCopy[k]!;
        this.pageCopyBase = this.slotBase[k]!;
        return;
      }
    }
  }

  /** A name (text records' format) the batch's reader has not been told yet. */
  name(nameId: number, name: string, system: string | null): void {
    this.names.push([nameId, name, system]);
  }

  /** A record at buf[off, off + len) of the current page. */
  add(
    format: number,
    id: number,
    ts: number,
    cpu: number,
    utid: number,
    common: number,
    where: number,
    off: number,
    len: number,
  ): void {
    if (this.count === this.limit) this.flush();
    // Records of a page come in increasing offsets: the copy starts at the first one taken.
    if (this.pageCopy < 0 || off < this.pageCopyBase) this.copyPage(off);
    this.put(format, id, ts, cpu, utid, common, where, this.pageCopy + (off - this.pageCopyBase), len, PAGE_BYTES);
  }

  /** A record whose text travels on its own (not in a page). */
  addText(
    format: number,
    id: number,
    ts: number,
    cpu: number,
    utid: number,
    common: number,
    where: number,
    text: string,
  ): void {
    if (this.count === this.limit) this.flush();
    const encoded = Buffer.from(text, 'utf8');
    this.reserve(encoded.length);
    this.bytes.set(encoded, this.bytePos);
    this.put(format, id, ts, cpu, utid, common, where, this.bytePos, encoded.length, OWN_TEXT);
    this.bytePos += encoded.length;
  }

  /** A continuation line of the last record. */
  continuation(text: string): void {
    this.addText(CONTINUATION, 0, 0, 0, 0, COMMON_NULL, 0, text);
  }

  private put(
    format: number,
    id: number,
    ts: number,
    cpu: number,
    utid: number,
    common: number,
    where: number,
    at: number,
    len: number,
    kind: number,
  ): void {
    const n = this.count++;
    const ints = this.ints;
    const i = n * INTS;
    ints[i] = format;
    ints[i + 1] = cpu;
    ints[i + 2] = utid;
    ints[i + 3] = common;
    ints[i + 4] = at;
    ints[i + 5] = len;
    ints[i + 6] = kind;
    const nums = this.nums;
    const k = n * NUMS;
    nums[k] = id;
    nums[k + 1] = ts;
    nums[k + 2] = where;
  }

  /** Room for `len` more bytes in this batch (a new batch if needed). */
  private reserve(len: number): void {
    if (this.bytePos + len <= this.bytes.length) return;
    this.flush();
    if (len > this.bytes.length) this.bytes = new Uint8Array(len);
  }

  private copyPage(from: number): void {
    const len = this.pageEnd - from;
    this.reserve(len);
    this.bytes.set(this.pageBuf!.subarray(from, this.pageEnd), this.bytePos);
    this.pageCopy = this.bytePos;
    this.pageCopyBase = from;
    this.bytePos += len;
    const k = this.slotNext;
    this.slotNext = (k + 1) % PAGE_SLOTS;
    this.slotBuf[k] = this.pageBuf;
    this.slotStart[k] = this.pageStart;
    this.slotCopy[k] = this.pageCopy;
    this.slotBase[k] = from;
  }

  /** Hands over the records added since the last batch (if any). */
  flush(): void {
    // A new batch holds no pages: the current one is copied again if more of its records come.
    this.slotBuf.fill(null);
    this.pageCopy = -1;
    if (this.count === 0) return;
    const batch: RecordBatchData = {
      count: this.count,
      ints: this.ints.buffer,
      nums: this.nums.buffer,
      bytes: this.bytes.buffer,
      bytesUsed: this.bytePos,
      names: this.names,
    };
    this.names = [];
    this.count = 0;
    this.limit = BATCH_RECORDS;
    this.bytePos = 0;
    this.onBatch(batch);
    // After the handover, which may wait for the consumer: its buffers sent
    // back meanwhile are reused, and this thread never holds two batches'.
    this.takeBuffers();
  }
}

export function batchTransferList(b: RecordBatchData): ArrayBuffer[] {
  return [b.ints, b.nums, b.bytes];
}

/** A batch's bytes as it crosses threads: its buffers (the few new names' text is not counted). */
export function batchTransferBytes(b: RecordBatchData): number {
  return b.ints.byteLength + b.nums.byteLength + b.bytes.byteLength;
}

/** Reads a batch back, record by record (see RecordBatchWriter.add for the fields). */
export class RecordBatchReader {
  readonly ints: Int32Array;
  readonly nums: Float64Array;
  readonly bytes: Buffer;

  constructor(readonly batch: RecordBatchData) {
    this.ints = new Int32Array(batch.ints);
    this.nums = new Float64Array(batch.nums);
    // A Buffer view: the compiled field readers index bytes and call Buffer's string methods.
    this.bytes = Buffer.from(batch.bytes, 0, batch.bytesUsed);
  }

  format(i: number): number {
    return this.ints[i * INTS]!;
  }
  cpu(i: number): number {
    return this.ints[i * INTS + 1]!;
  }
  utid(i: number): number {
    return this.ints[i * INTS + 2]!;
  }
  /** packCommon() of the record, null when the source has neither flags nor preempt count. */
  common(i: number): number | null {
    const c = this.ints[i * INTS + 3]!;
    return c === COMMON_NULL ? null : c;
  }
  offset(i: number): number {
    return this.ints[i * INTS + 4]!;
  }
  length(i: number): number {
    return this.ints[i * INTS + 5]!;
  }
  /** PAGE_BYTES or OWN_TEXT. */
  kind(i: number): number {
    return this.ints[i * INTS + 6]!;
  }
  id(i: number): number {
    return this.nums[i * NUMS]!;
  }
  ts(i: number): number {
    return this.nums[i * NUMS + 1]!;
  }
  where(i: number): number {
    return this.nums[i * NUMS + 2]!;
  }
  /** Record i's event header (id, time, CPU, task, common fields, file position) onto the row or event it becomes. */
  headerInto(i: number, to: RecordHeader): void {
    to.id = this.id(i);
    to.ts = this.ts(i);
    to.cpu = this.cpu(i);
    to.utid = this.utid(i);
    to.common = this.common(i);
    to.where = this.where(i);
  }
}

/** What every record of a batch carries besides its bytes. */
export interface RecordHeader {
  id: number;
  ts: number;
  cpu: number;
  utid: number;
  common: number | null;
  where: number;
}
