/** Tick positions for the time ruler: 1/2/5 x 10^k ns steps, about one per 100 px. */
import { formatTick } from './time_format.ts';
import type { TimeScale } from './time_scale.ts';

export interface Tick {
  ts: number;
  x: number;
  label: string;
  major: boolean;
}

export function tickStep(scale: TimeScale, targetPx = 110): number {
  const raw = scale.nsPerPx * targetPx;
  const pow = 10 ** Math.floor(Math.log10(Math.max(1, raw)));
  for (const m of [1, 2, 5, 10]) if (m * pow >= raw) return m * pow;
  return 10 * pow;
}

export function computeTicks(scale: TimeScale): Tick[] {
  const step = tickStep(scale);
  const first = Math.ceil(scale.t0 / step) * step;
  const ticks: Tick[] = [];
  for (let ts = first; ts <= scale.t1 && ticks.length < 200; ts += step) {
    ticks.push({
      ts,
      x: scale.tsToPx(ts),
      label: formatTick(ts, step, Math.max(Math.abs(scale.t0), Math.abs(scale.t1))),
      major: true,
    });
  }
  return ticks;
}
