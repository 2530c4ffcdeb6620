/** One CPU: what ran on it (sched_slice), coloured by task. */
import type { EventInfo } from '../api/types.ts';
import { taskColor } from '../renderers/colors.ts';
import { drawSlices, type SliceRows } from '../renderers/slice_renderer.ts';
import { formatDuration } from '../time_axis/time_format.ts';
import type { TimeScale, TimeWindow } from '../time_axis/time_scale.ts';
import type { DrawArgs, Hit, Track, TrackEnv } from './track.ts';
import { WindowedData, f64, maxOf, rowAt } from './windowed_data.ts';

interface CpuData extends SliceRows {
  id: Float64Array;
  utid: Float64Array;
}

const HEIGHT = 22;

export class CpuTrack implements Track {
  readonly uri: string;
  readonly title: string;
  readonly subtitle: string;
  readonly group = 'CPUs' as const;
  private readonly data: WindowedData<CpuData>;

  constructor(
    private readonly env: TrackEnv,
    readonly cpu: number,
    events: number,
  ) {
    this.uri = `cpu#${cpu}`;
    this.title = `CPU ${cpu}`;
    this.subtitle = `${events.toLocaleString('en')} events`;
    this.data = new WindowedData(async (b, signal) => {
      const d = await env.api.trackData(env.traceId, 'cpu', { cpu }, b, signal);
      const ts = f64(d.cols.ts);
      const dur = f64(d.cols.dur);
      return {
        count: d.rows,
        ts,
        dur,
        n: f64(d.cols.n),
        maxDur: maxOf(dur),
        id: f64(d.cols.id),
        utid: f64(d.cols.utid),
      };
    }, env.redraw);
  }

  get loading() {
    return this.data.loading;
  }
  get error() {
    return this.data.error;
  }

  height(collapsed: boolean): number {
    return collapsed ? 14 : HEIGHT;
  }

  update(win: TimeWindow, widthPx: number): void {
    this.data.update(win.t0, win.t1, widthPx);
  }

  render({ ctx, scale, y, collapsed, hl, hoverUtid }: DrawArgs): void {
    const d = this.data.data;
    if (!d) return;
    const sel = hl.selection?.kind === 'sched' ? hl.selection.id : -1;
    drawSlices(ctx, scale, y + 2, this.height(collapsed) - 4, d, {
      color: (i) => taskColor(d.utid[i]!),
      label: collapsed ? undefined : (i) => (d.utid[i] === 0 ? null : this.env.threadName(d.utid[i]!)),
      dim: (i) => (hoverUtid !== null ? d.utid[i] !== hoverUtid : hl.active && !hl.ids.has(d.id[i]!)),
      emphasis: (i) => d.id[i] === sel || (hl.active && hl.ids.has(d.id[i]!)),
    });
  }

  hitTest(x: number, _y: number, scale: TimeScale): Hit | null {
    const d = this.data.data;
    if (!d) return null;
    const i = rowAt(d.ts, d.dur, d.count, scale.pxToTs(x), scale.nsPerPx * 2);
    if (i < 0) return null;
    const utid = d.utid[i]!;
    const name = this.env.threadName(utid);
    if (d.n[i]! > 1) return { selection: null, utid, tooltip: `${d.n[i]} short slices, longest: ${name} — zoom in` };
    const id = d.id[i]!;
    return {
      selection: Number.isNaN(id) ? null : { kind: 'sched', id },
      utid,
      tooltip: `${name} on CPU ${this.cpu} · ${formatDuration(d.dur[i]!)}`,
    };
  }

  ownsEvent(e: EventInfo): boolean {
    return e.cpu === this.cpu;
  }

  anchor(cpu: number, _utid: number | null, collapsed: boolean): number | null {
    return cpu === this.cpu ? this.height(collapsed) / 2 : null;
  }
}
