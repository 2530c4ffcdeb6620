/**
 * Positional reads from the trace file. The decoder never holds the whole
 * file: every read names its offset and length, and lengths are checked
 * against the real file size first so a hostile size field cannot make us
 * allocate more than the file could contain.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { TraceDatFormatError } from './byte_cursor.ts';

export class FileSource {
  private constructor(
    private readonly fh: FileHandle,
    readonly size: number,
  ) {}

  static async open(path: string): Promise<FileSource> {
    const fh = await open(path, 'r');
    try {
      const st = await fh.stat();
      return new FileSource(fh, st.size);
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  /**
   * Reads exactly len bytes at offset or throws TraceDatFormatError (truncated).
   * With `into` of at least len bytes, reads into its start and returns a new
   * view of it (a new object each call, so identity checks on views see a new
   * read): a reader that slides a window through the file reuses one buffer
   * instead of a fresh one per read, whose garbage makes V8 run full
   * collections (it counts external memory).
   */
  async read(offset: number, len: number, what: string, into?: Buffer): Promise<Buffer> {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(len) || offset < 0 || len < 0) {
      throw new TraceDatFormatError(
        Math.max(0, Math.min(offset, this.size)),
        `invalid ${what} range (${offset}, ${len})`,
      );
    }
    if (offset + len > this.size) {
      throw new TraceDatFormatError(
        Math.min(offset, this.size),
        `truncated: ${what} needs ${len} bytes at offset ${offset}, file has ${this.size}`,
      );
    }
    const buf = into !== undefined && into.length >= len ? into.subarray(0, len) : Buffer.allocUnsafe(len);
    let done = 0;
    while (done < len) {
      const { bytesRead } = await this.fh.read(buf, done, len - done, offset + done);
      if (bytesRead === 0) throw new TraceDatFormatError(offset + done, `unexpected end of file reading ${what}`);
      done += bytesRead;
    }
    return buf;
  }

  /** Reads up to len bytes (fewer at end of file). */
  async readUpTo(offset: number, len: number): Promise<Buffer> {
    const n = Math.max(0, Math.min(len, this.size - offset));
    if (n === 0) return Buffer.alloc(0);
    return this.read(offset, n, 'data');
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}
