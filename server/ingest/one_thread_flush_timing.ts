/**
 * Under $STALLSCOPE_TIMING, the DuckDB appender flushes of a one-thread load
 * (ingest_file.ts: small files and Perfetto files, whose appends run on the
 * decoding thread itself), printed as `[timing] one-thread flushes: ...`
 * (this thread's CPU ms): while decoding, and when the store closes its
 * appenders. The store worker prints its own (store_worker.ts). A CPU
 * profile's self time for flushSync counts the thread's waits for a core as
 * well, so on a loaded machine it overstates them several times over.
 */
import { flushTiming } from '../model/column_appender.ts';
import { threadCpuNs } from './thread_cpu.ts';

export function oneThreadFlushTiming(): { finishing(): void; report(): void } | null {
  if (!process.env.STALLSCOPE_TIMING || threadCpuNs() === null) return null;
  flushTiming.clock = () => threadCpuNs()!;
  flushTiming.cpuNs = 0;
  flushTiming.flushes = 0;
  let decodeNs = 0;
  let decodeFlushes = 0;
  const ms = (ns: number) => (ns / 1e6).toFixed(0);
  return {
    finishing() {
      decodeNs = flushTiming.cpuNs;
      decodeFlushes = flushTiming.flushes;
    },
    report() {
      flushTiming.clock = null;
      process.stderr.write(
        `[timing] one-thread flushes: while decoding ${ms(decodeNs)} in ${decodeFlushes}, ` +
          `closing ${ms(flushTiming.cpuNs - decodeNs)} in ${flushTiming.flushes - decodeFlushes} CPU ms\n`,
      );
    },
  };
}
