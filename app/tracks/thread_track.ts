/**
 * One thread (kswapd, or a task that appears in a finding): its scheduling
 * states on top, its slices (shrinker calls, reclaim, work items) below, one
 * row per nesting depth.
 */
import type { EventInfo } from '../api/types.ts';
import { categoryColor, stateColor, stateLabel } from '../renderers/colors.ts';
import { drawSlices, type SliceRows } from '../renderers/slice_renderer.ts';
import { formatDuration } from '../time_axis/time_format.ts';
import type { TimeScale, TimeWindow } from '../time_axis/time_scale.ts';
import type { DrawArgs, Hit, Track, TrackEnv } from './track.ts';
import { WindowedData, f64, maxOf, rowAt } from './windowed_data.ts';

interface ThreadData {
  states: SliceRows & { id: Float64Array; state: Array<string | null> };
  slices: SliceRows & {
    id: Float64Array;
    depth: Float64Array;
    name: Array<string | null>;
    category: Array<string | null>;
    begin: Float64Array;
    end: Float64Array;
  };
  depths: number;
}

const STATE_H = 10;
const ROW_H = 15;
const MAX_DEPTHS = 3;

export class ThreadTrack implements Track {
  readonly uri: string;
  readonly title: string;
  readonly subtitle: string;
  readonly group = 'Threads' as const;
  private readonly data: WindowedData<ThreadData>;
  private depths = 1;

  constructor(
    env: TrackEnv,
    readonly utid: number,
    tid: number | null,
    name: string | null,
    reason: string,
  ) {
    this.uri = `thread#${utid}`;
    this.title = `${name ?? 'thread'} ${tid ?? ''}`.trim();
    this.subtitle = reason;
    this.data = new WindowedData(async (b, signal) => {
      const d = await env.api.trackData(env.traceId, 'thread', { utid }, b, signal);
      const s = (d.extra?.slices ?? {}) as Record<string, Array<number | string | null>>;
      const sts = f64(s.ts);
      const sdur = f64(s.dur);
      const depth = f64(s.depth);
      const tsA = f64(d.cols.ts);
      const durA = f64(d.cols.dur);
      const out: ThreadData = {
        states: {
          count: d.rows,
          ts: tsA,
          dur: durA,
          n: f64(d.cols.n),
          maxDur: maxOf(durA),
          id: f64(d.cols.id),
          state: (d.cols.state ?? []) as Array<string | null>,
        },
        slices: {
          count: sts.length,
          ts: sts,
          dur: sdur,
          n: f64(s.n),
          maxDur: maxOf(sdur),
          id: f64(s.id),
          depth,
          name: (s.name ?? []) as Array<string | null>,
          category: (s.category ?? []) as Array<string | null>,
          begin: f64(s.begin_id),
          end: f64(s.end_id),
        },
        depths: Math.min(MAX_DEPTHS, Math.max(1, maxOf(depth) + 1)),
      };
      this.depths = Math.max(this.depths, out.depths);
      return out;
    }, env.redraw);
  }

  get loading() {
    return this.data.loading;
  }
  get error() {
    return this.data.error;
  }

  height(collapsed: boolean): number {
    return collapsed ? STATE_H + 4 : STATE_H + 6 + this.depths * ROW_H;
  }

  update(win: TimeWindow, widthPx: number): void {
    this.data.update(win.t0, win.t1, widthPx);
  }

  render({ ctx, scale, y, collapsed, hl }: DrawArgs): void {
    const d = this.data.data;
    if (!d) return;
    const st = d.states;
    const selState = hl.selection?.kind === 'state' ? hl.selection.id : -1;
    drawSlices(ctx, scale, y + 2, STATE_H, st, {
      color: (i) => stateColor(st.state[i] ?? null),
      dim: () => hl.active,
      emphasis: (i) => st.id[i] === selState,
    });
    if (collapsed) return;
    const sl = d.slices;
    const selSlice = hl.selection?.kind === 'slice' ? hl.selection.id : -1;
    const linked = (i: number) => hl.ids.has(sl.begin[i]!) || hl.ids.has(sl.end[i]!) || hl.ids.has(sl.id[i]!);
    for (let depth = 0; depth < d.depths; depth++) {
      drawSlices(ctx, scale, y + STATE_H + 4 + depth * ROW_H, ROW_H - 1, sl, {
        include: (i) => (sl.depth[i] || 0) === depth,
        color: (i) => categoryColor(sl.category[i] ?? null, sl.name[i] ?? null),
        label: (i) => sl.name[i] ?? sl.category[i] ?? null,
        dim: (i) => hl.active && !linked(i),
        emphasis: (i) => sl.id[i] === selSlice || (hl.active && linked(i)),
      });
    }
  }

  hitTest(x: number, y: number, scale: TimeScale, collapsed: boolean): Hit | null {
    const d = this.data.data;
    if (!d) return null;
    const at = scale.pxToTs(x);
    const slop = scale.nsPerPx * 2;
    if (y >= STATE_H + 4 && !collapsed) {
      const depth = Math.floor((y - STATE_H - 4) / ROW_H);
      const sl = d.slices;
      const i = rowAt(sl.ts, sl.dur, sl.count, at, slop, (k) => (sl.depth[k] || 0) === depth);
      if (i >= 0) {
        const label = sl.name[i] ?? sl.category[i] ?? 'slice';
        if (sl.n[i]! > 1)
          return { selection: null, utid: this.utid, tooltip: `${sl.n[i]} short slices (${label}…) — zoom in` };
        return {
          selection: Number.isNaN(sl.id[i]!) ? null : { kind: 'slice', id: sl.id[i]! },
          utid: this.utid,
          tooltip: `${sl.category[i] ?? ''} ${label} · ${formatDuration(sl.dur[i]!)}`,
        };
      }
    }
    const st = d.states;
    const i = rowAt(st.ts, st.dur, st.count, at, slop);
    if (i < 0) return null;
    if (st.n[i]! > 1)
      return {
        selection: null,
        utid: this.utid,
        tooltip: `${st.n[i]} short states, mostly ${stateLabel(st.state[i] ?? null)} — zoom in`,
      };
    return {
      selection: Number.isNaN(st.id[i]!) ? null : { kind: 'state', id: st.id[i]! },
      utid: this.utid,
      tooltip: `${stateLabel(st.state[i] ?? null)} · ${formatDuration(st.dur[i]!)}`,
    };
  }

  ownsEvent(e: EventInfo): boolean {
    return e.utid === this.utid;
  }

  anchor(_cpu: number, utid: number | null, collapsed: boolean): number | null {
    return utid === this.utid ? (collapsed ? STATE_H / 2 + 2 : STATE_H + 4 + ROW_H / 2) : null;
  }
}
