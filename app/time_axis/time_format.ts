/** Durations and offsets in ns, us, ms or s, Perfetto-style. */
export function formatDuration(ns: number, digits = 3): string {
  const a = Math.abs(ns);
  if (a >= 1e9) return `${trim((ns / 1e9).toFixed(digits))} s`;
  if (a >= 1e6) return `${trim((ns / 1e6).toFixed(digits))} ms`;
  if (a >= 1e3) return `${trim((ns / 1e3).toFixed(digits))} us`;
  return `${Math.round(ns)} ns`;
}

function trim(s: string): string {
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

/**
 * A tick label for `ns` when ticks are `step` apart: the unit fits the
 * offset's magnitude (`7.5 s`, not `7500 ms`), with enough decimals to tell
 * neighbouring ticks apart (`7.632054 s` when ticks are 1 us apart).
 */
export function formatTick(ns: number, step: number, magnitude = Math.abs(ns)): string {
  const [div, unit] =
    magnitude >= 1e9 ? [1e9, 's'] : magnitude >= 1e6 ? [1e6, 'ms'] : magnitude >= 1e3 ? [1e3, 'us'] : [1, 'ns'];
  const decimals = Math.max(0, Math.ceil(-Math.log10(step / div) - 1e-9));
  return `${(ns / div).toFixed(decimals)} ${unit}`;
}

/** Absolute timestamp as trace-cmd prints it: seconds with 6 decimals. */
export function formatAbsTs(tsNs: string): string {
  if (!/^-?\d+$/.test(tsNs)) return tsNs;
  const n = BigInt(tsNs);
  const s = n / 1_000_000_000n;
  const us = (n % 1_000_000_000n) / 1000n;
  return `${s}.${us.toString().padStart(6, '0')}`;
}

export function formatCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

export { formatBytes } from '../../shared/format/bytes.ts';
