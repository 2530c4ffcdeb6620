/**
 * A trace's identity: the sha256 of the file's bytes as stored (compressed
 * files hash compressed). It names the trace's directory and its share links.
 *
 * Two ways to compute it:
 * - hashFile(): on the calling thread, before anything else (the ingest needs
 *   the id first when an earlier ingest of the same content may be reused);
 * - hashFileInBackground(): while the caller decodes, on a thread of its own
 *   (hashFileOnThread; small files on the caller's thread). At
 *   1.5 GB/s (SHA-NI) hashing is cheap, but it was a serial phase before
 *   decoding could start: 0.6-1.1 s of a 20 s ingest of a 710 MB trace.dat,
 *   1.6-2.4 s of a 1.9 GB text ingest. Its thread runs while the store
 *   worker waits for chunks, so it costs the ingest almost nothing.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** sha256 (hex) of the file's bytes. */
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

/**
 * The thread's whole program: plain CommonJS, so it starts without the
 * TypeScript loader (an eval'd worker does not inherit it).
 */
const HASH_THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
try {
  const hash = createHash('sha256');
  const fd = fs.openSync(workerData.file, 'r');
  try {
    const buf = Buffer.allocUnsafe(4 << 20);
    let n;
    while ((n = fs.readSync(fd, buf, 0, buf.length, null)) > 0) hash.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  parentPort.postMessage({ sha256: hash.digest('hex') });
} catch (err) {
  parentPort.postMessage({ error: (err && err.message) || String(err) });
}
`;

export interface BackgroundHash {
  /** The sha256; rejects if the file cannot be read. */
  readonly sha256: Promise<string>;
  /** Seconds the hash took on its thread, once it is done. */
  seconds(): number | null;
  /** Stops the thread if it is still hashing (the ingest failed). */
  cancel(): void;
}

/**
 * Files below this size hash on the calling thread, between its decode's
 * reads, instead: a thread's start-up costs more than their hash. 1.3 MB
 * perfetto_reclaim.pftrace: 24-26 CPU ms on a thread against 2.6-6.1
 * inline (five alternating runs each, load 13); hashing runs at ~1 GB/s
 * here (52 MB: 52-58 CPU ms either way), so 4 MB keep the decoding thread
 * busy ~4 ms at most, and larger files keep the thread that overlaps them.
 */
export const HASH_THREAD_MIN_BYTES = 4 << 20;

/** The file's hash while the caller decodes: on a thread of its own, or for a small file on the caller's. */
export function hashFileInBackground(file: string, sizeBytes: number): BackgroundHash {
  if (sizeBytes >= HASH_THREAD_MIN_BYTES) return hashFileOnThread(file);
  const started = performance.now();
  let seconds: number | null = null;
  const sha256 = hashFile(file).then((h) => {
    seconds = (performance.now() - started) / 1000;
    return h;
  });
  // As on a thread: a failed hash must not surface as an unhandled rejection.
  sha256.catch(() => undefined);
  // Nothing to stop: a small file's read ends soon, and its result is ignored.
  return { sha256, seconds: () => seconds, cancel: () => undefined };
}

export function hashFileOnThread(file: string): BackgroundHash {
  const started = performance.now();
  let seconds: number | null = null;
  const worker = new Worker(HASH_THREAD_SOURCE, { eval: true, workerData: { file } });
  const sha256 = new Promise<string>((resolve, reject) => {
    worker.once('message', (m: { sha256?: string; error?: string }) => {
      seconds = (performance.now() - started) / 1000;
      if (m.sha256) resolve(m.sha256);
      else reject(new Error(`${file}: cannot hash: ${m.error}`));
    });
    worker.once('error', (err) => reject(err));
    worker.once('exit', (code) => reject(new Error(`${file}: hashing stopped (thread exit ${code})`)));
  });
  // A cancelled or failed hash must not surface as an unhandled rejection.
  sha256.catch(() => undefined);
  return {
    sha256,
    seconds: () => seconds,
    cancel: () => void worker.terminate(),
  };
}
