/**
 * Test support: the layout of a version-6 trace.dat as trace-cmd writes it,
 * for tests that make variants of a real recording (big-endian twin,
 * injected trace_printk events). Only what those tests need: every header
 * integer's place and size, the printk formats section, the CPU data, and
 * the records of a little-endian ring-buffer page.
 */

export interface V6Layout {
  /** Offset of the endianness byte (then the long size, then the u32 page size). */
  endianAt: number;
  pageSize: number;
  /** Every integer of the headers (sizes, counts, page size, option words, CPU table): [offset, bytes]. */
  ints: [number, number][];
  /** The printk formats text: where it starts and its length (its u32 size word is in `ints`). */
  printk: { at: number; size: number };
  /** Each CPU's data. */
  cpus: { offset: number; size: number }[];
}

/** Reads a little-endian v6 file's layout (the fixture's: one buffer, CPUCOUNT the only option). */
export function v6Layout(le: Buffer): V6Layout {
  const ints: [number, number][] = [];
  let p = le.indexOf(0, 10) + 1; // magic, "tracing", version string
  const endianAt = p;
  if (le.toString('latin1', 3, 10) !== 'tracing' || le.toString('latin1', 10, p - 1) !== '6' || le[p] !== 0) {
    throw new Error('not a little-endian version-6 trace.dat');
  }
  const pageSize = le.readUInt32LE(p + 2);
  ints.push([p + 2, 4]);
  p += 6;
  const word = (bytes: 2 | 4 | 8): number => {
    const v = bytes === 8 ? Number(le.readBigUInt64LE(p)) : bytes === 4 ? le.readUInt32LE(p) : le.readUInt16LE(p);
    ints.push([p, bytes]);
    p += bytes;
    return v;
  };
  const sized = (bytes: 4 | 8) => {
    const n = word(bytes);
    const at = p;
    p += n;
    return { at, size: n };
  };
  const expectText = (s: string) => {
    if (le.toString('latin1', p, p + s.length) !== s) throw new Error(`expected ${JSON.stringify(s)} at ${p}`);
    p += s.length;
  };
  expectText('header_page\0');
  sized(8);
  expectText('header_event\0');
  sized(8);
  for (let n = word(4); n > 0; n--) sized(8); // ftrace formats
  for (let systems = word(4); systems > 0; systems--) {
    p = le.indexOf(0, p) + 1;
    for (let n = word(4); n > 0; n--) sized(8);
  }
  sized(4); // kallsyms
  const printk = sized(4);
  sized(8); // saved cmdlines
  const cpuCount = word(4);
  expectText('options  \0');
  for (;;) {
    const id = word(2);
    if (id === 0) break;
    const size = word(4);
    if (id !== 8) throw new Error(`option ${id}: only CPUCOUNT is known here`);
    word(4);
    p += size - 4;
  }
  expectText('flyrecord\0');
  const cpus: { offset: number; size: number }[] = [];
  for (let cpu = 0; cpu < cpuCount; cpu++) cpus.push({ offset: word(8), size: word(8) });
  return { endianAt, pageSize, ints, printk, cpus };
}

/** One record of a ring-buffer page, as a little-endian walk finds it. */
export interface PageRecord {
  /** Offset of the 32-bit record header. */
  at: number;
  typeLen: number;
  delta: number;
  /** The 32-bit word after the header, if the record has one (length, time extend, padding size), else -1. */
  wordAt: number;
  /** Event records: where the event's data starts and its length; -1 and 0 for the others. */
  dataAt: number;
  dataLen: number;
}

/**
 * The records between `start` and `end` of a little-endian page's data,
 * by the rules ring_buffer_page.ts decodes (padding with time delta 0
 * ends the page).
 */
export function pageRecordsLE(b: Buffer, start: number, end: number): PageRecord[] {
  const out: PageRecord[] = [];
  for (let p = start; p + 4 <= end;) {
    const h = b.readUInt32LE(p);
    const r: PageRecord = { at: p, typeLen: h & 31, delta: h >>> 5, wordAt: -1, dataAt: -1, dataLen: 0 };
    out.push(r);
    p += 4;
    if (r.typeLen >= 1 && r.typeLen <= 28) {
      r.dataAt = p;
      r.dataLen = r.typeLen * 4;
      p += r.dataLen;
    } else if (r.typeLen === 0) {
      r.wordAt = p;
      r.dataAt = p + 4;
      r.dataLen = (b.readUInt32LE(p) - 4 + 3) & ~3;
      p = r.dataAt + r.dataLen;
    } else if (r.typeLen === 30 || r.typeLen === 31) {
      r.wordAt = p;
      p += 4;
    } else {
      if (r.delta === 0) break;
      r.wordAt = p;
      p += b.readUInt32LE(p);
    }
  }
  return out;
}
