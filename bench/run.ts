/**
 * `npm run bench`: the whole benchmark, in parts.
 *
 *   corpus     the bench corpus (bench/corpus.ts: real recordings of four event
 *              mixes, small and >= 10M events, trace.dat v7/v6, report and
 *              tracefs text): `stallscope ingest` against `trace-cmd report`,
 *              peak RSS, time to first view (bench/corpus_bench.ts)
 *   ingest     large traces (bench/make_large_traces.ts) through ingestFile,
 *              the decoders alone, and `trace-cmd report` on the same
 *              trace.dat (bench/ingest_bench.ts)
 *   detectors  every detector on the model of the large v6 trace (>= 10M
 *              events), opened read-only (bench/detectors_bench.ts)
 *   ui         bench/ui_bench.ts, if the app side has one
 *   perfetto   Perfetto traces (the tracebox fixtures and a 50 MB file made
 *              of copies of one) through the decoder and ingestFile, next to
 *              Perfetto's trace_processor_shell loading the same file
 *              (bench/perfetto_bench.ts)
 *   export     the Perfetto export of the corpus's 1M-event recordings, each
 *              in its own process: wall, CPU, peak RSS (bench/export_bench.ts)
 *   query      the query page's queries and the event list on the same
 *              model, through the server's query process (bench/query_bench.ts)
 *
 *   npm run bench                         corpus, detectors, ui, perfetto, export, query, compare (full sizes)
 *   npm run bench -- --quick              the corpus's small files; ~1M events, ~150 MB text for the others
 *   npm run bench -- --only corpus --file sched_wq --file v7   corpus files whose mix/size/format match all --file words
 *   npm run bench -- --only ingest        one part (repeatable: --only ingest --only ui; or --only query, --only compare)
 *   npm run bench -- --no-trace-cmd       skip the trace-cmd comparison runs
 *   npm run bench -- --dat-only           ingest part on the trace.dat files only (a shorter re-run)
 *   npm run bench -- --ratio-runs N       (trace-cmd, ingest) pairs per trace.dat file; the ratio
 *                                         is their median (default 3, 1 with --quick)
 *
 * Prints a table of figures and writes bench/out/results.json (or
 * results.quick.json for --quick).
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeCorpus } from './corpus.ts';
import { benchCorpus, formatCorpusTable } from './corpus_bench.ts';
import {
  benchIngest,
  formatIngestTable,
  modelDataDir,
  pruneModels,
  ratioOf,
  type IngestBenchResult,
} from './ingest_bench.ts';
import { makeLargeTraces, mb, OUT_DIR, ROOT, type LargeTraceSet } from './make_large_traces.ts';
import { serverUrl } from './server_url.ts';

type Part = 'corpus' | 'ingest' | 'detectors' | 'ui' | 'perfetto' | 'export' | 'query' | 'compare' | 'fleet' | 'cli';
const PARTS: Part[] = ['corpus', 'ingest', 'detectors', 'ui', 'perfetto', 'export', 'query', 'compare', 'fleet', 'cli'];
/** Parts run without --only: the corpus replaces the older ingest part (one replicated recording) by default. */
const DEFAULT_PARTS: Part[] = ['corpus', 'detectors', 'ui', 'perfetto', 'export', 'query', 'compare', 'fleet', 'cli'];

interface Args {
  parts: Set<Part>;
  quick: boolean;
  noTraceCmd: boolean;
  datOnly: boolean;
  /** Pairs per trace.dat file for the ratio; null: 3, or 1 with --quick. */
  ratioRuns: number | null;
  /** Corpus files to measure: each word must match the file's mix, size or format. */
  files: string[];
  noFirstView: boolean;
}

function parseArgs(argv: string[]): Args {
  const parts = new Set<Part>();
  let quick = false;
  let noTraceCmd = false;
  let datOnly = false;
  let ratioRuns: number | null = null;
  const files: string[] = [];
  let noFirstView = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--quick') quick = true;
    else if (a === '--file') files.push(argv[++i] ?? '');
    else if (a === '--no-first-view') noFirstView = true;
    else if (a === '--no-trace-cmd') noTraceCmd = true;
    else if (a === '--dat-only') datOnly = true;
    else if (a === '--ratio-runs' || a.startsWith('--ratio-runs=')) {
      const v = Number(a === '--ratio-runs' ? argv[++i] : a.slice('--ratio-runs='.length));
      if (!Number.isInteger(v) || v < 1)
        throw new Error(`--ratio-runs: expected a whole number >= 1, got ${JSON.stringify(v)}`);
      ratioRuns = v;
    } else if (a === '--only' || a.startsWith('--only=')) {
      const v = a === '--only' ? argv[++i] : a.slice('--only='.length);
      for (const p of (v ?? '').split(',')) {
        if (!PARTS.includes(p as Part))
          throw new Error(`--only: expected one of ${PARTS.join('|')}, got ${JSON.stringify(p)}`);
        parts.add(p as Part);
      }
    } else if (a === '--help' || a === '-h') {
      process.stdout.write(
        'usage: npm run bench -- [--quick] [--only corpus|ingest|detectors|ui|perfetto|export|query|compare|fleet|cli]... [--file MIX|SIZE|FORMAT]... [--no-first-view] [--no-trace-cmd] [--dat-only] [--ratio-runs N]\n',
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  return {
    parts: parts.size ? parts : new Set(DEFAULT_PARTS),
    quick,
    noTraceCmd,
    datOnly,
    ratioRuns,
    files,
    noFirstView,
  };
}

const log = (s: string) => process.stdout.write(`${s}\n`);
/** `uptime`'s line: the machine's load, printed with every set of figures (the machine is shared). */
const uptime = () => {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return `load average: ${load()}`;
  }
};
const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

interface DetectorPart {
  modelEvents: number;
  modelBuiltS: number | null;
  result: unknown;
  totalMs: number | null;
  targetMs: number;
  load: [string, string];
}

async function detectorPart(set: LargeTraceSet, notes: string[]): Promise<DetectorPart | null> {
  const benchFile = path.join(ROOT, 'bench', 'detectors_bench.ts');
  if (!fs.existsSync(benchFile)) {
    notes.push('detectors: bench/detectors_bench.ts not found, part skipped');
    log('detectors: bench/detectors_bench.ts not found: skipped');
    return null;
  }
  // The model of the large v6 trace: made by the ingest part (bench/out/model), else now.
  const { ingestFile } = await import('../server/ingest/ingest_file.ts');
  const t0 = performance.now();
  const model = await ingestFile(set.v6, { dataDir: modelDataDir(set) });
  await pruneModels(modelDataDir(set), model.id);
  const builtS = model.reused ? null : (performance.now() - t0) / 1000;
  log(
    `model: ${path.relative(ROOT, model.dbPath)}, ${model.summary.eventsTotal.toLocaleString('en-US')} events ` +
      `(${model.reused ? 'reused' : `ingested now in ${builtS!.toFixed(1)} s`})`,
  );
  const { openDuckDb } = await import('../server/engine/engine.ts');
  const db = await import(pathToFileURL(benchFile).href);
  if (typeof db.benchDetectors !== 'function') {
    notes.push('detectors: bench/detectors_bench.ts has no benchDetectors export, part skipped');
    return null;
  }
  const engine = await openDuckDb(model.dbPath, { readOnly: true });
  const load0 = load();
  try {
    const r = await db.benchDetectors(engine);
    if (typeof db.formatDetectorBench === 'function') process.stdout.write(db.formatDetectorBench(r));
    else log(JSON.stringify(r, null, 2));
    const totalMs = typeof r?.allTogetherMs === 'number' ? r.allTogetherMs : null;
    if (totalMs !== null)
      log(
        `detectors all together: ${(totalMs / 1000).toFixed(2)} s on ${model.summary.eventsTotal.toLocaleString('en-US')} events (target < 5 s): ${totalMs < 5000 ? 'MET' : 'NOT MET'}`,
      );
    return {
      modelEvents: model.summary.eventsTotal,
      modelBuiltS: builtS,
      result: r,
      totalMs,
      targetMs: 5000,
      load: [load0, load()],
    };
  } finally {
    engine.close();
  }
}

/** The query page and event list on the large v6 model (bench/query_bench.ts). */
async function queryPart(set: LargeTraceSet): Promise<unknown> {
  const { ingestFile } = await import('../server/ingest/ingest_file.ts');
  const model = await ingestFile(set.v6, { dataDir: modelDataDir(set) });
  const { benchQuery, formatQueryBench } = await import('./query_bench.ts');
  const load0 = load();
  const r = await benchQuery(model.dbPath, log);
  process.stdout.write(formatQueryBench(r));
  // In the browser: a 100k-row result and the whole trace's event list, scrolled.
  let browser: unknown = null;
  if (fs.existsSync(path.join(ROOT, 'dist', 'app', 'index.html'))) {
    const { runQueryUiBench, formatQueryUiBench } = await import('./query_ui_bench.ts');
    const server = await startServer(modelDataDir(set));
    try {
      const b = await runQueryUiBench({ baseUrl: server.url, traceId: model.id });
      process.stdout.write(formatQueryUiBench(b));
      browser = b;
    } finally {
      await server.stop();
    }
  } else log('query: no built app in dist/ (npm run build): the browser part is skipped');
  return { result: r, browser, load: [load0, load()] };
}

/**
 * `stallscope compare` on two large models (bench/compare_bench.ts): the large v6's (bench/out/model, as the
 * detectors part) and the large v7's (bench/out/compare-model: the same events, a model of its own).
 */
async function comparePart(set: LargeTraceSet, notes: string[]): Promise<unknown> {
  if (!set.v7) {
    notes.push('compare: no large v7 trace.dat (trace-cmd convert failed?): part skipped');
    return null;
  }
  const { ingestFile } = await import('../server/ingest/ingest_file.ts');
  const { benchCompare, formatCompareBench } = await import('./compare_bench.ts');
  const a = await ingestFile(set.v6, { dataDir: modelDataDir(set) });
  const bDir = path.join(OUT_DIR, set.events >= 10_000_000 ? 'compare-model' : 'compare-model-quick');
  const t = performance.now();
  const b = await ingestFile(set.v7, { dataDir: bDir });
  await pruneModels(bDir, b.id);
  log(
    `compare: second model ${b.reused ? 'reused' : `ingested in ${((performance.now() - t) / 1000).toFixed(1)} s`}: ${b.summary.eventsTotal.toLocaleString('en-US')} events`,
  );
  const r = await benchCompare(
    [
      { dataDir: modelDataDir(set), id: a.id, events: a.summary.eventsTotal },
      { dataDir: bDir, id: b.id, events: b.summary.eventsTotal },
    ],
    log,
  );
  process.stdout.write(formatCompareBench(r));
  return r;
}

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** `stallscope serve` on the bench's data directory, as a child; resolves with its URL once it listens. */
async function startServer(dataDir: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bin', 'stallscope.mjs'), 'serve', '--port', String(port), '--data-dir', dataDir],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    if (err.length < 1 << 14) err += d.toString();
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const closed = new Promise((r) => child.once('close', r));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await closed;
    clearTimeout(t);
  };
  const url = await serverUrl(child, () => err, 120_000).catch(async (e) => {
    await stop();
    throw e;
  });
  return { url, stop };
}

/**
 * Calls bench/ui_bench.ts (the app side's) if it exists: serves the large v6
 * model (bench/out/model, >= 5M events) with `stallscope serve` and hands
 * the URL and trace id to its runUiBench.
 */
async function uiPart(set: LargeTraceSet | null, notes: string[]): Promise<unknown> {
  const file = path.join(ROOT, 'bench', 'ui_bench.ts');
  if (!fs.existsSync(file)) {
    notes.push('ui: bench/ui_bench.ts does not exist yet (app side), part skipped');
    log('ui: bench/ui_bench.ts does not exist yet (written by the app side): skipped');
    return null;
  }
  const mod = await import(pathToFileURL(file).href);
  if (typeof mod.runUiBench !== 'function') {
    notes.push('ui: bench/ui_bench.ts exports no runUiBench, part skipped');
    log('ui: bench/ui_bench.ts exports no runUiBench: skipped');
    return null;
  }
  if (
    !fs.existsSync(path.join(ROOT, 'dist', 'app', 'index.html')) &&
    !fs.existsSync(path.join(ROOT, 'dist', 'index.html'))
  ) {
    notes.push('ui: the app is not built (dist/): run `npm run build` first; part skipped');
    log('ui: no built app in dist/ (npm run build): skipped');
    return null;
  }
  if (!set) return null;
  // The model of the large v6 (made by the ingest or detector part, else now).
  const { ingestFile } = await import('../server/ingest/ingest_file.ts');
  const model = await ingestFile(set.v6, { dataDir: modelDataDir(set) });
  // What the library does at the end of an ingest: compute and cache the findings, so the
  // first paint measured is "after ingest is done", not the first detector run.
  const { TraceLibrary } = await import('../server/ingest/library.ts');
  const lib = await TraceLibrary.open(modelDataDir(set));
  const f0 = performance.now();
  await lib.findings(model.id);
  await lib.close();
  log(`ui: findings cached (${((performance.now() - f0) / 1000).toFixed(1)} s; instant if already cached)`);
  // A trace uploaded through the app is summarised for the timeline before
  // its job reports done (server/api/routes/traces.ts, warmTrace), and the
  // summaries are kept on disk. One trace ingested by the CLI and never viewed
  // has none: its first view builds them. Both are measured: first the never-
  // viewed model on a fresh server, then a fresh server again, which finds the
  // summaries as an upload leaves them ("after ingest is done").
  // The summaries are a cache (server/ingest/data_dir.ts): drop any left by an earlier run.
  fs.rmSync(path.join(path.dirname(model.dbPath), 'overview'), { recursive: true, force: true });
  const coldServer = await startServer(modelDataDir(set));
  let firstEverMs: number | null = null;
  try {
    const r0 = await mod.runUiBench({ baseUrl: coldServer.url, traceId: model.id });
    firstEverMs = typeof r0?.firstPaintMs === 'number' ? r0.firstPaintMs : null;
    log(
      `ui: first view of a never-viewed (CLI-ingested) model: first painted timeline ${firstEverMs?.toFixed(0) ?? '?'} ms (builds the timeline summaries)`,
    );
  } finally {
    await coldServer.stop();
  }
  const server = await startServer(modelDataDir(set));
  try {
    log(
      `ui: serving ${model.summary.eventsTotal.toLocaleString('en-US')} events at ${server.url} (fresh server, summaries on disk as after an upload); runUiBench(...)`,
    );
    const load0 = load();
    const r = await mod.runUiBench({ baseUrl: server.url, traceId: model.id });
    const fp = r?.firstPaintMs;
    const p95 = r?.all?.p95Ms;
    log(
      `ui: first painted timeline ${typeof fp === 'number' ? fp.toFixed(0) : '?'} ms (target < 2000), frames median ${r?.all?.medianMs} ms / p95 ${p95} ms (target p95 < 33)`,
    );
    log(
      `    zoom median ${r?.zoom?.medianMs} / p95 ${r?.zoom?.p95Ms} ms; pan median ${r?.pan?.medianMs} / p95 ${r?.pan?.p95Ms} ms; draw() p95 ${r?.draw?.p95Ms} ms; ${r?.trackRequests} track requests`,
    );
    return { events: model.summary.eventsTotal, load: [load0, load()], result: r, firstViewNeverViewedMs: firstEverMs };
  } finally {
    await server.stop();
  }
}

/**
 * The text target (150 MB/s) is stated for machines on which `trace-cmd
 * report` prints about 0.5M events/s. This VM's speed varies by up to 2x
 * between sessions (run Y: 0.33M events/s; run AA: 0.64M), so the target is
 * also given scaled by trace-cmd's speed on the uncompressed v6 file in this
 * run: what 150 MB/s on the issue's machine is on this one. Null without
 * trace-cmd runs.
 */
function scaledTextTarget(r: IngestBenchResult): { traceCmdEvps: number; mbs: number } | null {
  const v6 = r.rows.find((x) => x.label === 'trace.dat v6');
  if (!v6?.traceCmd) return null;
  const walls = (v6.pairs && v6.pairs.length > 0 ? v6.pairs.map((p) => p.traceCmdS) : [v6.traceCmd.wallS]).sort(
    (a, b) => a - b,
  );
  const traceCmdEvps = v6.events / walls[walls.length >> 1]!;
  return { traceCmdEvps, mbs: 150 * (traceCmdEvps / 0.5e6) };
}

function ingestHeadline(r: IngestBenchResult): string[] {
  const out: string[] = [];
  const width = Math.max(...r.rows.map((x) => x.label.length));
  const scaled = scaledTextTarget(r);
  if (scaled !== null) {
    out.push(
      `machine speed: trace-cmd report prints the v6 file at ${(scaled.traceCmdEvps / 1e6).toFixed(2)} M events/s here (median of its runs), ` +
        `against the ~0.5 M events/s the issue measures its targets on: the text target of 150 MB/s scales to ${scaled.mbs.toFixed(0)} MB/s on this machine`,
    );
  }
  for (const row of r.rows) {
    if (!row.ingest) continue;
    const evs = row.events / row.ingest.totalS;
    let s = `${row.label.padEnd(width)} ingest ${(evs / 1e6).toFixed(2)} M events/s, ${(row.bytes / row.ingest.totalS / 1e6).toFixed(0)} MB/s`;
    if (row.decode)
      s += `; decoder alone ${(row.events / row.decode.wallS / 1e6).toFixed(2)} M events/s, ${(row.bytes / row.decode.wallS / 1e6).toFixed(0)} MB/s`;
    if (row.traceCmd) {
      const ratio = ratioOf(row)!;
      const pairs = row.pairs ?? [];
      const each =
        pairs.length > 1
          ? ` = median of ${pairs.map((p) => `${(p.traceCmdS / p.ingestS).toFixed(2)}x`).join(', ')}`
          : '';
      s += `; trace-cmd report ${(row.events / row.traceCmd.wallS / 1e6).toFixed(2)} M events/s -> ratio ${ratio.toFixed(2)}x${each} (target >= 3x: ${ratio >= 3 ? 'MET' : 'NOT MET'})`;
      s += `, by CPU seconds ${(row.traceCmd.cpuS / row.ingest.cpuS).toFixed(2)}x`;
      // The issue's own absolute reading of the target: trace-cmd at ~0.5M events/s, so ~1.5M events/s.
      s += `; against the issue's 1.5 M events/s (3 x its ~0.5 M for trace-cmd): ${evs >= 1.5e6 ? 'MET' : 'NOT MET'}`;
    } else if (/text/.test(row.label)) {
      const mbs = row.bytes / row.ingest.totalS / 1e6;
      s += ` (target >= 150 MB/s: ${mbs >= 150 ? 'MET' : 'NOT MET'}`;
      if (scaled !== null)
        s += `; scaled to this machine's trace-cmd speed: >= ${scaled.mbs.toFixed(0)} MB/s: ${mbs >= scaled.mbs ? 'MET' : 'NOT MET'}`;
      s += ')';
    }
    if (row.again)
      s += `; second ingest in one process (server, threads kept) ${(row.bytes / row.again.totalS / 1e6).toFixed(0)} MB/s, ${(row.events / row.again.totalS / 1e6).toFixed(2)} M events/s`;
    out.push(s);
  }
  const full = r.rows.find((x) => x.label === 'trace.dat v6');
  const q = r.rows.find((x) => x.label === 'trace.dat v6 1/4');
  if (full?.ingest && q?.ingest) {
    out.push(
      `peak RSS, trace.dat v6 ingest: ${q.ingest.peakRssMB.toFixed(0)} MB at ${mb(q.bytes)} vs ${full.ingest.peakRssMB.toFixed(0)} MB at ${mb(full.bytes)}`,
    );
  }
  const tf = r.rows.find((x) => x.label === 'tracefs text');
  const tq = r.rows.find((x) => x.label === 'tracefs text 1/4');
  if (tf?.ingest && tq?.ingest) {
    out.push(
      `peak RSS, tracefs text ingest: ${tq.ingest.peakRssMB.toFixed(0)} MB at ${mb(tq.bytes)} vs ${tf.ingest.peakRssMB.toFixed(0)} MB at ${mb(tf.bytes)}`,
    );
  }
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = new Date();
  const notes: string[] = [];
  const results: Record<string, unknown> = {
    startedAt: started.toISOString(),
    quick: args.quick,
    parts: [...args.parts],
    machine: {
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model ?? '',
      memGB: +(os.totalmem() / 2 ** 30).toFixed(1),
      node: process.version,
      loadAtStart: os.loadavg(),
    },
    notes,
  };
  log(
    `stallscope bench ${args.quick ? '(quick) ' : ''}${started.toISOString()}: ${os.cpus().length} CPUs, load ${load()}`,
  );
  results.uptimeStart = uptime();
  log(`uptime: ${results.uptimeStart}`);

  if (args.parts.has('corpus')) {
    log('\n# corpus');
    const corpus = await makeCorpus({ quick: args.quick, log });
    notes.push(...corpus.notes);
    log(`uptime: ${uptime()}`);
    const rows = await benchCorpus(corpus, {
      log,
      noTraceCmd: args.noTraceCmd,
      noFirstView: args.noFirstView,
      filter: args.files,
      ...(args.ratioRuns !== null ? { pairsSmall: args.ratioRuns, pairsLarge: args.ratioRuns } : {}),
    });
    results.corpus = rows;
    log(`\nuptime: ${uptime()}`);
    process.stdout.write(formatCorpusTable(rows));
    fs.mkdirSync(OUT_DIR, { recursive: true });
    fs.writeFileSync(
      path.join(OUT_DIR, args.quick ? 'corpus.quick.json' : 'corpus.json'),
      JSON.stringify(
        { at: started.toISOString(), uptimeStart: results.uptimeStart, uptimeEnd: uptime(), rows },
        null,
        2,
      ),
    );
  }

  let set: LargeTraceSet | null = null;
  if (
    args.parts.has('ingest') ||
    args.parts.has('detectors') ||
    args.parts.has('ui') ||
    args.parts.has('query') ||
    args.parts.has('compare')
  ) {
    log('\n# traces');
    set = await makeLargeTraces({ quick: args.quick, log });
    notes.push(...set.notes);
    results.traces = set;
  }

  if (args.parts.has('ingest') && set) {
    log('\n# ingest');
    const r = await benchIngest(set, {
      log,
      noTraceCmd: args.noTraceCmd,
      datOnly: args.datOnly,
      ratioRuns: args.ratioRuns ?? (args.quick ? 1 : 3),
    });
    notes.push(...r.notes);
    results.ingest = r;
    log('');
    process.stdout.write(formatIngestTable(r));
    log('');
    for (const l of ingestHeadline(r)) log(l);
    results.ingestHeadline = ingestHeadline(r);
  }

  if (args.parts.has('detectors') && set) {
    log('\n# detectors');
    try {
      results.detectors = await detectorPart(set, notes);
    } catch (e) {
      notes.push(`detectors: failed: ${(e as Error).message}`);
      log(`detectors: FAILED ${(e as Error).stack}`);
    }
  }

  if (args.parts.has('ui')) {
    log('\n# ui');
    try {
      results.ui = await uiPart(set, notes);
    } catch (e) {
      notes.push(`ui: failed: ${(e as Error).message}`);
      log(`ui: FAILED ${(e as Error).stack}`);
    }
  }

  if (args.parts.has('perfetto')) {
    log('\n# perfetto (stallscope vs trace_processor_shell on the same file; speedup > 1: stallscope faster)');
    try {
      const { benchPerfetto } = await import('./perfetto_bench.ts');
      results.perfetto = await benchPerfetto({ quick: args.quick, log });
    } catch (e) {
      notes.push(`perfetto: failed: ${(e as Error).message}`);
      log(`perfetto: FAILED ${(e as Error).stack}`);
    }
  }

  if (args.parts.has('export')) {
    log('\n# export (stallscope export --format perfetto: the 1M-event corpus recordings, peak <= 350 MB)');
    try {
      const { benchExport } = await import('./export_bench.ts');
      results.export = await benchExport({ runs: args.quick ? 1 : 2, log });
    } catch (e) {
      notes.push(`export: failed: ${(e as Error).message}`);
      log(`export: FAILED ${(e as Error).stack}`);
    }
  }

  if (args.parts.has('query') && set) {
    log('\n# query');
    try {
      results.query = await queryPart(set);
    } catch (e) {
      notes.push(`query: failed: ${(e as Error).message}`);
      log(`query: FAILED ${(e as Error).stack}`);
    }
  }

  if (args.parts.has('compare') && set) {
    log('\n# compare');
    try {
      results.compare = await comparePart(set, notes);
    } catch (e) {
      notes.push(`compare: failed: ${(e as Error).message}`);
      log(`compare: FAILED ${(e as Error).stack}`);
    }
  }

  if (args.parts.has('fleet')) {
    log('\n# fleet');
    try {
      const { benchFleet, formatFleetBench } = await import('./fleet_bench.ts');
      const r = await benchFleet(log);
      process.stdout.write(formatFleetBench(r));
      results.fleet = r;
    } catch (e) {
      notes.push(`fleet: failed: ${(e as Error).message}`);
      log(`fleet: FAILED ${(e as Error).stack}`);
    }
  }

  if (args.parts.has('cli')) {
    log('\n# cli start (against node -e 0, same run)');
    try {
      const { benchCliStart } = await import('./cli_start_bench.ts');
      results.cli = benchCliStart({ runs: args.quick ? 3 : 7, log });
    } catch (e) {
      notes.push(`cli: failed: ${(e as Error).message}`);
      log(`cli: FAILED ${(e as Error).stack}`);
    }
  }

  results.finishedAt = new Date().toISOString();
  (results.machine as Record<string, unknown>).loadAtEnd = os.loadavg();
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const out = path.join(OUT_DIR, args.quick ? 'results.quick.json' : 'results.json');
  fs.writeFileSync(
    out,
    JSON.stringify(results, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2),
  );
  if (notes.length) log(`\nnotes:\n${notes.map((n) => `  - ${n}`).join('\n')}`);
  log(`\nuptime: ${uptime()}`);
  log(
    `\nload ${load()}; results in ${path.relative(ROOT, out)} (${((Date.now() - started.getTime()) / 1000).toFixed(0)} s)`,
  );
}

await main();
