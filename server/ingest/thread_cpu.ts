import fs from 'node:fs';

/**
 * This thread's CPU time in ns (Linux: /proc/thread-self/schedstat, which
 * lags the running thread by up to a scheduler tick), or null where there is
 * none. process.cpuUsage() counts every thread of the process, so a worker's
 * own share of an ingest (the critical thread of a text ingest is the field
 * worker) is only seen here.
 */
export function threadCpuNs(): number | null {
  try {
    return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}
