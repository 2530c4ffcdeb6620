/**
 * The native line framer (frame_lines.c, committed as frame_lines.wasm):
 * frames a block of ASCII lines into records the text decoder reads
 * (decode_ftrace_text.ts onAsciiBlock). See frame_lines.c for the record
 * layout and what it reads.
 *
 * The module keeps state between calls (the last head, the interned event
 * names), so there is one instance per thread, shared by every decode: both
 * caches are keyed by bytes, and equal bytes read the same in any trace.
 */
import { loadNativeModule } from './load_wasm.ts';

/** int32 words per record (frame_lines.c REC_WORDS). */
export const REC_WORDS = 16;
export const KIND_FAST = 1;
export const KIND_NEW_HEAD = 2;
/** Record fields (frame_lines.c). */
export const R_KIND = 0;
export const R_START = 1;
export const R_END = 2;
export const R_CPU = 3;
export const R_PID = 4;
export const R_TGID = 5;
export const R_COMM_END = 6;
export const R_FLAGS = 7;
export const R_PREEMPT = 8;
export const R_SECS = 9;
export const R_NSEC = 10;
export const R_NAME_ID = 11;
export const R_NAME_START = 12;
export const R_COLON = 13;
export const R_ARGS_START = 14;
export const R_ARGS_END = 15;

/** Records per call: 256 KiB of records, lines of a block framed in a few calls. */
const MAX_RECORDS = 4096;
const PAGE = 65536;

interface FrameLinesExports {
  memory: WebAssembly.Memory;
  heap_base(): number;
  frame_lines(block: number, n: number, from: number, out: number, maxRecords: number): number;
}

export class NativeLineFramer {
  private readonly ex: FrameLinesExports;
  private readonly recordsAt: number;
  private readonly blockAt: number;
  private memory: Uint8Array;
  /** The records of the last frame() call (a view into the module's memory: read before the next call). */
  records: Int32Array;

  constructor(module: WebAssembly.Module) {
    this.ex = new WebAssembly.Instance(module, {}).exports as unknown as FrameLinesExports;
    this.recordsAt = (this.ex.heap_base() + 15) & ~15;
    this.blockAt = this.recordsAt + MAX_RECORDS * REC_WORDS * 4;
    this.memory = new Uint8Array(this.ex.memory.buffer);
    this.records = new Int32Array(this.ex.memory.buffer, this.recordsAt, MAX_RECORDS * REC_WORDS);
  }

  /** Copies a block of whole lines (it ends with '\n') into the module, for frame(). */
  load(block: Uint8Array): void {
    const need = this.blockAt + block.length;
    if (need > this.memory.length) {
      this.ex.memory.grow(Math.ceil((need - this.memory.length) / PAGE));
      this.memory = new Uint8Array(this.ex.memory.buffer);
      this.records = new Int32Array(this.ex.memory.buffer, this.recordsAt, MAX_RECORDS * REC_WORDS);
    }
    this.memory.set(block, this.blockAt);
  }

  /**
   * Frames the loaded block's lines from byte `from` (a line start): one
   * record per line, at most MAX_RECORDS; returns how many.
   */
  frame(blockLength: number, from: number): number {
    return this.ex.frame_lines(this.blockAt, blockLength, from, this.recordsAt, MAX_RECORDS);
  }

  /** Where the line after the last one frame() framed starts: past its "\n" or "\r\n". */
  nextLineStart(block: Uint8Array, count: number): number {
    let at = this.records[(count - 1) * REC_WORDS + R_END]!;
    if (block[at] === 13) at++;
    return at + 1;
  }
}

let shared: NativeLineFramer | null | undefined;

/**
 * This thread's framer, or null where WebAssembly is unavailable (then the
 * decoder reads every line in JavaScript, as before).
 */
export function nativeLineFramer(): NativeLineFramer | null {
  if (shared === undefined) {
    const module = loadNativeModule('frame_lines.wasm');
    shared = module !== null ? new NativeLineFramer(module) : null;
  }
  return shared;
}
