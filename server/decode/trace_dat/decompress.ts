/**
 * v7 compressed sections and flyrecord chunks. The algorithm name comes from
 * the file header ("zstd", "zlib" or "none"). Declared uncompressed sizes are
 * attacker-controlled, so they are capped before anything is allocated.
 */
import { inflateSync } from 'node:zlib';
import { decompress as zstdDecompress } from 'fzstd';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** No real section or chunk comes near this; trace-cmd chunks are ~10 pages. */
export const MAX_UNCOMPRESSED = 512 * 1024 * 1024;

export class DecompressError extends Error {}

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
export class ZstdPipe {
  private readonly child: ChildProcessWithoutNullStreams;
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
    if (nativeZstdMissing) return null;
    try {
      return new ZstdPipe();
    } catch {
      nativeZstdMissing = true;
      return null;
    }
  }

  get usable(): boolean {
    return !this.dead;
  }

  /**
   * Decompresses concatenated frames totalling `size` bytes of output; null on
   * any failure. `last`: no more input will follow, so end zstd's input (it
   * then flushes without padding).
   */
  decompress(frames: Buffer[], size: number, last = false): Promise<Buffer | null> {
    if (this.dead || this.inputEnded || size > MAX_UNCOMPRESSED) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.jobs.push({ out: Buffer.allocUnsafe(size), got: 0, resolve });
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
    if (!this.dead) {
      this.dead = true;
      this.child.kill();
    }
    this.disarmTimer();
    for (const j of this.jobs.splice(0)) j.resolve(null);
  }

  close(): void {
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
