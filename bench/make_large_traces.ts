/**
 * Large benchmark traces, generated deterministically from the real
 * recording in fixtures/ (reclaim_kswapd: 72,344 events on 2 CPUs, ~10 s).
 * Everything lands in bench/out/ (gitignored) and is reused on the next run
 * when it is present with the size recorded in bench/out/manifest.json.
 *
 *   large.v6.xN.dat     trace.dat v6, uncompressed: the fixture's per-CPU
 *                       ring-buffer pages written N times per CPU. Copy k has
 *                       every page header timestamp (and any absolute-time
 *                       record) moved by k * shift, shift = the recording's
 *                       span + >= 1 ms rounded to whole ms, so each CPU's
 *                       pages stay in time order and copies never overlap.
 *                       The flyrecord per-CPU (offset, size) table is
 *                       rewritten; everything before the data (formats,
 *                       kallsyms, cmdlines, options) is the fixture's.
 *   large.v7.xN.dat     the same events as trace.dat v7 with zstd chunks,
 *                       written by `trace-cmd convert` from the v6 file.
 *   large.report.xN.txt `trace-cmd report` of the large v6 (same events).
 *   tracefs.xM.txt      kernel tracefs text (`# tracer: nop` header, irq
 *                       flags column, kernel print formats), >= 1 GB: there is
 *                       no tracefs recording in fixtures/, so one copy is
 *                       made from `trace-cmd report -N` (no plugins: the
 *                       events' own print formats, as the kernel prints them)
 *                       and `report -N -l` (the irq-flags/preempt column) of
 *                       the fixture, then replicated M times with the same
 *                       timestamp shift.
 *   *.q*.                1/4-size copies (v6, tracefs) to show that peak
 *                       memory does not grow with the file.
 *   tracefs-sched.xK.txt tracefs text as above, ~250 MB (40 MB with --quick),
 *                       from a second recording, fixtures/fsync_xfs.full.v7.dat
 *                       (fsync loops on XFS, 148,299 events): 45% of its
 *                       events are sched_switch/waking/wakeup and 20% have no
 *                       typed table, where reclaim_kswapd has 20% and ~1%.
 *                       Text ingest speed depends on that mix: scheduler
 *                       events and untyped events are parsed on the main
 *                       thread (they name tasks / fill args), the others on
 *                       the field worker.
 *
 * `npx tsx bench/make_large_traces.ts [--quick]` makes them on their own.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventSink } from '../server/decode/decoded_event.ts';
import { decodeTraceDat } from '../server/decode/trace_dat/decode_trace_dat.ts';
import { parseHeaderPage } from '../server/decode/trace_dat/event_format.ts';
import { FileSource } from '../server/decode/trace_dat/file_source.ts';
import { readTraceDatHeader } from '../server/decode/trace_dat/read_file_header.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const OUT_DIR = path.join(ROOT, 'bench', 'out');
export const FIXTURE_V6 = path.join(ROOT, 'fixtures', 'reclaim_kswapd.v6.dat');

export interface LargeTraceSet {
  /** Copies of the fixture in the trace.dat / report files. */
  copies: number;
  eventsPerCopy: number;
  /** Events in the v6 / v7 / report files. */
  events: number;
  /** ns added per copy. */
  shiftNs: number;
  v6: string;
  v6Quarter: { file: string; copies: number; events: number } | null;
  v7: string | null;
  report: string;
  tracefs: { file: string; copies: number; events: number };
  tracefsQuarter: { file: string; copies: number; events: number } | null;
  /** Scheduler-heavy tracefs text (fsync_xfs recording), null if it could not be made. */
  tracefsSched: { file: string; copies: number; events: number } | null;
  /** What could not be made, and why. */
  notes: string[];
}

export interface MakeOptions {
  /** Small sizes (about 1M events, ~150 MB of text) for a smoke run. */
  quick?: boolean;
  /** Also make the 1/4-size files (default: true unless quick). */
  quarter?: boolean;
  log?: (line: string) => void;
}

interface ManifestEntry {
  size: number;
  key: string;
}
type Manifest = Record<string, ManifestEntry>;

const MANIFEST = path.join(OUT_DIR, 'manifest.json');
const TARGET_EVENTS = 10_000_000;
const QUICK_EVENTS = 1_000_000;
const TEXT_TARGET_BYTES = 1_000_000_000;
const QUICK_TEXT_BYTES = 150_000_000;
/** The second recording, scheduler-heavy, for its own tracefs text row. */
const FIXTURE_SCHED = path.join(ROOT, 'fixtures', 'fsync_xfs.full.v7.dat');
const SCHED_TEXT_BYTES = 250_000_000;
const QUICK_SCHED_TEXT_BYTES = 40_000_000;

export function readManifest(): Manifest {
  try {
    return JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as Manifest;
  } catch {
    return {};
  }
}

export function writeManifest(m: Manifest): void {
  fs.writeFileSync(MANIFEST, JSON.stringify(m, null, 2));
}

/** Present with the size and generation key recorded when it was made. */
function reusable(file: string, key: string): boolean {
  const e = readManifest()[path.basename(file)];
  if (!e || e.key !== key) return false;
  try {
    return fs.statSync(file).size === e.size;
  } catch {
    return false;
  }
}

function record(file: string, key: string): void {
  const m = readManifest();
  m[path.basename(file)] = { size: fs.statSync(file).size, key };
  writeManifest(m);
}

/** Makes `file` by running `make(tmp)`, then renames: a killed run never leaves a file that looks complete. */
export async function produce(
  file: string,
  key: string,
  log: (s: string) => void,
  make: (tmp: string) => Promise<void>,
): Promise<boolean> {
  if (reusable(file, key)) {
    log(`  reuse ${path.relative(ROOT, file)} (${mb(fs.statSync(file).size)})`);
    return false;
  }
  const tmp = `${file}.part`;
  await fsp.rm(file, { force: true });
  const t0 = performance.now();
  try {
    await make(tmp);
  } catch (e) {
    await fsp.rm(tmp, { force: true });
    throw e;
  }
  await fsp.rename(tmp, file);
  record(file, key);
  log(
    `  made  ${path.relative(ROOT, file)} (${mb(fs.statSync(file).size)}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  return true;
}

export function mb(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

// ---------------------------------------------------------------------------
// The fixture: events, span, layout
// ---------------------------------------------------------------------------

export interface FixtureFacts {
  events: number;
  /** Last event ts relative to the earliest first-page timestamp (the decoder's base), ns. */
  spanNs: number;
  shiftNs: number;
  dataStart: number;
  fileSize: number;
  /** Offset of the flyrecord per-CPU (offset, size) table. */
  tableAt: number;
  cpus: { cpu: number; offset: number; size: number }[];
  pageSize: number;
  layout: ReturnType<typeof parseHeaderPage>;
}

export async function fixtureFacts(file: string): Promise<FixtureFacts> {
  const src = await FileSource.open(file);
  let info;
  let header: Buffer;
  try {
    info = await readTraceDatHeader(src);
    if (info.version !== 6) throw new Error(`${file}: expected trace.dat v6, found v${info.version}`);
    if (!info.littleEndian) throw new Error(`${file}: big-endian trace.dat not handled by the generator`);
    if (info.buffers.length !== 1 || info.buffers[0]!.compressed)
      throw new Error(`${file}: expected one uncompressed buffer`);
    const cpus = info.buffers[0]!.cpus;
    const dataStart = Math.min(...cpus.map((c) => c.offset));
    // The data must be the file's tail, CPU after CPU, page aligned.
    let expect = dataStart;
    for (const c of [...cpus].sort((a, b) => a.offset - b.offset)) {
      if (c.offset !== expect || c.size % info.pageSize !== 0)
        throw new Error(`${file}: per-CPU data not contiguous/page aligned`);
      expect += c.size;
    }
    if (expect !== info.fileSize) throw new Error(`${file}: ${info.fileSize - expect} bytes follow the per-CPU data`);
    header = await src.read(0, dataStart, 'header');
    // The table follows the last "flyrecord\0" label before the data.
    const label = header.lastIndexOf(Buffer.from('flyrecord\0', 'latin1'));
    if (label < 0) throw new Error(`${file}: no flyrecord label before the data`);
    const tableAt = label + 10;
    cpus.forEach((c, i) => {
      const off = Number(header.readBigUInt64LE(tableAt + i * 16));
      const size = Number(header.readBigUInt64LE(tableAt + i * 16 + 8));
      if (off !== c.offset || size !== c.size)
        throw new Error(`${file}: flyrecord table at ${tableAt} does not match the parsed CPU data`);
    });
    let events = 0;
    let maxTs = 0;
    const sink: EventSink = {
      header() {},
      event(e) {
        events++;
        if (e.ts > maxTs) maxTs = e.ts;
      },
      lostEvents() {},
      skipped() {},
    };
    await decodeTraceDat(file, sink, { fileLabel: file });
    // Whole milliseconds, so the microsecond timestamps of text output shift exactly too.
    const shiftNs = (Math.floor(maxTs / 1e6) + 2) * 1e6;
    return {
      events,
      spanNs: maxTs,
      shiftNs,
      dataStart,
      fileSize: info.fileSize,
      tableAt,
      cpus,
      pageSize: info.pageSize,
      layout: parseHeaderPage(info.headerPage, info.longSize),
    };
  } finally {
    await src.close();
  }
}

// ---------------------------------------------------------------------------
// trace.dat v6
// ---------------------------------------------------------------------------

/**
 * Moves every timestamp in the pages of `buf` by `shift` ns: the page header
 * timestamp, and absolute-timestamp records (type_len 31, 59 bits). Deltas
 * stay as they are. Returns the number of absolute records patched.
 */
export function shiftPages(buf: Buffer, pageSize: number, layout: FixtureFacts['layout'], shift: bigint): number {
  let abs = 0;
  for (let page = 0; page + pageSize <= buf.length; page += pageSize) {
    const tsPos = page + layout.timestampOffset;
    buf.writeBigUInt64LE(buf.readBigUInt64LE(tsPos) + shift, tsPos);
    const size = buf.readUInt32LE(page + layout.commitOffset) & ((1 << 27) - 1);
    const end = page + layout.dataOffset + Math.min(size, pageSize - layout.dataOffset);
    let p = page + layout.dataOffset;
    while (p + 4 <= end) {
      const h = buf.readUInt32LE(p);
      const type = h & 31;
      const delta = h >>> 5;
      if (type >= 1 && type <= 28) p += 4 + type * 4;
      else if (type === 0) {
        if (p + 8 > end) break;
        const raw = buf.readUInt32LE(p + 4);
        p += 8 + (((raw - 4 + 3) & ~3) >>> 0);
      } else if (type === 30) p += 8;
      else if (type === 31) {
        if (p + 8 > end) break;
        const low59 = (BigInt(buf.readUInt32LE(p + 4)) << 27n) | BigInt(delta);
        const moved = low59 + shift;
        if (moved >> 59n !== 0n) throw new Error('absolute timestamp overflows 59 bits after shifting');
        buf.writeUInt32LE(((Number(moved & 0x7ffffffn) << 5) | 31) >>> 0, p);
        buf.writeUInt32LE(Number(moved >> 27n), p + 4);
        abs++;
        p += 8;
      } else {
        // padding: delta 0 ends the page; else array[0] is the length from there
        if (delta === 0 || p + 8 > end) break;
        const len = buf.readUInt32LE(p + 4);
        if (len === 0) break;
        p += 4 + len;
      }
    }
  }
  return abs;
}

export async function writeLargeV6(fixture: string, f: FixtureFacts, copies: number, out: string): Promise<void> {
  const src = await FileSource.open(fixture);
  const fh = await fsp.open(out, 'w');
  try {
    const header = Buffer.from(await src.read(0, f.dataStart, 'header'));
    let off = f.dataStart;
    const placed = f.cpus.map((c) => {
      const p = { cpu: c.cpu, src: c, offset: off, size: c.size * copies };
      off += p.size;
      return p;
    });
    placed.forEach((p, i) => {
      header.writeBigUInt64LE(BigInt(p.offset), f.tableAt + i * 16);
      header.writeBigUInt64LE(BigInt(p.size), f.tableAt + i * 16 + 8);
    });
    await fh.write(header, 0, header.length, 0);
    let abs = 0;
    for (const p of placed) {
      const orig = await src.read(p.src.offset, p.src.size, `cpu ${p.cpu} data`);
      const copy = Buffer.allocUnsafe(orig.length);
      for (let k = 0; k < copies; k++) {
        orig.copy(copy);
        abs += shiftPages(copy, f.pageSize, f.layout, BigInt(k) * BigInt(f.shiftNs));
        await fh.write(copy, 0, copy.length, p.offset + k * orig.length);
      }
    }
    if (abs > 0) process.stderr.write(`  (${abs} absolute-timestamp records shifted)\n`);
  } finally {
    await fh.close();
    await src.close();
  }
}

// ---------------------------------------------------------------------------
// trace-cmd helpers
// ---------------------------------------------------------------------------

export function traceCmdAvailable(): boolean {
  return spawnSync('trace-cmd', ['--version'], { stdio: 'ignore' }).status !== null;
}

/** Runs trace-cmd with stdout to a file (or /dev/null); rejects on a non-zero exit, returns stderr. */
export function runTraceCmd(args: string[], stdoutFile: string, timeoutMs = 20 * 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const fd = fs.openSync(stdoutFile, 'w');
    const child = spawn('trace-cmd', args, { stdio: ['ignore', fd, 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      if (err.length < 1 << 16) err += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      fs.closeSync(fd);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      fs.closeSync(fd);
      if (code === 0) resolve(err);
      else reject(new Error(`trace-cmd ${args.join(' ')}: exit ${code ?? signal}: ${err.slice(0, 500)}`));
    });
  });
}

export function headLines(file: string, n: number): string[] {
  const fd = fs.openSync(file, 'r');
  try {
    const b = Buffer.alloc(1 << 16);
    const len = fs.readSync(fd, b, 0, b.length, 0);
    return b.toString('utf8', 0, len).split('\n').slice(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

export function tailLines(file: string, n: number): string[] {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const len = Math.min(size, 1 << 16);
    const b = Buffer.alloc(len);
    fs.readSync(fd, b, 0, len, size - len);
    return b
      .toString('utf8')
      .split('\n')
      .filter((l) => l.length > 0)
      .slice(-n);
  } finally {
    fs.closeSync(fd);
  }
}

/** Seconds field of a report / tracefs event line (6 or 9 decimals) as integer ns. */
export function lineTsNs(line: string): number | null {
  const m = /\s(\d+)\.(\d{6,9}):\s/.exec(line);
  if (!m) return null;
  return Number(m[1]) * 1e9 + Number(m[2]!.padEnd(9, '0'));
}

/**
 * Checks trace-cmd's report of a generated file: no complaints on stderr,
 * the first event is the fixture's first event, the last event is the
 * fixture's last moved by (copies-1) * shift.
 */
export function checkReport(
  what: string,
  reportFile: string,
  stderr: string,
  fixtureReport: { first: string; last: string },
  copies: number,
  shiftNs: number,
  log: (s: string) => void,
): void {
  if (stderr.trim()) throw new Error(`trace-cmd report ${what} wrote to stderr: ${stderr.slice(0, 400)}`);
  const head = headLines(reportFile, 3);
  const tail = tailLines(reportFile, 2);
  log(`  trace-cmd report ${what} | head -3:\n${head.map((l) => `      ${l}`).join('\n')}`);
  log(`  trace-cmd report ${what} | tail -2:\n${tail.map((l) => `      ${l}`).join('\n')}`);
  const firstEvent = head.find((l) => lineTsNs(l) !== null) ?? '';
  if (firstEvent !== fixtureReport.first)
    throw new Error(`${what}: first event differs from the fixture's:\n  ${firstEvent}\n  ${fixtureReport.first}`);
  const lastTs = lineTsNs(tail[tail.length - 1] ?? '');
  const want = lineTsNs(fixtureReport.last)! + (copies - 1) * shiftNs;
  if (lastTs === null || Math.abs(lastTs - want) > 500) {
    throw new Error(
      `${what}: last event at ${lastTs} ns, expected ${want} (fixture's last + ${copies - 1} x ${shiftNs} ns)`,
    );
  }
  // Same event text as the fixture's last event, only the timestamp moved.
  const strip = (l: string) => l.replace(/\s\d+\.\d{6,9}:\s/, ' T: ');
  if (strip(tail[tail.length - 1]!) !== strip(fixtureReport.last))
    throw new Error(`${what}: last event text differs from the fixture's`);
}

// ---------------------------------------------------------------------------
// tracefs text
// ---------------------------------------------------------------------------

export interface TracefsBase {
  /** Per event line: text before the timestamp, ts in us, text after it. */
  pre: string[];
  us: number[];
  post: string[];
}

/** One copy of the fixture in the kernel's tracefs format, from report -N and report -N -l. */
export async function tracefsBase(fixture: string): Promise<TracefsBase> {
  const tmpN = path.join(OUT_DIR, `${path.basename(fixture)}.report-N.txt.tmp`);
  const tmpL = path.join(OUT_DIR, `${path.basename(fixture)}.report-Nl.txt.tmp`);
  try {
    await runTraceCmd(['report', '-N', '-i', fixture], tmpN);
    await runTraceCmd(['report', '-N', '-l', '-i', fixture], tmpL);
    const n = fs.readFileSync(tmpN, 'utf8').split('\n');
    const l = fs.readFileSync(tmpL, 'utf8').split('\n');
    const reN = /^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{6}):\s+([\w.-]+):\s*(.*)$/;
    const reL = /^.*-(\d+)\s+(\d+)(\S{5})\s+(\d+)\.(\d{6}):\s+([\w.-]+):/;
    const base: TracefsBase = { pre: [], us: [], post: [] };
    let j = 0;
    for (const line of n) {
      const m = reN.exec(line);
      if (!m) continue;
      let ml: RegExpExecArray | null = null;
      while (j < l.length && !(ml = reL.exec(l[j++]!)));
      if (!ml || ml[1] !== m[2] || ml[4] !== m[4] || ml[5] !== m[5] || ml[6] !== m[6]) {
        throw new Error(`report -N and -N -l disagree near: ${line}`);
      }
      const [, comm, pid, cpu, sec, usec, name, args] = m;
      base.pre.push(`${comm!.padStart(16)}-${pid!.padEnd(7)} [${cpu!.padStart(3, '0')}] ${ml[3]} `);
      base.us.push(Number(sec) * 1e6 + Number(usec));
      base.post.push(`: ${name}: ${args}\n`);
    }
    return base;
  } finally {
    await fsp.rm(tmpN, { force: true });
    await fsp.rm(tmpL, { force: true });
  }
}

/** Bytes of one copy of `base` as writeTracefs lays it out (the timestamp is `%5lu.%06lu`). */
function tracefsBytesPerCopy(base: TracefsBase): number {
  return base.us.reduce(
    (a, us, i) => a + Buffer.byteLength(base.pre[i]!) + Buffer.byteLength(base.post[i]!) + 12 + (us >= 1e11 ? 1 : 0),
    0,
  );
}

function tracefsHeader(events: number, cpus: number): string {
  return [
    '# tracer: nop',
    '#',
    `# entries-in-buffer/entries-written: ${events}/${events}   #P:${cpus}`,
    '#',
    '#                                _-----=> irqs-off/BH-disabled',
    '#                               / _----=> need-resched',
    '#                              | / _---=> hardirq/softirq',
    '#                              || / _--=> preempt-depth',
    '#                              ||| / _-=> migrate-disable',
    '#                              |||| /     delay',
    '#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION',
    '#              | |         |   |||||     |         |',
    '',
  ].join('\n');
}

export async function writeTracefs(
  base: TracefsBase,
  copies: number,
  shiftNs: number,
  cpus: number,
  out: string,
): Promise<void> {
  const fh = await fsp.open(out, 'w');
  try {
    await fh.write(tracefsHeader(base.us.length * copies, cpus));
    const shiftUs = shiftNs / 1000;
    for (let k = 0; k < copies; k++) {
      const parts: string[] = new Array(base.us.length);
      for (let i = 0; i < base.us.length; i++) {
        const us = base.us[i]! + k * shiftUs;
        const sec = Math.floor(us / 1e6);
        const frac = String(us - sec * 1e6).padStart(6, '0');
        parts[i] = `${base.pre[i]}${String(sec).padStart(5)}.${frac}${base.post[i]}`;
      }
      await fh.write(parts.join(''));
    }
  } finally {
    await fh.close();
  }
}

// ---------------------------------------------------------------------------

/**
 * The recording to replicate: fixtures/reclaim_kswapd.v6.dat, kept as a copy
 * in bench/out/ so that a run made while the fixture is being re-recorded
 * (it vanishes from the working tree for a few minutes) still works.
 */
async function fixtureSource(notes: string[], log: (s: string) => void): Promise<string> {
  const cached = path.join(OUT_DIR, 'fixture-src.v6.dat');
  if (fs.existsSync(FIXTURE_V6)) {
    const a = fs.statSync(FIXTURE_V6);
    const b = fs.existsSync(cached) ? fs.statSync(cached) : null;
    if (!b || b.size !== a.size || !fs.readFileSync(cached).equals(fs.readFileSync(FIXTURE_V6))) {
      await fsp.copyFile(FIXTURE_V6, `${cached}.part`);
      await fsp.rename(`${cached}.part`, cached);
    }
    return FIXTURE_V6;
  }
  if (fs.existsSync(cached)) {
    notes.push(
      `${path.relative(ROOT, FIXTURE_V6)} missing: used the copy from an earlier run (${path.relative(ROOT, cached)})`,
    );
    log(`  ${notes[notes.length - 1]}`);
    return cached;
  }
  throw new Error(`missing ${FIXTURE_V6} (the real recording the large traces are made from)`);
}

/**
 * Only the trace.dat v6 of `copies` copies, written to `out` (no report text,
 * no check by trace-cmd): for one-off sizes, e.g. a memory check at 2x.
 * Returns its event count.
 */
export async function writeV6Copies(copies: number, out: string): Promise<number> {
  const fixture = await fixtureSource([], () => {});
  const facts = await fixtureFacts(fixture);
  await writeLargeV6(fixture, facts, copies, out);
  return copies * facts.events;
}

export async function makeLargeTraces(opts: MakeOptions = {}): Promise<LargeTraceSet> {
  const log = opts.log ?? ((s: string) => process.stderr.write(`${s}\n`));
  const quick = opts.quick ?? false;
  const wantQuarter = opts.quarter ?? !quick;
  await fsp.mkdir(OUT_DIR, { recursive: true });
  const notes: string[] = [];
  const fixture = await fixtureSource(notes, log);
  if (!traceCmdAvailable())
    throw new Error(
      'trace-cmd is not installed (needed to verify the generated trace.dat and to write the report text)',
    );
  const facts = await fixtureFacts(fixture);
  const copies = Math.ceil((quick ? QUICK_EVENTS : TARGET_EVENTS) / facts.events);
  const fixtureKey = `${facts.fileSize}:${facts.events}:${facts.shiftNs}`;
  log(
    `fixture ${path.relative(ROOT, fixture)}: ${facts.events} events, span ${(facts.spanNs / 1e9).toFixed(3)} s, ` +
      `per-CPU data ${mb(facts.cpus.reduce((a, c) => a + c.size, 0))}; x${copies} copies, shift ${facts.shiftNs / 1e6} ms per copy`,
  );
  // The fixture's own first and last report lines, to check the generated files against.
  const fixtureReportFile = path.join(OUT_DIR, 'fixture.report.txt.tmp');
  await runTraceCmd(['report', '-i', fixture], fixtureReportFile);
  const fixtureReport = {
    first: headLines(fixtureReportFile, 5).find((l) => lineTsNs(l) !== null) ?? '',
    last: tailLines(fixtureReportFile, 1)[0] ?? '',
  };
  await fsp.rm(fixtureReportFile, { force: true });

  const v6 = path.join(OUT_DIR, `large.v6.x${copies}.dat`);
  const report = path.join(OUT_DIR, `large.report.x${copies}.txt`);
  const v6Key = `v6:${fixtureKey}:${copies}`;
  const madeV6 = await produce(v6, v6Key, log, (tmp) => writeLargeV6(fixture, facts, copies, tmp));
  // The report text doubles as the check that trace-cmd reads the generated file.
  await produce(report, `report:${v6Key}`, log, async (tmp) => {
    const err = await runTraceCmd(['report', '-i', v6], tmp);
    checkReport(path.basename(v6), tmp, err, fixtureReport, copies, facts.shiftNs, log);
  });
  if (madeV6)
    log(
      "  trace-cmd reads the generated v6: first event = fixture's, last = fixture's last + (copies-1) x shift, stderr empty",
    );

  let v6Quarter: LargeTraceSet['v6Quarter'] = null;
  if (wantQuarter) {
    const qc = Math.ceil(copies / 4);
    const file = path.join(OUT_DIR, `large.v6.q${qc}.dat`);
    await produce(file, `v6:${fixtureKey}:${qc}`, log, async (tmp) => {
      await writeLargeV6(fixture, facts, qc, tmp);
      const check = path.join(OUT_DIR, 'quarter.report.tmp');
      try {
        const err = await runTraceCmd(['report', '-i', tmp], check);
        checkReport(path.basename(file), check, err, fixtureReport, qc, facts.shiftNs, log);
      } finally {
        await fsp.rm(check, { force: true });
      }
    });
    v6Quarter = { file, copies: qc, events: qc * facts.events };
  }

  let v7: string | null = path.join(OUT_DIR, `large.v7.x${copies}.dat`);
  try {
    await produce(v7, `v7:${v6Key}`, log, async (tmp) => {
      await runTraceCmd(['convert', '--file-version', '7', '--compression', 'zstd', '-i', v6, '-o', tmp], '/dev/null');
      const check = path.join(OUT_DIR, 'v7.report.tmp');
      try {
        const err = await runTraceCmd(['report', '-i', tmp], check);
        checkReport(path.basename(v7!), check, err, fixtureReport, copies, facts.shiftNs, log);
      } finally {
        await fsp.rm(check, { force: true });
      }
    });
  } catch (e) {
    notes.push(`v7 (zstd) large trace not made: ${(e as Error).message}`);
    log(`  ${notes[notes.length - 1]}`);
    v7 = null;
  }

  // tracefs text
  const textTarget = quick ? QUICK_TEXT_BYTES : TEXT_TARGET_BYTES;
  const tracefsKeyBase = `tracefs:${fixtureKey}`;
  let base: TracefsBase | null = null;
  let bytesPerCopy = readManifest()['tracefs.bytes-per-copy']?.size ?? 0;
  if (readManifest()['tracefs.bytes-per-copy']?.key !== tracefsKeyBase) bytesPerCopy = 0;
  if (bytesPerCopy === 0) {
    base = await tracefsBase(fixture);
    if (base.us.length !== facts.events)
      throw new Error(`tracefs base has ${base.us.length} events, fixture ${facts.events}`);
    bytesPerCopy = tracefsBytesPerCopy(base);
    const m = readManifest();
    m['tracefs.bytes-per-copy'] = { size: bytesPerCopy, key: tracefsKeyBase };
    writeManifest(m);
  }
  const tcopies = Math.ceil(textTarget / bytesPerCopy);
  const cpus = facts.cpus.length;
  const makeText = async (n: number) => {
    const file = path.join(OUT_DIR, `tracefs.x${n}.txt`);
    await produce(file, `${tracefsKeyBase}:${n}`, log, async (tmp) => {
      base ??= await tracefsBase(fixture);
      await writeTracefs(base, n, facts.shiftNs, cpus, tmp);
    });
    return { file, copies: n, events: n * facts.events };
  };
  const tracefs = await makeText(tcopies);
  const tracefsQuarter = wantQuarter ? await makeText(Math.ceil(tcopies / 4)) : null;

  // scheduler-heavy tracefs text, from the second recording
  let tracefsSched: LargeTraceSet['tracefsSched'] = null;
  try {
    tracefsSched = await makeSchedText(quick ? QUICK_SCHED_TEXT_BYTES : SCHED_TEXT_BYTES, fixtureKey, log);
  } catch (e) {
    notes.push(`scheduler-heavy tracefs text not made: ${(e as Error).message}`);
    log(`  ${notes[notes.length - 1]}`);
  }
  if (!quick && fs.statSync(report).size < TEXT_TARGET_BYTES)
    notes.push(`report text is ${mb(fs.statSync(report).size)} (< 1 GB)`);

  // Files made from an earlier version of the fixture will never be reused: delete them.
  const m = readManifest();
  for (const [name, e] of Object.entries(m)) {
    if (name.includes('/') || e.key.includes(fixtureKey)) continue;
    await fsp.rm(path.join(OUT_DIR, name), { force: true });
    delete m[name];
    log(`  deleted ${name} (made from an earlier version of the fixture)`);
  }
  writeManifest(m);
  const keep = new Set(
    [v6, report, v7, tracefs.file, v6Quarter?.file, tracefsQuarter?.file, tracefsSched?.file]
      .filter(Boolean)
      .map((f) => path.basename(f!)),
  );
  const stale = fs
    .readdirSync(OUT_DIR)
    .filter((n) => /^(large|tracefs|tracefs-sched)\..*\.(dat|txt)$/.test(n) && !keep.has(n));
  if (stale.length) log(`  other generated traces in bench/out (not used by this run): ${stale.join(', ')}`);

  return {
    copies,
    eventsPerCopy: facts.events,
    events: copies * facts.events,
    shiftNs: facts.shiftNs,
    v6,
    v6Quarter,
    v7,
    report,
    tracefs,
    tracefsQuarter,
    tracefsSched,
    notes,
  };
}

/**
 * tracefs text of FIXTURE_SCHED, replicated to about `targetBytes`. Copies
 * are shifted by the recording's span + 1 ms, rounded to whole ms, as for the
 * main fixture. The one-copy base is made on every run (~2 s of trace-cmd for
 * 148k events), which keeps its facts out of the manifest. The file's key
 * carries the main fixture's key too, so the clean-up of files from an
 * earlier fixture leaves it alone.
 */
async function makeSchedText(
  targetBytes: number,
  fixtureKey: string,
  log: (s: string) => void,
): Promise<NonNullable<LargeTraceSet['tracefsSched']>> {
  const base = await tracefsBase(FIXTURE_SCHED);
  let first = Infinity;
  let last = -Infinity;
  for (const us of base.us) {
    first = Math.min(first, us);
    last = Math.max(last, us);
  }
  const shiftNs = (Math.floor((last - first) / 1000) + 2) * 1e6;
  const cpus = 1 + base.pre.reduce((a, p) => Math.max(a, Number(/\[(\d+)\]/.exec(p)![1])), 0);
  const copies = Math.ceil(targetBytes / tracefsBytesPerCopy(base));
  const file = path.join(OUT_DIR, `tracefs-sched.x${copies}.txt`);
  const key = `tracefs-sched:${fixtureKey}:${fs.statSync(FIXTURE_SCHED).size}:${copies}`;
  await produce(file, key, log, (tmp) => writeTracefs(base, copies, shiftNs, cpus, tmp));
  return { file, copies, events: copies * base.us.length };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const set = await makeLargeTraces({ quick: process.argv.includes('--quick') });
  process.stdout.write(`${JSON.stringify(set, null, 2)}\n`);
}
