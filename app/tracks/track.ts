/**
 * The track plugin contract. A track owns one data request (through
 * WindowedData, fetched per buffered window) and one renderer; drawing is
 * synchronous from whatever data is cached, fetching happens outside it and
 * asks for a redraw when data arrives (Perfetto's TrackRenderer pattern).
 */
import type { Api } from '../api/client.ts';
import type { EventInfo, TrackList } from '../api/types.ts';
import type { Selection } from '../state/view_state.ts';
import type { TimeScale, TimeWindow } from '../time_axis/time_scale.ts';

export type TrackGroup = 'Queries' | 'CPUs' | 'Reclaim & work' | 'Threads' | 'Counters';

/** In this order on the timeline; 'Queries' holds query results shown as tracks (app/query). */
export const TRACK_GROUPS: readonly TrackGroup[] = ['Queries', 'CPUs', 'Reclaim & work', 'Threads', 'Counters'];

/** What is linked to the current selection, for highlighting on every track. */
export interface Highlight {
  /** Something with linked events is selected: items not linked are dimmed. */
  active: boolean;
  /** Linked event ids (a finding's event_ids, or the selected event). */
  ids: Set<number>;
  /** The linked events themselves, for markers on the tracks they belong to. */
  events: EventInfo[];
  /** The selected finding's time range. */
  range: { ts: number; dur: number } | null;
  selection: Selection | null;
}

export const NO_HIGHLIGHT: Highlight = { active: false, ids: new Set(), events: [], range: null, selection: null };

export interface DrawArgs {
  ctx: CanvasRenderingContext2D;
  scale: TimeScale;
  /** Top of the track in the canvas (CSS px). */
  y: number;
  collapsed: boolean;
  hl: Highlight;
  /** Task under the mouse: highlighted on every CPU track. */
  hoverUtid: number | null;
}

export interface Hit {
  selection: Selection | null;
  /** The task the hit belongs to (for hover highlighting). */
  utid: number | null;
  tooltip: string;
}

export interface TrackEnv {
  api: Api;
  traceId: string;
  info: TrackList;
  threadName(utid: number | null): string;
  redraw(): void;
}

export interface Track {
  readonly uri: string;
  readonly title: string;
  readonly subtitle: string;
  readonly group: TrackGroup;
  height(collapsed: boolean): number;
  /** Called before each draw with the visible window: starts a fetch if the cache does not cover it. */
  update(win: TimeWindow, widthPx: number): void;
  render(a: DrawArgs): void;
  hitTest(x: number, y: number, scale: TimeScale, collapsed: boolean): Hit | null;
  /** Does a linked event belong on this track (for its marker)? */
  ownsEvent(e: EventInfo): boolean;
  /** Where on the track (y from its top) a flow end on this CPU / thread attaches, or null. */
  anchor(cpu: number, utid: number | null, collapsed: boolean): number | null;
  readonly loading: boolean;
  readonly error: string | null;
}
