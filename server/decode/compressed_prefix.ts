/**
 * What a truncated or corrupt compressed trace still holds: everything
 * decompressed before the failure.
 *
 * Why: a cut-off copy of `trace.txt.gz` or `trace.dat.zst` (an interrupted
 * scp, a full disk) is common, and `zcat | less` shows every line before the
 * cut. Failing the whole ingest would throw those away, while an
 * uncompressed file cut the same way ingests up to the cut. So the failure
 * ends the input instead, and becomes one skipped input (its compressed
 * offset and the decompressor's reason), reported like any other.
 */
import { DecodeError, DecompressionBombError, type SkippedInput } from './decoded_event.ts';

/** A text line longer than this is not held back waiting for its end. */
const MAX_HELD_LINE_BYTES = 1 << 20;
const EXCERPT_BYTES = 200;

export class CompressedPrefix {
  /** The decompressor's failure, once the input ended on one (null: it ended cleanly). */
  failure: DecodeError | null = null;
  /** The text line the failure cut off (not given to the decoder). */
  private cutLine: Uint8Array | null = null;

  constructor(private readonly src: AsyncIterable<Uint8Array>) {}

  /** The decompressed chunks, ending (without an error) where decompression failed. */
  async *chunks(): AsyncGenerator<Uint8Array> {
    try {
      for await (const c of this.src) yield c;
    } catch (e) {
      // A damaged stream ends the input; a refused one (a bomb) ends the ingest.
      if (!(e instanceof DecodeError) || e instanceof DecompressionBombError) throw e;
      this.failure = e;
    }
  }

  /**
   * The decompressed text in whole lines: the bytes after a chunk's last
   * newline wait for the next chunk, so the line a failure cut in two is
   * dropped rather than read as a shorter event (`nr_reclaimed=5` of `=512`).
   * Chunks are passed on as views, not copied; only held line ends are.
   */
  async *wholeLines(): AsyncGenerator<Uint8Array> {
    // The held line end, in parts: joined once its line ends (or it grows
    // too long), so a long line costs one copy, not one per chunk.
    let held: Uint8Array[] = [];
    let heldBytes = 0;
    const join = (tail: Uint8Array | null): Uint8Array => {
      if (tail) held.push(tail);
      const line = held.length === 1 ? held[0]! : Buffer.concat(held);
      held = [];
      heldBytes = 0;
      return line;
    };
    for await (const c of this.chunks()) {
      if (c.length === 0) continue;
      const first = c.indexOf(10);
      if (first < 0) {
        held.push(c.slice());
        heldBytes += c.length;
        if (heldBytes > MAX_HELD_LINE_BYTES) yield join(null);
        continue;
      }
      if (heldBytes > 0) yield join(c.subarray(0, first + 1));
      else yield c.subarray(0, first + 1);
      const last = c.lastIndexOf(10);
      if (last > first) yield c.subarray(first + 1, last + 1);
      if (last + 1 < c.length) {
        held.push(c.slice(last + 1));
        heldBytes += c.length - last - 1;
      }
    }
    if (heldBytes === 0) return;
    const rest = join(null);
    if (this.failure) this.cutLine = rest;
    else yield rest; // a last line without a newline, in a stream that ended cleanly
  }

  /** The failure as a skipped input (call once the input ended on one). */
  problem(): SkippedInput {
    const f = this.failure!;
    const cut = this.cutLine;
    return {
      where: f.where,
      unit: f.unit,
      reason: `${f.reason}; the input ends here${cut ? ', including the line it cut' : ''}`,
      excerpt: cut ? Buffer.from(cut.subarray(0, EXCERPT_BYTES)).toString('latin1') : '',
    };
  }
}
