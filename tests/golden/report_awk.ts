/**
 * awk over `trace-cmd report` text, for tests whose expected values must
 * come from the input and not from stallscope: a line parser (PARSE) and
 * helpers to run awk and to get a trace.dat's report from trace-cmd itself.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Seconds as printed ('5021.118402' or '805.303553123') -> exact ns. */
export function ns(text: string): bigint {
  const [s, frac = ''] = text.trim().split('.');
  return BigInt(s!) * 1_000_000_000n + BigInt((frac + '000000000').slice(0, 9));
}

/** Runs an awk program over a file; returns its output lines. */
export function awk(program: string, file: string): string[] {
  return execFileSync('awk', [program, file], { encoding: 'utf8', maxBuffer: 256 << 20 })
    .split('\n')
    .filter((l) => l !== '');
}

/** The non-empty output lines of a committed awk script (`awk -f script file`). */
export function awkScript(script: string, file: string): string[] {
  return execFileSync('awk', ['-f', script, file], { encoding: 'utf8', maxBuffer: 256 << 20 })
    .split('\n')
    .filter((l) => l !== '');
}

/**
 * awk prelude for `trace-cmd report` lines: parse() sets `ts` (timestamp
 * text), `t` (its value in ns, exact for 6 decimals), `ev` (event name),
 * `pid`, `task` and `cpu`, or ev = "" for lines that are not events.
 * A trace recorded with a counter clock (`boot`, `mono`, `x86-tsc`, ...) is
 * printed in raw nanoseconds glued to the CPU column,
 * `dd-18070 [001]52211881393998: ...`: then `ts` is that count and `t` the same.
 * field(name) reads `name=value`; nextpid() is sched_switch's next pid.
 */
export const PARSE = `
function parse(   i, m, c) {
  ev = ""; ts = ""; pid = ""; task = ""; cpu = "";
  for (i = 1; i <= NF; i++) {
    if ($i ~ /^[0-9]+\\.[0-9]+:$/) { ts = substr($i, 1, length($i) - 1); ev = $(i + 1); sub(/:$/, "", ev); t = usns(ts); break }
    if ($i ~ /^\\[[0-9]+\\][0-9]+:$/) { ts = $i; sub(/^\\[[0-9]+\\]/, "", ts); sub(/:$/, "", ts); ev = $(i + 1); sub(/:$/, "", ev); t = ts + 0; break }
  }
  if (ts == "") return;
  if (match($0, /-[0-9]+ +\\[[0-9]+\\]/)) { m = substr($0, RSTART + 1, RLENGTH - 1); split(m, c, / +/); pid = c[1]; cpu = c[2]; gsub(/[\\[\\]]/, "", cpu); cpu += 0; task = substr($0, 1, RSTART - 1); sub(/^ +/, "", task) }
}
function usns(s,   a) { split(s, a, "."); return a[1] * 1000000000 + substr(a[2] "000000000", 1, 9) }
function field(name,   i) { for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2); return "" }
function nextpid(   i, n) { for (i = 1; i <= NF; i++) if ($i == "==>") { n = $(i + 1); sub(/.*:/, "", n); return n } return "" }
function ceilpct(p, n) { return int((p * n + 99) / 100) }
`;

/** `trace-cmd report -i dat`, written once into dir; the path of the text. */
export function traceCmdReport(dat: string, dir: string): string {
  const out = join(dir, `${dat.split('/').at(-1)}.report.txt`);
  if (!existsSync(out)) writeFileSync(out, execFileSync('trace-cmd', ['report', '-i', dat], { maxBuffer: 1 << 30 }));
  return out;
}

/** Nearest-rank percentile (the value at ceil(p/100 * n) of the sorted list), as quantile_disc. */
export function pct(sorted: readonly bigint[], p: number): bigint {
  return sorted[Math.ceil((p * sorted.length) / 100) - 1]!;
}
