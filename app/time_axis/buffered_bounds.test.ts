import { describe, expect, it } from 'vitest';
import { bufferedBounds, covers } from './buffered_bounds.ts';
import { formatTick } from './time_format.ts';
import { TimeScale, zoomWindow } from './time_scale.ts';
import { computeTicks } from './ruler.ts';

describe('buffered bounds', () => {
  it('pads, quantises and uses a power-of-two resolution', () => {
    const b = bufferedBounds(1_000_000, 2_000_000, 1000);
    expect(b.res).toBe(1024);
    expect(b.t0).toBeLessThanOrEqual(500_000);
    expect(b.t1).toBeGreaterThanOrEqual(2_500_000);
    expect((b.t1 - b.t0) / b.res).toBe(b.px);
  });

  it('a small pan or zoom within the same resolution needs no new fetch', () => {
    const b = bufferedBounds(1_000_000, 2_000_000, 1000);
    expect(covers(b, bufferedBounds(1_100_000, 2_100_000, 1000), 1_100_000, 2_100_000)).toBe(true);
    expect(covers(b, bufferedBounds(1_000_000, 1_400_000, 1000), 1_000_000, 1_400_000)).toBe(false);
  });
});

describe('time scale and ruler', () => {
  it('zooms around the anchor', () => {
    const w = zoomWindow({ t0: 0, t1: 1000_000 }, 250_000, 0.5, { t0: 0, t1: 1000_000 });
    expect(w.t1 - w.t0).toBe(500_000);
    expect(w.t0).toBe(125_000);
  });

  it('labels ticks in the unit of the offset, with enough digits', () => {
    expect(formatTick(7_500_000_000, 500_000_000)).toBe('7.5 s');
    expect(formatTick(7_632_054_000, 1000)).toBe('7.632054 s');
    expect(formatTick(2_000_000, 1_000_000)).toBe('2 ms');
    const ticks = computeTicks(new TimeScale(0, 1e9, 1000));
    expect(ticks.map((t) => t.label).slice(0, 3)).toEqual(['0.0 s', '0.2 s', '0.4 s']);
  });
});
