/**
 * One entry point for any trace file: peels compression (by content),
 * recognises trace.dat, a Perfetto trace or ftrace text, and runs the
 * matching decoder into a sink. Used on the ingest worker thread and
 * in-process alike.
 */
import path from 'node:path';
import { DecodeError, type EventSink, type ProgressFn, type SkippedInput } from './decoded_event.ts';
import { CompressedPrefix } from './compressed_prefix.ts';
import { decompressToFile, openInput } from './decompress.ts';
import { decodeFtraceText } from './ftrace_text/decode_ftrace_text.ts';
import { decodeTraceDat } from './trace_dat/decode_trace_dat.ts';
import type { DecodePerfettoOptions } from './perfetto/decode_perfetto.ts';

export interface DecodeFileOptions {
  /** Names the file in errors. */
  label: string;
  /** Where a compressed trace.dat is decompressed to (it needs random access). */
  scratchDir: string;
  onProgress?: (phase: 'decompressing' | 'decoding', bytesDone: number, bytesTotal: number | null) => void;
}

export interface DecodeFileResult {
  /** Compression layers removed, outermost first. */
  compression: string[];
  /** Text lines whose timestamp went back on their CPU (kept, in file order). */
  outOfOrderLines: number;
  /** A compressed file whose decompression failed part-way: where and why (also one of the skipped inputs). */
  cutOff: SkippedInput | null;
}

export async function decodeFile(file: string, sink: EventSink, opts: DecodeFileOptions): Promise<DecodeFileResult> {
  const { label } = opts;
  const progress: ProgressFn = (done, total) => opts.onProgress?.('decoding', done, total);
  // The text decoder is done with each chunk before it reads the next (readReusedChunks).
  const opened = await openInput(file, label, { reuseBuffers: true });
  if (opened.format === 'unknown') {
    // Closed now, not when the collector finds the handle (a server rejects many such uploads).
    await opened.chunks[Symbol.asyncIterator]().return?.(undefined);
    throw new DecodeError(
      label,
      0,
      'offset',
      'not a trace: neither trace.dat, a Perfetto trace nor ftrace text (binary content)',
    );
  }
  if (opened.format === 'text') {
    const prefix = opened.compression.length > 0 ? new CompressedPrefix(opened.chunks) : null;
    const { result, cutOff } = await upToCut(prefix, sink, () =>
      decodeFtraceText(prefix ? prefix.wholeLines() : opened.chunks, sink, {
        fileLabel: label,
        totalBytes: opened.compression.length ? null : opened.fileBytes,
        onProgress: progress,
      }),
    );
    return { compression: opened.compression, outOfOrderLines: result?.outOfOrderLines ?? 0, cutOff };
  }
  // trace.dat and Perfetto traces: the decoders read at offsets, so they need the plain file.
  await opened.chunks[Symbol.asyncIterator]().return?.(undefined);
  let plainPath = file;
  let prefix: CompressedPrefix | null = null;
  const perfetto = opened.format === 'perfetto';
  if (opened.compression.length > 0) {
    opts.onProgress?.('decompressing', 0, null);
    plainPath = path.join(opts.scratchDir, perfetto ? 'decompressed.pftrace' : 'decompressed.dat');
    ({ prefix } = await decompressToFile(file, plainPath, label));
  }
  const decodeOpts = { fileLabel: label, onProgress: progress, decompressed: prefix !== null };
  const { cutOff } = await upToCut(prefix, sink, () =>
    perfetto ? decodePerfettoFile(plainPath, sink, decodeOpts) : decodeTraceDat(plainPath, sink, decodeOpts),
  );
  return { compression: opened.compression, outOfOrderLines: 0, cutOff };
}

/**
 * The Perfetto decoder, loaded when a Perfetto trace arrives: its module
 * loads protobufjs and parses the .proto files (20-30 ms of CPU on this
 * machine), which every trace.dat and text ingest paid for nothing.
 */
async function decodePerfettoFile(file: string, sink: EventSink, opts: DecodePerfettoOptions): Promise<void> {
  const { decodePerfetto } = await import('./perfetto/decode_perfetto.ts');
  await decodePerfetto(file, sink, opts);
}

/**
 * Runs a decoder over what a compressed file held before its decompression
 * failed (compressed_prefix.ts; `prefix` null: not compressed), then reports
 * the cut as a skipped input. If the decoder fails, nothing before the cut
 * was readable (e.g. no event line): the cut is the reason given.
 */
async function upToCut<T>(
  prefix: CompressedPrefix | null,
  sink: EventSink,
  decode: () => Promise<T>,
): Promise<{ result: T; cutOff: SkippedInput | null }> {
  let result: T;
  try {
    result = await decode();
  } catch (e) {
    throw prefix?.failure ?? e;
  }
  const cutOff = prefix?.failure ? prefix.problem() : null;
  if (cutOff) sink.skipped(cutOff);
  return { result, cutOff };
}
