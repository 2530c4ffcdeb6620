/**
 * v7 compressed sections and flyrecord chunks. The algorithm name comes from
 * the file header ("zstd", "zlib" or "none"). Declared uncompressed sizes are
 * attacker-controlled, so they are capped before anything is allocated.
 */
import { inflateSync } from 'node:zlib';
import { decompress as zstdDecompress } from 'fzstd';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/**
 * Largest metadata section (v7 options, formats, kallsyms, printk, cmdlines;
 * the v6 header's texts), compressed or not: a big kernel's kallsyms is
 * ~15 MB, everything else far less.
 */
export const MAX_SECTION_BYTES = 64 * 1024 * 1024;
/** Largest anything here decompresses in one piece (a section; a batch of chunks is far smaller). */
export const MAX_UNCOMPRESSED = MAX_SECTION_BYTES;
/**
 * Largest flyrecord chunk: trace-cmd writes 10 pages (40 KiB; 640 KiB with
 * 64 KiB pages; every fixture's chunks are 40960 bytes or less). A chunk that
 * claims more is skipped as damaged rather than inflated.
 */
export const MAX_CHUNK_UNCOMPRESSED = 16 * 1024 * 1024;

export class DecompressError extends Error {}

/**
 * Decompressed ring-buffer data held in memory at once, across every CPU
 * stream of a file (DecompressBudget). A merge needs one chunk batch per
 * stream at least; real files need N CPUs x ~40 KiB-1 MiB.
 * STALLSCOPE_V7_MEMORY (bytes) raises it for files that need more.
 */
export const MAX_HELD_DECOMPRESSED = 256 * 1024 * 1024;

/** Refuses a file as a decompression bomb (decode_trace_dat.ts turns it into a DecompressionBombError). */
export class TraceDatBombError extends Error {
  constructor(
    readonly where: number,
    message: string,
  ) {
    super(message);
    this.name = 'TraceDatBombError';
  }
}

export interface DecompressBudgetLimits {
  /** Bytes of decompressed data held at once across all streams. */
  maxHeld: number;
  /** Decompressed bytes past which the ratio is checked (as the outer layers' guard). */
  checkAfterBytes: number;
  /** Largest ratio of decompressed to compressed bytes, all chunks and sections together (0: none). */
  maxRatio: number;
}

interface Waiter {
  holder: { held: number };
  bytes: number;
  resolve: () => void;
}

/**
 * One file's decompression budget, shared by its CPU streams and its
 * compressed sections:
 *
 * - memory: bytes of decompressed data held at once (reserved before a batch
 *   is decompressed, released when its last block is dropped). A stream that
 *   holds nothing may always take what it needs next (the merge cannot go on
 *   without it) unless that passes maxHeld: then the file is refused. Read-ahead
 *   by a stream that still holds data waits until there is room, so read-ahead
 *   never makes a required batch fail.
 * - total: decompressed bytes against compressed bytes, all streams and
 *   sections together, like the outer layers' bomb guard: a few KB of chunks
 *   that claim gigabytes are refused before they are inflated.
 */
export class DecompressBudget {
  held = 0;
  private decompressed = 0;
  private compressed = 0;
  private readonly waiters: Waiter[] = [];

  constructor(readonly limits: DecompressBudgetLimits) {}

  /** Counts data about to be decompressed; throws TraceDatBombError past the ratio. */
  count(compressedBytes: number, uncompressedBytes: number, where: number): void {
    this.compressed += compressedBytes;
    this.decompressed += uncompressedBytes;
    const { maxRatio, checkAfterBytes } = this.limits;
    if (maxRatio > 0 && this.decompressed > checkAfterBytes && this.decompressed > maxRatio * this.compressed) {
      const mb = (n: number) => `${(n / (1 << 20)).toFixed(1)} MB`;
      throw new TraceDatBombError(
        where,
        `refused as a likely decompression bomb: ${mb(this.compressed)} of compressed trace.dat chunks claim ${mb(this.decompressed)}, ` +
          `more than ${maxRatio} times as much (real traces compress less than 100x; STALLSCOPE_MAX_DECOMPRESSION_RATIO=0 lifts this limit)`,
      );
    }
  }

  /**
   * Reserves `bytes` for `holder` (a stream: `held` is what it holds now).
   * Waits while that would pass half the budget and the holder has data to go
   * on with; refuses the file when a holder with nothing must pass the whole.
   */
  async reserve(holder: { held: number }, bytes: number, where: number): Promise<void> {
    for (;;) {
      if (this.held + bytes <= this.limits.maxHeld / 2) break;
      if (holder.held === 0) {
        if (this.held + bytes > this.limits.maxHeld) {
          const mb = (n: number) => `${Math.round(n / (1 << 20))} MiB`;
          throw new TraceDatBombError(
            where,
            `refused: its CPU streams need ${mb(this.held + bytes)} of decompressed data in memory at once, more than the ${mb(this.limits.maxHeld)} allowed ` +
              `(STALLSCOPE_V7_MEMORY raises it)`,
          );
        }
        break;
      }
      await new Promise<void>((resolve) => this.waiters.push({ holder, bytes, resolve }));
    }
    this.held += bytes;
    holder.held += bytes;
  }

  release(holder: { held: number }, bytes: number): void {
    bytes = Math.min(bytes, holder.held);
    if (bytes <= 0) return;
    this.held -= bytes;
    holder.held -= bytes;
    // Everyone waiting looks again (each re-checks its own condition).
    for (const w of this.waiters.splice(0)) w.resolve();
  }
}

/** The default limits, with the environment's overrides (STALLSCOPE_V7_MEMORY, STALLSCOPE_MAX_DECOMPRESSION_RATIO). */
export function defaultDecompressBudget(guard: { maxRatio: number; checkAfterBytes: number }): DecompressBudget {
  const v = Number(process.env.STALLSCOPE_V7_MEMORY);
  const maxHeld = Number.isFinite(v) && v >= 16 << 20 ? v : MAX_HELD_DECOMPRESSED;
  return new DecompressBudget({ maxHeld, maxRatio: guard.maxRatio, checkAfterBytes: guard.checkAfterBytes });
}

export function decompress(algorithm: string, input: Uint8Array, expectedSize: number): Buffer {
  if (!Number.isSafeInteger(expectedSize) || expectedSize < 0 || expectedSize > MAX_UNCOMPRESSED) {
    throw new DecompressError(`implausible uncompressed size ${expectedSize}`);
  }
  let out: Uint8Array;
  try {
    switch (algorithm) {
      case 'none':
        out = input;
        break;
      case 'zstd':
        out = zstdDecompress(input, new Uint8Array(expectedSize));
        break;
      case 'zlib':
        out = inflateSync(input, { maxOutputLength: Math.max(1, expectedSize) });
        break;
      default:
        throw new DecompressError(`unsupported compression algorithm ${JSON.stringify(algorithm)}`);
    }
  } catch (e) {
    if (e instanceof DecompressError) throw e;
    throw new DecompressError(`${algorithm} decompression failed: ${(e as Error).message}`);
  }
  if (out.length !== expectedSize) {
    throw new DecompressError(`${algorithm} produced ${out.length} bytes, expected ${expectedSize}`);
  }
  return Buffer.isBuffer(out) ? out : Buffer.from(out.buffer, out.byteOffset, out.length);
}

/*
 * fzstd (pure JS) decodes trace-cmd's chunks at ~12 MB/s here, far below what
 * the event decoder consumes; the system `zstd` binary does ~200 MB/s and runs
 * on another core while we decode. So chunks are piped through a long-lived
 * `zstd -dc` per CPU stream when the binary exists (spawning costs ~45 ms of
 * main-thread time, too much per batch). fzstd stays the fallback: no binary,
 * or any batch that does not come back exactly as expected, which is then
 * redone chunk by chunk so damage is pinned to the right chunk.
 * STALLSCOPE_NO_NATIVE_ZSTD=1 forces the fallback.
 */

let nativeZstdMissing = Boolean(process.env.STALLSCOPE_NO_NATIVE_ZSTD);

export function nativeZstdUsable(): boolean {
  return !nativeZstdMissing;
}

/** Tests: turn the zstd binary off (true) to exercise the fzstd path, or back on. */
export function disableNativeZstd(disabled: boolean): void {
  nativeZstdMissing = disabled;
}

/**
 * A zstd skippable frame (ignored by the decoder). The zstd CLI reads its
 * input in ~128 KiB blocks and would sit on the tail of a batch until more
 * input arrives; writing one of these after each batch pushes it through.
 */
const FLUSH_PAD = (() => {
  const size = 132 * 1024;
  const b = Buffer.alloc(8 + size);
  b.writeUInt32LE(0x184d2a50, 0);
  b.writeUInt32LE(size, 4);
  return b;
})();

interface PipeJob {
  out: Buffer;
  got: number;
  resolve: (b: Buffer | null) => void;
}

/** A long-lived `zstd -dc` fed with batches of frames; output is split by the known sizes. */
/**
 * zstd processes alive at once: CPU streams past this decompress with fzstd.
 * A crafted file may list thousands of CPUs; a real one that many is rare.
 */
export const MAX_LIVE_ZSTD_PIPES = 64;
let livePipes = 0;

export class ZstdPipe {
  private readonly child: ChildProcessWithoutNullStreams;
  private counted = true;
  private readonly jobs: PipeJob[] = [];
  private dead = false;
  private inputEnded = false;
  private timer: NodeJS.Timeout | null = null;
  private lastProgress = 0;
  private stalls = 0;

  private constructor() {
    this.child = spawn('zstd', ['-d', '-c', '-q'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.resume();
    this.child.stdin.on('error', () => this.fail());
    this.child.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') nativeZstdMissing = true;
      this.fail();
    });
    // zstd exits after its input ends; output may still be draining until 'close'
    this.child.on('close', () => this.fail());
    this.child.stdout.on('data', (d: Buffer) => this.onData(d));
  }

  static create(): ZstdPipe | null {
    if (nativeZstdMissing || livePipes >= MAX_LIVE_ZSTD_PIPES) return null;
    try {
      livePipes++;
      return new ZstdPipe();
    } catch {
      livePipes--;
      nativeZstdMissing = true;
      return null;
    }
  }

  /** The process is gone (or going): it no longer counts against MAX_LIVE_ZSTD_PIPES. */
  private uncount(): void {
    if (this.counted) {
      this.counted = false;
      livePipes--;
    }
  }

  get usable(): boolean {
    return !this.dead;
  }

  /**
   * Decompresses concatenated frames totalling `size` bytes of output; null on
   * any failure. `last`: no more input will follow, so end zstd's input (it
   * then flushes without padding). `into`: where to put the output (its first
   * `size` bytes; the result is a view of it), so a caller can reuse one
   * buffer for batch after batch; else a new one is allocated.
   */
  decompress(frames: Buffer[], size: number, last = false, into?: Buffer): Promise<Buffer | null> {
    if (this.dead || this.inputEnded || size > MAX_UNCOMPRESSED) return Promise.resolve(null);
    const out = into !== undefined && into.length >= size ? into.subarray(0, size) : Buffer.allocUnsafe(size);
    return new Promise((resolve) => {
      this.jobs.push({ out, got: 0, resolve });
      if (size === 0) this.onData(Buffer.alloc(0));
      for (const f of frames) this.child.stdin.write(f);
      if (last) {
        this.inputEnded = true;
        this.child.stdin.end();
      } else this.child.stdin.write(FLUSH_PAD);
      this.armTimer();
    });
  }

  private onData(d: Buffer): void {
    this.lastProgress = Date.now();
    let p = 0;
    while (p < d.length || (this.jobs.length > 0 && this.jobs[0]!.got === this.jobs[0]!.out.length)) {
      const job = this.jobs[0];
      if (!job) {
        // more output than any batch asked for: the stream is out of step
        this.fail();
        return;
      }
      const n = Math.min(d.length - p, job.out.length - job.got);
      d.copy(job.out, job.got, p, p + n);
      job.got += n;
      p += n;
      if (job.got === job.out.length) {
        this.jobs.shift();
        job.resolve(job.out);
      }
    }
    if (this.jobs.length === 0) this.disarmTimer();
  }

  /** Nudges a stalled batch with more padding; gives up (never hangs) after ~5 s without output. */
  private armTimer(): void {
    if (this.timer) return;
    this.lastProgress = Date.now();
    this.stalls = 0;
    this.timer = setInterval(() => {
      if (this.jobs.length === 0) return this.disarmTimer();
      if (Date.now() - this.lastProgress < 20) return;
      if (++this.stalls > 250) {
        this.fail();
        return;
      }
      if (!this.inputEnded) this.child.stdin.write(FLUSH_PAD);
    }, 20);
  }

  private disarmTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private fail(): void {
    this.uncount();
    if (!this.dead) {
      this.dead = true;
      this.child.kill();
    }
    this.disarmTimer();
    for (const j of this.jobs.splice(0)) j.resolve(null);
  }

  close(): void {
    this.uncount();
    this.disarmTimer();
    if (!this.dead) {
      this.dead = true;
      if (!this.inputEnded) this.child.stdin.end();
      // zstd exits at end of input; make sure a wedged one does not outlive us
      setTimeout(() => this.child.kill(), 1000).unref();
    }
    for (const j of this.jobs.splice(0)) j.resolve(null);
  }
}

/** One-shot native decompression for large metadata sections (kallsyms); null if unavailable. */
export async function zstdNativeOnce(data: Buffer, size: number): Promise<Buffer | null> {
  const pipe = ZstdPipe.create();
  if (!pipe) return null;
  try {
    return await pipe.decompress([data], size, true);
  } finally {
    pipe.close();
  }
}
