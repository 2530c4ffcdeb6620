/**
 * Test support: a version-7 trace.dat rewritten with another compression
 * algorithm, as `trace-cmd convert --compression ALGO` would write it, or
 * with options added (withOptionsV7).
 *
 * Why: trace-cmd chooses its compression at build time (libzstd, zlib).
 * Debian's trace-cmd 3.1.6 offers only zstd (`trace-cmd list -c`), so nothing
 * on this machine records or converts a zlib v7 file, yet a trace-cmd built
 * without libzstd writes one. This rewrites a real recording instead: every
 * compressed section and every flyrecord chunk is decompressed and compressed
 * again, and every offset that moves is rewritten (the header's first options
 * offset, the options' section offsets and `DONE` links, and each BUFFER
 * option's section offset and per-CPU data offsets and sizes).
 *
 * Only the layout trace-cmd 3.x writes is handled (sections one after the
 * other from the header on; options sections uncompressed; per-CPU chunk
 * runs page-aligned inside the buffer section), little-endian.
 */
import { decompress } from '../../../../server/decode/trace_dat/decompress.ts';

export interface Recompression {
  /** Written to the file header, e.g. "zlib", "1.2.13". */
  name: string;
  version: string;
  compress(data: Buffer): Buffer;
}

const OPTIONS = 0;
const BUFFER = 3;
const DONE = 0;
const SECTION_COMPRESSED = 1;

interface Section {
  at: number;
  id: number;
  flags: number;
  size: number;
}

/** The file rewritten with `to`'s compression (all events and metadata unchanged). */
export function recompressV7(file: Buffer, to: Recompression): Buffer {
  return rewriteV7(file, { to });
}

/**
 * The file with `options` (raw option records: u16 id, u32 size, data)
 * added to its first options section, everything else unchanged (the CPU
 * data moves and is laid out on page boundaries again).
 */
export function withOptionsV7(file: Buffer, options: Buffer): Buffer {
  return rewriteV7(file, { options });
}

/** One option record: id, size and data, little-endian. */
export function optionRecord(id: number, data: Buffer): Buffer {
  const head = Buffer.alloc(6);
  head.writeUInt16LE(id, 0);
  head.writeUInt32LE(data.length, 2);
  return Buffer.concat([head, data]);
}

function rewriteV7(file: Buffer, change: { to?: Recompression; options?: Buffer }): Buffer {
  let p = file.indexOf(0, 10) + 1; // magic, "tracing", version string
  if (file.toString('latin1', 3, 10) !== 'tracing' || file.toString('latin1', 10, p - 1) !== '7' || file[p] !== 0) {
    throw new Error('not a little-endian version-7 trace.dat');
  }
  const pageSize = file.readUInt32LE(p + 2);
  p += 6;
  const nameEnd = file.indexOf(0, p);
  const from = file.toString('latin1', p, nameEnd);
  p = file.indexOf(0, nameEnd + 1) + 1; // compression version
  const firstOptions = Number(file.readBigUInt64LE(p));
  const headerEnd = p + 8;

  const sections: Section[] = [];
  for (let at = headerEnd; at + 16 <= file.length;) {
    const s = {
      at,
      id: file.readUInt16LE(at),
      flags: file.readUInt16LE(at + 2),
      size: Number(file.readBigUInt64LE(at + 8)),
    };
    if (at + 16 + s.size > file.length) throw new Error(`section ${s.id} at ${at} runs past the end`);
    sections.push(s);
    at += 16 + s.size;
  }

  const to: Recompression | null = change.to ?? null;
  const recompress = (data: Buffer): Buffer => {
    if (to === null) return Buffer.from(data);
    const csize = data.readUInt32LE(0);
    const usize = data.readUInt32LE(4);
    const raw = decompress(from, data.subarray(8, 8 + csize), usize);
    const z = to.compress(raw);
    const head = Buffer.alloc(8);
    head.writeUInt32LE(z.length, 0);
    head.writeUInt32LE(usize, 4);
    return Buffer.concat([head, z]);
  };

  const out: Buffer[] = [];
  let size = 0;
  const put = (b: Buffer) => {
    out.push(b);
    size += b.length;
  };
  // Header: everything up to the compression name, then the new name and version, then the options offset (patched below).
  const nameAt = nameEnd - from.length;
  put(file.subarray(0, nameAt));
  put(to === null ? file.subarray(nameAt, headerEnd - 8) : Buffer.from(`${to.name}\0${to.version}\0`, 'latin1'));
  const firstOptionsField = size;
  put(Buffer.alloc(8));

  const moved = new Map<number, number>(); // old section offset -> new
  const cpuMoved = new Map<number, { offset: number; size: number }>(); // old CPU data offset -> new offset and size
  const optionSections: { newAt: number; body: Buffer }[] = [];
  for (const s of sections) {
    const body = file.subarray(s.at + 16, s.at + 16 + s.size);
    const newAt = size;
    moved.set(s.at, newAt);
    let newBody: Buffer;
    if (s.id === BUFFER && s.flags & SECTION_COMPRESSED) {
      newBody = rewriteCpuChunks(file, s, newAt + 16, pageSize, recompress, cpuMoved);
    } else if (s.flags & SECTION_COMPRESSED) {
      newBody = recompress(body);
    } else {
      if (s.id !== OPTIONS) throw new Error(`uncompressed section ${s.id}: not expected in a compressed file`);
      newBody =
        s.at === firstOptions && change.options ? withOptionsBeforeDone(body, change.options) : Buffer.from(body); // offsets patched below
      optionSections.push({ newAt, body: newBody });
    }
    const sh = Buffer.from(file.subarray(s.at, s.at + 16));
    sh.writeBigUInt64LE(BigInt(newBody.length), 8);
    put(sh);
    put(newBody);
  }

  const where = (old: number, what: string): number => {
    const n = moved.get(old);
    if (n === undefined) throw new Error(`${what} ${old} is not a section's offset`);
    return n;
  };
  for (const { body } of optionSections) {
    for (let q = 0; q + 6 <= body.length;) {
      const id = body.readUInt16LE(q);
      const len = body.readUInt32LE(q + 2);
      const d = q + 6;
      if (id === DONE) {
        const next = Number(body.readBigUInt64LE(d));
        if (next !== 0) body.writeBigUInt64LE(BigInt(where(next, 'next options')), d);
      } else if (id >= 16 && id <= 21) {
        body.writeBigUInt64LE(BigInt(where(Number(body.readBigUInt64LE(d)), `option ${id}'s section`)), d);
      } else if (id === BUFFER) {
        patchBufferOption(body.subarray(d, d + len), where, cpuMoved);
      }
      q = d + len;
    }
  }
  const result = Buffer.concat(out);
  result.writeBigUInt64LE(BigInt(where(firstOptions, 'first options')), firstOptionsField);
  return result;
}

/**
 * The buffer section's body rewritten: for each CPU (in file order), its
 * chunk count and chunks, recompressed, starting on a page boundary of the
 * new file as trace-cmd lays them out.
 */
function rewriteCpuChunks(
  file: Buffer,
  s: Section,
  newBodyAt: number,
  pageSize: number,
  recompress: (chunk: Buffer) => Buffer,
  cpuMoved: Map<number, { offset: number; size: number }>,
): Buffer {
  const end = s.at + 16 + s.size;
  const parts: Buffer[] = [];
  let newPos = newBodyAt;
  let off = alignUp(s.at + 16, pageSize);
  while (off + 4 <= end) {
    const count = file.readUInt32LE(off);
    const newOffset = alignUp(newPos, pageSize);
    parts.push(Buffer.alloc(newOffset - newPos));
    const chunks: Buffer[] = [Buffer.from(file.subarray(off, off + 4))];
    let q = off + 4;
    for (let i = 0; i < count; i++) {
      const csize = file.readUInt32LE(q);
      chunks.push(recompress(file.subarray(q, q + 8 + csize)));
      q += 8 + csize;
    }
    const data = Buffer.concat(chunks);
    cpuMoved.set(off, { offset: newOffset, size: data.length - 4 });
    parts.push(data);
    newPos = newOffset + data.length;
    off = alignUp(q, pageSize);
  }
  return Buffer.concat(parts);
}

function patchBufferOption(
  d: Buffer,
  where: (old: number, what: string) => number,
  cpuMoved: Map<number, { offset: number; size: number }>,
): void {
  d.writeBigUInt64LE(BigInt(where(Number(d.readBigUInt64LE(0)), 'buffer section')), 0);
  let q = d.indexOf(0, 8) + 1; // name
  q = d.indexOf(0, q) + 1; // clock
  q += 4; // page size (trace-cmd >= 3.0)
  const count = d.readUInt32LE(q);
  q += 4;
  for (let i = 0; i < count; i++, q += 20) {
    const old = Number(d.readBigUInt64LE(q + 4));
    const n = cpuMoved.get(old);
    if (n === undefined) throw new Error(`CPU data at ${old} was not found in the buffer section`);
    d.writeBigUInt64LE(BigInt(n.offset), q + 4);
    d.writeBigUInt64LE(BigInt(n.size), q + 12);
  }
}

/** An options section's body with `options` inserted before its DONE option. */
function withOptionsBeforeDone(body: Buffer, options: Buffer): Buffer {
  for (let q = 0; q + 6 <= body.length;) {
    if (body.readUInt16LE(q) === DONE) return Buffer.concat([body.subarray(0, q), options, body.subarray(q)]);
    q += 6 + body.readUInt32LE(q + 2);
  }
  throw new Error('options section without DONE');
}

function alignUp(v: number, a: number): number {
  return Math.ceil(v / a) * a;
}
