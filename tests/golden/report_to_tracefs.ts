// The kernel's tracefs text of a trace.dat, made from trace-cmd's own
// reports of it, streamed (a million events would not fit comfortably in a
// test worker's memory as strings): `trace-cmd report -N` prints each event
// with the kernel's print format (no plugins), `-N -l` adds the irq-flags /
// preempt column; they are joined line by line and laid out as the kernel
// lays out its `trace` file (`%16s-%-7d [%03d] %s %5lu.%06lu: name: args`).
// bench/make_large_traces.ts tracefsBase does the same in memory.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';

const LINE_N = /^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{6}):\s+([\w.-]+):\s*(.*)$/;
const LINE_L = /^.*-(\d+)\s+(\d+)(\S{5})\s+(\d+)\.(\d{6}):\s+([\w.-]+):/;

const HEADER = [
  '# tracer: nop',
  '#',
  '#                                _-----=> irqs-off/BH-disabled',
  '#                               / _----=> need-resched',
  '#                              | / _---=> hardirq/softirq',
  '#                              || / _--=> preempt-depth',
  '#                              ||| / _-=> migrate-disable',
  '#                              |||| /     delay',
  '#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION',
  '#              | |         |   |||||     |         |',
  '',
].join('\n');

/** Writes `out` (tracefs text of `dat`) through two temporary reports beside it; returns the events written. */
export async function tracefsTextOf(dat: string, out: string): Promise<number> {
  const n = `${out}.report-N`;
  const l = `${out}.report-Nl`;
  try {
    execFileSync(
      'sh',
      ['-c', `trace-cmd report -N -i "$1" > "$2" && trace-cmd report -N -l -i "$1" > "$3"`, 'sh', dat, n, l],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const linesN = readline
      .createInterface({ input: fs.createReadStream(n), crlfDelay: Infinity })
      [Symbol.asyncIterator]();
    const linesL = readline
      .createInterface({ input: fs.createReadStream(l), crlfDelay: Infinity })
      [Symbol.asyncIterator]();
    const ws = fs.createWriteStream(out);
    ws.write(HEADER);
    let parts: string[] = [];
    let events = 0;
    for (let r = await linesN.next(); !r.done; r = await linesN.next()) {
      const m = LINE_N.exec(r.value);
      if (!m) continue;
      let ml: RegExpExecArray | null = null;
      for (let q = await linesL.next(); !q.done; q = await linesL.next()) if ((ml = LINE_L.exec(q.value))) break;
      if (!ml || ml[1] !== m[2] || ml[4] !== m[4] || ml[5] !== m[5] || ml[6] !== m[6])
        throw new Error(`report -N and -N -l disagree near: ${r.value}`);
      const [, comm, pid, cpu, sec, usec, name, args] = m;
      parts.push(
        `${comm!.padStart(16)}-${pid!.padEnd(7)} [${cpu!.padStart(3, '0')}] ${ml[3]} ${sec!.padStart(5)}.${usec}: ${name}: ${args}\n`,
      );
      events++;
      if (parts.length === 4096) {
        if (!ws.write(parts.join(''))) await new Promise<void>((res) => ws.once('drain', () => res()));
        parts = [];
      }
    }
    ws.write(parts.join(''));
    await new Promise<void>((res, rej) => ws.end((err?: Error | null) => (err ? rej(err) : res())));
    return events;
  } finally {
    fs.rmSync(n, { force: true });
    fs.rmSync(l, { force: true });
  }
}
