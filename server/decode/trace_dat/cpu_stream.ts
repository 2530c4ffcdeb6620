/**
 * One CPU's ring-buffer data, read ahead in blocks (32 pages, or a batch of
 * compressed chunks) and decoded a page at a time. The next block is fetched
 * (and decompressed, by the zstd binary on the other core when available)
 * while the current one is decoded, so at most two blocks per CPU are held.
 * Damage is reported through `report` with file offsets; reading continues
 * with the next page/chunk.
 */
import type { SkippedInput } from '../decoded_event.ts';
import { hexExcerpt, TraceDatFormatError } from './byte_cursor.ts';
import {
  decompress,
  DecompressError,
  MAX_CHUNK_UNCOMPRESSED,
  nativeZstdUsable,
  ZstdPipe,
  type DecompressBudget,
} from './decompress.ts';
import type { PageLayout } from './event_format.ts';
import type { FileSource } from './file_source.ts';
export { NATIVE_BATCH_BYTES };
import { decodePage, PageRecords, pageTimestamp, type TsBase } from './ring_buffer_page.ts';
import type { TscToNs } from './tsc_to_ns.ts';

/** Pages read per block for uncompressed data: 128 KiB at 4 KiB pages. */
const BLOCK_PAGES = 32;
/**
 * Uncompressed bytes per batch of compressed chunks sent to the zstd binary
 * (one round trip each; decoding a batch hides decompressing the next).
 * Without the binary one chunk (~10 pages) is decompressed at a time.
 */
const NATIVE_BATCH_BYTES = 1 << 20;
/** Bytes of compressed data read at a time. */
const COMPRESSED_WINDOW = 1 << 20;
/** Fresh zstd processes a stream may start after failures before sticking to fzstd. */
const MAX_PIPES = 4;
/**
 * Batch buffers a stream keeps for reuse once their blocks are decoded: as
 * many as it has batches alive at once (topUp's read-ahead depth, plus the
 * one being decoded). Without them every batch was a new ~1 MiB buffer that
 * lived on as garbage until V8 collected it, which it does only after
 * ~64 MB of such external allocation: tens of MB of each peak, by chance.
 */
const MAX_SPARE_BATCHES = 5;
/** Room past batchBytes in a reused batch buffer: a batch ends with the chunk that reaches batchBytes (10 pages, 40 KiB at 4 KiB pages). */
const BATCH_SLACK = 128 << 10;

export interface StreamConfig {
  src: FileSource;
  cpu: number;
  /** Index among all streams: lower wins timestamp ties (trace-cmd: lower CPU first). */
  order: number;
  offset: number;
  size: number;
  compressed: boolean;
  algorithm: string;
  pageSize: number;
  layout: PageLayout;
  littleEndian: boolean;
  report: (p: SkippedInput) => void;
  lost: (cpu: number, count: number | null, where: number) => void;
  /** Uncompressed bytes to decompress per native zstd batch (see NATIVE_BATCH_BYTES). */
  batchBytes: number;
  /** TSC cycles to ns (a TSC2NSEC file), else null; its base is set with the stream's. */
  tsc: TscToNs | null;
  /** The file's decompression budget, shared by all its streams (decompress.ts DecompressBudget). */
  budget: DecompressBudget;
}

/** Decompressed bytes reserved for one fetch, released when its last block is dropped. */
interface Batch {
  bytes: number;
  blocksLeft: number;
  /** The buffer its blocks are views of, reused for a later batch once they are all dropped. */
  backing?: Buffer;
}

interface Block {
  buf: Buffer;
  /** File offset of buf[0] (uncompressed), or of the compressed chunk it came from. */
  where: number;
  compressed: boolean;
  /** The reservation this block is part of (decompressed blocks only). */
  batch?: Batch;
}

type Fetched = { blocks: Block[]; end: boolean } | { error: unknown };

type ReadResult = { blocks: Block[]; end: boolean } | { chunks: RawChunk[]; end: boolean };

interface RawChunk {
  where: number;
  data: Buffer;
  usize: number;
}

export class CpuStream {
  readonly cpu: number;
  readonly order: number;
  readonly recs: PageRecords;
  /** Index of the current record in recs. */
  idx = 0;
  block: Buffer = Buffer.alloc(0);
  private blockWhere = 0;
  private blockCompressed = false;
  private blockBatch: Batch | undefined;
  /** Decompressed bytes this stream holds (its share of the budget). */
  held = 0;
  private pagePos = 0;
  private queue: Block[] = [];
  private pending: Promise<Fetched>[] = [];
  private readChain: Promise<unknown> = Promise.resolve();
  private readsDone = false;
  private finished = false;
  /** Next file position to read from. */
  private filePos: number;
  private readonly regionEnd: number;
  private readonly declaredEnd: number;
  private chunksLeft = -1;
  /** Header of the next chunk, read together with the previous chunk's data. */
  private nextChunkHeader: Buffer | null = null;
  private win: Buffer = Buffer.alloc(0);
  private winStart = 0;
  private pipe: ZstdPipe | null = null;
  private pipesStarted = 0;
  /** Batch buffers whose blocks are all decoded, to decompress the next batches into. */
  private spare: Buffer[] = [];
  /** File bytes consumed so far (progress). */
  bytesDone = 0;
  base: TsBase = { hi: 0, lo: 0 };

  constructor(private readonly cfg: StreamConfig) {
    this.cpu = cfg.cpu;
    this.order = cfg.order;
    this.recs = new PageRecords(cfg.pageSize);
    this.filePos = cfg.offset;
    // Compressed data: the stated size excludes the leading 4-byte chunk count.
    this.declaredEnd = cfg.offset + cfg.size + (cfg.compressed ? 4 : 0);
    this.regionEnd = Math.min(this.declaredEnd, cfg.src.size);
    if (this.declaredEnd > cfg.src.size) {
      cfg.report({
        where: cfg.src.size,
        unit: 'offset',
        reason: `cpu ${cfg.cpu} data truncated: file ends ${this.declaredEnd - cfg.src.size} bytes before the end of this CPU's data (offset ${cfg.offset}, size ${cfg.size})`,
        excerpt: '',
      });
    }
  }

  /**
   * `where` of a record: its file offset, or for a compressed chunk the
   * offset of the chunk (records inside it have no file position of their own).
   */
  recordWhere(recOffInBlock: number): number {
    return this.blockCompressed ? this.blockWhere : this.blockWhere + recOffInBlock;
  }

  /** Loads the first block without decoding, to learn the first page timestamp. */
  async firstPageTimestamp(): Promise<TsBase | null> {
    if (!(await this.loadBlock())) return null;
    if (this.block.length - this.pagePos < this.cfg.pageSize) return null;
    return pageTimestamp(this.block, this.pagePos, this.cfg.layout, this.cfg.littleEndian);
  }

  /**
   * Moves to the next page that has records, synchronously within the current
   * block. Returns false when the block is used up (call refill()).
   */
  nextPageSync(): boolean {
    const ps = this.cfg.pageSize;
    const recs = this.recs;
    while (this.pagePos + ps <= this.block.length) {
      const start = this.pagePos;
      this.pagePos += ps;
      decodePage(this.block, start, ps, this.cfg.layout, this.cfg.littleEndian, this.base, recs);
      if (this.cfg.tsc !== null) this.cfg.tsc.convert(recs.ts, recs.count);
      if (recs.lost !== 0) this.cfg.lost(this.cpu, recs.lost > 0 ? recs.lost : null, this.recordWhere(start));
      if (recs.error !== null) {
        this.cfg.report({
          where: this.recordWhere(recs.errorOff),
          unit: 'offset',
          reason: `cpu ${this.cpu}: corrupt ring-buffer page${this.blockCompressed ? ` (page at ${start} of the chunk decompressed from this offset)` : ''}: ${recs.error}; rest of page skipped`,
          excerpt: hexExcerpt(this.block, recs.errorOff, 24),
        });
      }
      this.idx = 0;
      if (recs.count > 0) return true;
    }
    if (this.pagePos < this.block.length) {
      const rest = this.block.length - this.pagePos;
      this.cfg.report({
        where: this.recordWhere(this.pagePos),
        unit: 'offset',
        reason: `cpu ${this.cpu}: partial page of ${rest} bytes (page size ${ps}) skipped`,
        excerpt: hexExcerpt(this.block, this.pagePos, 24),
      });
      this.pagePos = this.block.length;
    }
    recs.count = 0;
    this.idx = 0;
    return false;
  }

  /** Where the current page (the one recs holds) starts in `block`. */
  get pageStart(): number {
    return this.pagePos - this.cfg.pageSize;
  }

  get pageSize(): number {
    return this.cfg.pageSize;
  }

  /** Loads the next block and its first non-empty page; false at end of data. */
  async refill(): Promise<boolean> {
    for (;;) {
      if (!(await this.loadBlock())) return false;
      if (this.nextPageSync()) return true;
    }
  }

  /** Stops the zstd helper process, if any, and gives back what the stream holds of the budget. */
  close(): void {
    this.pipe?.close();
    this.pipe = null;
    this.queue = [];
    this.spare = [];
    this.block = Buffer.alloc(0);
    this.blockBatch = undefined;
    this.readsDone = true;
    this.cfg.budget.release(this, this.held);
  }

  /** The current block is done with: its batch's reservation goes back when all its blocks are. */
  private dropBlock(): void {
    const b = this.blockBatch;
    this.blockBatch = undefined;
    if (b && --b.blocksLeft === 0) {
      this.cfg.budget.release(this, b.bytes);
      if (b.backing !== undefined) this.giveBack(b.backing);
    }
  }

  /** A batch buffer nothing reads any more (its blocks are decoded), for reuse. */
  private giveBack(buf: Buffer): void {
    if (this.spare.length < MAX_SPARE_BATCHES && !this.readsDone) this.spare.push(buf);
  }

  /** A buffer for `size` bytes of a batch: a spare one if it is large enough, else a new one with room to be reused. */
  private batchBuffer(size: number): Buffer {
    const b = this.spare.pop();
    if (b !== undefined && b.length >= size) return b;
    return Buffer.allocUnsafe(Math.max(size, this.cfg.batchBytes + BATCH_SLACK));
  }

  /** Makes the next block current. False at the end. */
  private async loadBlock(): Promise<boolean> {
    if (this.pagePos < this.block.length) return true;
    // Used up: its share of the budget goes back before waiting for the next (which may need it).
    this.dropBlock();
    while (this.queue.length === 0) {
      if (this.finished) {
        this.dropBlock();
        return false;
      }
      this.topUp();
      const fetched = await this.pending.shift()!;
      if ('error' in fetched) {
        const e = fetched.error;
        if (!(e instanceof TraceDatFormatError)) throw e;
        this.cfg.report({
          where: e.where,
          unit: 'offset',
          reason: `cpu ${this.cpu}: ${e.message}; rest of this CPU's data skipped`,
          excerpt: '',
        });
        this.finished = true;
        this.dropBlock();
        return false;
      }
      this.queue = fetched.blocks;
      if (fetched.end) this.finished = true;
      else this.topUp(); // keep reading (and decompressing) ahead while this batch is decoded
    }
    const b = this.queue.shift()!;
    this.dropBlock();
    this.block = b.buf;
    this.blockBatch = b.batch;
    this.blockWhere = b.where;
    this.blockCompressed = b.compressed;
    this.pagePos = 0;
    return true;
  }

  /**
   * Keeps `depth` fetches in flight. File reads are chained (they share the
   * read position); decompression of a batch overlaps with the next reads, and
   * the zstd pipe returns batches in order.
   */
  private topUp(): void {
    const depth = this.cfg.compressed && this.cfg.algorithm === 'zstd' && nativeZstdUsable() ? 4 : 2;
    while (this.pending.length < depth && !this.readsDone) {
      const next = (): Promise<ReadResult> => (this.cfg.compressed ? this.readChunks() : this.readPages());
      const read = this.readChain.then(next);
      this.readChain = read.then(
        () => undefined,
        () => undefined,
      );
      // Errors are carried as values: a rejected read-ahead promise nobody awaits yet must not crash the process.
      this.pending.push(
        read
          .then(async (r): Promise<Fetched> => {
            if (r.end) this.readsDone = true;
            if ('blocks' in r) return r;
            return { blocks: await this.decompressChunks(r.chunks, r.end), end: r.end };
          })
          .then(
            (r) => r,
            (error: unknown) => {
              this.readsDone = true;
              return { error };
            },
          ),
      );
      // readsDone is only known once the read finishes; one extra empty fetch at the end is harmless.
      if (this.pending.length >= depth) break;
    }
  }

  private async readPages(): Promise<{ blocks: Block[]; end: boolean }> {
    const avail = this.regionEnd - this.filePos;
    if (avail <= 0) return { blocks: [], end: true };
    const len = Math.min(avail, BLOCK_PAGES * this.cfg.pageSize);
    const at = this.filePos;
    this.filePos += len;
    const buf = await this.cfg.src.read(at, len, `cpu ${this.cpu} pages`);
    this.bytesDone += len;
    return { blocks: [{ buf, where: at, compressed: false }], end: this.filePos >= this.regionEnd };
  }

  private async readChunks(): Promise<{ chunks: RawChunk[]; end: boolean }> {
    if (this.readsDone) return { chunks: [], end: true };
    const src = this.cfg.src;
    const le = this.cfg.littleEndian;
    if (this.chunksLeft < 0) {
      if (this.regionEnd - this.filePos < 12) return { chunks: [], end: true };
      const b = await src.read(this.filePos, 12, 'chunk count');
      this.chunksLeft = le ? b.readUInt32LE(0) : b.readUInt32BE(0);
      this.nextChunkHeader = b.subarray(4, 12);
      this.filePos += 4;
      this.bytesDone += 4;
    }
    // Collect up to BATCH_CHUNKS chunks: (where, compressed bytes, uncompressed size).
    const chunks: RawChunk[] = [];
    let end = false;
    const native = this.cfg.algorithm === 'zstd' && nativeZstdUsable();
    let batchBytes = 0;
    while (chunks.length === 0 || (native && batchBytes < this.cfg.batchBytes)) {
      if (this.chunksLeft <= 0) {
        end = true;
        break;
      }
      const at = this.filePos;
      const h = this.nextChunkHeader;
      if (!h || this.regionEnd - at < 8) {
        if (this.regionEnd >= this.declaredEnd) {
          this.cfg.report({
            where: at,
            unit: 'offset',
            reason: `cpu ${this.cpu}: ${this.chunksLeft} compressed chunks missing`,
            excerpt: '',
          });
        }
        end = true;
        break;
      }
      const csize = le ? h.readUInt32LE(0) : h.readUInt32BE(0);
      const usize = le ? h.readUInt32LE(4) : h.readUInt32BE(4);
      this.chunksLeft--;
      if (csize > this.regionEnd - at - 8) {
        this.cfg.report({
          where: at,
          unit: 'offset',
          reason: `cpu ${this.cpu}: compressed chunk of ${csize} bytes runs past the end of the data (${this.regionEnd - at - 8} bytes left); rest of this CPU's data skipped`,
          excerpt: hexExcerpt(h, 0, 8),
        });
        end = true;
        break;
      }
      // This chunk's data and the next chunk's header, from the read window.
      const withNext = this.chunksLeft > 0 && this.regionEnd - (at + 8 + csize) >= 8 ? 8 : 0;
      const data = await this.windowed(at + 8, csize + withNext);
      this.nextChunkHeader = withNext ? data.subarray(csize) : null;
      this.filePos = at + 8 + csize;
      this.bytesDone += 8 + csize;
      if (usize > MAX_CHUNK_UNCOMPRESSED || usize % this.cfg.pageSize !== 0) {
        this.cfg.report({
          where: at,
          unit: 'offset',
          reason: `cpu ${this.cpu}: compressed chunk claims implausible size ${usize}; chunk skipped`,
          excerpt: hexExcerpt(h, 0, 8),
        });
        continue;
      }
      // Counted before anything is inflated: chunks that claim far more than they hold are refused here.
      this.cfg.budget.count(8 + csize, usize, at);
      chunks.push({ where: at, data: data.subarray(0, csize), usize });
      batchBytes += usize;
    }
    // Reads are chained per stream, so this is the stream's oldest unreserved fetch.
    if (batchBytes > 0) await this.cfg.budget.reserve(this, batchBytes, chunks[0]!.where);
    return { chunks, end };
  }

  /**
   * Compressed data is read in windows of ~1 MiB rather than one read per
   * chunk (thousands of small async reads cost more than the copies).
   */
  private async windowed(at: number, len: number): Promise<Buffer> {
    const rel = at - this.winStart;
    if (rel >= 0 && rel + len <= this.win.length) return this.win.subarray(rel, rel + len);
    const want = Math.min(Math.max(len, COMPRESSED_WINDOW), this.regionEnd - at);
    this.win = await this.cfg.src.read(at, want, 'compressed chunk');
    this.winStart = at;
    return this.win.subarray(0, len);
  }

  private async decompressChunks(chunks: RawChunk[], last: boolean): Promise<Block[]> {
    if (chunks.length === 0) return [];
    const reserved = chunks.reduce((a, c) => a + c.usize, 0);
    const { blocks, backing } = await this.inflateChunks(chunks, last);
    // The reservation travels with the blocks; skipped chunks give theirs back now.
    const kept = blocks.reduce((a, b) => a + b.buf.length, 0);
    if (reserved - kept > 0) this.cfg.budget.release(this, reserved - kept);
    if (blocks.length > 0) {
      const batch: Batch = { bytes: kept, blocksLeft: blocks.length, backing };
      for (const b of blocks) b.batch = batch;
    } else if (backing !== undefined) this.giveBack(backing);
    return blocks;
  }

  private async inflateChunks(chunks: RawChunk[], last: boolean): Promise<{ blocks: Block[]; backing?: Buffer }> {
    if (this.cfg.algorithm === 'zstd' && nativeZstdUsable()) {
      if ((!this.pipe || !this.pipe.usable) && this.pipesStarted < MAX_PIPES) {
        this.pipe = ZstdPipe.create();
        this.pipesStarted++;
      }
      const total = chunks.reduce((a, c) => a + c.usize, 0);
      const into = this.pipe?.usable ? this.batchBuffer(total) : undefined;
      const out =
        this.pipe !== null && into !== undefined
          ? await this.pipe.decompress(
              chunks.map((c) => c.data),
              total,
              last,
              into,
            )
          : null;
      if (out) {
        let p = 0;
        const blocks: Block[] = chunks.map((c) => {
          const buf = out.subarray(p, p + c.usize);
          p += c.usize;
          return { buf, where: c.where, compressed: true };
        });
        // decompressChunks makes the batch; its buffer comes back to `spare` when the last block is dropped.
        return { blocks, backing: into };
      }
      if (into !== undefined) this.giveBack(into);
    }
    const blocks: Block[] = [];
    for (const c of chunks) {
      try {
        blocks.push({ buf: decompress(this.cfg.algorithm, c.data, c.usize), where: c.where, compressed: true });
      } catch (e) {
        if (!(e instanceof DecompressError)) throw e;
        this.cfg.report({
          where: c.where,
          unit: 'offset',
          reason: `cpu ${this.cpu}: bad compressed chunk (${e.message}); chunk skipped`,
          excerpt: hexExcerpt(c.data, 0, 16),
        });
      }
    }
    return { blocks };
  }
}
