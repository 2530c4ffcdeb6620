/**
 * The address a `stallscope serve` child prints once it listens, for the
 * benches that start their own server (run.ts's query part, corpus_bench.ts's
 * time to first view).
 */
import type { ChildProcess } from 'node:child_process';

/** Resolves to the printed URL without a trailing slash; rejects on timeout or exit (with the end of its stderr). */
export function serverUrl(child: ChildProcess, stderr: () => string, timeoutMs: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`server did not start within ${timeoutMs / 1000} s: ${stderr().slice(-500)}`)),
      timeoutMs,
    );
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /running at (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!.replace(/\/$/, ''));
      }
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited ${code}: ${stderr().slice(-500)}`));
    });
  });
}
