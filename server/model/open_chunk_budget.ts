/**
 * A bound on the bytes of the buffers a thread's column chunks hold while
 * they fill (column_chunk.ts): one chunk per table that has rows not yet
 * handed over.
 *
 * Why: each table holds its chunk until it fills (up to CHUNK_ROWS rows),
 * however slowly its rows come, so these bytes follow the number of tables
 * a trace fills, not the rows in flight: ~23 MB in the field worker on a
 * `trace-cmd record -e all` trace.dat (412 tables), of which ~7 MB were
 * rows. Past the budget, the chunks with the most unfilled bytes are handed
 * over part-filled (ColumnChunk.flushForRoom, which also shrinks their next
 * chunk to the rows they took), so a table that fills slowly holds a small
 * buffer. Rows keep their order in each table; only where chunks end moves.
 */
import type { BufferSource } from './buffer_source.ts';
import type { ChunkBudget, ColumnChunk } from './column_chunk.ts';

export class OpenChunkBudget implements ChunkBudget {
  /** The chunks holding a buffer. */
  private readonly open = new Set<ColumnChunk>();
  /** Bytes of their buffers, and the most of them (after making room). */
  private bytes = 0;
  peakBytes = 0;
  /** Chunks handed over part-filled to make room. */
  flushes = 0;

  constructor(
    readonly budgetBytes: number,
    private readonly buffers: BufferSource,
  ) {}

  take(bytes: number, zeroed?: boolean): ArrayBuffer {
    return this.buffers.take(bytes, zeroed);
  }

  opening(chunk: ColumnChunk, bytes: number): void {
    while (this.bytes + bytes > this.budgetBytes) {
      const chunk = this.mostUnfilled();
      if (chunk === null) break;
      this.flushes++;
      chunk.flushForRoom();
    }
    this.open.add(chunk);
    this.bytes += bytes;
    if (this.bytes > this.peakBytes) this.peakBytes = this.bytes;
  }

  closed(chunk: ColumnChunk, bytes: number): void {
    if (this.open.delete(chunk)) this.bytes -= bytes;
  }

  /** The bytes the chunks hold now. */
  get heldBytes(): number {
    return this.bytes;
  }

  /** For `[timing]` lines. */
  describe(): string {
    const mb = (b: number) => (b / 1048576).toFixed(1);
    return `chunks being filled at most ${mb(this.peakBytes)} of ${mb(this.budgetBytes)} MB, ${this.flushes} handed over part-filled`;
  }

  /** The chunk with the most unfilled bytes among those between rows (a row being written stays where it is). */
  private mostUnfilled(): ColumnChunk | null {
    let best: ColumnChunk | null = null;
    let bestBytes = 0;
    for (const c of this.open) {
      if (c.inRow) continue;
      const b = c.unfilledBytes;
      if (b > bestBytes) {
        best = c;
        bestBytes = b;
      }
    }
    return best;
  }
}
