import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DecodeError,
  type DecodedEvent,
  type EventSink,
  type SkippedInput,
  type TraceHeader,
} from '../decoded_event.ts';
import { decodeTraceDat } from './decode_trace_dat.ts';
import { FileSource } from './file_source.ts';
import { readTraceDatHeader } from './read_file_header.ts';
import { disableNativeZstd } from './decompress.ts';

const FIX = fileURLToPath(new URL('../../../fixtures/', import.meta.url));
// TRACE_DAT_FIXTURE_BASE=/dir/name runs these tests on another recording (name.v7.dat, .v6.dat, .report.txt, .counts.json).
const base = process.env.TRACE_DAT_FIXTURE_BASE ?? join(FIX, 'reclaim_kswapd');
const haveFixtures = existsSync(`${base}.v7.dat`) && existsSync(`${base}.v6.dat`) && existsSync(`${base}.report.txt`);

interface Collected {
  header: TraceHeader | null;
  events: DecodedEvent[];
  lost: { cpu: number; count: number | null; where: number }[];
  skipped: SkippedInput[];
}

function collector(): { sink: EventSink; out: Collected } {
  const out: Collected = { header: null, events: [], lost: [], skipped: [] };
  const sink: EventSink = {
    header(h) {
      expect(out.header).toBeNull();
      expect(out.events.length).toBe(0);
      out.header = h;
    },
    event(e) {
      out.events.push(e);
    },
    lostEvents(cpu, count, where) {
      out.lost.push({ cpu, count, where });
    },
    skipped(p) {
      out.skipped.push(p);
    },
  };
  return { sink, out };
}

async function decode(path: string, label = path): Promise<Collected> {
  const { sink, out } = collector();
  await decodeTraceDat(path, sink, { fileLabel: label });
  return out;
}

/** One line of `trace-cmd report`: comm-pid [cpu] sec.usec: name: body */
interface ReportLine {
  comm: string;
  pid: number;
  cpu: number;
  us: string;
  name: string;
  body: string;
}

function parseReport(text: string): ReportLine[] {
  const out: ReportLine[] = [];
  const re = /^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+\.\d{6}):\s+(\w+):\s?(.*)$/;
  for (const line of text.split('\n')) {
    const m = re.exec(line);
    if (!m) continue;
    out.push({ comm: m[1]!, pid: Number(m[2]), cpu: Number(m[3]), us: m[4]!, name: m[5]!, body: m[6]! });
  }
  return out;
}

/** trace-cmd prints microseconds rounded to nearest. */
function usString(h: TraceHeader, ts: number): string {
  const us = (h.tsBaseNs + BigInt(ts) + 500n) / 1000n;
  return `${us / 1_000_000n}.${(us % 1_000_000n).toString().padStart(6, '0')}`;
}

/**
 * trace-cmd's sched_switch plugin prints prev_state from its own table
 * ("SDTtZXxW": Z/X swapped against the kernel, W for the kernel's I, no "+"),
 * while we follow the kernel's print fmt. Map ours to the plugin's to compare.
 */
function pluginState(kernel: string): string {
  const letters = kernel.replace('+', '').split('|');
  if (letters.length === 1 && letters[0] === 'R') return 'R';
  const map: Record<string, string> = { S: 'S', D: 'D', T: 'T', t: 't', X: 'Z', Z: 'X', P: 'x', I: 'W' };
  const order = 'SDTtZXxW';
  return letters
    .map((l) => map[l] ?? l)
    .sort((a, b) => order.indexOf(a) - order.indexOf(b))
    .join('|');
}

describe.skipIf(!haveFixtures)('decodeTraceDat on the reclaim_kswapd recording', () => {
  let v7: Collected;
  let v6: Collected;
  let report: ReportLine[];
  let counts: { events_by_name: Record<string, number>; events_total: number; cpus: number };

  beforeAll(async () => {
    v7 = await decode(`${base}.v7.dat`);
    v6 = await decode(`${base}.v6.dat`);
    report = parseReport(readFileSync(`${base}.report.txt`, 'utf8'));
    counts = JSON.parse(readFileSync(`${base}.counts.json`, 'utf8'));
  });

  it('emits a trace_dat header with version, cpus and meta', () => {
    expect(v7.header!.format).toBe('trace_dat');
    expect(v7.header!.formatVersion).toBe('7');
    expect(v6.header!.formatVersion).toBe('6');
    expect(v7.header!.cpus).toBe(counts.cpus);
    expect(v7.header!.meta.compression).toMatch(/^zstd/);
    expect(v7.header!.meta.clock).toBe('local');
    expect(v7.skipped).toEqual([]);
    expect(v6.skipped).toEqual([]);
  });

  it('reads the kernel release from the uname option (the uncut recording has it; cut copies lose it)', async () => {
    const full = await decode(join(FIX, 'reclaim_kswapd.full.v7.dat'));
    expect(full.header!.meta.kernel).toBe('Linux vm 6.18.44-fc-v595 x86_64');
    expect(full.header!.meta.trace_cmd_version).toMatch(/^3\.1\.6/);
  });

  it("has trace-cmd report's total and per-name counts", () => {
    for (const c of [v7, v6]) {
      expect(c.events.length).toBe(counts.events_total);
      const byName: Record<string, number> = {};
      for (const e of c.events) byName[e.name] = (byName[e.name] ?? 0) + 1;
      expect(byName).toEqual(counts.events_by_name);
    }
  });

  it('merges CPUs in report order: same cpu, pid, comm, name and timestamp line by line', () => {
    expect(report.length).toBe(v7.events.length);
    const h = v7.header!;
    let commChecked = 0;
    for (let i = 0; i < report.length; i++) {
      const r = report[i]!;
      const e = v7.events[i]!;
      const got = { cpu: e.cpu, pid: e.pid, name: e.name, us: usString(h, e.ts) };
      const want = { cpu: r.cpu, pid: r.pid, name: r.name, us: r.us };
      if (got.cpu !== want.cpu || got.pid !== want.pid || got.name !== want.name || got.us !== want.us) {
        expect({ line: i, ...got }).toEqual({ line: i, ...want });
      }
      if (r.comm !== '<...>') {
        if (e.comm !== r.comm) expect({ line: i, comm: e.comm }).toEqual({ line: i, comm: r.comm });
        commChecked++;
      }
    }
    expect(commChecked).toBeGreaterThan(report.length * 0.9);
    expect(usString(h, v7.events[0]!.ts)).toBe(report[0]!.us);
    expect(usString(h, v7.events.at(-1)!.ts)).toBe(report.at(-1)!.us);
  });

  it('decodes v6, v7 and uncompressed v7 of the same recording to identical event streams', async () => {
    const others = [v6];
    if (existsSync(`${base}.v7.nocompress.dat`)) others.push(await decode(`${base}.v7.nocompress.dat`));
    const strip = (e: DecodedEvent) => ({ ...e, where: 0 });
    for (const o of others) {
      expect(o.header!.tsBaseNs).toBe(v7.header!.tsBaseNs);
      expect(o.events.length).toBe(v7.events.length);
      for (let i = 0; i < v7.events.length; i++) {
        const a = strip(v7.events[i]!);
        const b = strip(o.events[i]!);
        if (JSON.stringify(a, big) !== JSON.stringify(b, big)) expect(b).toEqual(a);
      }
    }
  });

  it('mm_shrink_slab_start fields match the report (shrink symbol, counts, gfp_flags)', () => {
    const re =
      /^(\S+)\+0x0 (0x[0-9a-f]+): nid: (\d+) objects to shrink (-?\d+) gfp_flags (\S+) cache items (\d+) delta (\d+) total_scan (\d+) priority (-?\d+)/;
    let n = 0;
    let superCache = 0;
    report.forEach((r, i) => {
      if (r.name !== 'mm_shrink_slab_start') return;
      const m = re.exec(r.body)!;
      expect(m).not.toBeNull();
      const f = v7.events[i]!.fields!;
      expect(f).toEqual({
        shrink: m[1],
        shr: m[2],
        nid: Number(m[3]),
        nr_objects_to_shrink: Number(m[4]),
        gfp_flags: m[5],
        cache_items: Number(m[6]),
        delta: Number(m[7]),
        total_scan: Number(m[8]),
        priority: Number(m[9]),
      });
      if (f.shrink === 'super_cache_scan') superCache++;
      n++;
    });
    expect(n).toBe(counts.events_by_name.mm_shrink_slab_start);
    expect(superCache).toBeGreaterThan(0);
  });

  it('sched_switch prev_state follows the kernel print fmt (S, R, R+, D, I)', () => {
    const seen = new Set<string>();
    report.forEach((r, i) => {
      if (r.name !== 'sched_switch') return;
      const m = /^(.*):(\d+) \[(\d+)\] (\S+) ==> (.*):(\d+) \[(\d+)\]$/.exec(r.body)!;
      const f = v7.events[i]!.fields!;
      expect(f.prev_pid).toBe(Number(m[2]));
      expect(f.prev_prio).toBe(Number(m[3]));
      expect(f.next_comm).toBe(m[5]);
      expect(f.next_pid).toBe(Number(m[6]));
      expect(pluginState(f.prev_state as string)).toBe(m[4]);
      seen.add(f.prev_state as string);
    });
    for (const s of ['S', 'R', 'R+', 'D']) expect(seen).toContain(s);
  });

  it('mm_vmscan_lru_shrink_inactive, lru_isolate and wakeup_kswapd fields match the report', () => {
    let n = 0;
    report.forEach((r, i) => {
      const f = v7.events[i]!.fields!;
      if (r.name === 'mm_vmscan_lru_shrink_inactive') {
        const kv = Object.fromEntries([...r.body.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]]));
        expect(f.nr_scanned).toBe(Number(kv.nr_scanned));
        expect(f.nr_reclaimed).toBe(Number(kv.nr_reclaimed));
        expect(f.priority).toBe(Number(kv.priority));
        expect(f.reclaim_flags).toBe(kv.flags);
        n++;
      } else if (r.name === 'mm_vmscan_lru_isolate') {
        expect(f.lru).toBe(/lru=(\S+)/.exec(r.body)![1]);
        n++;
      } else if (r.name === 'mm_vmscan_wakeup_kswapd') {
        expect(f.gfp_flags).toBe(/gfp_flags=(\S+)/.exec(r.body)![1]);
        n++;
      } else if (r.name === 'workqueue_execute_start') {
        expect(f.function).toBe(/function (\S+)/.exec(r.body)![1]);
        expect(f.work).toBe(/work struct (0x[0-9a-f]+)/.exec(r.body)![1]);
        n++;
      }
    });
    expect(n).toBeGreaterThan(1000);
  });

  it('gives byte offsets as where: increasing within a CPU for uncompressed v6', () => {
    const last = new Map<number, number>();
    const bad: string[] = [];
    for (const e of v6.events) {
      if (!(e.where > (last.get(e.cpu) ?? 0))) bad.push(`cpu ${e.cpu} where ${e.where}`);
      if (e.raw !== null || e.tgid !== null) bad.push(`raw/tgid set at ${e.where}`);
      last.set(e.cpu, e.where);
    }
    expect(bad.slice(0, 5)).toEqual([]);
  });
});

function big(_k: string, v: unknown) {
  return typeof v === 'bigint' ? `${v}n` : v;
}

describe.skipIf(!haveFixtures)('damaged trace.dat input', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'trace-dat-test-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function decodeBytes(bytes: Buffer, name: string): Promise<Collected | DecodeError> {
    const p = join(dir, name);
    writeFileSync(p, bytes);
    try {
      return await decode(p, name);
    } catch (e) {
      if (e instanceof DecodeError) return e;
      throw e;
    }
  }

  it('truncated copies give skipped entries with offsets (or DecodeError when the headers are cut)', async () => {
    for (const version of ['v7', 'v6']) {
      const data = readFileSync(`${base}.${version}.dat`);
      const info = await withHeader(`${base}.${version}.dat`);
      const firstData = Math.min(...info.buffers.flatMap((b) => b.cpus.filter((c) => c.size > 0).map((c) => c.offset)));
      const cuts = [
        20,
        300,
        Math.floor(firstData / 2),
        firstData + 100,
        firstData + 5000,
        Math.floor(data.length * 0.6),
        data.length - 3000,
        data.length - 1,
      ];
      const full = (await decode(`${base}.${version}.dat`)).events.length;
      for (const cut of cuts) {
        const r = await decodeBytes(data.subarray(0, cut), `${version}-cut-${cut}.dat`);
        if (r instanceof DecodeError) {
          // only an unreadable header may fail the whole file
          expect(cut).toBeLessThan(firstData);
          expect(r.message).toContain(`${version}-cut-${cut}.dat`);
          continue;
        }
        expect(r.header).not.toBeNull();
        expect(r.events.length).toBeLessThanOrEqual(full);
        if (cut > firstData && cut < data.length - 4096) {
          expect(r.skipped.length).toBeGreaterThan(0);
          expect(r.events.length).toBeLessThan(full);
        }
        for (const s of r.skipped) {
          expect(s.unit).toBe('offset');
          expect(s.where).toBeGreaterThanOrEqual(0);
          expect(s.where).toBeLessThanOrEqual(cut);
        }
      }
      // a cut in the middle of the data still yields events (v7: found by scanning for the flyrecord section)
      const mid = await decodeBytes(
        data.subarray(0, firstData + Math.floor((data.length - firstData) / 2)),
        `${version}-mid.dat`,
      );
      expect(mid).not.toBeInstanceOf(DecodeError);
      expect((mid as Collected).events.length).toBeGreaterThan(0);
    }
  });

  it('random bytes throw a DecodeError naming the file', async () => {
    const bytes = Buffer.alloc(64 * 1024);
    let seed = 7;
    for (let i = 0; i < bytes.length; i++) bytes[i] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    const r = await decodeBytes(bytes, 'noise.dat');
    expect(r).toBeInstanceOf(DecodeError);
    expect((r as DecodeError).message).toContain('noise.dat');
  });

  it('hostile sizes are rejected against the file size instead of allocated', async () => {
    const data = Buffer.from(readFileSync(`${base}.v7.dat`));
    // first options section: size field claims 2^40 bytes
    const optOff = Number(data.readBigUInt64LE(data.indexOf(0, data.indexOf(0, 19) + 1) + 1));
    const hostile = Buffer.from(data);
    hostile.writeBigUInt64LE(1n << 40n, optOff + 8);
    const r = await decodeBytes(hostile, 'hostile-section.dat');
    expect(r).toBeInstanceOf(DecodeError);
    expect((r as DecodeError).message).toMatch(/claims/);

    // a compressed chunk claiming 4 GiB uncompressed and a corrupt chunk: skipped, rest decoded
    const info = await withHeader(`${base}.v7.dat`);
    const cpu = info.buffers.flatMap((b) => b.cpus).find((c) => c.size > 0)!;
    const chunk = Buffer.from(data);
    chunk.writeUInt32LE(0xfffff000, cpu.offset + 4 + 4);
    const r2 = (await decodeBytes(chunk, 'hostile-chunk.dat')) as Collected;
    expect(r2.skipped.some((s) => s.where === cpu.offset + 4 && /implausible/.test(s.reason))).toBe(true);
    expect(r2.events.length).toBeGreaterThan(0);
    const bad = Buffer.from(data);
    bad.fill(0x5a, cpu.offset + 12 + 20, cpu.offset + 12 + 60);
    const r3 = (await decodeBytes(bad, 'bad-chunk.dat')) as Collected;
    expect(r3.skipped.some((s) => s.where === cpu.offset + 4 && /compressed chunk/.test(s.reason))).toBe(true);
    expect(r3.events.length).toBeGreaterThan(0);
  });

  it('a v7 buffer option naming a CPU number no machine has is reported with its offset, not believed', async () => {
    const file = `${base}.v7.nocompress.dat`;
    const data = Buffer.from(readFileSync(file));
    const info = await withHeader(file);
    const cpu = info.buffers.flatMap((b) => b.cpus).find((c) => c.size > 0)!;
    // the option's CPU entry: u32 cpu, u64 offset, u64 size
    const entry = data.indexOf(Buffer.from(new BigUint64Array([BigInt(cpu.offset)]).buffer)) - 4;
    expect(data.readUInt32LE(entry)).toBe(cpu.cpu);
    data.writeUInt32LE(0xfffffff0, entry);
    const r = (await decodeBytes(data, 'hostile-cpu.dat')) as Collected;
    expect(r.skipped[0]).toEqual({
      where: entry,
      unit: 'offset',
      reason: 'damaged option: buffer "": implausible CPU number 4294967280',
      excerpt: '',
    });
    expect(r.events).toEqual([]);
  });

  it('corrupt ring-buffer pages are skipped with their offset, the rest decodes', async () => {
    const data = Buffer.from(readFileSync(`${base}.v6.dat`));
    const info = await withHeader(`${base}.v6.dat`);
    const cpu = info.buffers.flatMap((b) => b.cpus).find((c) => c.size > 8192)!;
    const page = cpu.offset + 4096;
    data.writeUInt32LE(0x7ffffff, page + 8); // commit size far beyond the page
    data.fill(0xff, page + 16 + 64, page + 16 + 128);
    const r = (await decodeBytes(data, 'corrupt-page.dat')) as Collected;
    expect(r.skipped.length).toBeGreaterThan(0);
    expect(r.skipped.every((s) => s.where >= page && s.where < page + 4096)).toBe(true);
    expect(r.events.length).toBeGreaterThan(1000);
  });
});

describe.skipIf(!haveFixtures)('lost events, unknown ids and the fzstd fallback', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'trace-dat-test-'));
  });
  afterAll(() => {
    disableNativeZstd(false);
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports missed-events page flags as lostEvents and unknown event ids as skipped', async () => {
    const data = Buffer.from(readFileSync(`${base}.v6.dat`));
    const info = await withHeader(`${base}.v6.dat`);
    const cpu = info.buffers.flatMap((b) => b.cpus).find((c) => c.size >= 3 * 4096)!;
    const page = cpu.offset + 2 * 4096;
    // commit word: set "events missed" (bit 31) without a stored count
    data.writeUInt32LE((data.readUInt32LE(page + 8) | 0x80000000) >>> 0, page + 8);
    // first record of the next page: an event id no format has
    const next = page + 4096;
    const typeLen = data.readUInt32LE(next + 16) & 31;
    const payload = next + 16 + (typeLen === 0 ? 8 : 4);
    data.writeUInt16LE(65000, payload);
    const p = join(dir, 'lost.dat');
    writeFileSync(p, data);
    const r = await decode(p);
    expect(r.lost).toContainEqual({ cpu: cpu.cpu, count: null, where: page });
    expect(r.skipped.some((s) => s.where === next + 16 && /unknown event id 65000/.test(s.reason))).toBe(true);
  });

  it('reads the same v7 sections with the zstd binary as with fzstd (kallsyms, formats, printk, cmdlines)', async () => {
    const native = await withHeader(`${base}.v7.dat`);
    disableNativeZstd(true);
    const js = await withHeader(`${base}.v7.dat`);
    disableNativeZstd(false);
    // The recording's kallsyms (~1 MB) and event formats (~40 KB) inflate past the size sent to the binary.
    expect(native.kallsyms?.length).toBeGreaterThan(64 << 10);
    expect(native.kallsyms === js.kallsyms).toBe(true);
    expect(native.formats).toEqual(js.formats);
    expect(native.printk).toBe(js.printk);
    expect(native.cmdlines).toBe(js.cmdlines);
  });

  it('decodes v7 identically without the zstd binary (fzstd)', async () => {
    const native = await decode(`${base}.v7.dat`);
    disableNativeZstd(true);
    const js = await decode(`${base}.v7.dat`);
    disableNativeZstd(false);
    expect(js.events.length).toBe(native.events.length);
    expect(js.skipped).toEqual([]);
    const a = JSON.stringify(native.events, big);
    const b = JSON.stringify(js.events, big);
    expect(a === b).toBe(true);
  });
});

async function withHeader(path: string) {
  const src = await FileSource.open(path);
  try {
    return await readTraceDatHeader(src);
  } finally {
    await src.close();
  }
}
