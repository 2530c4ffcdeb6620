/**
 * Streaming decompression, detected by content (sniffInput), never by file
 * name. Layers nest: a gzip of a zstd of a text file decodes to the text.
 *
 * - gzip: node:zlib createGunzip (multi-member files work).
 * - zstd: the zstd binary behind pipes, else fzstd fed one block at a time
 *         (zstd_stream.ts; frames without a content size work).
 * - xz:   xz-decompress's XzReadableStream (WebAssembly).
 *
 * Nothing here holds a whole file in memory: data flows chunk by chunk. A
 * corrupt or truncated compressed stream becomes a DecodeError naming the
 * file and (approximately: decompressors read ahead) the compressed byte
 * offset reached when the error surfaced.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { open, stat, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import xzModule from 'xz-decompress';
import { CompressedPrefix } from './compressed_prefix.ts';
import { DecodeError, DecompressionBombError } from './decoded_event.ts';
import { sniffInput, SNIFF_BYTES, type Compression, type SniffedFormat } from './sniff.ts';
import { unzstdJs, unzstdNative, zstdBinaryUsable } from './zstd_stream.ts';

/** Read size for input files: big reads keep per-chunk overhead negligible. */
const READ_CHUNK_BYTES = 1 << 20;
/** Nesting deeper than this is not a real trace, it is a decompression bomb or a loop. */
export const MAX_COMPRESSION_LAYERS = 4;

/**
 * The decompression bomb guard: a compressed input whose content grows past
 * BOMB_CHECK_AFTER_BYTES and past MAX_DECOMPRESSION_RATIO times the
 * compressed bytes read so far (all layers together) is refused. Without
 * it a 1 MB .gz can keep an ingest busy for hours and fill the disk with
 * its model.
 *
 * Why these numbers: real ftrace text compresses 13-72x (the fixtures, with
 * gzip -9, zstd -19 --long and xz -9e), the bench's synthetic trace of
 * repeated copies 151x with xz; gzip cannot exceed ~1030x, zstd and xz can
 * reach millions. 500x leaves real traces a wide margin and still stops a
 * gzip bomb. Nothing is judged before the first 64 MiB of content: a small
 * input made of a few repeated lines is never refused, while a bomb is
 * stopped after seconds of work (with 1 GiB, a 100 KB zstd frame of
 * newlines kept an ingest busy for two minutes before it was judged).
 * A real trace that produced 64 MiB from less than 128 KiB would compress
 * seven times better than any recording measured.
 * STALLSCOPE_MAX_DECOMPRESSION_RATIO overrides the ratio (0: no limit).
 */
export const MAX_DECOMPRESSION_RATIO = 500;
export const BOMB_CHECK_AFTER_BYTES = 64 << 20;

/**
 * Total decompressed bytes any one compressed input may produce, whatever
 * its ratio (the largest real traces are tens of GB; ingesting this much
 * would take hours). STALLSCOPE_MAX_DECOMPRESSED_BYTES overrides it.
 */
export const MAX_DECOMPRESSED_BYTES = 128 * 1024 ** 3;

/** The guard's limits (openInput's `bombGuard` option; tests use small ones). */
export interface BombGuard {
  maxRatio: number;
  checkAfterBytes: number;
  /** Total decompressed bytes allowed (default: maxDecompressedBytes()). */
  maxTotalBytes?: number;
}

/** The default guard, with STALLSCOPE_MAX_DECOMPRESSION_RATIO applied. */
export function defaultBombGuard(): BombGuard {
  const v = process.env.STALLSCOPE_MAX_DECOMPRESSION_RATIO;
  const n = v === undefined || v.trim() === '' ? NaN : Number(v);
  return {
    maxRatio: Number.isFinite(n) && n >= 0 ? n : MAX_DECOMPRESSION_RATIO,
    checkAfterBytes: BOMB_CHECK_AFTER_BYTES,
  };
}

/** MAX_DECOMPRESSED_BYTES, or STALLSCOPE_MAX_DECOMPRESSED_BYTES. */
export function maxDecompressedBytes(): number {
  const t = Number(process.env.STALLSCOPE_MAX_DECOMPRESSED_BYTES);
  return Number.isFinite(t) && t > 0 ? t : MAX_DECOMPRESSED_BYTES;
}

const { XzReadableStream } = xzModule as unknown as {
  XzReadableStream: new (src: ReadableStream<Uint8Array>) => ReadableStream<Uint8Array>;
};

/** Counts the bytes pulled through it (the compressed position of a layer). */
class ByteCounter {
  bytes = 0;
  async *wrap(src: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    for await (const c of src) {
      this.bytes += c.length;
      yield c;
    }
  }
}

function describeError(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function layerError(file: string, kind: Compression, layer: number, counter: ByteCounter, e: unknown): DecodeError {
  if (e instanceof DecodeError) return e;
  const where = layer === 0 ? 'compressed byte offset' : `byte offset (in decompressed layer ${layer})`;
  return new DecodeError(
    file,
    counter.bytes,
    'offset',
    `corrupt or truncated ${kind} stream (error surfaced by ${where} ${counter.bytes}): ${describeError(e)}`,
  );
}

/**
 * gunzip's output chunk size. zlib's default (16 KiB) made 64k chunks per
 * GiB, each passed through every stage above it one by one.
 */
const GUNZIP_CHUNK_BYTES = 256 << 10;

async function* gunzipLayer(src: AsyncIterable<Uint8Array>, file: string, layer: number): AsyncGenerator<Uint8Array> {
  const counter = new ByteCounter();
  const input = Readable.from(counter.wrap(src), { objectMode: false });
  const gz = createGunzip({ chunkSize: GUNZIP_CHUNK_BYTES });
  let inputError: unknown = null;
  input.on('error', (e) => {
    inputError = e;
    gz.destroy(e);
  });
  input.pipe(gz);
  try {
    for await (const chunk of gz as AsyncIterable<Buffer>) yield chunk;
  } catch (e) {
    if (inputError !== null) throw inputError;
    throw layerError(file, 'gzip', layer, counter, e);
  } finally {
    input.destroy();
    gz.destroy();
  }
}

async function* unzstdLayer(src: AsyncIterable<Uint8Array>, file: string, layer: number): AsyncGenerator<Uint8Array> {
  const counter = new ByteCounter();
  // Bounded either way (zstd_stream.ts): the binary behind pipes, or fzstd fed one block at a time.
  const inner = zstdBinaryUsable() ? unzstdNative(counter.wrap(src)) : unzstdJs(counter.wrap(src));
  try {
    for await (const c of inner) yield c;
  } catch (e) {
    if (e instanceof DecodeError) throw e;
    throw layerError(file, 'zstd', layer, counter, e);
  }
}

async function* unxzLayer(src: AsyncIterable<Uint8Array>, file: string, layer: number): AsyncGenerator<Uint8Array> {
  const counter = new ByteCounter();
  const it = counter.wrap(src)[Symbol.asyncIterator]();
  const web = new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      const r = await it.next();
      if (r.done) ctrl.close();
      else ctrl.enqueue(r.value);
    },
    async cancel() {
      await it.return?.(undefined);
    },
  });
  const reader = new XzReadableStream(web).getReader();
  let ended = false;
  try {
    for (;;) {
      let r: ReadableStreamReadResult<Uint8Array>;
      try {
        r = await reader.read();
      } catch (e) {
        ended = true;
        // xz-embedded's XZ_MEMLIMIT_ERROR: the block's LZMA2 dictionary is larger than the decoder allows.
        if (/error code 4\b/.test(describeError(e))) {
          throw layerError(
            file,
            'xz',
            layer,
            counter,
            new Error(
              'its LZMA2 dictionary is larger than the 64 MiB this decoder allows (xz -9 uses 64 MiB; recompress with a preset)',
            ),
          );
        }
        throw layerError(file, 'xz', layer, counter, e);
      }
      if (r.done) {
        ended = true;
        break;
      }
      yield r.value;
    }
  } finally {
    // Left early (the format was sniffed, a decoder stopped): cancel, which
    // frees the decoder's context. xz-decompress 0.2.3 allows one context
    // at a time in a process (a global mutex released on end, error or
    // cancel), so a stream merely released left every later xz input
    // waiting forever: a compressed trace.dat is opened twice (sniff, then
    // decompress to a file) and never loaded.
    if (!ended) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

function decompressLayer(
  kind: Compression,
  src: AsyncIterable<Uint8Array>,
  file: string,
  layer: number,
): AsyncGenerator<Uint8Array> {
  switch (kind) {
    case 'gzip':
      return gunzipLayer(src, file, layer);
    case 'zstd':
      return unzstdLayer(src, file, layer);
    case 'xz':
      return unxzLayer(src, file, layer);
  }
}

/**
 * Reads from `it` until at least `n` bytes (or the end) are buffered, and
 * returns them with an iterable that replays them and then continues.
 */
async function peek(
  it: AsyncIterator<Uint8Array>,
  n: number,
): Promise<{ head: Uint8Array; rest: AsyncIterable<Uint8Array> }> {
  const parts: Uint8Array[] = [];
  let have = 0;
  let done = false;
  while (have < n) {
    const r = await it.next();
    if (r.done) {
      done = true;
      break;
    }
    // A copy: the reader may reuse its buffer for the next read (readReusedChunks).
    parts.push(Buffer.from(r.value));
    have += r.value.length;
  }
  const head = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  // An iterator object, not a generator: return() before the first next()
  // must still close the source (a generator not yet started skips its
  // finally), or the source's file or decompressor stays open; the format
  // sniff stops reading a trace.dat exactly there.
  let headSent = head.length === 0;
  let finished = done;
  const rest: AsyncIterableIterator<Uint8Array> = {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next(): Promise<IteratorResult<Uint8Array>> {
      if (!headSent) {
        headSent = true;
        return { done: false, value: head };
      }
      if (finished) return { done: true, value: undefined };
      try {
        const r = await it.next();
        if (r.done) finished = true;
        return r;
      } catch (e) {
        finished = true;
        throw e;
      }
    },
    async return(): Promise<IteratorResult<Uint8Array>> {
      if (!finished) {
        finished = true;
        await it.return?.(undefined);
      }
      return { done: true, value: undefined };
    },
  };
  return { head: head.subarray(0, Math.min(head.length, n)), rest };
}

export interface OpenedInput {
  /** Compression layers found, outermost first ([] for a plain file). */
  compression: Compression[];
  /** What the innermost bytes look like. */
  format: SniffedFormat;
  /** Size of the file on disk (compressed size for compressed files). */
  fileBytes: number;
  /** The decompressed bytes, streaming. Iterate once. */
  chunks: AsyncIterable<Uint8Array>;
}

/** The raw bytes of a file, in large chunks. */
export async function* readFileChunks(path: string): AsyncGenerator<Uint8Array> {
  const rs = createReadStream(path, { highWaterMark: READ_CHUNK_BYTES });
  try {
    for await (const c of rs as AsyncIterable<Buffer>) yield c;
  } finally {
    rs.destroy();
  }
}

/** Buffers readReusedChunks() cycles through: a chunk is overwritten REUSED_BUFFERS - 1 reads after it was yielded. */
const REUSED_BUFFERS = 4;

/**
 * The raw bytes of a file in large chunks read into a few buffers used over
 * and over, for a consumer that is done with each chunk before it asks for
 * the next (the text decoder: its line splitter copies the partial line it
 * carries, everything else it keeps is a copy).
 *
 * Why: a fresh 1 MiB Buffer per read is external memory V8 counts, and
 * every ~64 MB of it started a full (mark-compact) collection on the main
 * thread: 12 of them in a 250 MB text ingest, 3 with reused buffers, ~10%
 * of the ingest's CPU time (bench/README.md, sixteenth session).
 */
export async function* readReusedChunks(path: string): AsyncGenerator<Uint8Array> {
  const file = await open(path, 'r');
  try {
    const buffers = Array.from({ length: REUSED_BUFFERS }, () => Buffer.allocUnsafeSlow(reusedChunkBytes()));
    for (let k = 0; ; k = (k + 1) % REUSED_BUFFERS) {
      const buf = buffers[k]!;
      const { bytesRead } = await file.read(buf, 0, buf.length, null);
      if (bytesRead === 0) return;
      yield buf.subarray(0, bytesRead);
    }
  } finally {
    await file.close();
  }
}

/**
 * readReusedChunks' read size. STALLSCOPE_READ_CHUNK_BYTES makes it smaller
 * for tests: then the buffers are reused many times within a small fixture,
 * with lines cut at every place.
 */
function reusedChunkBytes(): number {
  const v = Number(process.env.STALLSCOPE_READ_CHUNK_BYTES);
  return Number.isInteger(v) && v >= 1 && v <= READ_CHUNK_BYTES ? v : READ_CHUNK_BYTES;
}

/** Each chunk copied: what a consumer that may keep chunks (a decompressor) reads from reused buffers. */
async function* copiedChunks(src: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  for await (const c of src) yield Buffer.from(c);
}

/**
 * Opens a file, peels off every compression layer (detected by content) and
 * reports what the innermost bytes are. `label` names the file in errors
 * (defaults to the path).
 */
export async function openInput(
  path: string,
  label: string = path,
  opts: { reuseBuffers?: boolean; bombGuard?: BombGuard } = {},
): Promise<OpenedInput> {
  const fileBytes = (await stat(path)).size;
  const compression: Compression[] = [];
  const fileRead = new ByteCounter();
  const guard = opts.bombGuard ?? defaultBombGuard();
  let src: AsyncIterable<Uint8Array> = opts.reuseBuffers ? readReusedChunks(path) : readFileChunks(path);
  src = fileRead.wrap(src);
  for (;;) {
    const { head, rest } = await peek(src[Symbol.asyncIterator](), SNIFF_BYTES);
    const s = sniffInput(head);
    if (s.compression === null) return { compression, format: s.format, fileBytes, chunks: rest };
    if (compression.length >= MAX_COMPRESSION_LAYERS) {
      await rest[Symbol.asyncIterator]().return?.(undefined);
      throw new DecodeError(label, 0, 'offset', `more than ${MAX_COMPRESSION_LAYERS} nested compression layers`);
    }
    // Decompressors may hold on to their input: only the file's own layer reads reused buffers, and they get copies.
    const input = opts.reuseBuffers && compression.length === 0 ? copiedChunks(rest) : rest;
    src = decompressLayer(s.compression, input, label, compression.length);
    compression.push(s.compression);
    // Guarded here, not after the last peek: peek starts it, and a started
    // generator's return() reaches the decompressor (xz must be cancelled).
    src = bombGuarded(src, fileRead, guard, label, [...compression]);
  }
}

/** `chunks` (a compressed file's content), stopped by a DecompressionBombError once it outgrows the guard. */
async function* bombGuarded(
  chunks: AsyncIterable<Uint8Array>,
  fileRead: ByteCounter,
  guard: BombGuard,
  label: string,
  compression: Compression[],
): AsyncGenerator<Uint8Array> {
  let out = 0;
  const maxTotal = guard.maxTotalBytes ?? maxDecompressedBytes();
  for await (const c of chunks) {
    out += c.length;
    if (out > maxTotal) {
      throw new DecompressionBombError(
        label,
        fileRead.bytes,
        'offset',
        `refused: its ${compression.join(' in ')} content passes ${(maxTotal / 1024 ** 3).toFixed(maxTotal < 1024 ** 3 ? 3 : 0)} GiB, ` +
          `the most one input may decompress to (STALLSCOPE_MAX_DECOMPRESSED_BYTES raises it)`,
      );
    }
    if (guard.maxRatio > 0 && out > guard.checkAfterBytes && out > guard.maxRatio * fileRead.bytes) {
      const mb = (n: number) => `${(n / (1 << 20)).toFixed(1)} MB`;
      throw new DecompressionBombError(
        label,
        fileRead.bytes,
        'offset',
        `refused as a likely decompression bomb: ${mb(fileRead.bytes)} of ${compression.join(' in ')} data decompressed to ${mb(out)}, ` +
          `more than ${guard.maxRatio} times as much (real traces compress less than 100x; ` +
          `STALLSCOPE_MAX_DECOMPRESSION_RATIO=0 lifts this limit)`,
      );
    }
    yield c;
  }
}

/** The decompressed content of a file (plain files pass through), streaming. */
export function openDecompressed(path: string, label: string = path, bombGuard?: BombGuard): AsyncIterable<Uint8Array> {
  return {
    async *[Symbol.asyncIterator]() {
      const opened = await openInput(path, label, { bombGuard });
      yield* opened.chunks;
    },
  };
}

/**
 * Free space decompressToFile leaves on the output's file system: the
 * model still has to be written there, and a compressed file can claim
 * any size (a small .gz of a crafted trace.dat can inflate to terabytes).
 */
export const MIN_FREE_BYTES_AFTER_DECOMPRESS = 1 << 30;
/** How often decompressToFile looks at the free space. */
const FREE_SPACE_CHECK_BYTES = 64 << 20;

/**
 * Writes the decompressed content of `path` to `outPath` (for decoders that
 * need random access, e.g. trace.dat). Returns the layers removed and the
 * bytes written. Streams: memory use does not grow with the file.
 *
 * A corrupt or truncated stream ends the output where it failed: the bytes
 * before it are written and `prefix.failure` says why it ended
 * (compressed_prefix.ts). Output that would leave less than `minFreeBytes`
 * free on its file system stops the decompression with a DecodeError.
 */
export async function decompressToFile(
  path: string,
  outPath: string,
  label: string = path,
  minFreeBytes: number = MIN_FREE_BYTES_AFTER_DECOMPRESS,
  bombGuard?: BombGuard,
): Promise<{ compression: Compression[]; format: SniffedFormat; bytes: number; prefix: CompressedPrefix }> {
  const opened = await openInput(path, label, { bombGuard });
  const prefix = new CompressedPrefix(opened.chunks);
  let bytes = 0;
  let nextCheck = 0;
  async function* counted(): AsyncGenerator<Uint8Array> {
    for await (const c of prefix.chunks()) {
      if (bytes >= nextCheck) {
        await checkFreeSpace(outPath, bytes, minFreeBytes, label);
        nextCheck = bytes + FREE_SPACE_CHECK_BYTES;
      }
      bytes += c.length;
      yield c;
    }
  }
  // pipeline(), not write() and destroy() by hand: an error while a write
  // was in flight once failed that write on the destroyed file stream as an
  // unhandled 'error' event (a crash).
  await pipeline(Readable.from(counted()), createWriteStream(outPath));
  return { compression: opened.compression, format: opened.format, bytes, prefix };
}

async function checkFreeSpace(outPath: string, written: number, minFreeBytes: number, label: string): Promise<void> {
  const fsStat = await statfs(dirname(outPath));
  const free = fsStat.bavail * fsStat.bsize;
  if (free - FREE_SPACE_CHECK_BYTES < minFreeBytes) {
    const mb = (n: number) => `${Math.round(n / (1 << 20))} MB`;
    throw new DecodeError(
      label,
      0,
      'offset',
      `decompressing would fill the disk: ${mb(written)} written to ${dirname(outPath)}, ${mb(free)} free, ` +
        `and at least ${mb(minFreeBytes)} must stay free for the model (decompress the file elsewhere, or free space)`,
    );
  }
}
