/**
 * One entry point for any trace file: peels compression (by content),
 * recognises trace.dat or ftrace text, and runs the matching decoder into a
 * sink. Used on the ingest worker thread and in-process alike.
 */
import path from 'node:path';
import { DecodeError, type EventSink, type ProgressFn } from './decoded_event.ts';
import { decompressToFile, openInput } from './decompress.ts';
import { decodeFtraceText } from './ftrace_text/decode_ftrace_text.ts';
import { decodeTraceDat } from './trace_dat/decode_trace_dat.ts';

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
}

export async function decodeFile(file: string, sink: EventSink, opts: DecodeFileOptions): Promise<DecodeFileResult> {
  const { label } = opts;
  const progress: ProgressFn = (done, total) => opts.onProgress?.('decoding', done, total);
  const opened = await openInput(file, label);
  if (opened.format === 'unknown') {
    throw new DecodeError(label, 0, 'offset', 'not a trace: neither trace.dat nor ftrace text (binary content)');
  }
  if (opened.format === 'text') {
    const r = await decodeFtraceText(opened.chunks, sink, {
      fileLabel: label,
      totalBytes: opened.compression.length ? null : opened.fileBytes,
      onProgress: progress,
    });
    return { compression: opened.compression, outOfOrderLines: r?.outOfOrderLines ?? 0 };
  }
  // trace.dat: the decoder reads at offsets, so it needs the plain file.
  await opened.chunks[Symbol.asyncIterator]().return?.(undefined);
  let datPath = file;
  if (opened.compression.length > 0) {
    opts.onProgress?.('decompressing', 0, null);
    datPath = path.join(opts.scratchDir, 'decompressed.dat');
    await decompressToFile(file, datPath, label);
  }
  await decodeTraceDat(datPath, sink, { fileLabel: label, onProgress: progress });
  return { compression: opened.compression, outOfOrderLines: 0 };
}
