/**
 * A trace's identity: the sha256 of the file's bytes as stored (compressed
 * files hash compressed). It names the trace's directory and its share links.
 *
 * Two ways to compute it:
 * - hashFile(): on the calling thread, before anything else (the ingest needs
 *   the id first when an earlier ingest of the same content may be reused);
 * - hashFileOnThread(): on a thread of its own while the caller decodes. At
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
