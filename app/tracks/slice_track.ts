/** All slices of one category (shrinker calls, direct reclaim, workqueue work), across threads, packed in lanes. */
import type { EventInfo } from '../api/types.ts';
import { categoryColor } from '../renderers/colors.ts';
import { drawSlices, type SliceRows } from '../renderers/slice_renderer.ts';
import { formatDuration } from '../time_axis/time_format.ts';
import type { TimeScale, TimeWindow } from '../time_axis/time_scale.ts';
import type { DrawArgs, Hit, Track, TrackEnv } from './track.ts';
import { WindowedData, f64, maxOf, rowAt } from './windowed_data.ts';

interface SliceData extends SliceRows {
  id: Float64Array;
  utid: Float64Array;
  begin: Float64Array;
  end: Float64Array;
  name: Array<string | null>;
  lane: Uint8Array;
  lanes: number;
}

const ROW_H = 15;
const MAX_LANES = 4;

export const CATEGORY_TITLES: Record<string, string> = {
  shrinker: 'Shrinker calls',
  direct_reclaim: 'Direct reclaim stalls',
  memcg_reclaim: 'Memcg reclaim',
  workqueue: 'Workqueue work',
};

export class SliceTrack implements Track {
  readonly uri: string;
  readonly title: string;
  readonly subtitle: string;
  readonly group = 'Reclaim & work' as const;
  private readonly data: WindowedData<SliceData>;
  private lanes = 1;

  constructor(
    private readonly env: TrackEnv,
    readonly category: string,
    count: number,
  ) {
    this.uri = `slice#${category}`;
    this.title = CATEGORY_TITLES[category] ?? category;
    this.subtitle = `${count.toLocaleString('en')} slices`;
    this.data = new WindowedData(async (b, signal) => {
      const d = await env.api.trackData(env.traceId, 'slice', { category }, b, signal);
      const ts = f64(d.cols.ts);
      const dur = f64(d.cols.dur);
      // Greedy lane packing: first lane whose last slice has ended.
      const ends: number[] = [];
      const lane = new Uint8Array(d.rows);
      for (let i = 0; i < d.rows; i++) {
        let l = ends.findIndex((e) => e <= ts[i]!);
        if (l < 0) l = ends.length < MAX_LANES ? ends.length : MAX_LANES - 1;
        ends[l] = ts[i]! + dur[i]!;
        lane[i] = l;
      }
      this.lanes = Math.max(this.lanes, Math.max(1, ends.length));
      return {
        count: d.rows,
        ts,
        dur,
        n: f64(d.cols.n),
        maxDur: maxOf(dur),
        id: f64(d.cols.id),
        utid: f64(d.cols.utid),
        begin: f64(d.cols.begin_id),
        end: f64(d.cols.end_id),
        name: (d.cols.name ?? []) as Array<string | null>,
        lane,
        lanes: Math.max(1, ends.length),
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
    return collapsed ? 14 : 4 + this.lanes * ROW_H;
  }

  update(win: TimeWindow, widthPx: number): void {
    this.data.update(win.t0, win.t1, widthPx);
  }

  render({ ctx, scale, y, collapsed, hl }: DrawArgs): void {
    const d = this.data.data;
    if (!d) return;
    const sel = hl.selection?.kind === 'slice' ? hl.selection.id : -1;
    const linked = (i: number) => hl.ids.has(d.begin[i]!) || hl.ids.has(d.end[i]!) || hl.ids.has(d.id[i]!);
    const lanes = collapsed ? 1 : this.lanes;
    for (let l = 0; l < lanes; l++) {
      drawSlices(ctx, scale, y + 2 + l * ROW_H, collapsed ? 6 : ROW_H - 1, d, {
        include: collapsed ? undefined : (i) => d.lane[i] === l,
        color: (i) => categoryColor(this.category, d.name[i] ?? null),
        label: collapsed ? undefined : (i) => `${d.name[i] ?? this.category} · ${this.env.threadName(d.utid[i]!)}`,
        dim: (i) => hl.active && !linked(i),
        emphasis: (i) => d.id[i] === sel || (hl.active && linked(i)),
      });
    }
  }

  hitTest(x: number, y: number, scale: TimeScale, collapsed: boolean): Hit | null {
    const d = this.data.data;
    if (!d) return null;
    const lane = collapsed ? -1 : Math.max(0, Math.floor((y - 2) / ROW_H));
    const i = rowAt(
      d.ts,
      d.dur,
      d.count,
      scale.pxToTs(x),
      scale.nsPerPx * 2,
      lane < 0 ? undefined : (k) => d.lane[k] === lane,
    );
    if (i < 0) return null;
    const utid = d.utid[i]!;
    if (d.n[i]! > 1) return { selection: null, utid, tooltip: `${d.n[i]} short ${this.category} slices — zoom in` };
    return {
      selection: Number.isNaN(d.id[i]!) ? null : { kind: 'slice', id: d.id[i]! },
      utid,
      tooltip: `${d.name[i] ?? this.category} on ${this.env.threadName(utid)} · ${formatDuration(d.dur[i]!)}`,
    };
  }

  ownsEvent(e: EventInfo): boolean {
    const d = this.data.data;
    if (!d) return false;
    for (let i = 0; i < d.count; i++) if (d.begin[i] === e.id || d.end[i] === e.id) return true;
    return false;
  }

  anchor(): number | null {
    return null;
  }
}
