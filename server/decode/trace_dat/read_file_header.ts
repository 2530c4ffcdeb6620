/**
 * Reads everything in a trace.dat except the ring-buffer pages: the initial
 * header, the header_page/header_event formats, event formats, kallsyms,
 * printk formats, saved cmdlines, options, and where each buffer's per-CPU
 * data lives.
 *
 * v6: these parts follow each other in a fixed order, then `options`, then
 *     `flyrecord` with per-CPU (offset, size) pairs.
 * v7: a chain of OPTIONS sections (first one's offset is in the header) that
 *     point at the other sections; any section may be compressed.
 *
 * Unreadable essentials (magic, version, event formats, the way to the data)
 * throw TraceDatFormatError, which the caller turns into a DecodeError.
 * Damage in optional parts is recorded in `problems` and reading goes on.
 */
import { MAX_CPUS, type SkippedInput } from '../decoded_event.ts';
import { ByteCursor, TraceDatFormatError, hexExcerpt, readU64Number } from './byte_cursor.ts';
import {
  DecompressBudget,
  decompress,
  DecompressError,
  MAX_CHUNK_UNCOMPRESSED,
  MAX_SECTION_BYTES,
  zstdNativeOnce,
} from './decompress.ts';
import type { FileSource } from './file_source.ts';
import type { Tsc2Nsec } from './tsc_to_ns.ts';

/** Compressed sections that inflate past this go to the zstd binary when it exists (readSection). */
const NATIVE_SECTION_BYTES = 32 << 10;

export const TRACE_DAT_MAGIC = Buffer.from([0x17, 0x08, 0x44, ...Buffer.from('tracing')]);

/** Option ids (trace-cmd's TRACECMD_OPTION_*). */
const OPT = {
  DONE: 0,
  DATE: 1,
  CPUSTAT: 2,
  BUFFER: 3,
  TRACECLOCK: 4,
  UNAME: 5,
  HOOK: 6,
  OFFSET: 7,
  CPUCOUNT: 8,
  VERSION: 9,
  PROCMAPS: 10,
  TRACEID: 11,
  TIME_SHIFT: 12,
  GUEST: 13,
  TSC2NSEC: 14,
  STRINGS: 15,
  HEADER_INFO: 16,
  FTRACE_EVENTS: 17,
  EVENT_FORMATS: 18,
  KALLSYMS: 19,
  PRINTK: 20,
  CMDLINES: 21,
  BUFFER_TEXT: 22,
} as const;

const SECTION_FLAG_COMPRESSED = 1;

export interface CpuData {
  cpu: number;
  /** File offset of this CPU's data (v7 compressed: of the chunk count). */
  offset: number;
  /** Bytes of data as the file states it (v7 compressed: excludes the 4-byte chunk count). */
  size: number;
}

export interface BufferInfo {
  /** Instance name, '' for the top-level buffer. */
  name: string;
  clock: string | null;
  pageSize: number;
  /** v7: per-CPU data is a list of compressed chunks. */
  compressed: boolean;
  cpus: CpuData[];
}

export interface FormatText {
  system: string;
  text: string;
  where: number;
}

export interface TraceDatInfo {
  version: number;
  littleEndian: boolean;
  longSize: number;
  pageSize: number;
  fileSize: number;
  compression: { name: string; version: string } | null;
  headerPage: string | null;
  headerEvent: string | null;
  formats: FormatText[];
  kallsyms: string | null;
  printk: string | null;
  cmdlines: string | null;
  cpuCount: number | null;
  uname: string | null;
  traceClock: string | null;
  traceCmdVersion: string | null;
  date: string | null;
  /** OFFSET option: ns added to every timestamp on reading (like trace-cmd does). */
  tsOffset: bigint;
  /** TSC2NSEC: timestamps are TSC cycles, converted to ns with these (tsc_to_ns.ts); null when absent or mult 0. */
  tsc2nsec: Tsc2Nsec | null;
  buffers: BufferInfo[];
  problems: SkippedInput[];
}

/** Sequential reader over the file for the v6 header (buffered window, bounds-checked). */
class AsyncCursor {
  private window: Buffer = Buffer.alloc(0);
  private windowStart = 0;

  constructor(
    private readonly src: FileSource,
    public pos: number,
    readonly littleEndian: boolean,
  ) {}

  private async ensure(n: number, what: string): Promise<Buffer> {
    const rel = this.pos - this.windowStart;
    if (rel >= 0 && rel + n <= this.window.length) return this.window.subarray(rel, rel + n);
    if (this.pos + n > this.src.size) {
      throw new TraceDatFormatError(
        Math.min(this.pos, this.src.size),
        `truncated: ${what} needs ${n} bytes at ${this.pos}, file has ${this.src.size}`,
      );
    }
    const len = Math.min(Math.max(n, 1 << 16), this.src.size - this.pos);
    this.window = await this.src.read(this.pos, len, what);
    this.windowStart = this.pos;
    return this.window.subarray(0, n);
  }

  async bytes(n: number, what: string): Promise<Buffer> {
    const b = await this.ensure(n, what);
    this.pos += n;
    return b;
  }

  async u16(what: string): Promise<number> {
    const b = await this.bytes(2, what);
    return this.littleEndian ? b.readUInt16LE(0) : b.readUInt16BE(0);
  }

  async u32(what: string): Promise<number> {
    const b = await this.bytes(4, what);
    return this.littleEndian ? b.readUInt32LE(0) : b.readUInt32BE(0);
  }

  async u64(what: string): Promise<number> {
    const at = this.pos;
    const b = await this.bytes(8, what);
    const c = new ByteCursor(b, this.littleEndian, at);
    return c.u64(what);
  }

  async cstring(what: string, max = 4096): Promise<string> {
    const start = this.pos;
    const avail = Math.min(max, this.src.size - start);
    const b = await this.ensure(avail, what);
    const end = b.indexOf(0);
    if (end < 0) throw new TraceDatFormatError(start, `unterminated ${what}`);
    this.pos = start + end + 1;
    return b.toString('utf8', 0, end);
  }

  async expect(s: string): Promise<void> {
    const at = this.pos;
    const b = await this.bytes(s.length, JSON.stringify(s));
    if (b.toString('latin1') !== s) {
      throw new TraceDatFormatError(at, `expected ${JSON.stringify(s)}, found ${JSON.stringify(b.toString('latin1'))}`);
    }
  }

  /** A length-prefixed blob whose length must fit in the file. */
  async sizedText(size: number, what: string): Promise<string> {
    if (size > MAX_SECTION_BYTES) {
      throw new TraceDatFormatError(
        this.pos,
        `${what} claims ${size} bytes, more than any real one (${MAX_SECTION_BYTES >> 20} MiB)`,
      );
    }
    if (size > this.src.size - this.pos) {
      throw new TraceDatFormatError(
        this.pos,
        `${what} claims ${size} bytes, only ${this.src.size - this.pos} left in file`,
      );
    }
    const at = this.pos;
    const b = size <= 1 << 16 ? await this.bytes(size, what) : await this.src.read(at, size, what);
    this.pos = at + size;
    return b.toString('utf8');
  }
}

interface InitialHeader {
  version: number;
  littleEndian: boolean;
  longSize: number;
  pageSize: number;
  /** Offset just past the page size field. */
  end: number;
}

async function readInitial(src: FileSource): Promise<InitialHeader> {
  const head = await src.readUpTo(0, 64);
  if (head.length < TRACE_DAT_MAGIC.length || !head.subarray(0, TRACE_DAT_MAGIC.length).equals(TRACE_DAT_MAGIC)) {
    throw new TraceDatFormatError(0, `not a trace.dat file (bad magic: ${hexExcerpt(head, 0, 10)})`);
  }
  const vEnd = head.indexOf(0, 10);
  if (vEnd < 0 || vEnd > 20) throw new TraceDatFormatError(10, 'unreadable version string');
  const versionText = head.toString('latin1', 10, vEnd);
  const version = Number(versionText);
  if (!/^\d+$/.test(versionText) || (version !== 6 && version !== 7)) {
    throw new TraceDatFormatError(
      10,
      `unsupported trace.dat version ${JSON.stringify(versionText)} (6 and 7 are supported)`,
    );
  }
  let p = vEnd + 1;
  if (head.length < p + 6) throw new TraceDatFormatError(p, 'truncated initial header');
  const endian = head[p]!;
  const longSize = head[p + 1]!;
  if (endian > 1) throw new TraceDatFormatError(p, `bad endianness flag ${endian}`);
  if (longSize !== 4 && longSize !== 8) throw new TraceDatFormatError(p + 1, `bad long size ${longSize}`);
  const littleEndian = endian === 0;
  p += 2;
  const pageSize = littleEndian ? head.readUInt32LE(p) : head.readUInt32BE(p);
  if (pageSize < 256 || pageSize > 1 << 24 || (pageSize & (pageSize - 1)) !== 0) {
    throw new TraceDatFormatError(p, `implausible page size ${pageSize}`);
  }
  return { version, littleEndian, longSize, pageSize, end: p + 4 };
}

function emptyInfo(init: InitialHeader, fileSize: number): TraceDatInfo {
  return {
    version: init.version,
    littleEndian: init.littleEndian,
    longSize: init.longSize,
    pageSize: init.pageSize,
    fileSize,
    compression: null,
    headerPage: null,
    headerEvent: null,
    formats: [],
    kallsyms: null,
    printk: null,
    cmdlines: null,
    cpuCount: null,
    uname: null,
    traceClock: null,
    traceCmdVersion: null,
    date: null,
    tsOffset: 0n,
    tsc2nsec: null,
    buffers: [],
    problems: [],
  };
}

/**
 * `budget`: the file's decompression budget (compressed v7 sections count
 * against its ratio; decode_trace_dat.ts shares it with the CPU streams).
 */
export async function readTraceDatHeader(
  src: FileSource,
  budget: DecompressBudget = new DecompressBudget({ maxHeld: Infinity, maxRatio: 0, checkAfterBytes: 0 }),
): Promise<TraceDatInfo> {
  const init = await readInitial(src);
  const info = emptyInfo(init, src.size);
  if (init.version === 6) await readV6(src, init, info);
  else await readV7(src, init, info, budget);
  refuseSharedCpuData(info);
  return info;
}

/**
 * Per-CPU data must not overlap or repeat: every stream decodes (and, in v7,
 * decompresses) its extent, so a BUFFER option listing the same data under
 * many CPUs multiplied the work and the memory with each entry. The first
 * entry at an offset is kept; later ones that share any of its bytes are
 * dropped with a problem naming both.
 */
function refuseSharedCpuData(info: TraceDatInfo): void {
  const all: Array<{ b: BufferInfo; c: CpuData; start: number; end: number }> = [];
  for (const b of info.buffers) {
    const seenCpu = new Set<number>();
    b.cpus = b.cpus.filter((c) => {
      if (c.size <= 0) return true;
      if (seenCpu.has(c.cpu)) {
        info.problems.push({
          where: c.offset,
          unit: 'offset',
          reason: `buffer ${JSON.stringify(b.name)}: cpu ${c.cpu} listed twice; the repeat (offset ${c.offset}, size ${c.size}) refused`,
          excerpt: '',
        });
        return false;
      }
      seenCpu.add(c.cpu);
      all.push({ b, c, start: c.offset, end: c.offset + c.size + (b.compressed ? 4 : 0) });
      return true;
    });
  }
  all.sort((x, y) => x.start - y.start || x.end - y.end);
  const refused = new Set<CpuData>();
  let last: (typeof all)[number] | null = null;
  for (const e of all) {
    if (last && e.start < last.end) {
      refused.add(e.c);
      info.problems.push({
        where: e.start,
        unit: 'offset',
        reason: `buffer ${JSON.stringify(e.b.name)}: cpu ${e.c.cpu}'s data (offset ${e.start}, size ${e.c.size}) overlaps cpu ${last.c.cpu}'s (offset ${last.start}, size ${last.c.size})${e.b !== last.b ? ` of buffer ${JSON.stringify(last.b.name)}` : ''}; refused`,
        excerpt: '',
      });
      continue;
    }
    last = e;
  }
  if (refused.size > 0) for (const b of info.buffers) b.cpus = b.cpus.filter((c) => !refused.has(c));
}

// ---------------------------------------------------------------------------
// v6
// ---------------------------------------------------------------------------

async function readHeaderInfoSeq(c: AsyncCursor, info: TraceDatInfo): Promise<void> {
  await c.expect('header_page\0');
  info.headerPage = await c.sizedText(await c.u64('header_page size'), 'header_page');
  await c.expect('header_event\0');
  info.headerEvent = await c.sizedText(await c.u64('header_event size'), 'header_event');
}

async function readFormatsSeq(c: AsyncCursor, info: TraceDatInfo, system: string): Promise<void> {
  const count = await c.u32(`${system} format count`);
  if (count > (info.fileSize - c.pos) / 8)
    throw new TraceDatFormatError(c.pos - 4, `implausible ${system} format count ${count}`);
  for (let i = 0; i < count; i++) {
    const size = await c.u64('format size');
    const where = c.pos;
    info.formats.push({ system, text: await c.sizedText(size, `${system} format`), where });
  }
}

async function readV6(src: FileSource, init: InitialHeader, info: TraceDatInfo): Promise<void> {
  const c = new AsyncCursor(src, init.end, init.littleEndian);
  await readHeaderInfoSeq(c, info);
  await readFormatsSeq(c, info, 'ftrace');
  const systems = await c.u32('event system count');
  if (systems > info.fileSize - c.pos) throw new TraceDatFormatError(c.pos - 4, `implausible system count ${systems}`);
  for (let s = 0; s < systems; s++) {
    const name = await c.cstring('system name');
    await readFormatsSeq(c, info, name);
  }
  info.kallsyms = await c.sizedText(await c.u32('kallsyms size'), 'kallsyms');
  info.printk = await c.sizedText(await c.u32('printk size'), 'printk formats');
  info.cmdlines = await c.sizedText(await c.u64('cmdlines size'), 'saved cmdlines');
  const cpus = await c.u32('cpu count');
  if (cpus > MAX_CPUS) throw new TraceDatFormatError(c.pos - 4, `implausible cpu count ${cpus}`);
  info.cpuCount = cpus;
  let label = (await c.bytes(10, 'section label')).toString('latin1');
  const v6Buffers: { offset: number; name: string }[] = [];
  if (label === 'options  \0') {
    for (let n = 0; ; n++) {
      if (n > 100_000) throw new TraceDatFormatError(c.pos, 'too many options');
      const id = await c.u16('option id');
      if (id === OPT.DONE) break;
      const size = await c.u32('option size');
      const at = c.pos;
      if (size > info.fileSize - at) throw new TraceDatFormatError(at, `option ${id} claims ${size} bytes`);
      const data = await src.read(at, size, `option ${id}`);
      c.pos = at + size;
      applyOption(id, new ByteCursor(data, init.littleEndian, at), info, v6Buffers, 6);
    }
    label = (await c.bytes(10, 'section label')).toString('latin1');
  }
  if (label === 'latency  \0') {
    info.problems.push({
      where: c.pos,
      unit: 'offset',
      reason: 'latency-format trace.dat (text data) is not decoded',
      excerpt: '',
    });
    return;
  }
  if (label !== 'flyrecord\0')
    throw new TraceDatFormatError(c.pos - 10, `expected "flyrecord", found ${JSON.stringify(label)}`);
  info.buffers.push({
    name: '',
    clock: info.traceClock,
    pageSize: init.pageSize,
    compressed: false,
    cpus: await readCpuTable(c, cpus),
  });
  for (const b of v6Buffers) {
    try {
      const bc = new AsyncCursor(src, b.offset, init.littleEndian);
      await bc.expect('flyrecord\0');
      info.buffers.push({
        name: b.name,
        clock: info.traceClock,
        pageSize: init.pageSize,
        compressed: false,
        cpus: await readCpuTable(bc, cpus),
      });
    } catch (e) {
      if (!(e instanceof TraceDatFormatError)) throw e;
      info.problems.push({
        where: e.where,
        unit: 'offset',
        reason: `buffer ${JSON.stringify(b.name)}: ${e.message}`,
        excerpt: '',
      });
    }
  }
}

async function readCpuTable(c: AsyncCursor, cpus: number): Promise<CpuData[]> {
  const out: CpuData[] = [];
  for (let cpu = 0; cpu < cpus; cpu++) {
    const offset = await c.u64('cpu data offset');
    const size = await c.u64('cpu data size');
    out.push({ cpu, offset, size });
  }
  return out;
}

// ---------------------------------------------------------------------------
// v7
// ---------------------------------------------------------------------------

interface Section {
  id: number;
  flags: number;
  /** Offset of the section header. */
  where: number;
  data: ByteCursor;
}

async function readSection(
  src: FileSource,
  offset: number,
  info: TraceDatInfo,
  expectId: number | null,
  budget: DecompressBudget,
): Promise<Section> {
  const hdr = new ByteCursor(await src.read(offset, 16, 'section header'), info.littleEndian, offset);
  const id = hdr.u16();
  const flags = hdr.u16();
  hdr.u32(); // description string id
  const size = hdr.u64('section size');
  if (expectId !== null && id !== expectId)
    throw new TraceDatFormatError(offset, `expected section ${expectId}, found section id ${id}`);
  const bodyAt = offset + 16;
  if (size > info.fileSize - bodyAt)
    throw new TraceDatFormatError(
      offset,
      `section ${id} claims ${size} bytes, file has ${info.fileSize - bodyAt} after it`,
    );
  if (size > MAX_SECTION_BYTES)
    throw new TraceDatFormatError(
      offset,
      `section ${id} claims ${size} bytes, more than any real one (${MAX_SECTION_BYTES >> 20} MiB)`,
    );
  if (!(flags & SECTION_FLAG_COMPRESSED)) {
    return {
      id,
      flags,
      where: offset,
      data: new ByteCursor(await src.read(bodyAt, size, `section ${id}`), info.littleEndian, bodyAt),
    };
  }
  if (size < 8) throw new TraceDatFormatError(offset, `compressed section ${id} too small`);
  const raw = await src.read(bodyAt, size, `section ${id}`);
  const zc = new ByteCursor(raw, info.littleEndian, bodyAt);
  const csize = zc.u32();
  const usize = zc.u32();
  if (csize > size - 8)
    throw new TraceDatFormatError(
      bodyAt,
      `compressed section ${id}: ${csize} bytes of data claimed, ${size - 8} present`,
    );
  if (usize > MAX_SECTION_BYTES)
    throw new TraceDatFormatError(bodyAt, `compressed section ${id}: implausible size ${usize}`);
  budget.count(8 + csize, usize, bodyAt);
  let body: Buffer;
  try {
    const algo = info.compression?.name ?? 'none';
    // Past ~32 KB the zstd binary costs less than fzstd, which runs here cold (not yet
    // optimised): a 972 KB kallsyms took fzstd 86-107 ms of CPU against 9-22 ms with the binary
    // (spawn included), the 44 KB event formats 11-12 against 7-8 ms.
    const native =
      algo === 'zstd' && usize > NATIVE_SECTION_BYTES ? await zstdNativeOnce(raw.subarray(8, 8 + csize), usize) : null;
    body = native ?? decompress(algo, raw.subarray(8, 8 + csize), usize);
  } catch (e) {
    if (e instanceof DecompressError) throw new TraceDatFormatError(bodyAt, `section ${id}: ${e.message}`);
    throw e;
  }
  return { id, flags, where: offset, data: new ByteCursor(body, info.littleEndian, offset, true) };
}

/** A v7 BUFFER option: one buffer instance and where its per-CPU data lie. */
type V7BufferOption = { offset: number; name: string; clock: string | null; pageSize: number; cpus: CpuData[] };

/** What the v7 options chain says: where each section is, the buffers, and whether the chain broke. */
interface V7Options {
  sectionOffsets: Map<number, number>;
  bufferOptions: V7BufferOption[];
  /** A later options section was unreadable (a truncated file loses the ones after the data). */
  chainBroken: boolean;
  /** The end of the last options section read from the file: where a salvage scan may start. */
  scanFrom: number;
}

/**
 * trace.dat v7: the compression header, then the options chain, the
 * sections it points to, and the buffers; a truncated file's buffers are
 * salvaged by scanning for their sections.
 */
async function readV7(
  src: FileSource,
  init: InitialHeader,
  info: TraceDatInfo,
  budget: DecompressBudget,
): Promise<void> {
  const head = new ByteCursor(await src.readUpTo(init.end, 512), init.littleEndian, init.end);
  const name = head.cstring('compression name');
  const version = head.cstring('compression version');
  info.compression = { name, version };
  if (name !== 'none' && name !== 'zstd' && name !== 'zlib') {
    throw new TraceDatFormatError(init.end, `unsupported compression ${JSON.stringify(name)}`);
  }
  const options = await readV7Options(src, head.u64('options offset'), init, info, budget);
  await readV7Sections(src, options.sectionOffsets, info, budget);
  await describeV7Buffers(src, options.bufferOptions, info);
  if (options.chainBroken && !hasCpuData(info)) {
    // trace-cmd writes the options describing the per-CPU data after the data, so a
    // truncated v7 file loses them. Find the flyrecord section itself and walk it.
    const salvaged = await salvageV7Buffers(src, info, options.scanFrom);
    if (salvaged.length > 0) {
      info.buffers.push(...salvaged);
      info.problems.push({
        where: salvaged[0]!.cpus[0]?.offset ?? options.scanFrom,
        unit: 'offset',
        reason: `buffer descriptions missing (truncated file): per-CPU data located by scanning; CPU numbers inferred as 0..${salvaged[0]!.cpus.length - 1} in file order`,
        excerpt: '',
      });
    }
  }
  if (!hasCpuData(info)) {
    info.problems.push({
      where: info.fileSize,
      unit: 'offset',
      reason: 'no per-CPU trace data found (file truncated before its data or buffer descriptions?)',
      excerpt: '',
    });
  }
}

const hasCpuData = (info: TraceDatInfo) => info.buffers.some((b) => b.cpus.some((c) => c.size > 0));

/**
 * Walks the chain of options sections from `first`. The first section is
 * essential (its damage is the file's error); a later one's damage is a
 * problem and ends the walk with what was found.
 */
async function readV7Options(
  src: FileSource,
  first: number,
  init: InitialHeader,
  info: TraceDatInfo,
  budget: DecompressBudget,
): Promise<V7Options> {
  const out: V7Options = { sectionOffsets: new Map(), bufferOptions: [], chainBroken: false, scanFrom: 0 };
  const seen = new Set<number>();
  let next = first;
  while (next !== 0) {
    if (seen.has(next) || seen.size > 10_000) {
      info.problems.push({ where: next, unit: 'offset', reason: 'options sections form a loop', excerpt: '' });
      break;
    }
    const isFirst = seen.size === 0;
    seen.add(next);
    let sec: Section;
    try {
      sec = await readSection(src, next, info, OPT.DONE, budget);
    } catch (e) {
      if (!(e instanceof TraceDatFormatError)) throw e;
      if (isFirst) throw e;
      // Later options sections sit at the end of the file (after the data): a truncated
      // file loses them, and with them the buffer descriptions. Keep what was found.
      info.problems.push({
        where: e.where,
        unit: 'offset',
        reason: `options section unreadable: ${e.message}`,
        excerpt: '',
      });
      out.chainBroken = true;
      break;
    }
    if (!sec.data.positionsAreVirtual) out.scanFrom = Math.max(out.scanFrom, sec.data.fileBase + sec.data.buf.length);
    next = readV7OptionsSection(sec.data, init, info, out);
  }
  return out;
}

/** Reads one options section's options into `out`; returns the next section's offset (0: none). */
function readV7OptionsSection(c: ByteCursor, init: InitialHeader, info: TraceDatInfo, out: V7Options): number {
  try {
    while (c.remaining > 0) {
      const id = c.u16();
      const size = c.u32();
      const at = c.where();
      const data = new ByteCursor(c.bytes(size, `option ${id}`), info.littleEndian, at, c.positionsAreVirtual);
      if (id === OPT.DONE) return data.u64('next options offset');
      if (id >= OPT.HEADER_INFO && id <= OPT.CMDLINES) out.sectionOffsets.set(id, data.u64('section offset'));
      else if (id === OPT.BUFFER) out.bufferOptions.push(parseV7BufferOption(data, init.pageSize));
      else applyOption(id, data, info, [], 7);
    }
  } catch (e) {
    if (!(e instanceof TraceDatFormatError)) throw e;
    info.problems.push({ where: e.where, unit: 'offset', reason: `damaged option: ${e.message}`, excerpt: '' });
  }
  return 0;
}

/** The sections the options point to: header info and event formats are essential, the rest optional. */
async function readV7Sections(
  src: FileSource,
  sectionOffsets: Map<number, number>,
  info: TraceDatInfo,
  budget: DecompressBudget,
): Promise<void> {
  const need = async (id: number, what: string, optional: boolean, parse: (c: ByteCursor) => void) => {
    const off = sectionOffsets.get(id);
    if (off === undefined) {
      if (!optional) throw new TraceDatFormatError(0, `no ${what} section`);
      return;
    }
    try {
      const sec = await readSection(src, off, info, id, budget);
      parse(sec.data);
    } catch (e) {
      if (!(e instanceof TraceDatFormatError) || !optional) throw e;
      info.problems.push({
        where: e.where,
        unit: 'offset',
        reason: `${what} section unreadable: ${e.message}`,
        excerpt: '',
      });
    }
  };
  await need(OPT.HEADER_INFO, 'header info', true, (c) => {
    c.expectString('header_page\0');
    info.headerPage = c.bytes(c.u64('header_page size')).toString('utf8');
    c.expectString('header_event\0');
    info.headerEvent = c.bytes(c.u64('header_event size')).toString('utf8');
  });
  const readFormats = (c: ByteCursor, system: string) => {
    const count = c.u32();
    if (count > c.remaining / 8) c.fail(`implausible ${system} format count ${count}`);
    for (let i = 0; i < count; i++) {
      const size = c.u64('format size');
      const where = c.where();
      info.formats.push({ system, text: c.bytes(size, `${system} format`).toString('utf8'), where });
    }
  };
  await need(OPT.FTRACE_EVENTS, 'ftrace formats', true, (c) => readFormats(c, 'ftrace'));
  await need(OPT.EVENT_FORMATS, 'event formats', false, (c) => {
    const systems = c.u32();
    if (systems > c.remaining) c.fail(`implausible system count ${systems}`);
    for (let s = 0; s < systems; s++) readFormats(c, c.cstring('system name'));
  });
  await need(OPT.KALLSYMS, 'kallsyms', true, (c) => {
    info.kallsyms = c.bytes(c.u32(), 'kallsyms').toString('utf8');
  });
  await need(OPT.PRINTK, 'printk formats', true, (c) => {
    info.printk = c.bytes(c.u32(), 'printk formats').toString('utf8');
  });
  await need(OPT.CMDLINES, 'saved cmdlines', true, (c) => {
    info.cmdlines = c.bytes(c.u64('cmdlines size'), 'saved cmdlines').toString('utf8');
  });
}

/** Each buffer of the options, with whether its section is compressed (read from the section's header). */
async function describeV7Buffers(src: FileSource, bufferOptions: V7BufferOption[], info: TraceDatInfo): Promise<void> {
  for (const b of bufferOptions) {
    let compressed = false;
    try {
      const hdr = new ByteCursor(await src.read(b.offset, 16, 'buffer section header'), info.littleEndian, b.offset);
      const id = hdr.u16();
      const flags = hdr.u16();
      if (id !== OPT.BUFFER) throw new TraceDatFormatError(b.offset, `expected buffer section, found section id ${id}`);
      compressed = (flags & SECTION_FLAG_COMPRESSED) !== 0 && info.compression!.name !== 'none';
    } catch (e) {
      if (!(e instanceof TraceDatFormatError)) throw e;
      // The section header is only needed for its compression flag; fall back to the file's algorithm.
      compressed = info.compression!.name !== 'none';
      info.problems.push({
        where: e.where,
        unit: 'offset',
        reason: `buffer ${JSON.stringify(b.name)}: ${e.message}`,
        excerpt: '',
      });
    }
    info.buffers.push({ name: b.name, clock: b.clock, pageSize: b.pageSize, compressed, cpus: b.cpus });
  }
}

/** Finds BUFFER (flyrecord) sections by their header and reconstructs per-CPU extents. */
async function salvageV7Buffers(src: FileSource, info: TraceDatInfo, scanFrom: number): Promise<BufferInfo[]> {
  const out: BufferInfo[] = [];
  const scanEnd = Math.min(info.fileSize, scanFrom + (16 << 20));
  let pos = scanFrom;
  const le = info.littleEndian;
  const algo = info.compression?.name ?? 'none';
  while (pos + 16 <= scanEnd) {
    const win = await src.readUpTo(pos, Math.min(1 << 20, scanEnd - pos));
    let found = -1;
    for (let i = 0; i + 16 <= win.length; i++) {
      const id = le ? win.readUInt16LE(i) : win.readUInt16BE(i);
      if (id !== OPT.BUFFER) continue;
      const flags = le ? win.readUInt16LE(i + 2) : win.readUInt16BE(i + 2);
      if (flags > 1) continue;
      const size = readU64Number(win, i + 8, le);
      if (size === null || size === 0 || size > 2 ** 45) continue;
      found = i;
      break;
    }
    if (found < 0) {
      pos += Math.max(1, win.length - 15);
      continue;
    }
    const hdrAt = pos + found;
    const flags = le ? win.readUInt16LE(found + 2) : win.readUInt16BE(found + 2);
    const size = readU64Number(win, found + 8, le)!;
    const compressed = (flags & SECTION_FLAG_COMPRESSED) !== 0 && algo !== 'none';
    const regionEnd = Math.min(info.fileSize, hdrAt + 16 + size);
    const cpus = compressed
      ? await walkCompressedCpus(src, info, alignUp(hdrAt + 16, info.pageSize), regionEnd)
      : await walkPageCpus(src, info, alignUp(hdrAt + 16, info.pageSize), regionEnd);
    if (cpus.length > 0) {
      out.push({ name: '', clock: info.traceClock, pageSize: info.pageSize, compressed, cpus });
      pos = regionEnd;
    } else pos = hdrAt + 1;
  }
  return out;
}

function alignUp(v: number, a: number): number {
  return Math.ceil(v / a) * a;
}

async function walkCompressedCpus(src: FileSource, info: TraceDatInfo, start: number, end: number): Promise<CpuData[]> {
  const le = info.littleEndian;
  const cpus: CpuData[] = [];
  let off = start;
  const maxCpus = info.cpuCount ?? 4096;
  while (off + 4 <= end && cpus.length < maxCpus) {
    const cb = await src.read(off, 4, 'chunk count');
    const count = le ? cb.readUInt32LE(0) : cb.readUInt32BE(0);
    if (count === 0 || count > 1 << 24) break;
    let p = off + 4;
    for (let i = 0; i < count && p + 8 <= end; i++) {
      const h = await src.read(p, 8, 'chunk header');
      const csize = le ? h.readUInt32LE(0) : h.readUInt32BE(0);
      const usize = le ? h.readUInt32LE(4) : h.readUInt32BE(4);
      if (usize % info.pageSize !== 0 || usize === 0 || usize > MAX_CHUNK_UNCOMPRESSED) {
        p = -1;
        break;
      }
      p += 8 + csize;
    }
    if (p < 0) break;
    // size excludes the 4-byte count, as in the BUFFER option; may run past a truncated end
    cpus.push({ cpu: cpus.length, offset: off, size: p - off - 4 });
    off = alignUp(p, info.pageSize);
  }
  return cpus;
}

async function walkPageCpus(src: FileSource, info: TraceDatInfo, start: number, end: number): Promise<CpuData[]> {
  // Uncompressed per-CPU data is a run of pages with rising timestamps; a timestamp
  // drop marks the next CPU's data.
  const le = info.littleEndian;
  const ps = info.pageSize;
  const cpus: CpuData[] = [];
  let cpuStart = start;
  let lastTs = -1n;
  for (let off = start; off < end; off += ps) {
    const b = await src.readUpTo(off, 8);
    if (b.length < 8) break;
    const ts = le ? b.readBigUInt64LE(0) : b.readBigUInt64BE(0);
    if (ts < lastTs) {
      cpus.push({ cpu: cpus.length, offset: cpuStart, size: off - cpuStart });
      cpuStart = off;
    }
    lastTs = ts;
  }
  if (end > cpuStart) cpus.push({ cpu: cpus.length, offset: cpuStart, size: end - cpuStart });
  return cpus;
}

function parseV7BufferOption(c: ByteCursor, defaultPageSize: number) {
  const offset = c.u64('buffer offset');
  const name = c.cstring('buffer name');
  const clock = c.cstring('buffer clock');
  // trace-cmd >= 3.0 writes the buffer's page size here; older v7 writers do not.
  // Tell them apart by which layout accounts for the remaining bytes exactly.
  let pageSize = defaultPageSize;
  const rest = c.remaining;
  if (rest >= 8) {
    const maybeCount = c.littleEndian ? c.buf.readUInt32LE(c.pos + 4) : c.buf.readUInt32BE(c.pos + 4);
    if (rest === 8 + maybeCount * 20) pageSize = c.u32();
  }
  const count = c.u32();
  if (count * 20 > c.remaining) c.fail(`buffer ${JSON.stringify(name)}: ${count} CPUs claimed, option too short`);
  const cpus: CpuData[] = [];
  for (let i = 0; i < count; i++) {
    const at = c.where();
    const cpu = c.u32();
    if (cpu >= MAX_CPUS)
      throw new TraceDatFormatError(at, `buffer ${JSON.stringify(name)}: implausible CPU number ${cpu}`);
    const off = c.u64('cpu data offset');
    const size = c.u64('cpu data size');
    cpus.push({ cpu, offset: off, size });
  }
  return { offset, name, clock: clock || null, pageSize, cpus };
}

function cstr(c: ByteCursor): string {
  const b = c.buf.subarray(c.pos);
  const end = b.indexOf(0);
  return b.toString('utf8', 0, end < 0 ? b.length : end);
}

function applyOption(
  id: number,
  c: ByteCursor,
  info: TraceDatInfo,
  v6Buffers: { offset: number; name: string }[],
  version: number,
): void {
  switch (id) {
    case OPT.DATE:
      info.date = cstr(c);
      break;
    case OPT.TRACECLOCK: {
      const m = /\[([^\]]+)\]/.exec(cstr(c));
      info.traceClock = m ? m[1]! : cstr(c).trim() || null;
      break;
    }
    case OPT.UNAME:
      info.uname = cstr(c);
      break;
    case OPT.VERSION:
      info.traceCmdVersion = cstr(c);
      break;
    case OPT.CPUCOUNT:
      info.cpuCount = c.u32();
      break;
    case OPT.OFFSET: {
      const s = cstr(c).trim();
      if (/^-?\d+$/.test(s)) info.tsOffset = BigInt(s);
      break;
    }
    case OPT.TSC2NSEC: {
      // u32 mult, u32 shift, u64 offset (trace-cmd ignores the option when mult is 0)
      const mult = c.u32();
      const shift = c.u32();
      const offset = BigInt(c.u64('tsc2nsec offset'));
      if (shift > 63) c.fail(`implausible tsc2nsec shift ${shift}`);
      info.tsc2nsec = mult === 0 ? null : { mult, shift, offset };
      break;
    }
    case OPT.BUFFER:
      if (version === 6) {
        const offset = c.u64('buffer offset');
        v6Buffers.push({ offset, name: c.cstring('buffer name') });
      }
      break;
    default:
      break;
  }
}
