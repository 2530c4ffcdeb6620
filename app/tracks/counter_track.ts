/** A counter series: kswapd priority, LRU pages scanned/reclaimed, slab cache items. */
import { drawCounter, type CounterRows } from '../renderers/counter_renderer.ts';
import type { TimeScale, TimeWindow } from '../time_axis/time_scale.ts';
import type { DrawArgs, Hit, Track, TrackEnv } from './track.ts';
import { WindowedData, f64 } from './windowed_data.ts';

const COLORS: Record<string, string> = {
  'kswapd priority': '#c5221f',
  'lru nr_scanned': '#1a73e8',
  'lru nr_reclaimed': '#188038',
  'slab cache_items': '#a142f4',
};

interface CounterData extends CounterRows {
  id: Float64Array;
}

export class CounterTrack implements Track {
  readonly uri: string;
  readonly title: string;
  readonly subtitle: string;
  readonly group = 'Counters' as const;
  private readonly data: WindowedData<CounterData>;
  private readonly color: string;

  constructor(
    private readonly env: TrackEnv,
    readonly trackId: number,
    name: string,
    private readonly unit: string | null,
    description: string | null,
    series = name,
  ) {
    this.uri = `counter#${trackId}`;
    this.title = name;
    this.subtitle = description ?? unit ?? '';
    this.color = COLORS[series] ?? '#5f6368';
    this.data = new WindowedData(async (b, signal) => {
      const d = await env.api.trackData(env.traceId, 'counter', { track: trackId }, b, signal);
      const prev = d.extra?.prev as { value: number } | null;
      return {
        count: d.rows,
        ts: f64(d.cols.ts),
        lo: f64(d.cols.lo),
        hi: f64(d.cols.hi),
        last: f64(d.cols.last),
        n: f64(d.cols.n),
        id: f64(d.cols.id),
        prev: prev ? prev.value : null,
        yMin: Math.min(0, Number(d.extra?.lo ?? 0)),
        yMax: Number(d.extra?.hi ?? 1),
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
    return collapsed ? 14 : 38;
  }

  update(win: TimeWindow, widthPx: number): void {
    this.data.update(win.t0, win.t1, widthPx);
  }

  render({ ctx, scale, y, collapsed, hl }: DrawArgs): void {
    const d = this.data.data;
    if (!d) return;
    drawCounter(ctx, scale, y, this.height(collapsed), d, this.color, {
      dim: hl.active,
      end: this.env.info.end,
      label: collapsed ? '' : this.scaleLabel(d.yMax),
    });
  }

  private labelFor = NaN;
  private label = '';

  /** The axis label (toLocaleString is slow enough to matter when called every frame). */
  private scaleLabel(yMax: number): string {
    if (yMax !== this.labelFor) {
      this.labelFor = yMax;
      this.label = `${yMax.toLocaleString('en')}${this.unit ? ` ${this.unit}` : ''}`;
    }
    return this.label;
  }

  hitTest(x: number, _y: number, scale: TimeScale): Hit | null {
    const d = this.data.data;
    if (!d || d.count === 0) return null;
    const at = scale.pxToTs(x);
    // Value in force at `at`: the last row starting at or before it.
    let lo = 0;
    let hi = d.count;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (d.ts[mid]! <= at) lo = mid + 1;
      else hi = mid;
    }
    const i = lo - 1;
    if (i < 0) return d.prev === null ? null : { selection: null, utid: null, tooltip: `${this.title}: ${d.prev}` };
    const id = d.id[i]!;
    const range = d.n[i]! > 1 ? ` (${d.n[i]} values ${d.lo[i]}–${d.hi[i]})` : '';
    return {
      selection: Number.isNaN(id) ? null : { kind: 'event', id },
      utid: null,
      tooltip: `${this.title}: ${d.last[i]!.toLocaleString('en')}${this.unit ? ` ${this.unit}` : ''}${range}`,
    };
  }

  ownsEvent(): boolean {
    return false;
  }

  anchor(): number | null {
    return null;
  }
}
