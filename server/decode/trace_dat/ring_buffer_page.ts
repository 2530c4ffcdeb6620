/**
 * Decodes one ring-buffer page (sub-buffer) into record positions and
 * timestamps, following libtraceevent's kbuffer-parse.c:
 *
 *   page header: u64 timestamp, commit (long: data size in the low 27 bits,
 *   bit 31 = events were missed before this page, bit 30 = the missed count
 *   is stored right after the data), then the data.
 *   record header: u32 with type_len (5 bits) and time_delta (27 bits):
 *     29 padding (time_delta 0: rest of page is empty; else array[0] = length),
 *     30 time extend (delta += array[0] << 27),
 *     31 absolute timestamp (lower 59 bits, array[0] << 27 | time_delta),
 *     0  length in array[0] (including itself), data after it,
 *     1..28 data of type_len * 4 bytes.
 *
 * Timestamps are kept as numbers relative to a base (hi/lo arithmetic), so no
 * bigint is created per record.
 */
import type { PageLayout } from './event_format.ts';

const TYPE_PADDING = 29;
const TYPE_TIME_EXTEND = 30;
const TYPE_TIME_STAMP = 31;
const COMMIT_MASK = (1 << 27) - 1;
const MISSED_EVENTS = 0x80000000;
const MISSED_STORED = 0x40000000;
const TWO_POW_27 = 134217728;
const TWO_POW_32 = 4294967296;

/** Reusable output of decodePage (one per CPU stream, sized for the page). */
export class PageRecords {
  count = 0;
  readonly ts: Float64Array;
  /** Offset of the record's data (event payload) in the buffer. */
  readonly dataOff: Int32Array;
  readonly dataLen: Int32Array;
  /** Offset of the record's header in the buffer (for `where`). */
  readonly recOff: Int32Array;
  /** 0: none, >0: count, -1: events were lost but the count is unknown. */
  lost = 0;
  /** First damage found in the page, if any (decoding stops there). */
  error: string | null = null;
  errorOff = 0;

  constructor(pageSize: number) {
    const max = (pageSize >> 2) + 1;
    this.ts = new Float64Array(max);
    this.dataOff = new Int32Array(max);
    this.dataLen = new Int32Array(max);
    this.recOff = new Int32Array(max);
  }
}

export interface TsBase {
  hi: number;
  lo: number;
}

/**
 * Decodes the page at buf[start, start + pageSize). Timestamps come out in ns
 * relative to base.
 */
export function decodePage(
  buf: Buffer,
  start: number,
  pageSize: number,
  layout: PageLayout,
  littleEndian: boolean,
  base: TsBase,
  out: PageRecords,
): void {
  out.count = 0;
  out.lost = 0;
  out.error = null;
  const tsPos = start + layout.timestampOffset;
  const tsLo = littleEndian ? buf.readUInt32LE(tsPos) : buf.readUInt32BE(tsPos + 4);
  const tsHi = littleEndian ? buf.readUInt32LE(tsPos + 4) : buf.readUInt32BE(tsPos);
  let ts = (tsHi - base.hi) * TWO_POW_32 + (tsLo - base.lo);
  const cPos = start + layout.commitOffset;
  // The flag bits live in the low 32 bits of the commit word.
  const commit = littleEndian ? buf.readUInt32LE(cPos) : buf.readUInt32BE(cPos + (layout.commitSize === 8 ? 4 : 0));
  let size = commit & COMMIT_MASK;
  const dataStart = start + layout.dataOffset;
  const maxData = pageSize - layout.dataOffset;
  if (size > maxData) {
    out.error = `page commit size ${size} exceeds page data size ${maxData}`;
    out.errorOff = cPos;
    size = maxData;
  }
  const end = dataStart + size;
  if (commit & MISSED_EVENTS) {
    if (commit & MISSED_STORED && end + layout.commitSize <= start + pageSize) {
      const lo = littleEndian ? buf.readUInt32LE(end) : buf.readUInt32BE(end + layout.commitSize - 4);
      const hi = layout.commitSize === 8 ? (littleEndian ? buf.readUInt32LE(end + 4) : buf.readUInt32BE(end)) : 0;
      out.lost = hi * TWO_POW_32 + lo;
    } else out.lost = -1;
  }
  const ts_ = out.ts;
  const dOff = out.dataOff;
  const dLen = out.dataLen;
  const rOff = out.recOff;
  let n = 0;
  let p = dataStart;
  while (p < end) {
    if (p + 4 > end) {
      out.error = 'record header crosses the end of page data';
      out.errorOff = p;
      break;
    }
    const rec = p;
    const h = littleEndian ? buf.readUInt32LE(p) : buf.readUInt32BE(p);
    const typeLen = littleEndian ? h & 31 : h >>> 27;
    const delta = littleEndian ? h >>> 5 : h & 0x7ffffff;
    p += 4;
    if (typeLen >= 1 && typeLen <= 28) {
      const len = typeLen << 2;
      if (p + len > end) {
        out.error = `record of ${len} bytes crosses the end of page data`;
        out.errorOff = rec;
        break;
      }
      ts += delta;
      ts_[n] = ts;
      dOff[n] = p;
      dLen[n] = len;
      rOff[n] = rec;
      n++;
      p += len;
    } else if (typeLen === 0) {
      if (p + 4 > end) {
        out.error = 'record length crosses the end of page data';
        out.errorOff = rec;
        break;
      }
      const raw = littleEndian ? buf.readUInt32LE(p) : buf.readUInt32BE(p);
      p += 4;
      const len = ((raw - 4 + 3) & ~3) >>> 0;
      if (raw < 4 || p + len > end) {
        out.error = `bad record length ${raw}`;
        out.errorOff = rec;
        break;
      }
      ts += delta;
      ts_[n] = ts;
      dOff[n] = p;
      dLen[n] = len;
      rOff[n] = rec;
      n++;
      p += len;
    } else if (typeLen === TYPE_TIME_EXTEND) {
      if (p + 4 > end) {
        out.error = 'time extend crosses the end of page data';
        out.errorOff = rec;
        break;
      }
      const ext = littleEndian ? buf.readUInt32LE(p) : buf.readUInt32BE(p);
      p += 4;
      ts += ext * TWO_POW_27 + delta;
    } else if (typeLen === TYPE_TIME_STAMP) {
      if (p + 4 > end) {
        out.error = 'absolute timestamp crosses the end of page data';
        out.errorOff = rec;
        break;
      }
      const ext = littleEndian ? buf.readUInt32LE(p) : buf.readUInt32BE(p);
      p += 4;
      // Lower 59 bits are stored; the top 5 come from the page timestamp (kbuffer does the same).
      const low59 = (BigInt(ext) << 27n) | BigInt(delta);
      const pageTs = (BigInt(tsHi) << 32n) | BigInt(tsLo);
      const abs = (pageTs & ~((1n << 59n) - 1n)) | low59;
      ts = Number(abs - ((BigInt(base.hi) << 32n) | BigInt(base.lo)));
    } else {
      // padding: time_delta 0 means the rest of the page is unused
      if (delta === 0) break;
      if (p + 4 > end) break;
      const len = littleEndian ? buf.readUInt32LE(p) : buf.readUInt32BE(p);
      if (len === 0 || p + len > end) {
        if (p + len > end) {
          out.error = `padding of ${len} bytes crosses the end of page data`;
          out.errorOff = rec;
        }
        break;
      }
      p += len;
    }
  }
  out.count = n;
  void TYPE_PADDING;
}

/** The page's header timestamp as {hi, lo}. */
export function pageTimestamp(buf: Buffer, start: number, layout: PageLayout, littleEndian: boolean): TsBase {
  const tsPos = start + layout.timestampOffset;
  return {
    lo: littleEndian ? buf.readUInt32LE(tsPos) : buf.readUInt32BE(tsPos + 4),
    hi: littleEndian ? buf.readUInt32LE(tsPos + 4) : buf.readUInt32BE(tsPos),
  };
}
