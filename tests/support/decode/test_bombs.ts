/**
 * Test support: decompression bombs built from small inputs in a moment
 * (memory_bombs.test.ts, scripts/fuzz_ingest.ts). Nothing here compresses
 * gigabytes: zstd frames are written by hand from RLE blocks (4 bytes each
 * for 128 KiB of output), gzip bombs repeat one member, and the trace.dat v7
 * bombs are a real recording with a crafted buffer appended.
 */
import { spawnSync } from 'node:child_process';
import { deflateSync, gzipSync } from 'node:zlib';

const KiB = 1024;
const MiB = 1024 * KiB;
const BLOCK = 128 * KiB;

/**
 * One zstd frame of `bytes` copies of `fill`, as RLE blocks (4 bytes each).
 * `windowLog` sets the frame's window (10..41); `contentSize` writes the
 * content size in the header (single-segment frames use it as the window).
 */
export function zstdRleFrame(
  bytes: number,
  opts: { fill?: number; windowLog?: number; contentSize?: boolean } = {},
): Buffer {
  const fill = opts.fill ?? 0;
  const blocks = Math.ceil(bytes / BLOCK);
  const parts: Buffer[] = [];
  const head = Buffer.alloc(opts.contentSize ? 13 : 6);
  head.writeUInt32LE(0xfd2fb528, 0);
  if (opts.contentSize) {
    head[4] = 0b1110_0000; // 8-byte content size, single segment, no checksum
    head.writeBigUInt64LE(BigInt(bytes), 5);
    parts.push(head);
  } else {
    head[4] = 0; // no content size, window descriptor follows
    head[5] = ((opts.windowLog ?? 17) - 10) << 3;
    parts.push(head);
  }
  const body = Buffer.alloc(blocks * 4);
  for (let i = 0; i < blocks; i++) {
    const size = i === blocks - 1 ? bytes - BLOCK * (blocks - 1) : BLOCK;
    const h = (i === blocks - 1 ? 1 : 0) | (1 << 1) | (size << 3);
    body.writeUIntLE(h, i * 4, 3);
    body[i * 4 + 3] = fill;
  }
  parts.push(body);
  return Buffer.concat(parts);
}

/** A zstd frame holding `data` as one raw block (at most 128 KiB). */
export function zstdRawFrame(data: Buffer): Buffer {
  const h = Buffer.alloc(9);
  h.writeUInt32LE(0xfd2fb528, 0);
  h[4] = 0; // no content size
  h[5] = (17 - 10) << 3;
  h.writeUIntLE(1 | (data.length << 3), 6, 3); // last block, raw
  return Buffer.concat([h, data]);
}

/** The text header a tracefs file starts with, as a zstd frame (what a bomb puts first so it is read as a trace). */
export function textHeaderZstd(): Buffer {
  return zstdRawFrame(Buffer.from('# tracer: nop\n#\n'));
}

/** A gzip file of `totalMiB` MiB of spaces, from repeated 4 MiB members (~1000x). */
export function gzipBomb(totalMiB: number): Buffer {
  const member = gzipSync(Buffer.alloc(4 * MiB, 32), { level: 9 });
  return Buffer.concat(Array.from({ length: Math.ceil(totalMiB / 4) }, () => member));
}

/**
 * An xz file of `mib` MiB of zeros, or with `text`, a tracefs text header and
 * then spaces (the xz binary; ~1-2 s per 100 MiB here).
 */
export function xzZeros(mib: number, dict = '8MiB', text = false): Buffer {
  const content = text
    ? `{ printf '# tracer: nop\\n#\\n'; head -c ${mib}M /dev/zero | tr '\\0' ' '; }`
    : `head -c ${mib}M /dev/zero`;
  const r = spawnSync('bash', ['-c', `${content} | xz -0 -T1 --lzma2=preset=0,dict=${dict}`], { maxBuffer: 64 * MiB });
  if (r.status !== 0) throw new Error(`xz failed: ${r.stderr}`);
  return r.stdout;
}

/**
 * An xz file whose LZMA2 dictionary claims `dictByte` (LZMA2's encoding:
 * 36 = 1 GiB, 37 = 1.5 GiB): a small stream, its block header patched and
 * its CRC32 fixed.
 */
export function xzBigDictionary(dictByte: number): Buffer {
  const d = Buffer.from(xzZeros(1));
  const p = 12; // after the stream header
  const size = (d[p]! + 1) * 4;
  if (d[p + 2] !== 0x21 || d[p + 3] !== 1) throw new Error('unexpected xz block header');
  d[p + 4] = dictByte;
  d.writeUInt32LE(crc32(d.subarray(p, p + size - 4)), p + size - 4);
  return d;
}

function crc32(b: Uint8Array): number {
  let c = ~0;
  for (const x of b) {
    c ^= x;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

// ---- trace.dat v7 ----------------------------------------------------

const OPT_DONE = 0;
const OPT_BUFFER = 3;
const SECTION_OPTIONS = 0;
const SECTION_BUFFER = 3;

const chunkData = new Map<string, Buffer>();

/** A v7 compressed chunk of `usize` zero bytes (empty ring-buffer pages): csize, usize, data. */
export function v7Chunk(algorithm: 'zstd' | 'zlib', usize: number): Buffer {
  const key = `${algorithm}:${usize}`;
  let data = chunkData.get(key);
  if (!data) {
    data =
      algorithm === 'zstd'
        ? zstdRleFrame(usize, { contentSize: true })
        : deflateSync(Buffer.alloc(usize), { level: 9 });
    chunkData.set(key, data);
  }
  const h = Buffer.alloc(8);
  h.writeUInt32LE(data.length, 0);
  h.writeUInt32LE(usize, 4);
  return Buffer.concat([h, data]);
}

export interface V7BombCpu {
  cpu: number;
  /** Index into `data`: which data run this CPU entry points at (entries may share one). */
  data: number;
}

/**
 * A real little-endian v7 recording (`base`) with an instance buffer
 * appended: its section holds `data` (per-CPU runs: u32 chunk count, then
 * chunks, each run page-aligned), and a new options section, linked from the
 * last one, has a BUFFER option listing `cpus` (several may point at the same
 * run). Everything the recording had stays as it was.
 */
export function v7WithCraftedBuffer(base: Buffer, runs: Buffer[][], cpus: V7BombCpu[]): Buffer {
  let p = base.indexOf(0, 10) + 1;
  if (base.toString('latin1', 3, 10) !== 'tracing' || base.toString('latin1', 10, p - 1) !== '7' || base[p] !== 0) {
    throw new Error('not a little-endian version-7 trace.dat');
  }
  const pageSize = base.readUInt32LE(p + 2);
  p += 6;
  p = base.indexOf(0, p) + 1; // compression name
  p = base.indexOf(0, p) + 1; // compression version
  // Find the last DONE option of the options chain: its "next" is patched to our section.
  let next = Number(base.readBigUInt64LE(p));
  let lastDoneAt = -1;
  const out = Buffer.from(base);
  for (let guard = 0; next !== 0 && guard < 100; guard++) {
    const id = base.readUInt16LE(next);
    if (id !== SECTION_OPTIONS || base.readUInt16LE(next + 2) !== 0)
      throw new Error('expected an uncompressed options section');
    const size = Number(base.readBigUInt64LE(next + 8));
    let q = next + 16;
    const end = q + size;
    next = 0;
    while (q + 6 <= end) {
      const oid = base.readUInt16LE(q);
      const len = base.readUInt32LE(q + 2);
      if (oid === OPT_DONE) {
        lastDoneAt = q + 6;
        next = Number(base.readBigUInt64LE(q + 6));
      }
      q += 6 + len;
    }
  }
  if (lastDoneAt < 0) throw new Error('no DONE option found');

  const parts: Buffer[] = [out];
  let size = out.length;
  const put = (b: Buffer) => {
    parts.push(b);
    size += b.length;
  };
  const align = () => {
    const pad = (pageSize - (size % pageSize)) % pageSize;
    if (pad) put(Buffer.alloc(pad));
  };
  // The buffer section: header, then each run on a page boundary.
  align();
  const bufferAt = size;
  const bufferHeader = Buffer.alloc(16);
  put(bufferHeader);
  const runAt: Array<{ offset: number; size: number }> = [];
  for (const chunks of runs) {
    align();
    const count = Buffer.alloc(4);
    count.writeUInt32LE(chunks.length, 0);
    const body = Buffer.concat([count, ...chunks]);
    runAt.push({ offset: size, size: body.length - 4 });
    put(body);
  }
  bufferHeader.writeUInt16LE(SECTION_BUFFER, 0);
  bufferHeader.writeUInt16LE(1, 2); // compressed
  bufferHeader.writeBigUInt64LE(BigInt(size - bufferAt - 16), 8);

  // The options section: BUFFER option, DONE (end of the chain).
  const name = Buffer.from('bomb\0local\0', 'latin1');
  const opt = Buffer.alloc(8 + name.length + 8 + cpus.length * 20);
  let o = 0;
  opt.writeBigUInt64LE(BigInt(bufferAt), o);
  o += 8;
  name.copy(opt, o);
  o += name.length;
  opt.writeUInt32LE(pageSize, o);
  opt.writeUInt32LE(cpus.length, o + 4);
  o += 8;
  for (const c of cpus) {
    const r = runAt[c.data]!;
    opt.writeUInt32LE(c.cpu, o);
    opt.writeBigUInt64LE(BigInt(r.offset), o + 4);
    opt.writeBigUInt64LE(BigInt(r.size), o + 12);
    o += 20;
  }
  const rec = (id: number, data: Buffer) => {
    const h = Buffer.alloc(6);
    h.writeUInt16LE(id, 0);
    h.writeUInt32LE(data.length, 2);
    return Buffer.concat([h, data]);
  };
  const body = Buffer.concat([rec(OPT_BUFFER, opt), rec(OPT_DONE, Buffer.alloc(8))]);
  const optionsAt = size;
  const sh = Buffer.alloc(16);
  sh.writeUInt16LE(SECTION_OPTIONS, 0);
  sh.writeBigUInt64LE(BigInt(body.length), 8);
  put(sh);
  put(body);
  out.writeBigUInt64LE(BigInt(optionsAt), lastDoneAt);
  return Buffer.concat(parts);
}
