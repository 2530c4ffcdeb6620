// trace.dat from machines other than this one's (x86-64, little-endian,
// 8-byte long).
//
// A big-endian machine (s390x, ppc64 big-endian) stores every integer the
// other way round, and the record header's bitfield too: type_len in the
// top 5 bits, the time delta in the low 27 (libtraceevent's kbuffer,
// type_len4host / ts4host). There is no such machine here, so these tests
// make big-endian pages out of a real little-endian recording
// (fixtures/reclaim_kswapd.v6.dat): page headers, record headers and every
// integer field of every event, by the event's own format, byte-swapped.
// Decoding both must give the same records, the same fields and the same
// typed rows; and the whole file, its headers swapped too, must print the
// same `trace-cmd report` (which checks the conversion) and ingest into the
// same model.
//
// A 32-bit kernel has a 4-byte commit word in its page header and 4-byte
// longs and pointers in its event formats: a hand-made page in that layout,
// in both byte orders, with the format a 32-bit kernel prints for
// mm_shrink_slab_start.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDuckDb } from '../../engine/engine.ts';
import { ingestFile, type IngestResult } from '../../ingest/ingest_file.ts';
import { recordingDigest } from '../../model/model_digest.ts';
import type { ChunkData } from '../../model/column_chunk.ts';
import { ModelBuilder } from '../../model/model_builder.ts';
import { ModelStore } from '../../model/model_store.ts';
import type { DirectRowColumns, DirectRows } from '../decoded_event.ts';
import { compileEvent, makeHelpers, type CompiledEvent } from './event_decoder.ts';
import { parseEventFormat, parseHeaderPage, type EventFormat, type FieldDef, type PageLayout } from './event_format.ts';
import { FileSource } from './file_source.ts';
import { Kallsyms } from './kallsyms.ts';
import { readTraceDatHeader } from './read_file_header.ts';
import { decodePage, pageTimestamp, PageRecords } from './ring_buffer_page.ts';
import { pageRecordsLE, v6Layout } from '../../../tests/support/decode/trace_dat/test_v6_file.ts';

const FIXTURE = path.resolve(__dirname, '../../../fixtures/reclaim_kswapd.v6.dat');

function swap(b: Buffer, at: number, size: number): void {
  if (size === 2) b.subarray(at, at + 2).swap16();
  else if (size === 4) b.subarray(at, at + 4).swap32();
  else if (size === 8) b.subarray(at, at + 8).swap64();
}

/** Swaps `size` bytes of `elem`-sized integers starting at `at`. */
function swapElements(b: Buffer, at: number, size: number, elem: number): void {
  if (elem < 2) return;
  for (let p = at; p + elem <= at + size; p += elem) swap(b, p, elem);
}

/** One event's payload (little-endian in `le`, written big-endian into `be` at the same place), by its format. */
function swapPayload(le: Buffer, be: Buffer, off: number, len: number, fmt: EventFormat, longSize: number): void {
  const fields: FieldDef[] = [...fmt.commonFields, ...fmt.fields];
  for (const f of fields) {
    const at = off + f.offset;
    switch (f.kind) {
      case 'int':
      case 'pointer':
        if (f.offset + f.size <= len) swap(be, at, f.size);
        break;
      case 'array':
        if (f.offset + f.size <= len) swapElements(be, at, f.size, f.elemSize);
        break;
      case 'dynstring':
      case 'dynarray': {
        if (f.offset + 4 > len) break;
        const loc = le.readUInt32LE(at);
        swap(be, at, 4);
        if (f.kind === 'dynarray') {
          const dataAt = (loc & 0xffff) + (f.relative ? f.offset + f.size : 0);
          const dataLen = loc >>> 16;
          if (dataAt + dataLen <= len) swapElements(be, off + dataAt, dataLen, f.elemSize > 0 ? f.elemSize : longSize);
        }
        break;
      }
      case 'tailarray':
        swapElements(be, at, len - f.offset, f.elemSize > 0 ? f.elemSize : longSize);
        break;
      default:
        break; // strings are bytes; opaque fields are not decoded
    }
  }
}

/**
 * The big-endian twin of a little-endian ring-buffer page: header words
 * swapped, each record header's bitfield rebuilt for big-endian, each
 * event's fields swapped by `formats` (keyed by common_type).
 */
function bigEndianPage(le: Buffer, layout: PageLayout, formats: Map<number, EventFormat>, longSize: number): Buffer {
  const be = Buffer.from(le);
  swap(be, layout.timestampOffset, 8);
  swap(be, layout.commitOffset, layout.commitSize);
  const commit = le.readUInt32LE(layout.commitOffset);
  const end = layout.dataOffset + (commit & 0xfffff);
  if (commit & 0x80000000 && commit & 0x40000000 && end + layout.commitSize <= le.length)
    swap(be, end, layout.commitSize);
  for (const r of pageRecordsLE(le, layout.dataOffset, end)) {
    be.writeUInt32BE(((r.typeLen << 27) | r.delta) >>> 0, r.at);
    if (r.wordAt >= 0) swap(be, r.wordAt, 4);
    if (r.dataAt < 0) continue;
    const fmt = formats.get(le.readUInt16LE(r.dataAt));
    if (fmt) swapPayload(le, be, r.dataAt, r.dataLen, fmt, longSize);
    else swap(be, r.dataAt, 2); // at least the type, so both sides miss the same format
  }
  return be;
}

/**
 * The big-endian twin of a whole version-6 trace.dat with one buffer (the
 * fixture's layout, test_v6_file.ts): every header integer swapped, the
 * endianness byte set, every page of CPU data converted by bigEndianPage().
 */
function bigEndianTraceDatV6(
  le: Buffer,
  formats: Map<number, EventFormat>,
  layout: PageLayout,
  longSize: number,
): Buffer {
  const file = v6Layout(le);
  const be = Buffer.from(le);
  be[file.endianAt] = 1;
  for (const [at, size] of file.ints) swap(be, at, size);
  for (const { offset, size } of file.cpus) {
    for (let at = offset; at + file.pageSize <= offset + size; at += file.pageSize) {
      bigEndianPage(le.subarray(at, at + file.pageSize), layout, formats, longSize).copy(be, at);
    }
  }
  return be;
}

interface Page {
  le: Buffer;
  be: Buffer;
}

async function fixturePages(): Promise<{
  pages: Page[];
  formats: Map<number, EventFormat>;
  layout: PageLayout;
  longSize: number;
  kallsyms: Kallsyms;
  pageSize: number;
}> {
  const src = await FileSource.open(FIXTURE);
  try {
    const info = await readTraceDatHeader(src);
    expect(info.littleEndian).toBe(true);
    const formats = new Map<number, EventFormat>();
    for (const f of info.formats) {
      const parsed = parseEventFormat(f.text, f.system);
      formats.set(parsed.id, parsed);
    }
    const layout = parseHeaderPage(info.headerPage, info.longSize);
    const buffer = info.buffers[0]!;
    const pages: Page[] = [];
    for (const cpu of buffer.cpus) {
      const data = await src.read(cpu.offset, cpu.size, 'cpu data');
      for (let at = 0; at + buffer.pageSize <= data.length; at += buffer.pageSize) {
        const le = data.subarray(at, at + buffer.pageSize);
        pages.push({ le, be: bigEndianPage(le, layout, formats, info.longSize) });
      }
    }
    return {
      pages,
      formats,
      layout,
      longSize: info.longSize,
      kallsyms: Kallsyms.parse(info.kallsyms),
      pageSize: buffer.pageSize,
    };
  } finally {
    await src.close();
  }
}

/** Every record of a page: [ts, payload offset, length], and the page's lost count. */
function records(buf: Buffer, pageSize: number, layout: PageLayout, littleEndian: boolean) {
  const out = new PageRecords(pageSize);
  decodePage(buf, 0, pageSize, layout, littleEndian, pageTimestamp(buf, 0, layout, littleEndian), out);
  expect(out.error).toBeNull();
  const rows: [number, number, number][] = [];
  for (let i = 0; i < out.count; i++) rows.push([out.ts[i]!, out.dataOff[i]!, out.dataLen[i]!]);
  return { rows, lost: out.lost };
}

/** mm_shrink_slab_start as a 32-bit kernel describes it (pointers and longs of 4 bytes). */
const SHRINK_START_32 = `name: mm_shrink_slab_start
ID: 300
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:struct shrinker * shr;\toffset:8;\tsize:4;\tsigned:0;
\tfield:void * shrink;\toffset:12;\tsize:4;\tsigned:0;
\tfield:int nid;\toffset:16;\tsize:4;\tsigned:1;
\tfield:long nr_objects_to_shrink;\toffset:20;\tsize:4;\tsigned:1;
\tfield:unsigned long gfp_flags;\toffset:24;\tsize:4;\tsigned:0;
\tfield:unsigned long cache_items;\toffset:28;\tsize:4;\tsigned:0;
\tfield:unsigned long long delta;\toffset:32;\tsize:8;\tsigned:0;
\tfield:unsigned long total_scan;\toffset:40;\tsize:4;\tsigned:0;
\tfield:int priority;\toffset:44;\tsize:4;\tsigned:1;

print fmt: "%pS %p: nid: %d objects to shrink %ld gfp_flags %s cache items %ld delta %lld total_scan %ld priority %d", REC->shrink, REC->shr, REC->nid, REC->nr_objects_to_shrink, (REC->gfp_flags) ? __print_flags(REC->gfp_flags, "|", {( unsigned long)(((( gfp_t)0x400u)|(( gfp_t)0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u)), "GFP_KERNEL"}) : "none", REC->cache_items, REC->delta, REC->total_scan, REC->priority
`;
/** A 32-bit kernel's header_page. */
const HEADER_PAGE_32 =
  '\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n' +
  '\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:12;\tsize:4084;\tsigned:0;\n';

describe('32-bit trace.dat', () => {
  it('reads 4-byte commit words, longs and pointers, in both byte orders', () => {
    const layout = parseHeaderPage(HEADER_PAGE_32, 4);
    expect(layout).toEqual({ timestampOffset: 0, commitOffset: 8, commitSize: 4, dataOffset: 12 });
    const fmt = parseEventFormat(SHRINK_START_32, 'vmscan');
    // A little-endian page: a time extend (+3 << 27), then the 48-byte event 5 ns later.
    const le = Buffer.alloc(4096);
    le.writeBigUInt64LE(1_000_000n, 0);
    let p = 12;
    le.writeUInt32LE(((1 << 5) | 30) >>> 0, p); // time extend, delta 1
    le.writeUInt32LE(3, p + 4);
    p += 8;
    le.writeUInt32LE(((5 << 5) | 12) >>> 0, p); // type_len 12: 48 bytes of data
    const e = p + 4;
    le.writeUInt16LE(300, e);
    le.writeInt32LE(42, e + 4);
    le.writeUInt32LE(0xc7654320, e + 8); // shr
    le.writeUInt32LE(0xc0123460, e + 12); // shrink: super_cache_scan+0x10
    le.writeInt32LE(-1, e + 20); // nr_objects_to_shrink: a signed 4-byte long
    le.writeUInt32LE(0xcc0, e + 24); // GFP_KERNEL
    le.writeUInt32LE(4_000_000_000, e + 28); // an unsigned 4-byte long past 2^31
    le.writeBigUInt64LE((1n << 40n) + 5n, e + 32);
    le.writeUInt32LE(123, e + 40);
    le.writeInt32LE(12, e + 44);
    le.writeUInt32LE(8 + 52, 8); // commit: bytes of data
    const be = bigEndianPage(le, layout, new Map([[300, fmt]]), 4);
    const kallsyms = Kallsyms.parse('c0123450 t super_cache_scan\nc0123900 t other_fn\n');
    for (const [buf, littleEndian] of [
      [le, true],
      [be, false],
    ] as const) {
      const { rows } = records(buf, 4096, layout, littleEndian);
      expect(rows).toEqual([[3 * 2 ** 27 + 1 + 5, e, 48]]);
      const ev = compileEvent(fmt, makeHelpers(littleEndian, kallsyms), littleEndian, 4);
      expect(ev.fast(buf, e, 48)).toEqual({
        shr: '0xc7654320',
        shrink: 'super_cache_scan',
        nid: 0,
        nr_objects_to_shrink: -1,
        gfp_flags: 'GFP_KERNEL',
        cache_items: 4_000_000_000,
        delta: 2 ** 40 + 5,
        total_scan: 123,
        priority: 12,
      });
    }
  });
});

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-other-arch-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** The model's digest, but for trace_info (it names the file and its byte order). */
const digestOf = (r: IngestResult) => recordingDigest(r.dbPath);

describe('big-endian trace.dat', () => {
  it('a whole file: the same trace-cmd report, and the same model', async () => {
    const { formats, layout, longSize } = await fixturePages();
    const beFile = path.join(scratch, 'reclaim_kswapd.be.v6.dat');
    fs.writeFileSync(beFile, bigEndianTraceDatV6(fs.readFileSync(FIXTURE), formats, layout, longSize));
    // trace-cmd reads either byte order: the same report checks the conversion.
    const report = (f: string) =>
      execFileSync('trace-cmd', ['report', f], { maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'ignore'] }).toString();
    const expected = report(FIXTURE);
    expect(expected.split('\n').length).toBeGreaterThan(21_000);
    expect(report(beFile)).toBe(expected);

    const a = await ingestFile(FIXTURE, { dataDir: path.join(scratch, 'data') });
    const b = await ingestFile(beFile, { dataDir: path.join(scratch, 'data') });
    expect(b.summary.meta).toEqual({ ...a.summary.meta, endian: 'big' });
    expect(b.summary.eventsByName).toEqual(a.summary.eventsByName);
    expect(b.summary.skippedInputs).toBe(0);
    expect(await digestOf(b)).toEqual(await digestOf(a));
  });

  it('pages: the same records at the same times, and page timestamps read alike', async () => {
    const { pages, layout, pageSize } = await fixturePages();
    expect(pages.length).toBeGreaterThan(100);
    let total = 0;
    for (const { le, be } of pages) {
      expect(pageTimestamp(be, 0, layout, false)).toEqual(pageTimestamp(le, 0, layout, true));
      const a = records(le, pageSize, layout, true);
      expect(records(be, pageSize, layout, false)).toEqual(a);
      total += a.rows.length;
    }
    expect(total).toBe(21_007); // every event of the recording
  });

  it('events: every field of every event decodes to the same value, as fields and as typed rows', async () => {
    const { pages, formats, layout, longSize, kallsyms, pageSize } = await fixturePages();
    const compiled = (littleEndian: boolean) => {
      const helpers = makeHelpers(littleEndian, kallsyms);
      const byId = new Map<number, CompiledEvent>();
      for (const f of formats.values()) byId.set(f.id, compileEvent(f, helpers, littleEndian, longSize));
      return byId;
    };
    const le = compiled(true);
    const be = compiled(false);

    // Typed rows through the builder's direct path, as an ingest writes them.
    const engine = await openDuckDb(':memory:');
    const layoutOfModel = (await ModelStore.create(engine)).layout;
    engine.close();
    const typedRows = (littleEndian: boolean) => {
      const chunks: ChunkData[] = [];
      const builder = new ModelBuilder(layoutOfModel, (_t, d) => chunks.push(d));
      builder.header({ format: 'trace_dat', formatVersion: '6', cpus: 2, tsBaseNs: 0n, meta: {} });
      const helpers = makeHelpers(littleEndian, kallsyms);
      const direct = new Map<number, { rows: DirectRows; ev: CompiledEvent<DirectRowColumns> }>();
      for (const f of formats.values()) {
        const rows = builder.directRows(f.name, f.system);
        if (rows) direct.set(f.id, { rows, ev: compileEvent(f, helpers, littleEndian, longSize, rows) });
      }
      return { builder, chunks, direct };
    };
    const rowsLe = typedRows(true);
    const rowsBe = typedRows(false);

    let decoded = 0;
    let direct = 0;
    for (const page of pages) {
      for (const [ts, off, len] of records(page.le, pageSize, layout, true).rows) {
        const id = page.le.readUInt16LE(off);
        expect(page.be.readUInt16BE(off)).toBe(id);
        const a = le.get(id);
        if (!a) continue;
        const b = be.get(id)!;
        if (len >= a.minLen) expect(b.fast(page.be, off, len)).toEqual(a.fast(page.le, off, len));
        expect(b.safe(page.be, off, len)).toEqual(a.safe(page.le, off, len));
        decoded++;
        const d = rowsLe.direct.get(id);
        if (d && len >= d.ev.minLen) {
          for (const [side, buf] of [
            [rowsLe, page.le],
            [rowsBe, page.be],
          ] as const) {
            const s = side.direct.get(id)!;
            s.rows.begin(ts, 0, 1, null, 0, 0, off);
            s.ev.direct!.read(buf, off, len, s.rows);
            s.rows.end();
          }
          direct++;
        }
      }
    }
    expect(decoded).toBe(21_007);
    expect(direct).toBeGreaterThan(10_000);
    const endLe = rowsLe.builder.finish();
    const endBe = rowsBe.builder.finish();
    expect(endBe.dicts).toEqual(endLe.dicts);
    expect(rowsBe.chunks.length).toBe(rowsLe.chunks.length);
    rowsLe.chunks.forEach((c, i) => {
      const d = rowsBe.chunks[i]!;
      expect(d.rows).toBe(c.rows);
      expect(Buffer.from(d.buffer).equals(Buffer.from(c.buffer))).toBe(true);
      expect(d.columns).toEqual(c.columns);
    });
  });
});
