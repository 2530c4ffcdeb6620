/**
 * The bench corpus: every real recording in fixtures/corpus/ (one per event
 * mix: reclaim, sched_wq, kmem, many_systems; fixtures/README.md "Bench
 * corpus"), each in the four forms users drop in, small (the recording,
 * 0.35-1M events) and large (>= 10M events, the recording replicated):
 *
 *   MIX.v7.dat           the committed recording itself (trace.dat v7, zstd)
 *   MIX.v6.dat           `trace-cmd convert --file-version 6 --compression none`
 *   MIX.report.txt       `trace-cmd report`
 *   MIX.tracefs.txt      the kernel's tracefs text, from `report -N` / `-N -l`
 *                        (make_large_traces.ts tracefsBase)
 *   MIX.xN.v6.dat        the v6 file's per-CPU pages written N times, each copy's
 *                        timestamps moved past the previous (writeLargeV6)
 *   MIX.xN.v7.dat        that file converted to v7 zstd by trace-cmd
 *   MIX.xN.report.txt    `trace-cmd report` of the large v6
 *   MIX.xN.tracefs.txt   the small tracefs text's lines N times, same shift
 *
 * All but the committed recording are generated into bench/out/corpus/
 * (gitignored), reused while bench/out/corpus/manifest.json says they were
 * made from the same recording. Every file's event count is checked against
 * `trace-cmd report`: the recording's report must count MIX.counts.json's
 * events (awk over trace-cmd report, fixtures/recording/common.sh); the v6
 * conversion must report byte-identically; each large file's report must
 * count N times as many events, begin with the recording's first event and
 * end with its last moved by (N-1) shifts (checkReport).
 *
 * `npx tsx bench/corpus.ts [--quick]` makes them on their own (--quick: the
 * small files only).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import {
  checkReport,
  fixtureFacts,
  headLines,
  lineTsNs,
  mb,
  OUT_DIR,
  ROOT,
  runTraceCmd,
  tailLines,
  traceCmdAvailable,
  tracefsBase,
  writeLargeV6,
  writeTracefs,
} from './make_large_traces.ts';

export const CORPUS_SRC = path.join(ROOT, 'fixtures', 'corpus');
export const CORPUS_OUT = path.join(OUT_DIR, 'corpus');
const MANIFEST = path.join(CORPUS_OUT, 'manifest.json');
/** The large files hold at least this many events. */
export const LARGE_EVENTS = 10_000_000;

export type CorpusFormat = 'v7' | 'v6' | 'report' | 'tracefs';
export const CORPUS_FORMATS: CorpusFormat[] = ['v7', 'v6', 'report', 'tracefs'];

export interface CorpusFile {
  mix: string;
  size: 'small' | 'large';
  format: CorpusFormat;
  file: string;
  bytes: number;
  events: number;
  /** The trace.dat v7 holding the same events: what `trace-cmd report` is timed on for this file's ratio. */
  traceDat: string;
}

export interface Corpus {
  files: CorpusFile[];
  notes: string[];
}

/** The mixes: every fixtures/corpus/MIX.v7.dat with its MIX.counts.json. */
export function corpusMixes(): string[] {
  if (!fs.existsSync(CORPUS_SRC)) return [];
  return fs
    .readdirSync(CORPUS_SRC)
    .filter(
      (n) => n.endsWith('.v7.dat') && fs.existsSync(path.join(CORPUS_SRC, n.replace(/\.v7\.dat$/, '.counts.json'))),
    )
    .map((n) => n.replace(/\.v7\.dat$/, ''))
    .sort();
}

type Manifest = Record<string, { size: number; key: string; events: number }>;

function readManifest(): Manifest {
  try {
    return JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as Manifest;
  } catch {
    return {};
  }
}

/** Reuses `file` when made with `key`, else makes it through `tmp` and renames (a killed run leaves no file that looks complete). */
async function produce(
  file: string,
  key: string,
  log: (s: string) => void,
  make: (tmp: string) => Promise<number>,
): Promise<number> {
  const m = readManifest();
  const e = m[path.basename(file)];
  if (e && e.key === key && fs.existsSync(file) && fs.statSync(file).size === e.size) return e.events;
  const tmp = `${file}.part`;
  await fsp.rm(file, { force: true });
  const t0 = performance.now();
  let events: number;
  try {
    events = await make(tmp);
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
  await fsp.rename(tmp, file);
  const m2 = readManifest();
  m2[path.basename(file)] = { size: fs.statSync(file).size, key, events };
  fs.writeFileSync(MANIFEST, JSON.stringify(m2, null, 2));
  log(
    `  made  ${path.relative(ROOT, file)} (${mb(fs.statSync(file).size)}, ${events.toLocaleString('en-US')} events) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  return events;
}

/** sha256 of a file, streamed. */
async function fileSha(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

/**
 * Event lines of a `trace-cmd report` text: lines with a `[CPU]` column
 * followed by a `sec.usec:` timestamp, as counts_from_report's awk reads them.
 */
export async function countReportEvents(file: string): Promise<number> {
  let n = 0;
  let tail = '';
  const re = /\[\d+\]\s+\d+\.\d+:/;
  for await (const chunk of fs.createReadStream(file, { encoding: 'latin1', highWaterMark: 1 << 22 })) {
    const lines = (tail + (chunk as string)).split('\n');
    tail = lines.pop()!;
    for (const l of lines) if (re.test(l)) n++;
  }
  if (re.test(tail)) n++;
  return n;
}

export async function makeCorpus(opts: { quick?: boolean; log?: (s: string) => void } = {}): Promise<Corpus> {
  const log = opts.log ?? ((s: string) => process.stderr.write(`${s}\n`));
  const notes: string[] = [];
  const files: CorpusFile[] = [];
  const mixes = corpusMixes();
  if (mixes.length === 0) throw new Error(`no recordings in ${path.relative(ROOT, CORPUS_SRC)}`);
  if (!traceCmdAvailable()) throw new Error('trace-cmd is not installed (the corpus is made and checked with it)');
  await fsp.mkdir(CORPUS_OUT, { recursive: true });
  for (const mix of mixes) {
    const src = path.join(CORPUS_SRC, `${mix}.v7.dat`);
    const counts = JSON.parse(fs.readFileSync(path.join(CORPUS_SRC, `${mix}.counts.json`), 'utf8')) as {
      events_total: number;
      cpus: number;
    };
    const st = fs.statSync(src);
    const srcKey = `${mix}:${st.size}:${await fileSha(src)}`;
    log(
      `${mix}: ${path.relative(ROOT, src)} (${mb(st.size)}, ${counts.events_total.toLocaleString('en-US')} events by trace-cmd report)`,
    );
    const add = (size: CorpusFile['size'], format: CorpusFormat, file: string, events: number, traceDat: string) =>
      files.push({ mix, size, format, file, bytes: fs.statSync(file).size, events, traceDat });

    // small: the recording, its report, v6 and tracefs text
    const report = path.join(CORPUS_OUT, `${mix}.report.txt`);
    const reportEvents = await produce(report, `report:${srcKey}`, log, async (tmp) => {
      const err = await runTraceCmd(['report', '-i', src], tmp);
      if (err.trim()) throw new Error(`trace-cmd report ${mix}: ${err.slice(0, 300)}`);
      return countReportEvents(tmp);
    });
    if (reportEvents !== counts.events_total)
      throw new Error(
        `${mix}: trace-cmd report prints ${reportEvents} events, ${mix}.counts.json says ${counts.events_total}`,
      );
    const v6 = path.join(CORPUS_OUT, `${mix}.v6.dat`);
    await produce(v6, `v6:${srcKey}`, log, async (tmp) => {
      await runTraceCmd(['convert', '--file-version', '6', '--compression', 'none', '-i', src, '-o', tmp], '/dev/null');
      const check = `${tmp}.report`;
      try {
        await runTraceCmd(['report', '-i', tmp], check);
        if ((await fileSha(check)) !== (await fileSha(report)))
          throw new Error(`${mix}: trace-cmd report of the v6 conversion differs from the recording's`);
      } finally {
        await fsp.rm(check, { force: true });
      }
      return reportEvents;
    });
    const tracefs = path.join(CORPUS_OUT, `${mix}.tracefs.txt`);
    const facts = await fixtureFacts(v6);
    if (facts.events !== reportEvents)
      throw new Error(`${mix}: the v6 file decodes to ${facts.events} events, trace-cmd report prints ${reportEvents}`);
    let base: Awaited<ReturnType<typeof tracefsBase>> | null = null;
    const tracefsBaseOnce = async () => {
      base ??= await tracefsBase(v6);
      if (base.us.length !== reportEvents)
        throw new Error(`${mix}: tracefs text has ${base.us.length} events, trace-cmd report ${reportEvents}`);
      return base;
    };
    await produce(tracefs, `tracefs:${srcKey}`, log, async (tmp) => {
      await writeTracefs(await tracefsBaseOnce(), 1, facts.shiftNs, counts.cpus, tmp);
      return reportEvents;
    });
    add('small', 'v7', src, reportEvents, src);
    add('small', 'v6', v6, reportEvents, src);
    add('small', 'report', report, reportEvents, src);
    add('small', 'tracefs', tracefs, reportEvents, src);
    if (opts.quick) continue;

    // large: the v6 replicated, then converted / reported
    const copies = Math.ceil(LARGE_EVENTS / reportEvents);
    const events = copies * reportEvents;
    const fixtureReport = {
      first: headLines(report, 5).find((l) => lineTsNs(l) !== null) ?? '',
      last: tailLines(report, 1)[0] ?? '',
    };
    const largeKey = `${srcKey}:x${copies}:${facts.shiftNs}`;
    const lv6 = path.join(CORPUS_OUT, `${mix}.x${copies}.v6.dat`);
    await produce(lv6, `v6:${largeKey}`, log, async (tmp) => {
      await writeLargeV6(v6, facts, copies, tmp);
      return events;
    });
    const lreport = path.join(CORPUS_OUT, `${mix}.x${copies}.report.txt`);
    await produce(lreport, `report:${largeKey}`, log, async (tmp) => {
      const err = await runTraceCmd(['report', '-i', lv6], tmp);
      checkReport(path.basename(lv6), tmp, err, fixtureReport, copies, facts.shiftNs, log);
      const n = await countReportEvents(tmp);
      if (n !== events)
        throw new Error(
          `${path.basename(lv6)}: trace-cmd report prints ${n} events, expected ${copies} x ${reportEvents}`,
        );
      return n;
    });
    const lv7 = path.join(CORPUS_OUT, `${mix}.x${copies}.v7.dat`);
    await produce(lv7, `v7:${largeKey}`, log, async (tmp) => {
      await runTraceCmd(['convert', '--file-version', '7', '--compression', 'zstd', '-i', lv6, '-o', tmp], '/dev/null');
      const check = `${tmp}.report`;
      try {
        const err = await runTraceCmd(['report', '-i', tmp], check);
        checkReport(path.basename(lv7), check, err, fixtureReport, copies, facts.shiftNs, log);
        if ((await fileSha(check)) !== (await fileSha(lreport)))
          throw new Error(`${path.basename(lv7)}: trace-cmd report differs from the large v6's`);
      } finally {
        await fsp.rm(check, { force: true });
      }
      return events;
    });
    const ltracefs = path.join(CORPUS_OUT, `${mix}.x${copies}.tracefs.txt`);
    await produce(ltracefs, `tracefs:${largeKey}`, log, async (tmp) => {
      await writeTracefs(await tracefsBaseOnce(), copies, facts.shiftNs, counts.cpus, tmp);
      return events;
    });
    base = null;
    add('large', 'v7', lv7, events, lv7);
    add('large', 'v6', lv6, events, lv7);
    add('large', 'report', lreport, events, lv7);
    add('large', 'tracefs', ltracefs, events, lv7);
  }
  return { files, notes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const c = await makeCorpus({ quick: process.argv.includes('--quick') });
  for (const f of c.files)
    process.stdout.write(
      `${f.mix.padEnd(13)} ${f.size.padEnd(5)} ${f.format.padEnd(7)} ${mb(f.bytes).padStart(9)} ${f.events.toLocaleString('en-US').padStart(11)}  ${path.relative(ROOT, f.file)}\n`,
    );
}
