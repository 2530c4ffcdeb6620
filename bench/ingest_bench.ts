/**
 * Ingest benchmark: every large trace from make_large_traces.ts through
 *
 *   ingest   ingestFile(file, {dataDir: fresh, force: true}): hash + decode +
 *            model writing + derive, i.e. file -> queryable DuckDB model;
 *   decode   the decoder alone into a counting EventSink (no DuckDB), to
 *            separate decoding from model-writing cost;
 *   trace-cmd `trace-cmd report -i FILE > /dev/null` on the same trace.dat,
 *            in the same run, for the ratio the ingest issue asks for;
 *   again    (the 1/4 files) the same ingest a second time in one process,
 *            as the server's next upload runs: its worker threads are kept
 *            between ingests (server/ingest/worker_pool.ts) with their
 *            optimised code. The other rows are a fresh process's first
 *            ingest, like `stallscope ingest`.
 *
 * Each measurement runs in its own child process (node --import tsx this file
 * --child ...), so its peak RSS (process.resourceUsage().maxRSS, which counts
 * DuckDB's native memory too) is that measurement's alone; trace-cmd runs
 * under /usr/bin/time for the same figures. CPU seconds (user+sys) are
 * recorded next to wall seconds because the machine is shared: wall-clock
 * rates move with the load, CPU time much less.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mb, OUT_DIR, ROOT, type LargeTraceSet } from './make_large_traces.ts';

const THIS_FILE = fileURLToPath(import.meta.url);
/** Where the model of the large v6 trace is kept for the detector and UI parts (quick runs: their own). */
export function modelDataDir(set: LargeTraceSet): string {
  return path.join(OUT_DIR, set.events >= 10_000_000 ? 'model' : 'model-quick');
}

/** Deletes every other trace in a bench data directory (a changed fixture leaves stale 0.5 GB models). */
export async function pruneModels(dataDir: string, keepId: string): Promise<void> {
  const traces = path.join(dataDir, 'traces');
  if (!fs.existsSync(traces)) return;
  for (const name of fs.readdirSync(traces)) {
    if (name !== keepId) await fsp.rm(path.join(traces, name), { recursive: true, force: true });
  }
}

export interface Measure {
  wallS: number;
  cpuS: number;
  peakRssMB: number;
  /** 1-minute load average before and after. */
  load: [number, number];
}

export interface IngestRow {
  label: string;
  file: string;
  format: string;
  bytes: number;
  events: number;
  ingest: (Measure & { hashS: number; decodeS: number; deriveS: number; totalS: number; dbBytes: number }) | null;
  /** The second ingest of the file in one process (threads kept, as in the server); the 1/4 files only. */
  again?: { totalS: number; cpuS: number } | null;
  decode: Measure | null;
  traceCmd: Measure | null;
  /**
   * Every (trace-cmd report, ingest) pair measured on this file, one after
   * the other, the first being traceCmd and ingest above: wall seconds.
   */
  pairs?: { traceCmdS: number; ingestS: number }[];
  error?: string;
}

/**
 * The ratio trace-cmd report wall ÷ ingest wall: the median over the row's
 * alternating pairs (single runs on a shared 2-CPU VM swing by 10-20%, and
 * both programs in a pair see about the same machine), or the one pair.
 */
export function ratioOf(row: IngestRow): number | null {
  if (!row.traceCmd || !row.ingest) return null;
  const pairs =
    row.pairs && row.pairs.length > 0 ? row.pairs : [{ traceCmdS: row.traceCmd.wallS, ingestS: row.ingest.totalS }];
  const r = pairs.map((p) => p.traceCmdS / p.ingestS).sort((a, b) => a - b);
  const m = r.length >> 1;
  return r.length % 2 ? r[m]! : (r[m - 1]! + r[m]!) / 2;
}

export interface IngestBenchResult {
  rows: IngestRow[];
  notes: string[];
}

export interface ChildResult {
  ok: boolean;
  error?: string;
  events?: number;
  wallS: number;
  cpuS: number;
  maxRssKB: number;
  /** Mode ingest-again: the second ingest's own seconds (wall is the whole child's). */
  again?: { totalS: number; cpuS: number };
  summary?: {
    id: string;
    eventsTotal: number;
    format: string;
    formatVersion: string | null;
    seconds: {
      hash: number;
      hashOverlapped?: boolean;
      setup?: number;
      decode: number;
      derive: number;
      commit?: number;
      total: number;
    };
  };
  dbBytes?: number;
}

const RESULT_TAG = 'BENCH_CHILD_RESULT ';

/** Runs this file as a child (clean per-measurement peak RSS). */
export function runChild(args: string[], timeoutMs: number): Promise<ChildResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', THIS_FILE, '--child', ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      if (err.length < 1 << 16) err += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith(RESULT_TAG));
      if (line) resolve(JSON.parse(line.slice(RESULT_TAG.length)) as ChildResult);
      else
        resolve({
          ok: false,
          error: `child exited ${code ?? signal}: ${err.slice(-800)}`,
          wallS: 0,
          cpuS: 0,
          maxRssKB: 0,
        });
    });
  });
}

/** `trace-cmd report -i FILE > /dev/null` under /usr/bin/time (wall, user, sys, max RSS). */
function timeTraceCmd(file: string, timeoutMs: number): Promise<Measure & { error?: string }> {
  return new Promise((resolve) => {
    const load0 = os.loadavg()[0]!;
    const useTime = fs.existsSync('/usr/bin/time');
    const cmd = useTime ? '/usr/bin/time' : 'trace-cmd';
    const args = useTime ? ['-f', 'TIMEV %e %U %S %M', 'trace-cmd', 'report', '-i', file] : ['report', '-i', file];
    const t0 = performance.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      if (err.length < 1 << 16) err += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const wall = (performance.now() - t0) / 1000;
      const m = /TIMEV ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(err);
      const res: Measure & { error?: string } = {
        wallS: m ? Number(m[1]) : wall,
        cpuS: m ? Number(m[2]) + Number(m[3]) : NaN,
        peakRssMB: m ? Number(m[4]) / 1024 : NaN,
        load: [load0, os.loadavg()[0]!],
      };
      const complaints = err.replace(/TIMEV.*\n?/, '').trim();
      if (code !== 0) res.error = `trace-cmd exit ${code}: ${complaints.slice(0, 300)}`;
      else if (complaints) res.error = `trace-cmd stderr: ${complaints.slice(0, 300)}`;
      resolve(res);
    });
  });
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) n += fs.statSync(path.join(e.parentPath, e.name)).size;
  }
  return n;
}

export interface IngestBenchOptions {
  log?: (s: string) => void;
  /** Skip the trace-cmd runs. */
  noTraceCmd?: boolean;
  /** Only the trace.dat files (a shorter re-run). */
  datOnly?: boolean;
  /** (trace-cmd, ingest) pairs per trace.dat file for the ratio (default 3; 1: a single pair). */
  ratioRuns?: number;
  timeoutMs?: number;
}

interface Target {
  label: string;
  file: string;
  events: number;
  traceCmd: boolean;
  /** Keep the model in modelDataDir() (the detector part reuses it). */
  keepModel?: boolean;
  /** Skip the full ingest (decode-only figures are enough). */
  decodeOnly?: boolean;
  /** Also time a second ingest in the same process (the server's case). */
  again?: boolean;
}

export function targetsOf(set: LargeTraceSet, datOnly = false): Target[] {
  return allTargets(set).filter((t) => !datOnly || t.label.startsWith('trace.dat'));
}

function allTargets(set: LargeTraceSet): Target[] {
  const t: Target[] = [{ label: 'trace.dat v6', file: set.v6, events: set.events, traceCmd: true, keepModel: true }];
  if (set.v7) t.push({ label: 'trace.dat v7 zstd', file: set.v7, events: set.events, traceCmd: true });
  t.push({ label: 'report text', file: set.report, events: set.events, traceCmd: false });
  t.push({ label: 'tracefs text', file: set.tracefs.file, events: set.tracefs.events, traceCmd: false });
  if (set.v6Quarter)
    t.push({
      label: 'trace.dat v6 1/4',
      file: set.v6Quarter.file,
      events: set.v6Quarter.events,
      traceCmd: false,
      again: true,
    });
  if (set.tracefsQuarter)
    t.push({
      label: 'tracefs text 1/4',
      file: set.tracefsQuarter.file,
      events: set.tracefsQuarter.events,
      traceCmd: false,
      again: true,
    });
  if (set.tracefsSched)
    t.push({
      label: 'tracefs text, sched-heavy',
      file: set.tracefsSched.file,
      events: set.tracefsSched.events,
      traceCmd: false,
      again: true,
    });
  return t;
}

function measureOf(r: ChildResult, load: [number, number]): Measure {
  return { wallS: r.wallS, cpuS: r.cpuS, peakRssMB: r.maxRssKB / 1024, load };
}

export async function benchIngest(set: LargeTraceSet, opts: IngestBenchOptions = {}): Promise<IngestBenchResult> {
  const log = opts.log ?? ((s: string) => process.stderr.write(`${s}\n`));
  const timeoutMs = opts.timeoutMs ?? 30 * 60_000;
  const rows: IngestRow[] = [];
  const notes: string[] = [];
  // Once per install (per code change): the workers' bundles and the tables'
  // layout. Without this the first large ingest measured paid it (~1-2 s).
  const warmDir = path.join(OUT_DIR, `tmp-warmup-${process.pid}`);
  const warm = await runChild(['warmup', path.join(ROOT, 'fixtures/reclaim_kswapd.v6.dat'), warmDir], timeoutMs);
  await fsp.rm(warmDir, { recursive: true, force: true });
  if (!warm.ok) throw new Error(`ingest warm-up failed: ${warm.error}`);
  log(`warm-up (worker bundles and table layout for this code, once per install): ${warm.wallS.toFixed(1)} s`);
  /** Data directory of an ingest whose model is not kept (deleted after each). */
  const scratchDataDir = path.join(OUT_DIR, `tmp-data-${process.pid}`);
  for (const t of targetsOf(set, opts.datOnly)) {
    const bytes = fs.statSync(t.file).size;
    const row: IngestRow = {
      label: t.label,
      file: path.relative(ROOT, t.file),
      format: '',
      bytes,
      events: t.events,
      ingest: null,
      decode: null,
      traceCmd: null,
    };
    rows.push(row);
    log(`\n== ${t.label}: ${path.relative(ROOT, t.file)} (${mb(bytes)}, ${t.events.toLocaleString('en-US')} events)`);

    // 1. decoder alone
    let load0 = os.loadavg()[0]!;
    const dec = await runChild(['decode', t.file], timeoutMs);
    if (dec.ok) {
      row.decode = measureOf(dec, [load0, os.loadavg()[0]!]);
      if (dec.events !== t.events) notes.push(`${t.label}: decoder emitted ${dec.events} events, expected ${t.events}`);
      log(
        `   decode only : ${fmtRate(t.events, bytes, dec.wallS)}  cpu ${dec.cpuS.toFixed(1)} s  peak RSS ${(dec.maxRssKB / 1024).toFixed(0)} MB`,
      );
    } else {
      row.error = `decode: ${dec.error}`;
      log(`   decode only : FAILED ${dec.error}`);
    }

    // 2. trace-cmd report on the same file, between the two stallscope runs
    let traceCmdFailed = false;
    if (t.traceCmd && !opts.noTraceCmd) {
      const tc = await timeTraceCmd(t.file, timeoutMs);
      row.traceCmd = tc;
      traceCmdFailed = tc.error !== undefined;
      if (tc.error) notes.push(`${t.label}: ${tc.error}`);
      log(
        `   trace-cmd   : ${fmtRate(t.events, bytes, tc.wallS)}  cpu ${tc.cpuS.toFixed(1)} s  peak RSS ${tc.peakRssMB.toFixed(0)} MB${tc.error ? `  (${tc.error})` : ''}`,
      );
    }

    // 3. the full ingest into a fresh data directory
    if (!t.decodeOnly) {
      const dataDir = t.keepModel ? modelDataDir(set) : scratchDataDir;
      if (!t.keepModel) await fsp.rm(dataDir, { recursive: true, force: true });
      load0 = os.loadavg()[0]!;
      const ing = await runChild(['ingest', t.file, dataDir], timeoutMs);
      if (ing.ok && ing.summary) {
        const s = ing.summary.seconds;
        row.format = `${ing.summary.format}${ing.summary.formatVersion ? ` v${ing.summary.formatVersion}` : ''}`;
        row.ingest = {
          ...measureOf(ing, [load0, os.loadavg()[0]!]),
          hashS: s.hash,
          decodeS: s.decode,
          deriveS: s.derive,
          totalS: s.total,
          dbBytes: ing.dbBytes ?? 0,
        };
        if (ing.summary.eventsTotal !== t.events)
          notes.push(`${t.label}: ingest counted ${ing.summary.eventsTotal} events, expected ${t.events}`);
        log(
          `   ingest      : ${fmtRate(t.events, bytes, s.total)} (hash ${s.hash.toFixed(1)} s${s.hashOverlapped ? ' on its own thread' : ''}, setup ${(s.setup ?? 0).toFixed(1)} s, decode+write ${s.decode.toFixed(1)} s = ${(t.events / s.decode / 1e6).toFixed(2)} M ev/s, ` +
            `derive ${s.derive.toFixed(1)} s, commit ${(s.commit ?? 0).toFixed(1)} s)  cpu ${ing.cpuS.toFixed(1)} s  peak RSS ${(ing.maxRssKB / 1024).toFixed(0)} MB  db ${mb(ing.dbBytes ?? 0)}`,
        );
      } else {
        row.error = `${row.error ? `${row.error}; ` : ''}ingest: ${ing.error}`;
        log(`   ingest      : FAILED ${ing.error}`);
      }
      if (!t.keepModel) await fsp.rm(dataDir, { recursive: true, force: true });
      else if (ing.ok && ing.summary) await pruneModels(dataDir, ing.summary.id);
    }
    // 3b. the server's next upload: a second ingest in the same process
    if (t.again && row.ingest) {
      await fsp.rm(scratchDataDir, { recursive: true, force: true });
      const ing = await runChild(['ingest-again', t.file, scratchDataDir], timeoutMs);
      await fsp.rm(scratchDataDir, { recursive: true, force: true });
      if (ing.ok && ing.again) {
        row.again = ing.again;
        log(
          `   again       : ${fmtRate(t.events, bytes, ing.again.totalS)}  cpu ${ing.again.cpuS.toFixed(1)} s  (second ingest in one process, threads kept: the server's next upload)`,
        );
      } else {
        notes.push(`${t.label}: second ingest failed: ${ing.error}`);
      }
    }
    // 4. more (trace-cmd, ingest) pairs, one after the other, for the ratio's median
    if (row.traceCmd && !traceCmdFailed && row.ingest) {
      row.pairs = [{ traceCmdS: row.traceCmd.wallS, ingestS: row.ingest.totalS }];
      for (let k = 2; k <= (opts.ratioRuns ?? 3); k++) {
        const tc = await timeTraceCmd(t.file, timeoutMs);
        if (tc.error) {
          notes.push(`${t.label}: pair ${k}: ${tc.error}`);
          break;
        }
        await fsp.rm(scratchDataDir, { recursive: true, force: true });
        const ing = await runChild(['ingest', t.file, scratchDataDir], timeoutMs);
        await fsp.rm(scratchDataDir, { recursive: true, force: true });
        if (!ing.ok || !ing.summary) {
          notes.push(`${t.label}: pair ${k}: ingest failed: ${ing.error}`);
          break;
        }
        const pair = { traceCmdS: tc.wallS, ingestS: ing.summary.seconds.total };
        row.pairs.push(pair);
        log(
          `   pair ${k}      : trace-cmd ${pair.traceCmdS.toFixed(1)} s, ingest ${pair.ingestS.toFixed(1)} s -> ${(pair.traceCmdS / pair.ingestS).toFixed(2)}x`,
        );
      }
    }
    if (row.traceCmd && row.ingest) {
      log(
        `   ratio       : ingest ${(row.traceCmd.wallS / row.ingest.totalS).toFixed(2)}x trace-cmd (wall; median of ${row.pairs?.length ?? 1} pairs ${ratioOf(row)!.toFixed(2)}x), ${(row.traceCmd.cpuS / row.ingest.cpuS).toFixed(2)}x (CPU seconds); ` +
          `decode-only ${row.decode ? (row.traceCmd.wallS / row.decode.wallS).toFixed(2) : '-'}x (wall), ${row.decode ? (row.traceCmd.cpuS / row.decode.cpuS).toFixed(2) : '-'}x (CPU)`,
      );
    }
  }
  return { rows, notes };
}

function fmtRate(events: number, bytes: number, s: number): string {
  return `${s.toFixed(1).padStart(6)} s  ${(events / s / 1e6).toFixed(2).padStart(5)} M ev/s  ${(bytes / s / 1e6).toFixed(0).padStart(4)} MB/s`;
}

/** The table printed by run.ts. */
export function formatIngestTable(r: IngestBenchResult): string {
  const head = [
    'input',
    'size',
    'events',
    'ingest s',
    'ev/s',
    'MB/s',
    'decode+write',
    'derive',
    'peak RSS',
    'decode-only ev/s',
    'MB/s',
    'RSS',
    'trace-cmd ev/s',
    'ratio',
    'cpu ratio',
  ];
  const lines: string[][] = [head];
  for (const row of r.rows) {
    const i = row.ingest;
    const d = row.decode;
    const tc = row.traceCmd;
    lines.push([
      row.label,
      mb(row.bytes),
      `${(row.events / 1e6).toFixed(2)}M`,
      i ? i.totalS.toFixed(1) : '-',
      i ? `${(row.events / i.totalS / 1e6).toFixed(2)}M` : '-',
      i ? (row.bytes / i.totalS / 1e6).toFixed(0) : '-',
      i ? `${i.decodeS.toFixed(1)} s` : '-',
      i ? `${i.deriveS.toFixed(1)} s` : '-',
      i ? `${i.peakRssMB.toFixed(0)} MB` : '-',
      d ? `${(row.events / d.wallS / 1e6).toFixed(2)}M` : '-',
      d ? (row.bytes / d.wallS / 1e6).toFixed(0) : '-',
      d ? `${d.peakRssMB.toFixed(0)} MB` : '-',
      tc ? `${(row.events / tc.wallS / 1e6).toFixed(2)}M` : '',
      tc && i
        ? `${ratioOf(row)!.toFixed(2)}x${row.pairs && row.pairs.length > 1 ? ` (median of ${row.pairs.length})` : ''}`
        : '',
      tc && i ? `${(tc.cpuS / i.cpuS).toFixed(2)}x` : '',
    ]);
  }
  const w = head.map((_, c) => Math.max(...lines.map((l) => l[c]!.length)));
  const out = lines.map((l) => l.map((cell, c) => (c === 0 ? cell.padEnd(w[c]!) : cell.padStart(w[c]!))).join('  '));
  out.splice(1, 0, w.map((n) => '-'.repeat(n)).join('  '));
  return `${out.join('\n')}\n`;
}

// ---------------------------------------------------------------------------
// Child side
// ---------------------------------------------------------------------------

async function childMain(args: string[]): Promise<void> {
  const [mode, file, dataDir] = args;
  const res: ChildResult = { ok: false, wallS: 0, cpuS: 0, maxRssKB: 0 };
  // Modules are loaded (and compiled by tsx) before the clock starts.
  const { decodeTraceDat } = await import('../server/decode/trace_dat/decode_trace_dat.ts');
  const { decodeFtraceText } = await import('../server/decode/ftrace_text/decode_ftrace_text.ts');
  const { openDecompressed } = await import('../server/decode/decompress.ts');
  const { ingestFile } = await import('../server/ingest/ingest_file.ts');
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  try {
    if (mode === 'decode') {
      let events = 0;
      const sink = {
        header() {},
        event() {
          events++;
        },
        lostEvents() {},
        skipped() {},
      };
      if (isTraceDat(file!)) await decodeTraceDat(file!, sink, { fileLabel: file! });
      else await decodeFtraceText(openDecompressed(file!), sink, { fileLabel: file! });
      res.events = events;
    } else if (mode === 'warmup') {
      // The three-thread path on a small file: builds this code's worker bundles and caches the table layout.
      const r = await ingestFile(file!, { dataDir: dataDir!, force: true, worker: true });
      res.events = r.summary.eventsTotal;
    } else if (mode === 'ingest-again') {
      await ingestFile(file!, { dataDir: dataDir!, force: true });
      const t1 = performance.now();
      const c1 = process.cpuUsage();
      const r = await ingestFile(file!, { dataDir: dataDir!, force: true });
      const c = process.cpuUsage(c1);
      res.again = { totalS: (performance.now() - t1) / 1000, cpuS: (c.user + c.system) / 1e6 };
      res.events = r.summary.eventsTotal;
    } else if (mode === 'ingest') {
      const r = await ingestFile(file!, { dataDir: dataDir!, force: true });
      res.summary = r.summary;
      res.events = r.summary.eventsTotal;
      res.dbBytes = dirBytes(path.dirname(r.dbPath));
    } else throw new Error(`unknown child mode ${mode}`);
    res.ok = true;
  } catch (e) {
    res.error = (e as Error).stack ?? String(e);
  }
  res.wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  res.cpuS = (cpu.user + cpu.system) / 1e6;
  res.maxRssKB = process.resourceUsage().maxRSS;
  process.stdout.write(`${RESULT_TAG}${JSON.stringify(res)}\n`);
}

function isTraceDat(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const b = Buffer.alloc(3);
    fs.readSync(fd, b, 0, 3, 0);
    return b[0] === 0x17 && b[1] === 0x08 && b[2] === 0x44;
  } finally {
    fs.closeSync(fd);
  }
}
if (process.argv[1] === THIS_FILE && process.argv[2] === '--child') {
  await childMain(process.argv.slice(3));
  process.exit(0);
}
