/** Instant markers: reclaim writing a page/folio out (mm_vmscan_writepage / mm_vmscan_write_folio). */
import type { EventInfo } from '../api/types.ts';
import { drawInstants, type InstantRows } from '../renderers/instant_renderer.ts';
import type { TimeScale, TimeWindow } from '../time_axis/time_scale.ts';
import type { DrawArgs, Hit, Track, TrackEnv } from './track.ts';
import { WindowedData, f64, maxOf } from './windowed_data.ts';

interface InstantData extends InstantRows {
  id: Float64Array;
  utid: Float64Array;
}

export class InstantTrack implements Track {
  readonly uri: string;
  readonly title = 'Reclaim writepage';
  readonly subtitle: string;
  readonly group = 'Reclaim & work' as const;
  private readonly data: WindowedData<InstantData>;

  constructor(
    private readonly env: TrackEnv,
    readonly name: 'writepage',
    count: number,
  ) {
    this.uri = `instant#${name}`;
    this.subtitle = `${count.toLocaleString('en')} pages written`;
    this.data = new WindowedData(async (b, signal) => {
      const d = await env.api.trackData(env.traceId, 'instant', { name }, b, signal);
      const n = f64(d.cols.n);
      return {
        count: d.rows,
        ts: f64(d.cols.ts),
        n,
        maxN: Math.max(1, maxOf(n)),
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
    return collapsed ? 14 : 18;
  }

  update(win: TimeWindow, widthPx: number): void {
    this.data.update(win.t0, win.t1, widthPx);
  }

  render({ ctx, scale, y, collapsed, hl }: DrawArgs): void {
    const d = this.data.data;
    if (!d) return;
    drawInstants(ctx, scale, y, this.height(collapsed), d, '#e37400', {
      dim: hl.active,
      linked: hl.active ? (i) => hl.ids.has(d.id[i]!) : undefined,
    });
  }

  hitTest(x: number, _y: number, scale: TimeScale): Hit | null {
    const d = this.data.data;
    if (!d) return null;
    const at = scale.pxToTs(x);
    let best = -1;
    let bestD = scale.nsPerPx * 4;
    for (let i = 0; i < d.count; i++) {
      const dd = Math.abs(d.ts[i]! - at);
      if (dd <= bestD) {
        best = i;
        bestD = dd;
      }
    }
    if (best < 0) return null;
    if (d.n[best]! > 1) return { selection: null, utid: null, tooltip: `${d.n[best]} pages written here — zoom in` };
    return {
      selection: { kind: 'event', id: d.id[best]! },
      utid: d.utid[best]!,
      tooltip: `writepage by ${this.env.threadName(d.utid[best]!)}`,
    };
  }

  ownsEvent(e: EventInfo): boolean {
    return e.name === 'mm_vmscan_write_folio' || e.name === 'mm_vmscan_writepage';
  }

  anchor(): number | null {
    return null;
  }
}
