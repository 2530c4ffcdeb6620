/**
 * Ingest: one trace file in, one complete DuckDB trace model out.
 *
 *   file -> (content hash) -> sniff/decompress -> decoder -> ModelWriter
 *        -> derive (sched_slice, thread_state, slices...) -> trace_info
 *
 * A trace is built in a private temporary directory and renamed into
 * `<dataDir>/traces/<sha256>/` only when every table is written, so a crash,
 * a kill or a decode error never leaves a half-built trace that looks
 * complete. The same content ingested again reuses the earlier result.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DecodeError, type ProgressFn } from '../decode/decoded_event.ts';
import { decompressToFile, openInput } from '../decode/decompress.ts';
import { decodeFtraceText } from '../decode/ftrace_text/decode_ftrace_text.ts';
import { decodeTraceDat } from '../decode/trace_dat/decode_trace_dat.ts';
import { openDuckDb } from '../engine/engine.ts';
import { deriveModel } from '../model/derive_model.ts';
import { ModelWriter, type WriterSummary } from '../model/model_writer.ts';
import { dataDirPaths, resolveDataDir } from './data_dir.ts';

export type IngestPhase = 'hashing' | 'decompressing' | 'decoding' | 'deriving' | 'done';

export interface IngestProgress {
  phase: IngestPhase;
  /** Bytes of the phase's input done so far (decompressed bytes while decoding). */
  bytesDone: number;
  /** Total bytes for the phase, null when unknown (compressed text input). */
  bytesTotal: number | null;
  /** Events decoded so far. */
  events: number;
}

export interface IngestOptions {
  dataDir?: string;
  /** Rebuild even if this content was ingested before. */
  force?: boolean;
  /** Name shown to users; defaults to the file's base name. */
  name?: string;
  onProgress?: (p: IngestProgress) => void;
}

/** What `info.json` holds: the facts about an ingested trace. */
export interface TraceSummary {
  id: string;
  name: string;
  sourcePath: string;
  sizeBytes: number;
  compression: string[];
  format: string;
  formatVersion: string | null;
  cpus: number;
  eventsTotal: number;
  eventsByName: Record<string, number>;
  firstTsNs: string | null;
  lastTsNs: string | null;
  lostEvents: number;
  lostEventNotices: number;
  unparsedEvents: number;
  skippedInputs: number;
  firstSkipped: { where: number; unit: string; reason: string; excerpt: string }[];
  outOfOrderLines: number;
  meta: Record<string, string>;
  ingestedAt: string;
  seconds: { hash: number; decode: number; derive: number; total: number };
}

export interface IngestResult {
  id: string;
  dbPath: string;
  summary: TraceSummary;
  /** True when an earlier ingest of the same content was reused. */
  reused: boolean;
}

/** sha256 of the file's bytes (as stored: compressed files hash compressed). */
export async function hashFile(file: string, onBytes?: (n: number) => void): Promise<string> {
  const hash = createHash('sha256');
  let done = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 22 })) {
    hash.update(chunk as Buffer);
    done += (chunk as Buffer).length;
    onBytes?.(done);
  }
  return hash.digest('hex');
}

export async function ingestFile(file: string, opts: IngestOptions = {}): Promise<IngestResult> {
  const started = performance.now();
  const label = file;
  let stat;
  try {
    stat = await fs.stat(file);
  } catch (err) {
    throw new DecodeError(label, 0, 'offset', `cannot read: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  if (!stat.isFile()) throw new DecodeError(label, 0, 'offset', 'not a regular file');
  const report = opts.onProgress ?? (() => {});
  const dirs = dataDirPaths(resolveDataDir(opts.dataDir));

  report({ phase: 'hashing', bytesDone: 0, bytesTotal: stat.size, events: 0 });
  const id = await hashFile(file, (n) => report({ phase: 'hashing', bytesDone: n, bytesTotal: stat.size, events: 0 }));
  const hashSeconds = (performance.now() - started) / 1000;
  const finalDir = dirs.traceDir(id);

  if (!opts.force) {
    const existing = await readSummary(finalDir);
    if (existing) {
      report({ phase: 'done', bytesDone: stat.size, bytesTotal: stat.size, events: existing.eventsTotal });
      return { id, dbPath: path.join(finalDir, 'trace.duckdb'), summary: existing, reused: true };
    }
  }

  await fs.mkdir(dirs.tmp, { recursive: true });
  const workDir = await fs.mkdtemp(path.join(dirs.tmp, `${id.slice(0, 12)}-${process.pid}-`));
  try {
    const summary = await buildTrace(file, label, id, stat.size, workDir, opts, report);
    summary.seconds.hash = hashSeconds;
    summary.seconds.total = (performance.now() - started) / 1000;
    await fs.writeFile(path.join(workDir, 'info.json'), JSON.stringify(summary, null, 2));
    await fs.mkdir(path.dirname(finalDir), { recursive: true });
    // Replace atomically: a reader sees the old complete trace or the new one.
    const old = `${finalDir}.old-${process.pid}`;
    await fs.rm(old, { recursive: true, force: true });
    await fs.rename(finalDir, old).catch(() => undefined);
    await fs.rename(workDir, finalDir);
    await fs.rm(old, { recursive: true, force: true });
    report({ phase: 'done', bytesDone: stat.size, bytesTotal: stat.size, events: summary.eventsTotal });
    return { id, dbPath: path.join(finalDir, 'trace.duckdb'), summary, reused: false };
  } catch (err) {
    await fs.rm(workDir, { recursive: true, force: true });
    throw err;
  }
}

/** The summary of a completely ingested trace, or null if there is none. */
export async function readSummary(traceDir: string): Promise<TraceSummary | null> {
  try {
    const text = await fs.readFile(path.join(traceDir, 'info.json'), 'utf8');
    await fs.access(path.join(traceDir, 'trace.duckdb'));
    return JSON.parse(text) as TraceSummary;
  } catch {
    return null;
  }
}

async function buildTrace(
  file: string,
  label: string,
  id: string,
  sizeBytes: number,
  workDir: string,
  opts: IngestOptions,
  report: (p: IngestProgress) => void,
): Promise<TraceSummary> {
  const opened = await openInput(file, label);
  if (opened.format === 'unknown') {
    throw new DecodeError(label, 0, 'offset', 'not a trace: neither trace.dat nor ftrace text (binary content)');
  }
  const engine = await openDuckDb(path.join(workDir, 'trace.duckdb'));
  let writer: ModelWriter | null = null;
  let events = 0;
  try {
    writer = await ModelWriter.create(engine);
    const countingSink = countEvents(writer, () => events++);
    const decodeStarted = performance.now();
    let outOfOrderLines = 0;
    const progress: ProgressFn = (bytesDone, bytesTotal) =>
      report({ phase: 'decoding', bytesDone, bytesTotal, events });

    if (opened.format === 'trace_dat') {
      let datPath = file;
      if (opened.compression.length > 0) {
        // trace.dat needs random access: decompress to a file first.
        await drain(opened.chunks);
        report({ phase: 'decompressing', bytesDone: 0, bytesTotal: null, events: 0 });
        datPath = path.join(workDir, 'decompressed.dat');
        await decompressToFile(file, datPath, label);
      } else {
        await drain(opened.chunks);
      }
      await decodeTraceDat(datPath, countingSink, { fileLabel: label, onProgress: progress });
      if (datPath !== file) await fs.rm(datPath, { force: true });
    } else {
      const result = await decodeFtraceText(opened.chunks, countingSink, {
        fileLabel: label,
        totalBytes: opened.compression.length ? null : opened.fileBytes,
        onProgress: progress,
      });
      outOfOrderLines = result?.outOfOrderLines ?? 0;
    }
    const writerSummary = await writer.finish();
    const decodeSeconds = (performance.now() - decodeStarted) / 1000;

    report({ phase: 'deriving', bytesDone: 0, bytesTotal: null, events });
    const deriveStarted = performance.now();
    await deriveModel(engine);
    const deriveSeconds = (performance.now() - deriveStarted) / 1000;

    const summary = toSummary(writerSummary, {
      id,
      name: opts.name ?? path.basename(file),
      sourcePath: path.resolve(file),
      sizeBytes,
      compression: opened.compression,
      outOfOrderLines,
      decodeSeconds,
      deriveSeconds,
    });
    await writeTraceInfo(engine, summary);
    await engine.exec('CHECKPOINT');
    return summary;
  } finally {
    engine.close();
  }
}

function toSummary(
  w: WriterSummary,
  x: {
    id: string;
    name: string;
    sourcePath: string;
    sizeBytes: number;
    compression: string[];
    outOfOrderLines: number;
    decodeSeconds: number;
    deriveSeconds: number;
  },
): TraceSummary {
  return {
    id: x.id,
    name: x.name,
    sourcePath: x.sourcePath,
    sizeBytes: x.sizeBytes,
    compression: x.compression,
    format: w.format,
    formatVersion: w.formatVersion,
    cpus: w.cpus,
    eventsTotal: w.eventsTotal,
    eventsByName: w.eventsByName,
    firstTsNs: w.firstTsNs?.toString() ?? null,
    lastTsNs: w.lastTsNs?.toString() ?? null,
    lostEvents: w.lostEvents,
    lostEventNotices: w.lostEventNotices,
    unparsedEvents: w.unparsedEvents,
    skippedInputs: w.skippedInputs,
    firstSkipped: w.firstSkipped,
    outOfOrderLines: x.outOfOrderLines,
    meta: w.meta,
    ingestedAt: new Date().toISOString(),
    seconds: { hash: 0, decode: x.decodeSeconds, derive: x.deriveSeconds, total: 0 },
  };
}

async function writeTraceInfo(engine: Awaited<ReturnType<typeof openDuckDb>>, s: TraceSummary): Promise<void> {
  const facts: Record<string, string> = {
    ...Object.fromEntries(Object.entries(s.meta).map(([k, v]) => [`meta.${k}`, v])),
    id: s.id,
    content_sha256: s.id,
    name: s.name,
    source_file: s.sourcePath,
    source_bytes: String(s.sizeBytes),
    compression: s.compression.join(',') || 'none',
    format: s.format,
    format_version: s.formatVersion ?? '',
    cpus: String(s.cpus),
    first_ts: s.firstTsNs ?? '',
    last_ts: s.lastTsNs ?? '',
    events_total: String(s.eventsTotal),
    lost_events: String(s.lostEvents),
    unparsed_events: String(s.unparsedEvents),
    skipped_inputs: String(s.skippedInputs),
    out_of_order_lines: String(s.outOfOrderLines),
    ingest_finished_at: s.ingestedAt,
    complete: 'true',
  };
  const entries = Object.entries(facts);
  const placeholders = entries.map((_, i) => `($${i * 2 + 1}, $${i * 2 + 2})`).join(', ');
  await engine.query(`INSERT INTO trace_info VALUES ${placeholders}`, entries.flat());
}

/** Wraps a sink to count events for progress, without a second pass. */
function countEvents<T extends import('../decode/decoded_event.ts').EventSink>(sink: T, onEvent: () => void): T {
  return {
    header: (h) => sink.header(h),
    event: (e) => {
      onEvent();
      sink.event(e);
    },
    lostEvents: (c, n, w) => sink.lostEvents(c, n, w),
    skipped: (p) => sink.skipped(p),
  } as T;
}

/** Ends a stream we only peeked at (closes the underlying file). */
async function drain(chunks: AsyncIterable<Uint8Array>): Promise<void> {
  const it = chunks[Symbol.asyncIterator]();
  await it.return?.(undefined);
}
