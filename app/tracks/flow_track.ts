/**
 * Links drawn as arrows over the tracks: migration (CPU A -> CPU B),
 * wakeup (waker -> wakee), begin_end (shrinker start -> end). Each end is
 * attached to the thread track of its task if shown, else to its CPU track.
 * Fetched only when zoomed in enough for arrows to be readable.
 */
import { drawArrows, type Arrow } from '../renderers/flow_renderer.ts';
import type { TimeScale, TimeWindow } from '../time_axis/time_scale.ts';
import type { Highlight, TrackEnv } from './track.ts';
import { WindowedData, f64 } from './windowed_data.ts';

/** Wider windows than this show no arrows (too dense to read, and costly to join). */
export const MAX_FLOW_WINDOW_NS = 500_000_000;

interface FlowData {
  count: number;
  outId: Float64Array;
  outTs: Float64Array;
  outCpu: Float64Array;
  outUtid: Float64Array;
  inId: Float64Array;
  inTs: Float64Array;
  inCpu: Float64Array;
  inUtid: Float64Array;
}

const COLORS: Record<string, string> = { migration: '#a142f4', wakeup: '#188038', begin_end: '#c2185b' };
export const FLOW_TITLES: Record<string, string> = {
  migration: 'Migrations',
  wakeup: 'Wakeups',
  begin_end: 'Begin → end',
};

export type Locate = (cpu: number, utid: number | null) => number | null;

export class FlowOverlay {
  readonly uri: string;
  readonly title: string;
  private readonly data: WindowedData<FlowData>;
  private active = false;

  constructor(
    env: TrackEnv,
    readonly kind: string,
    readonly count: number,
  ) {
    this.uri = `flow#${kind}`;
    this.title = FLOW_TITLES[kind] ?? kind;
    this.data = new WindowedData(async (b, signal) => {
      const d = await env.api.trackData(env.traceId, 'flow', { kind }, b, signal);
      const c = d.cols;
      return {
        count: d.rows,
        outId: f64(c.out_id),
        outTs: f64(c.out_ts),
        outCpu: f64(c.out_cpu),
        outUtid: f64(c.out_utid),
        inId: f64(c.in_id),
        inTs: f64(c.in_ts),
        inCpu: f64(c.in_cpu),
        inUtid: f64(c.in_utid),
      };
    }, env.redraw);
  }

  update(win: TimeWindow, widthPx: number): void {
    this.active = win.t1 - win.t0 <= MAX_FLOW_WINDOW_NS;
    if (this.active) this.data.update(win.t0, win.t1, widthPx);
  }

  render(ctx: CanvasRenderingContext2D, scale: TimeScale, locate: Locate, hl: Highlight): void {
    const d = this.data.data;
    if (!this.active || !d) return;
    const arrows: Arrow[] = [];
    for (let i = 0; i < d.count; i++) {
      const a = d.outTs[i]!;
      const b = d.inTs[i]!;
      if (Math.max(a, b) < scale.t0 || Math.min(a, b) > scale.t1) continue;
      const y0 = locate(d.outCpu[i]!, d.outUtid[i]!);
      const y1 = locate(d.inCpu[i]!, d.inUtid[i]!);
      if (y0 === null || y1 === null) continue;
      arrows.push({
        x0: scale.tsToPx(a),
        y0,
        x1: scale.tsToPx(b),
        y1,
        emphasis: hl.ids.has(d.outId[i]!) || hl.ids.has(d.inId[i]!),
      });
      if (arrows.length > 1500) break;
    }
    drawArrows(ctx, arrows, COLORS[this.kind] ?? '#5f6368', hl.active);
  }
}
