/**
 * Streaming zstd decompression whose memory is bounded by construction,
 * whatever the input claims (a 135 KB file of RLE blocks inflates to 4.5 GB).
 *
 * - With the `zstd` binary (a system dependency; STALLSCOPE_NO_NATIVE_ZSTD=1
 *   turns it off): input is piped to `zstd -dc --memory=128MB` and output
 *   read from its stdout. Both pipes carry back-pressure, so nothing is
 *   decoded faster than the consumer takes it; the decoder's own memory is
 *   its window, at most 128 MiB (zstd refuses frames that need more).
 * - Without it: fzstd (pure JS), fed one block at a time by a small frame
 *   walker here, so a push never produces more than one block (128 KiB).
 *   fzstd allocates a frame's whole window up front and moves all of it per
 *   block, so frames whose window exceeds ZSTD_JS_MAX_WINDOW are refused
 *   (use the binary for those).
 *
 * Either way a consumer that stops pulling stops the decoding, and the
 * decompression-bomb guard above (decompress.ts) acts between chunks.
 */
import { spawn, spawnSync } from 'node:child_process';
import { Decompress as ZstdDecompress } from 'fzstd';

/** What the binary may use for a frame's window (zstd's own default limit). */
export const ZSTD_NATIVE_MEMORY = '128MB';
/** Largest window the JS fallback decodes: zstd -19 uses 8 MiB; --long and --ultra need the binary. */
export const ZSTD_JS_MAX_WINDOW = 32 << 20;
/** The spec's largest block. */
const MAX_BLOCK = 128 << 10;

let binary: boolean | null = null;

/** Is the `zstd` binary there (and not turned off)? Checked once. */
export function zstdBinaryUsable(): boolean {
  if (process.env.STALLSCOPE_NO_NATIVE_ZSTD) return false;
  if (binary === null) {
    try {
      binary = spawnSync('zstd', ['--version'], { stdio: 'ignore', timeout: 5000 }).status === 0;
    } catch {
      binary = false;
    }
  }
  return binary;
}

/** An error from the zstd stream itself (corrupt, truncated, too large a window). */
export class ZstdStreamError extends Error {}

/** Decompresses through the zstd binary. `src` is read only as fast as the output is taken. */
export async function* unzstdNative(src: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const child = spawn('zstd', ['-d', '-c', '-q', `--memory=${ZSTD_NATIVE_MEMORY}`], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    if (stderr.length < 4000) stderr += d.toString();
  });
  child.stdin.on('error', () => undefined); // EPIPE when zstd stops early: its exit status says why
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  let spawnError: Error | null = null;
  child.on('error', (e) => {
    spawnError = e;
  });
  let feedError: unknown = null;
  let stopped = false;
  const feeding = (async () => {
    try {
      for await (const c of src) {
        if (stopped) break;
        if (!child.stdin.write(c)) {
          await new Promise<void>((resolve) => {
            const done = () => {
              child.stdin.off('drain', done);
              child.stdin.off('close', done);
              resolve();
            };
            child.stdin.on('drain', done);
            child.stdin.on('close', done);
          });
        }
        if (child.stdin.destroyed) break;
      }
    } catch (e) {
      feedError = e;
      child.kill();
    } finally {
      child.stdin.end();
    }
  })();
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) yield chunk;
    const code = await exited;
    await feeding;
    if (feedError) throw feedError;
    if (spawnError) throw new ZstdStreamError(`could not run zstd: ${(spawnError as Error).message}`);
    if (code !== 0) {
      const why = stderr
        .replace(/^\S*stdin\S*\s*:\s*/gm, '')
        .trim()
        .split('\n')
        .slice(-2)
        .join('; ');
      throw new ZstdStreamError(why || `zstd exited with status ${code}`);
    }
  } finally {
    stopped = true;
    if (child.exitCode === null) child.kill();
    child.stdout.destroy();
    await feeding.catch(() => undefined);
  }
}

/**
 * Splits a zstd stream into pieces that each complete at most one block
 * (frame headers, blocks, checksums), and checks each frame's window.
 * Skippable frames are dropped here.
 */
class ZstdBlockSplitter {
  /** Unconsumed input is buf[pos, end). Bytes before `end` are never written again (pieces handed out stay valid). */
  private buf: Uint8Array = new Uint8Array(0);
  private pos = 0;
  private end = 0;
  /** Whether buf is ours to append to (else it is the caller's chunk). */
  private owned = false;
  /** Where in the frame we are. */
  private state: 'frame' | 'block' | 'checksum' = 'frame';
  private checksum = false;

  constructor(private readonly maxWindow: number) {}

  push(chunk: Uint8Array): void {
    if (this.pos === this.end) {
      this.buf = chunk;
      this.pos = 0;
      this.end = chunk.length;
      this.owned = false;
      return;
    }
    if (!this.owned || this.end + chunk.length > this.buf.length) {
      // Grow geometrically: a block arriving in many small pieces costs O(n), not O(n^2).
      const have = this.end - this.pos;
      const b = new Uint8Array(Math.max(2 * (have + chunk.length), 64 << 10));
      b.set(this.buf.subarray(this.pos, this.end), 0);
      this.buf = b;
      this.pos = 0;
      this.end = have;
      this.owned = true;
    }
    this.buf.set(chunk, this.end);
    this.end += chunk.length;
  }

  /** At the end of the input: is it between frames? */
  get atFrameBoundary(): boolean {
    return this.state === 'frame' && this.pos === this.end;
  }

  /** The next piece for fzstd, or null when more input is needed. */
  next(): Uint8Array | null {
    const b = this.buf;
    const p = this.pos;
    const have = this.end - p;
    const take = (n: number): Uint8Array | null => {
      if (have < n) return null;
      this.pos = p + n;
      return b.subarray(p, p + n);
    };
    for (;;) {
      if (this.state === 'frame') {
        if (have < 4) return null;
        const magic = (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
        if ((magic & 0xfffffff0) === 0x184d2a50) {
          if (have < 8) return null;
          const size = (b[p + 4]! | (b[p + 5]! << 8) | (b[p + 6]! << 16) | (b[p + 7]! << 24)) >>> 0;
          if (have < 8 + size) return null;
          this.pos = p + 8 + size; // skippable frame: nothing to decode
          return this.next();
        }
        if (magic !== 0xfd2fb528) throw new ZstdStreamError('not zstd data (bad frame magic)');
        if (have < 5) return null;
        const fhd = b[p + 4]!;
        const single = (fhd >> 5) & 1;
        const fcsFlag = fhd >> 6;
        const dictBytes = [0, 1, 2, 4][fhd & 3]!;
        const fcsBytes = [single, 2, 4, 8][fcsFlag]!;
        const headerLen = 5 + (single ? 0 : 1) + dictBytes + fcsBytes;
        if (have < headerLen) return null;
        let window: number;
        if (!single) {
          const wd = b[p + 5]!;
          const base = 2 ** (10 + (wd >> 3));
          window = base + (base / 8) * (wd & 7);
        } else {
          let fcs = 0;
          const at = p + 5 + dictBytes;
          for (let i = fcsBytes - 1; i >= 0; i--) fcs = fcs * 256 + b[at + i]!;
          window = fcsBytes === 2 ? fcs + 256 : fcs;
        }
        if (window > this.maxWindow) {
          throw new ZstdStreamError(
            `a zstd frame needs a ${Math.round(window / (1 << 20))} MiB window, more than the ${this.maxWindow >> 20} MiB decoded without the zstd binary (install zstd)`,
          );
        }
        this.checksum = ((fhd >> 2) & 1) === 1;
        this.state = 'block';
        return take(headerLen);
      }
      if (this.state === 'checksum') {
        const c = take(4);
        if (c) this.state = 'frame';
        return c;
      }
      // A block: 3-byte header, then its content.
      if (have < 3) return null;
      const h = b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16);
      const last = h & 1;
      const type = (h >> 1) & 3;
      const size = h >>> 3;
      if (type === 3) throw new ZstdStreamError('corrupt zstd stream (reserved block type)');
      if (size > MAX_BLOCK)
        throw new ZstdStreamError(`corrupt zstd stream (a block of ${size} bytes, the limit is ${MAX_BLOCK})`);
      const piece = take(3 + (type === 1 ? 1 : size));
      if (piece && last) this.state = this.checksum ? 'checksum' : 'frame';
      return piece;
    }
  }
}

/** Decompresses with fzstd, one block per push (see the module comment). */
export async function* unzstdJs(
  src: AsyncIterable<Uint8Array>,
  maxWindow = ZSTD_JS_MAX_WINDOW,
): AsyncGenerator<Uint8Array> {
  let out: Uint8Array[] = [];
  // fzstd may hand out views of buffers it reuses: copy before yielding.
  const dec = new ZstdDecompress((data) => {
    if (data.length) out.push(data.slice());
  });
  const split = new ZstdBlockSplitter(maxWindow);
  let any = false;
  for await (const chunk of src) {
    if (chunk.length) any = true;
    split.push(chunk);
    for (let piece = split.next(); piece; piece = split.next()) {
      dec.push(piece);
      if (out.length) {
        const ready = out;
        out = [];
        for (const c of ready) yield c;
      }
    }
  }
  if (!any) return;
  if (!split.atFrameBoundary) throw new ZstdStreamError('truncated zstd stream (it ends inside a frame)');
  dec.push(new Uint8Array(0), true);
  for (const c of out) yield c;
}
