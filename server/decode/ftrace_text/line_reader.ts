/**
 * Streaming line splitter for trace text.
 *
 * - Lines may span chunk boundaries; `\n` and `\r\n` both end a line.
 * - Bytes are decoded as UTF-8 with replacement characters (U+FFFD), so a
 *   non-UTF-8 task name never throws.
 * - Every line comes with its 1-based line number and the byte offset of its
 *   first byte in the stream.
 * - A line longer than the cap is not buffered: it is reported once (line
 *   number, offset, excerpt of its start) and its bytes are discarded until
 *   the next newline, so a 100 MB line without newline cannot exhaust memory.
 *
 * Fast path: when a chunk's complete lines are pure ASCII (buffer.isAscii,
 * native), they are handed over as bytes, no string made: most lines are
 * read on bytes (parse_event_line.ts parseNormalLineBytes), and a string of a
 * 1 MiB block per chunk, on the main thread, kept the garbage collector busy
 * on another core. Blocks containing non-ASCII bytes are decoded line by
 * line as UTF-8.
 */

/** Longest line accepted. Real ftrace lines are < 4 KB; 1 MiB leaves ample room. */
export const MAX_LINE_BYTES = 1 << 20;
/** Excerpt length for reports of skipped input. */
export const EXCERPT_CHARS = 200;

export interface LineHandler {
  /**
   * One complete line of ASCII text, without its line terminator:
   * block[start, end). The block (several lines) is a fresh view per block,
   * valid during the call only.
   */
  asciiLine(block: Uint8Array, start: number, end: number, lineNo: number, byteOffset: number): void;
  /**
   * Optional: every line of a block of ASCII lines at once (block ends just
   * past a '\n'; lines end at "\n" or "\r\n"), instead of asciiLine() per
   * line. `lineNo` is the number of the line before the first. Returns how
   * many lines the block held.
   */
  asciiBlock?(block: Uint8Array, lineNo: number): number;
  /** Any other line (non-ASCII bytes decoded as UTF-8, or a last line without terminator), without its terminator. */
  line(text: string, lineNo: number, byteOffset: number): void;
  /** A line exceeding the cap, skipped. `bytes` is its full length. */
  tooLong(lineNo: number, byteOffset: number, excerpt: string, bytes: number): void;
}

import { isAscii } from 'node:buffer';

const NL = 0x0a;

function asBuffer(u: Uint8Array): Buffer {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

export class LineSplitter {
  private lineNo = 0;
  /** Offset of the next unconsumed byte in the stream. */
  private offset = 0;
  /** Partial line carried over from previous chunks. */
  private carry: Buffer[] = [];
  private carryBytes = 0;
  /** Set while discarding an over-long line. */
  private longLine: { lineNo: number; offset: number; excerpt: string; bytes: number } | null = null;
  private first = true;

  constructor(
    private readonly handler: LineHandler,
    private readonly maxLineBytes: number = MAX_LINE_BYTES,
  ) {}

  /** Bytes consumed so far (including a pending partial line). */
  get bytesSeen(): number {
    return this.offset + this.carryBytes + (this.longLine ? this.longLine.bytes : 0);
  }

  push(chunkIn: Uint8Array): void {
    let chunk = asBuffer(chunkIn);
    if (chunk.length === 0) return;
    if (this.first) {
      this.first = false;
      // UTF-8 byte order mark: not part of the first line.
      if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) {
        this.offset += 3;
        chunk = chunk.subarray(3);
      }
    }
    let pos = 0;
    const len = chunk.length;

    if (this.longLine) {
      const nl = chunk.indexOf(NL);
      if (nl < 0) {
        this.longLine.bytes += len;
        return;
      }
      this.longLine.bytes += nl;
      this.finishLongLine(nl + 1);
      pos = nl + 1;
    } else if (this.carryBytes > 0) {
      const nl = chunk.indexOf(NL);
      if (nl < 0) {
        this.addCarry(chunk);
        return;
      }
      this.carry.push(chunk.subarray(0, nl + 1));
      const lineBuf = Buffer.concat(this.carry, this.carryBytes + nl + 1);
      this.carry = [];
      this.carryBytes = 0;
      if (lineBuf.length - 1 > this.maxLineBytes) {
        this.longLine = {
          lineNo: this.lineNo + 1,
          offset: this.offset,
          excerpt: excerptOf(lineBuf),
          bytes: lineBuf.length - 1,
        };
        this.finishLongLine(lineBuf.length);
      } else {
        this.emitBlock(lineBuf, 0, lineBuf.length);
      }
      pos = nl + 1;
    }

    if (pos >= len) return;
    const lastNl = chunk.lastIndexOf(NL);
    if (lastNl >= pos) {
      this.emitBlock(chunk, pos, lastNl + 1);
      pos = lastNl + 1;
    }
    if (pos < len) this.addCarry(chunk.subarray(pos));
  }

  /** Flushes a final line without terminator. */
  end(): void {
    if (this.longLine) {
      this.finishLongLine(0);
      return;
    }
    if (this.carryBytes > 0) {
      const buf = Buffer.concat(this.carry, this.carryBytes);
      this.carry = [];
      this.carryBytes = 0;
      const text = stripCr(buf.toString('utf8'));
      this.lineNo++;
      this.handler.line(text, this.lineNo, this.offset);
      this.offset += buf.length;
    }
  }

  private addCarry(part: Buffer): void {
    if (this.carryBytes + part.length > this.maxLineBytes) {
      const head = Buffer.concat([...this.carry, part]);
      this.longLine = { lineNo: this.lineNo + 1, offset: this.offset, excerpt: excerptOf(head), bytes: head.length };
      this.carry = [];
      this.carryBytes = 0;
      return;
    }
    // copy: the producer may reuse its buffers
    this.carry.push(Buffer.from(part));
    this.carryBytes += part.length;
  }

  /** Reports the over-long line; `consumedTerminator` bytes of newline are accounted. */
  private finishLongLine(consumedTerminator: number): void {
    const l = this.longLine!;
    this.longLine = null;
    this.lineNo = l.lineNo;
    this.handler.tooLong(l.lineNo, l.offset, l.excerpt, l.bytes);
    this.offset = l.offset + l.bytes + (consumedTerminator > 0 ? 1 : 0);
  }

  /** Emits the complete lines in buf[start, end) (end is just past a '\n'). */
  private emitBlock(buf: Buffer, start: number, end: number): void {
    const h = this.handler;
    const bytes = buf.subarray(start, end);
    if (isAscii(bytes)) {
      // Positions in the block are byte offsets; the block ends just past a '\n'.
      const base = this.offset;
      const n = bytes.length;
      if (h.asciiBlock !== undefined) {
        this.lineNo += h.asciiBlock(bytes, this.lineNo);
        this.offset = base + n;
        return;
      }
      let p = 0;
      let lineNo = this.lineNo;
      while (p < n) {
        const nl = bytes.indexOf(NL, p);
        let e = nl;
        if (e > p && bytes[e - 1] === 13) e--;
        lineNo++;
        h.asciiLine(bytes, p, e, lineNo, base + p);
        p = nl + 1;
      }
      this.lineNo = lineNo;
      this.offset = base + n;
      return;
    }
    // Non-ASCII somewhere: split on bytes so offsets stay exact.
    let p = start;
    while (p < end) {
      const nl = buf.indexOf(NL, p);
      const lineText = stripCr(buf.toString('utf8', p, nl));
      this.lineNo++;
      h.line(lineText, this.lineNo, this.offset);
      this.offset += nl + 1 - p;
      p = nl + 1;
    }
  }
}

function stripCr(s: string): string {
  const n = s.length;
  if (n > 0 && s.charCodeAt(n - 1) === 13) return s.slice(0, n - 1);
  if (n > 0 && s.charCodeAt(n - 1) === 10) return stripCr(s.slice(0, n - 1));
  return s;
}

function excerptOf(buf: Buffer): string {
  return buf
    .toString('utf8', 0, Math.min(buf.length, EXCERPT_CHARS * 2))
    .slice(0, EXCERPT_CHARS)
    .replace(/[\r\n]+$/, '');
}

/** Excerpt of a line for SkippedInput (at most EXCERPT_CHARS characters). */
export function excerpt(line: string): string {
  return line.length <= EXCERPT_CHARS ? line : line.slice(0, EXCERPT_CHARS);
}
