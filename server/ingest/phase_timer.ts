import fs from 'node:fs';
import { threadCpuNs } from './thread_cpu.ts';
import { takeBlockedMs } from './wait_for_counter.ts';

/**
 * The process's peak resident MB so far (VmHWM), or '?' where /proc is
 * missing: printed at each mark, so the phase that raised the peak is the
 * first whose figure is the final one (a phase's end RSS misses a peak
 * inside it).
 */
function peakResidentMb(): string {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    return m ? String(Math.round(Number(m[1]) / 1024)) : '?';
  } catch {
    return '?';
  }
}

/**
 * Per-phase wall times of one ingest, printed to stderr when
 * $STALLSCOPE_TIMING is set (`STALLSCOPE_TIMING=1 stallscope ingest F`):
 * where a small file's fixed costs go, and what each bench step changed.
 * A second line gives the calling (main) thread's own CPU per phase: the
 * process CPU mixes it with the workers' (field worker and store worker
 * print their own), and on 2 CPUs which thread a decode waits for is only
 * seen from the three.
 */
export class PhaseTimer {
  private readonly enabled = !!process.env.STALLSCOPE_TIMING;
  private last = performance.now();
  private lastCpu = process.cpuUsage();
  private lastThreadCpu = this.enabled ? threadCpuNs() : null;
  /** [name, this thread's CPU ms] (none where the platform has no per-thread CPU) */
  private readonly threadPhases: [string, number][] = [];
  private readonly started = this.last;
  /** [name, wall ms, CPU ms of the whole process (every thread)] */
  private readonly phases: [string, number, number][] = [];

  constructor() {
    // This ingest's waits only: takeBlockedMs resets this thread's count.
    if (this.enabled) takeBlockedMs();
  }

  /** Ends the phase running since the previous mark (or the start), named `name`. */
  mark(name: string): void {
    if (!this.enabled) return;
    const now = performance.now();
    const cpu = process.cpuUsage(this.lastCpu);
    const mu = process.memoryUsage();
    this.phases.push([
      `${name}${this.pendingNote}@${Math.round(mu.rss / 1048576)}MB(hwm ${peakResidentMb()} heap ${Math.round(mu.heapTotal / 1048576)} ab ${Math.round(mu.arrayBuffers / 1048576)})`,
      now - this.last,
      (cpu.user + cpu.system) / 1000,
    ]);
    const threadCpu = threadCpuNs();
    if (threadCpu !== null && this.lastThreadCpu !== null)
      this.threadPhases.push([name, (threadCpu - this.lastThreadCpu) / 1e6]);
    this.lastThreadCpu = threadCpu;
    this.pendingNote = '';
    this.last = now;
    this.lastCpu = process.cpuUsage();
  }

  /** Adds a note (a value chosen during the ingest) to the next phase's name. */
  note(text: string): void {
    if (this.enabled) this.pendingNote = `[${text}]`;
  }

  private pendingNote = '';

  /** Prints the phases (when enabled). */
  report(label: string): void {
    if (!this.enabled) return;
    const total = performance.now() - this.started;
    process.stderr.write(
      `[timing] ${label}: ${this.phases.map(([n, ms, cpu]) => `${n} ${ms.toFixed(0)}/${cpu.toFixed(0)}`).join(', ')}; total ${total.toFixed(0)} ms (wall/CPU ms)\n`,
    );
    const waits = [...takeBlockedMs()].map(([who, ms]) => `; blocked on ${who} ${ms.toFixed(0)} ms`).join('');
    if (this.threadPhases.length > 0)
      process.stderr.write(
        `[timing] main thread: ${this.threadPhases.map(([n, cpu]) => `${n} ${cpu.toFixed(0)}`).join(', ')} CPU ms${waits}\n`,
      );
  }
}
