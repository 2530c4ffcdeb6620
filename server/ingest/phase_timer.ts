/**
 * Per-phase wall times of one ingest, printed to stderr when
 * $STALLSCOPE_TIMING is set (`STALLSCOPE_TIMING=1 stallscope ingest F`):
 * where a small file's fixed costs go, and what each bench step changed.
 */
export class PhaseTimer {
  private readonly enabled = !!process.env.STALLSCOPE_TIMING;
  private last = performance.now();
  private readonly started = this.last;
  private readonly phases: [string, number][] = [];

  /** Ends the phase running since the previous mark (or the start), named `name`. */
  mark(name: string): void {
    if (!this.enabled) return;
    const now = performance.now();
    this.phases.push([name, now - this.last]);
    this.last = now;
  }

  /** Prints the phases (when enabled). */
  report(label: string): void {
    if (!this.enabled) return;
    const total = performance.now() - this.started;
    process.stderr.write(`[timing] ${label}: ${this.phases.map(([n, ms]) => `${n} ${ms.toFixed(0)}`).join(', ')}; total ${total.toFixed(0)} ms\n`);
  }
}
