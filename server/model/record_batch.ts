/**
 * Raw trace.dat records on their way from the main thread, which frames
 * them (id, thread, time, CPU), to the field worker, which decodes their
 * fields into typed rows (ingest/field_worker.ts). A batch is three
 * transferable buffers, so handing it over copies nothing.
 *
 * Record bytes travel as copies of the ring-buffer pages they lie in, each
 * page copied once per batch: copying each record on its own (tens of
 * bytes) cost 110-330 ns per record, 1-3 s of main-thread time on a
 * 10M-event trace.dat; a page (~60 records) costs about as much as one.
 */

/** One batch as it crosses threads. */
export interface RecordBatchData {
  count: number;
  /** Per record: formatId, cpu, utid, common (packCommon), byte offset in `bytes`, length. */
  ints: ArrayBuffer;
  /** Per record: id, ts (relative ns), where (byte offset in the file). */
  nums: ArrayBuffer;
  /** The pages the records lie in, back to back. */
  bytes: ArrayBuffer;
}

const INTS = 6;
const NUMS = 3;
/** Records per batch: ~40 ms of the field worker's work, so the threads hand over often. */
export const BATCH_RECORDS = 8192;
/** Page bytes per batch: 256 pages of 4 KiB (a typical batch holds ~140). */
const BATCH_BYTES = 1 << 20;
/** Pages remembered per batch: one per CPU the merge alternates between, with room to spare. */
const PAGE_SLOTS = 16;

export class RecordBatchWriter {
  private ints = new Int32Array(BATCH_RECORDS * INTS);
  private nums = new Float64Array(BATCH_RECORDS * NUMS);
  private bytes = new Uint8Array(BATCH_BYTES);
  private count = 0;
  private bytePos = 0;
  /** The current page (page()), and where its copy is in `bytes` (-1: not copied into this batch yet). */
  private pageBuf: Uint8Array | null = null;
  private pageStart = 0;
  private pageEnd = 0;
  private pageCopy = -1;
  /** Pages copied into this batch: [buf, start, position in bytes]. */
  private readonly slotBuf: (Uint8Array | null)[] = new Array<Uint8Array | null>(PAGE_SLOTS).fill(null);
  private readonly slotStart = new Float64Array(PAGE_SLOTS);
  private readonly slotCopy = new Float64Array(PAGE_SLOTS);
  private slotNext = 0;

  constructor(private readonly onBatch: (batch: RecordBatchData) => void) {}

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
        return;
      }
    }
  }

  /** A record at buf[off, off + len) of the current page. */
  add(formatId: number, id: number, ts: number, cpu: number, utid: number, common: number, where: number, off: number, len: number): void {
    if (this.count === BATCH_RECORDS) this.flush();
    if (this.pageCopy < 0) this.copyPage();
    const n = this.count++;
    const ints = this.ints;
    const i = n * INTS;
    ints[i] = formatId;
    ints[i + 1] = cpu;
    ints[i + 2] = utid;
    ints[i + 3] = common;
    ints[i + 4] = this.pageCopy + (off - this.pageStart);
    ints[i + 5] = len;
    const nums = this.nums;
    const k = n * NUMS;
    nums[k] = id;
    nums[k + 1] = ts;
    nums[k + 2] = where;
  }

  private copyPage(): void {
    const len = this.pageEnd - this.pageStart;
    if (this.bytePos + len > this.bytes.length) {
      this.flush();
      if (len > this.bytes.length) this.bytes = new Uint8Array(len);
    }
    this.bytes.set(this.pageBuf!.subarray(this.pageStart, this.pageEnd), this.bytePos);
    this.pageCopy = this.bytePos;
    this.bytePos += len;
    const k = this.slotNext;
    this.slotNext = (k + 1) % PAGE_SLOTS;
    this.slotBuf[k] = this.pageBuf;
    this.slotStart[k] = this.pageStart;
    this.slotCopy[k] = this.pageCopy;
  }

  /** Hands over the records added since the last batch (if any). */
  flush(): void {
    // A new batch holds no pages: the current one is copied again if more of its records come.
    this.slotBuf.fill(null);
    this.pageCopy = -1;
    if (this.count === 0) return;
    const batch: RecordBatchData = { count: this.count, ints: this.ints.buffer, nums: this.nums.buffer, bytes: this.bytes.buffer };
    // Fresh buffers: the old ones are transferred to another thread.
    this.ints = new Int32Array(BATCH_RECORDS * INTS);
    this.nums = new Float64Array(BATCH_RECORDS * NUMS);
    this.bytes = new Uint8Array(BATCH_BYTES);
    this.count = 0;
    this.bytePos = 0;
    this.onBatch(batch);
  }
}

export function batchTransferList(b: RecordBatchData): ArrayBuffer[] {
  return [b.ints, b.nums, b.bytes];
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
    this.bytes = Buffer.from(batch.bytes);
  }

  formatId(i: number): number {
    return this.ints[i * INTS]!;
  }
  cpu(i: number): number {
    return this.ints[i * INTS + 1]!;
  }
  utid(i: number): number {
    return this.ints[i * INTS + 2]!;
  }
  common(i: number): number {
    return this.ints[i * INTS + 3]!;
  }
  offset(i: number): number {
    return this.ints[i * INTS + 4]!;
  }
  length(i: number): number {
    return this.ints[i * INTS + 5]!;
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
}
