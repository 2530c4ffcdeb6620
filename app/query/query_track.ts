/**
 * A query result as a timeline track (Perfetto's debug tracks): each row with
 * a `ts` is a slice (with `dur`) or an instant (without). Rows with a `utid`,
 * `tid` or `cpu` column get one lane per thread / CPU (the first
 * MAX_KEY_LANES, the rest in one "other" lane); otherwise overlapping rows
 * are spread over lanes. The rows are the browser's own copy of the
 * result: drawing needs no server round trip.
 */
import type { EventInfo } from '../api/types.ts';
import { hashString } from '../renderers/colors.ts';
import { drawSlices, fitText, type SliceRows } from '../renderers/slice_renderer.ts';
import { formatDuration } from '../time_axis/time_format.ts';
import type { TimeScale, TimeWindow } from '../time_axis/time_scale.ts';
import type { DrawArgs, Hit, Track } from '../tracks/track.ts';
import { rowAt } from '../tracks/windowed_data.ts';

const LANE_H = 14;
const MAX_KEY_LANES = 12;
const MAX_OVERLAP_LANES = 6;
/** Instants are drawn this wide (px) and hit-tested with this slop. */
const INSTANT_PX = 3;

export interface QueryTrackSource {
  id: number;
  title: string;
  sql: string;
  columns: string[];
  cols: unknown[][];
  rowCount: number;
  /** Absolute ns of the trace's first event. */
  base: string;
}

interface Lane {
  label: string | null;
  rows: SliceRows & { row: Int32Array };
}

/** Index of a column by name (case-insensitive), or -1. */
export function columnIndex(columns: string[], name: string): number {
  const n = name.toLowerCase();
  return columns.findIndex((c) => c.toLowerCase() === n);
}

/** Can this result be drawn as a track (has a ts column)? */
export function hasTimeColumn(columns: string[]): boolean {
  return columnIndex(columns, 'ts') >= 0;
}

/** Model ns (number or decimal string) minus the base, as timeline ns; NaN if not a number. */
export function relativeNs(v: unknown, base: bigint): number {
  if (typeof v === 'number') return Number.isFinite(v) ? v - Number(base) : NaN;
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(BigInt(v) - base);
  return NaN;
}

export class QueryTrack implements Track {
  readonly uri: string;
  readonly title: string;
  readonly subtitle: string;
  readonly group = 'Queries' as const;
  readonly loading = false;
  readonly error: string | null = null;
  private readonly lanes: Lane[] = [];
  private readonly labelCol: number;
  /** The result row a click selected (outlined). */
  selectedRow = -1;

  constructor(
    readonly src: QueryTrackSource,
    threadName: (utid: number | null) => string,
    tidToUtid: (tid: number) => number | null,
  ) {
    this.uri = `query#${src.id}`;
    this.title = src.title;
    const base = BigInt(src.base);
    const c = (name: string) => columnIndex(src.columns, name);
    const tsCol = c('ts');
    const durCol = c('dur');
    const utidCol = c('utid');
    const tidCol = c('tid');
    const cpuCol = c('cpu');
    this.labelCol =
      [c('name'), c('title'), c('state'), c('category')].find((i) => i >= 0) ??
      src.columns.findIndex((_, k) => typeof src.cols[k]?.[0] === 'string');
    const n = src.rowCount;
    const ts = new Float64Array(n);
    const dur = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      ts[i] = relativeNs(src.cols[tsCol]![i], base);
      const d = durCol >= 0 ? Number(src.cols[durCol]![i]) : 0;
      dur[i] = Number.isFinite(d) && d > 0 ? d : 0;
    }
    const order = [...Array(n).keys()].filter((i) => Number.isFinite(ts[i]!)).sort((a, b) => ts[a]! - ts[b]! || a - b);
    // Lanes: by thread or CPU when the result names them, else by overlap.
    const laneOf = new Int32Array(n);
    const labels: Array<string | null> = [];
    let keyed = '';
    if (utidCol >= 0 || tidCol >= 0 || cpuCol >= 0) {
      const col = utidCol >= 0 ? utidCol : tidCol >= 0 ? tidCol : cpuCol;
      keyed = utidCol >= 0 ? 'thread' : tidCol >= 0 ? 'thread' : 'CPU';
      const keys = new Map<string, number>();
      for (const i of order) {
        const k = String(src.cols[col]![i]);
        let lane = keys.get(k);
        if (lane === undefined) {
          if (keys.size < MAX_KEY_LANES) {
            lane = keys.size;
            keys.set(k, lane);
            const v = src.cols[col]![i];
            const num = typeof v === 'number' ? v : null;
            labels[lane] =
              col === cpuCol
                ? `CPU ${String(v)}`
                : col === utidCol
                  ? threadName(num)
                  : num !== null
                    ? threadName(tidToUtid(num))
                    : String(v);
          } else {
            lane = MAX_KEY_LANES;
            labels[lane] = 'other';
          }
        }
        laneOf[i] = lane;
      }
    } else {
      const ends: number[] = [];
      for (const i of order) {
        let lane = ends.findIndex((e) => e <= ts[i]!);
        if (lane < 0) lane = ends.length < MAX_OVERLAP_LANES ? ends.length : MAX_OVERLAP_LANES - 1;
        ends[lane] = Math.max(ends[lane] ?? 0, ts[i]! + dur[i]!);
        laneOf[i] = lane;
        labels[lane] = null;
      }
    }
    for (let lane = 0; lane < labels.length; lane++) {
      const members = order.filter((i) => laneOf[i] === lane);
      const rows = {
        count: members.length,
        ts: Float64Array.from(members, (i) => ts[i]!),
        dur: Float64Array.from(members, (i) => dur[i]!),
        n: new Float64Array(members.length).fill(1),
        maxDur: members.reduce((m, i) => Math.max(m, dur[i]!), 0),
        row: Int32Array.from(members),
      };
      this.lanes.push({ label: labels[lane] ?? null, rows });
    }
    this.subtitle = `${n.toLocaleString('en')} rows${keyed ? `, one lane per ${keyed}` : ''}`;
  }

  height(collapsed: boolean): number {
    return collapsed ? LANE_H + 4 : Math.max(1, this.lanes.length) * LANE_H + 6;
  }

  update(_win: TimeWindow, _widthPx: number): void {}

  private label(row: number): string | null {
    if (this.labelCol < 0) return null;
    const v = this.src.cols[this.labelCol]![row];
    return v === null || v === undefined ? null : String(v);
  }

  render({ ctx, scale, y, collapsed }: DrawArgs): void {
    const lanes = collapsed ? this.lanes.slice(0, 1) : this.lanes;
    lanes.forEach((lane, k) => {
      const top = y + 3 + k * LANE_H;
      const r = lane.rows;
      // Instants: widen to a few px so they can be seen and clicked.
      const minDur = scale.nsPerPx * INSTANT_PX;
      const shown: SliceRows = {
        ...r,
        dur: r.dur.map((d) => (d > 0 ? d : minDur)),
        maxDur: Math.max(r.maxDur, minDur),
      };
      drawSlices(ctx, scale, top, LANE_H - 2, shown, {
        color: (i) => colorFor(this.label(r.row[i]!) ?? lane.label ?? this.title),
        label: (i) => this.label(r.row[i]!),
        emphasis: (i) => r.row[i] === this.selectedRow,
      });
      if (lane.label && !collapsed) {
        ctx.font = '10px system-ui, sans-serif';
        ctx.textBaseline = 'middle';
        const text = fitText(ctx, lane.label, 140);
        const w = ctx.measureText(text).width + 6;
        ctx.fillStyle = 'rgba(255,255,255,0.85)';
        ctx.fillRect(0, top, w, LANE_H - 2);
        ctx.fillStyle = '#3c4043';
        ctx.fillText(text, 3, top + (LANE_H - 2) / 2);
      }
    });
  }

  /** The result row under (x, y), or -1. */
  rowAtPoint(x: number, y: number, scale: TimeScale): number {
    const k = Math.floor((y - 3) / LANE_H);
    const lane = this.lanes[Math.max(0, Math.min(this.lanes.length - 1, k))];
    if (!lane) return -1;
    const r = lane.rows;
    const i = rowAt(r.ts, r.dur, r.count, scale.pxToTs(x), scale.nsPerPx * INSTANT_PX);
    return i < 0 ? -1 : r.row[i]!;
  }

  hitTest(x: number, y: number, scale: TimeScale): Hit | null {
    const row = this.rowAtPoint(x, y, scale);
    if (row < 0) return null;
    const parts = this.src.columns.map((c, k) => `${c}=${formatCell(this.src.cols[k]![row])}`);
    const durCol = columnIndex(this.src.columns, 'dur');
    const dur = durCol >= 0 ? Number(this.src.cols[durCol]![row]) : 0;
    const id = eventIdOf(this.src.columns, this.src.cols, row);
    return {
      selection: id === null ? null : { kind: 'event', id },
      utid: null,
      tooltip: `${this.title}${dur > 0 ? ` · ${formatDuration(dur)}` : ''}\n${parts.join('  ').slice(0, 400)}`,
    };
  }

  ownsEvent(_e: EventInfo): boolean {
    return false;
  }

  anchor(): number | null {
    return null;
  }
}

/**
 * The event a result row stands for: its `event_id` column, else its `id`
 * column (slice and sched_slice ids are their begin events' ids), except in
 * rows with a `state` column (thread_state ids are not event ids).
 */
export function eventIdOf(columns: string[], cols: unknown[][], row: number): number | null {
  let k = columnIndex(columns, 'event_id');
  if (k < 0 && columnIndex(columns, 'state') < 0) k = columnIndex(columns, 'id');
  const v = k >= 0 ? cols[k]![row] : null;
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null;
}

function colorFor(s: string): string {
  return `hsl(${hashString(s) % 360}, 45%, 52%)`;
}

export function formatCell(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
