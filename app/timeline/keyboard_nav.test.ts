import { describe, expect, it } from 'vitest';
import { keyStep } from './keyboard_nav.ts';

// A 1 ms window in a 1 s trace: far from the edges, so no clamping. Expected windows worked by hand
// from the stated rates: a tap zooms by 0.7 (W) or 1/0.7 (S) and pans 15% of the width; a held key
// zooms by e^(±3·dt) and pans 0.9 widths per second.
const BOUNDS = { t0: 0, t1: 1_000_000_000 };
const WIN = { t0: 1_000_000, t1: 2_000_000 };

describe('keyStep: W/S/A/D on the timeline', () => {
  it('a tap of W zooms in to 70% around the anchor', () => {
    const w = keyStep('w', 1, true, WIN, 1_500_000, BOUNDS);
    expect(w.t0).toBeCloseTo(1_150_000, 3);
    expect(w.t1).toBeCloseTo(1_850_000, 3);
  });

  it('a tap of S zooms out by 1/0.7, keeping the anchor (the left edge) in place', () => {
    const w = keyStep('s', 1, true, WIN, 1_000_000, BOUNDS);
    expect(w.t0).toBeCloseTo(1_000_000, 3);
    expect(w.t1).toBeCloseTo(1_000_000 + 1_000_000 / 0.7, 3);
  });

  it('taps of A and D pan 15% of the width', () => {
    expect(keyStep('d', 1, true, WIN, 1_500_000, BOUNDS)).toEqual({ t0: 1_150_000, t1: 2_150_000 });
    expect(keyStep('a', 1, true, WIN, 1_500_000, BOUNDS)).toEqual({ t0: 850_000, t1: 1_850_000 });
  });

  it('held keys move by the time held: D for 50 ms pans 4.5% of the width, W for 100 ms zooms by e^-0.3', () => {
    const d = keyStep('d', 0.05, false, WIN, 1_500_000, BOUNDS);
    expect(d.t0).toBeCloseTo(1_045_000, 3);
    expect(d.t1).toBeCloseTo(2_045_000, 3);
    const half = (1_000_000 * 0.7408182206817179) / 2;
    const w = keyStep('w', 0.1, false, WIN, 1_500_000, BOUNDS);
    expect(w.t0).toBeCloseTo(1_500_000 - half, 3);
    expect(w.t1).toBeCloseTo(1_500_000 + half, 3);
  });

  it('a pan past the trace stops with a tenth of the window still on the trace', () => {
    const w = keyStep('a', 1, true, { t0: -800_000, t1: 200_000 }, 500_000, BOUNDS);
    // 15% left would end at 50,000 ns into the trace; the clamp keeps 10% (100,000 ns) of the window on it.
    expect(w).toEqual({ t0: -900_000, t1: 100_000 });
  });
});
