/**
 * One CPU's ring-buffer data, read a block at a time (a few pages, or one
 * compressed chunk) and decoded a page at a time. Damage is reported through
 * `report` with file offsets and reading continues with the next page/chunk.
 */
import type { SkippedInput } from '../decoded_event.ts';
import { hexExcerpt, TraceDatFormatError } from './byte_cursor.ts';
import { decompress, DecompressError, MAX_UNCOMPRESSED } from './decompress.ts';
import type { PageLayout } from './event_format.ts';
import type { FileSource } from './file_source.ts';
import { decodePage, PageRecords, pageTimestamp, type TsBase } from './ring_buffer_page.ts';

/** Pages read per block for uncompressed data: 128 KiB at 4 KiB pages. */
const BLOCK_PAGES = 32;

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
}

export class CpuStream {
  readonly cpu: number;
  readonly order: number;
  readonly recs: PageRecords;
  /** Index of the current record in recs. */
  idx = 0;
  /** Current block of pages and where it came from. */
  block: Buffer = Buffer.alloc(0);
  /** File offset of block[0] (uncompressed), or of the compressed chunk (compressed). */
  blockWhere = 0;
  private blockCompressed = false;
  private pagePos = 0;
  /** Next file position to read from. */
  private filePos: number;
  private readonly regionEnd: number;
  private chunksLeft = -1;
  private finished = false;
  /** File bytes consumed so far (progress). */
  bytesDone = 0;
  base: TsBase = { hi: 0, lo: 0 };

  constructor(private readonly cfg: StreamConfig) {
    this.cpu = cfg.cpu;
    this.order = cfg.order;
    this.recs = new PageRecords(cfg.pageSize);
    this.filePos = cfg.offset;
    // Compressed data: the stated size excludes the leading 4-byte chunk count.
    const declaredEnd = cfg.offset + cfg.size + (cfg.compressed ? 4 : 0);
    this.regionEnd = Math.min(declaredEnd, cfg.src.size);
    if (declaredEnd > cfg.src.size) {
      cfg.report({
        where: cfg.src.size,
        unit: 'offset',
        reason: `cpu ${cfg.cpu} data truncated: file ends ${declaredEnd - cfg.src.size} bytes before the end of this CPU's data (offset ${cfg.offset}, size ${cfg.size})`,
        excerpt: '',
      });
    }
  }

  /**
   * `where` of a record: its file offset, or for a compressed chunk the
   * offset of the chunk (records inside it have no file position of their own).
   */
  blockCompressedWhere(recOffInBlock: number): number {
    return this.blockCompressed ? this.blockWhere : this.blockWhere + recOffInBlock;
  }

  /** True when the stream has a current record (recs.count > idx). */
  get hasRecord(): boolean {
    return this.idx < this.recs.count;
  }

  /** Reads the first block without decoding, to learn the first page timestamp. */
  async firstPageTimestamp(): Promise<TsBase | null> {
    if (!(await this.loadBlock())) return null;
    const ps = this.cfg.pageSize;
    if (this.block.length - this.pagePos < ps) return null;
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
      const pageWhere = this.blockCompressed ? this.blockWhere : this.blockWhere + start;
      if (recs.lost !== 0) this.cfg.lost(this.cpu, recs.lost > 0 ? recs.lost : null, pageWhere);
      if (recs.error !== null) {
        this.cfg.report({
          where: this.blockCompressed ? this.blockWhere : this.blockWhere + recs.errorOff,
          unit: 'offset',
          reason: `cpu ${this.cpu}: corrupt ring-buffer page${this.blockCompressed ? ` (at ${start} in the chunk decompressed from this offset)` : ''}: ${recs.error}; rest of page skipped`,
          excerpt: hexExcerpt(this.block, recs.errorOff, 24),
        });
      }
      this.idx = 0;
      if (recs.count > 0) return true;
    }
    if (this.pagePos < this.block.length) {
      const rest = this.block.length - this.pagePos;
      this.cfg.report({
        where: this.blockCompressed ? this.blockWhere : this.blockWhere + this.pagePos,
        unit: 'offset',
        reason: `cpu ${this.cpu}: partial page of ${rest} bytes (page size ${ps}) skipped`,
        excerpt: hexExcerpt(this.block, this.pagePos, 24),
      });
      this.pagePos = this.block.length;
    }
    this.recs.count = 0;
    this.idx = 0;
    return false;
  }

  /** Loads the next block and its first non-empty page; false at end of data. */
  async refill(): Promise<boolean> {
    for (;;) {
      if (!(await this.loadBlock())) return false;
      if (this.nextPageSync()) return true;
    }
  }

  /** Reads the next block (pages or one decompressed chunk). False at the end. */
  private async loadBlock(): Promise<boolean> {
    if (this.finished) return false;
    if (this.pagePos < this.block.length) return true;
    try {
      const ok = this.cfg.compressed ? await this.loadChunk() : await this.loadPages();
      if (!ok) this.finished = true;
      return ok;
    } catch (e) {
      if (!(e instanceof TraceDatFormatError)) throw e;
      this.cfg.report({ where: e.where, unit: 'offset', reason: `cpu ${this.cpu}: ${e.message}; rest of this CPU's data skipped`, excerpt: '' });
      this.finished = true;
      return false;
    }
  }

  private async loadPages(): Promise<boolean> {
    const avail = this.regionEnd - this.filePos;
    if (avail <= 0) return false;
    const len = Math.min(avail, BLOCK_PAGES * this.cfg.pageSize);
    this.block = await this.cfg.src.read(this.filePos, len, `cpu ${this.cpu} pages`);
    this.blockWhere = this.filePos;
    this.blockCompressed = false;
    this.pagePos = 0;
    this.filePos += len;
    this.bytesDone += len;
    return true;
  }

  private async loadChunk(): Promise<boolean> {
    const src = this.cfg.src;
    const le = this.cfg.littleEndian;
    if (this.chunksLeft < 0) {
      if (this.regionEnd - this.filePos < 4) return false;
      const b = await src.read(this.filePos, 4, 'chunk count');
      this.chunksLeft = le ? b.readUInt32LE(0) : b.readUInt32BE(0);
      this.filePos += 4;
      this.bytesDone += 4;
    }
    for (;;) {
      if (this.chunksLeft <= 0) return false;
      const at = this.filePos;
      if (this.regionEnd - at < 8) {
        if (this.chunksLeft > 0 && this.regionEnd < this.cfg.offset + this.cfg.size + 4) {
          // already reported as truncated in the constructor
        } else if (this.chunksLeft > 0) {
          this.cfg.report({ where: at, unit: 'offset', reason: `cpu ${this.cpu}: ${this.chunksLeft} compressed chunks missing`, excerpt: '' });
        }
        return false;
      }
      const h = await src.read(at, 8, 'chunk header');
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
        return false;
      }
      this.filePos = at + 8 + csize;
      this.bytesDone += 8 + csize;
      if (usize > MAX_UNCOMPRESSED || usize % this.cfg.pageSize !== 0) {
        this.cfg.report({ where: at, unit: 'offset', reason: `cpu ${this.cpu}: compressed chunk claims implausible size ${usize}; chunk skipped`, excerpt: hexExcerpt(h, 0, 8) });
        continue;
      }
      const data = await src.read(at + 8, csize, 'compressed chunk');
      try {
        this.block = decompress(this.cfg.algorithm, data, usize);
      } catch (e) {
        if (!(e instanceof DecompressError)) throw e;
        this.cfg.report({ where: at, unit: 'offset', reason: `cpu ${this.cpu}: bad compressed chunk (${e.message}); chunk skipped`, excerpt: hexExcerpt(data, 0, 16) });
        continue;
      }
      this.blockWhere = at;
      this.blockCompressed = true;
      this.pagePos = 0;
      return true;
    }
  }
}
