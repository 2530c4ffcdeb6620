/**
 * The timeline: toolbar, ruler, pinned tracks and the scrolling track list.
 * React renders the track headers (names, pin/collapse/hide) and the layout;
 * TimelineController draws the canvases and handles zoom/pan.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { TrackList } from '../api/types.ts';
import { useView, viewStore } from '../state/view_store.ts';
import type { Selection } from '../state/view_state.ts';
import type { TrackSet } from '../tracks/index.ts';
import { TRACK_GROUPS, type Highlight, type Track } from '../tracks/track.ts';
import { formatDuration } from '../time_axis/time_format.ts';
import type { NoteMark, RangeMark } from '../renderers/notes_overlay.ts';
import { TimelineController, type LayoutRow } from './timeline_controller.ts';
import type { TimeWindow } from '../time_axis/time_scale.ts';

export const HEADER_W = 220;
const GROUP_H = 22;

interface Props {
  traceId: string;
  info: TrackList;
  set: TrackSet;
  hl: Highlight;
  onSelect(sel: Selection | null, track?: string): void;
  /** Registers the controller so others (finding clicks) can move the window. */
  onController?(c: TimelineController | null): void;
  /** Notes to draw, and the one in focus. */
  notes?: NoteMark[];
  focusedNote?: string | null;
  /** The shift+drag range selection. */
  range?: RangeMark | null;
  onRange?(r: RangeMark | null): void;
  onNote?(id: string): void;
}

interface GroupRow {
  group: string;
  y: number;
  count: number;
  folded: boolean;
}

/** How often a moving window is written to the view store (URL, label, links), ms. */
const WINDOW_PUBLISH_MS = 100;

function toggle(list: string[], uri: string): string[] {
  return list.includes(uri) ? list.filter((u) => u !== uri) : [...list, uri];
}

export function Timeline({
  traceId,
  info,
  set,
  hl,
  onSelect,
  onController,
  notes,
  focusedNote,
  range,
  onRange,
  onNote,
}: Props) {
  const rootRef = useRef<HTMLDivElement>(null);
  const rulerRef = useRef<HTMLCanvasElement>(null);
  const pinnedCanvas = useRef<HTMLCanvasElement>(null);
  const scrollCanvas = useRef<HTMLCanvasElement>(null);
  const scrollerRef = useRef<HTMLDivElement>(null);
  const tooltipRef = useRef<HTMLDivElement>(null);
  const [controller, setController] = useState<TimelineController | null>(null);
  const pinned = useView((v) => v.pinned);
  const hidden = useView((v) => v.hidden);
  const collapsed = useView((v) => v.collapsed);
  const filter = useView((v) => v.filter);
  const onSelectRef = useRef(onSelect);
  onSelectRef.current = onSelect;
  const onRangeRef = useRef(onRange);
  onRangeRef.current = onRange;
  const onNoteRef = useRef(onNote);
  onNoteRef.current = onNote;

  // One controller per trace.
  useEffect(() => {
    const v = viewStore.get();
    const bounds: TimeWindow = { t0: info.start, t1: Math.max(info.end, info.start + 1000) };
    const initial = v.t0 !== null && v.t1 !== null ? { t0: v.t0, t1: v.t1 } : null;
    // While the window moves (every frame of a zoom or pan), the store (URL, window label, links)
    // follows at most every WINDOW_PUBLISH_MS and once more when it stops: the timeline itself
    // draws from the controller's own window, so the page does no React or URL work per frame.
    let fromController = false;
    let pending: TimeWindow | null = null;
    let timer: ReturnType<typeof setTimeout> | null = null;
    let lastPublish = 0;
    const publish = () => {
      timer = null;
      if (!pending) return;
      const w = pending;
      pending = null;
      lastPublish = performance.now();
      fromController = true;
      try {
        viewStore.update({ t0: Math.floor(w.t0), t1: Math.ceil(w.t1) }, { history: 'replace' });
      } finally {
        fromController = false;
      }
    };
    const c = new TimelineController(rootRef.current!, bounds, initial, {
      onWindow: (w) => {
        pending = w;
        if (timer) return;
        timer = setTimeout(publish, Math.max(0, WINDOW_PUBLISH_MS - (performance.now() - lastPublish)));
      },
      onSelect: (sel, track) => onSelectRef.current(sel, track),
      onRange: (r) => onRangeRef.current?.(r),
      onNote: (id) => onNoteRef.current?.(id),
    });
    c.setTooltipElement(tooltipRef.current);
    c.setRuler(rulerRef.current);
    setController(c);
    onController?.(c);
    // Windows set from outside (URL edits, back/forward, finding clicks) move the timeline.
    const unsub = viewStore.subscribe((next, prev) => {
      if (fromController) return;
      // Only a window changed from outside moves the timeline (the store may lag the controller by
      // up to WINDOW_PUBLISH_MS; other changes, like a selection, must not pull it back), and it
      // replaces any window the controller has not published yet.
      if (next.t0 === prev.t0 && next.t1 === prev.t1) return;
      if (
        next.t0 !== null &&
        next.t1 !== null &&
        (Math.abs(next.t0 - c.win.t0) > 1 || Math.abs(next.t1 - c.win.t1) > 1)
      ) {
        pending = null;
        c.setWindow({ t0: next.t0, t1: next.t1 });
      }
    });
    if (!initial) viewStore.update({ t0: Math.floor(c.win.t0), t1: Math.ceil(c.win.t1) }, { history: 'replace' });
    // Any other key (L copies a link, T the selection as text, N a note...) sees the current window.
    const flushOnKey = (e: KeyboardEvent) => {
      if (!['w', 'a', 's', 'd'].includes(e.key.toLowerCase()) && pending) {
        if (timer) clearTimeout(timer);
        publish();
      }
    };
    window.addEventListener('keydown', flushOnKey, true);
    return () => {
      window.removeEventListener('keydown', flushOnKey, true);
      if (timer) clearTimeout(timer);
      publish();
      unsub();
      onController?.(null);
      c.dispose();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [traceId, info]);

  useEffect(() => {
    controller?.setTracks(set.tracks, set.flows);
  }, [controller, set]);

  useEffect(() => {
    controller?.setHighlight(hl);
  }, [controller, hl]);

  useEffect(() => {
    controller?.setHiddenFlows(hidden.filter((u) => u.startsWith('flow#')));
  }, [controller, hidden]);

  useEffect(() => {
    controller?.setNotes(notes ?? [], focusedNote ?? null);
  }, [controller, notes, focusedNote]);

  useEffect(() => {
    controller?.setRange(range ?? null);
  }, [controller, range]);

  const [tick, setTick] = useState(0);
  // Layout: pinned tracks on top, the rest grouped below; filter by name.
  const layout = useMemo(() => {
    const q = filter.trim().toLowerCase();
    const shown = (t: Track) =>
      !hidden.includes(t.uri) && (!q || t.title.toLowerCase().includes(q) || t.subtitle.toLowerCase().includes(q));
    const byUri = new Map(set.tracks.map((t) => [t.uri, t]));
    const pinnedRows: LayoutRow[] = [];
    let y = 0;
    for (const uri of pinned) {
      const t = byUri.get(uri);
      if (!t || !shown(t)) continue;
      const c = collapsed.includes(uri);
      pinnedRows.push({ track: t, y, h: t.height(c), collapsed: c });
      y += t.height(c);
    }
    const pinnedH = y;
    const rows: LayoutRow[] = [];
    const groups: GroupRow[] = [];
    y = 0;
    for (const g of TRACK_GROUPS) {
      const members = set.tracks.filter((t) => t.group === g && !pinned.includes(t.uri) && shown(t));
      if (!members.length) continue;
      const folded = collapsed.includes(`group#${g}`);
      groups.push({ group: g, y, count: members.length, folded });
      y += GROUP_H;
      if (folded) continue;
      for (const t of members) {
        const c = collapsed.includes(t.uri);
        rows.push({ track: t, y, h: t.height(c), collapsed: c });
        y += t.height(c);
      }
    }
    const hiddenCount = set.tracks.filter((t) => hidden.includes(t.uri)).length;
    return { pinnedRows, pinnedH, rows, groups, totalH: y, hiddenCount };
    // `tick` is read nowhere in the body on purpose: a track's height (t.height) is the track object's own
    // mutable state, which grows when its data arrives (lanes, depths) without any React value changing; the
    // slow tick below bumps `tick` when a height went stale, and listing it re-runs this layout.
    // eslint-disable-next-line react-hooks/exhaustive-deps -- tick is the heights' invalidation signal (above)
  }, [set, pinned, hidden, collapsed, filter, tick]);

  useLayoutEffect(() => {
    if (!controller) return;
    controller.setArea(
      'pinned',
      layout.pinnedRows.length ? { canvas: pinnedCanvas.current!, scroller: null, rows: layout.pinnedRows } : null,
    );
    controller.setArea('scroll', { canvas: scrollCanvas.current!, scroller: scrollerRef.current, rows: layout.rows });
  }, [controller, layout]);

  // Track heights can grow when data arrives (lanes, depths): re-layout on a slow tick.
  useEffect(() => {
    const id = setInterval(() => {
      const stale = [...layout.pinnedRows, ...layout.rows].some((r) => r.track.height(r.collapsed) !== r.h);
      if (stale) setTick((n) => n + 1);
    }, 400);
    return () => clearInterval(id);
  }, [layout]);

  useLayoutEffect(() => {
    const el = scrollerRef.current;
    if (!el || !controller) return;
    const ro = new ResizeObserver(() => {
      controller.setWidth(el.clientWidth - HEADER_W);
      controller.redraw();
    });
    ro.observe(el);
    controller.setWidth(el.clientWidth - HEADER_W);
    return () => ro.disconnect();
  }, [controller]);

  const setView = (patch: Parameters<typeof viewStore.update>[0]) => viewStore.update(patch, { history: 'replace' });
  const header = (r: LayoutRow) => (
    <TrackHeader
      key={r.track.uri}
      row={r}
      pinned={pinned.includes(r.track.uri)}
      onCollapse={() => setView({ collapsed: toggle(collapsed, r.track.uri) })}
      onPin={() => setView({ pinned: toggle(pinned, r.track.uri) })}
      onHide={() => setView({ hidden: [...hidden, r.track.uri] })}
    />
  );

  return (
    <div className="timeline" ref={rootRef} data-testid="timeline">
      <TimelineToolbar info={info} set={set} hiddenCount={layout.hiddenCount} controller={controller} />
      <div className="ruler-row">
        <div className="ruler-corner" style={{ width: HEADER_W }}>
          <WindowLabel />
        </div>
        <canvas ref={rulerRef} className="ruler" data-testid="ruler" />
      </div>
      {layout.pinnedRows.length > 0 && (
        <div className="pinned-area" data-testid="pinned-area" style={{ height: layout.pinnedH }}>
          {layout.pinnedRows.map(header)}
          <canvas ref={pinnedCanvas} className="track-canvas" style={{ marginLeft: HEADER_W }} />
        </div>
      )}
      <div className="track-scroll" ref={scrollerRef} data-testid="track-scroll">
        <div className="track-content" style={{ height: layout.totalH }}>
          <canvas ref={scrollCanvas} className="track-canvas sticky" style={{ marginLeft: HEADER_W }} />
          {layout.groups.map((g) => (
            <div
              key={g.group}
              className="group-header"
              style={{ top: g.y, height: GROUP_H }}
              data-testid={`group-${g.group}`}
              onClick={() => setView({ collapsed: toggle(collapsed, `group#${g.group}`) })}
            >
              <span className="chevron">{g.folded ? '▸' : '▾'}</span> {g.group}{' '}
              <span className="muted">({g.count})</span>
            </div>
          ))}
          {layout.rows.map(header)}
          {layout.rows.length === 0 && (
            <div className="empty-tracks" style={{ top: layout.totalH + 8 }}>
              No tracks match “{filter}”.
            </div>
          )}
        </div>
      </div>
      <div className="tooltip" ref={tooltipRef} data-testid="tooltip" />
    </div>
  );
}

function TrackHeader({
  row,
  pinned,
  onCollapse,
  onPin,
  onHide,
}: {
  row: LayoutRow;
  pinned: boolean;
  onCollapse(): void;
  onPin(): void;
  onHide(): void;
}) {
  const t = row.track;
  return (
    <div
      className={`track-header${row.collapsed ? ' collapsed' : ''}`}
      style={{ top: row.y, height: row.h, width: HEADER_W }}
      data-testid={`track-${t.uri}`}
      data-uri={t.uri}
      title={`${t.title}${t.subtitle ? ` — ${t.subtitle}` : ''}`}
    >
      <button className="icon" onClick={onCollapse} aria-label={row.collapsed ? 'expand track' : 'collapse track'}>
        {row.collapsed ? '▸' : '▾'}
      </button>
      <span className="track-title">{t.title}</span>
      {!row.collapsed && row.h >= 30 && <span className="track-subtitle">{t.subtitle}</span>}
      <span className="track-actions">
        <button
          className={`icon${pinned ? ' on' : ''}`}
          onClick={onPin}
          aria-label={pinned ? 'unpin track' : 'pin track'}
          data-testid={`pin-${t.uri}`}
        >
          <PinIcon />
        </button>
        <button className="icon" onClick={onHide} aria-label="hide track">
          ×
        </button>
      </span>
    </div>
  );
}

function PinIcon() {
  return (
    <svg width="11" height="11" viewBox="0 0 16 16" aria-hidden="true">
      <path d="M10 1l5 5-2 1-3 3 0 4-1 1-3-3-4 4-1 0 0-1 4-4-3-3 1-1 4 0 3-3z" fill="currentColor" />
    </svg>
  );
}

function WindowLabel() {
  const t0 = useView((v) => v.t0);
  const t1 = useView((v) => v.t1);
  if (t0 === null || t1 === null) return null;
  return (
    <span className="window-label" data-testid="window-label">
      {formatDuration(t0)} + {formatDuration(t1 - t0)}
    </span>
  );
}

function TimelineToolbar({
  info,
  set,
  hiddenCount,
  controller,
}: {
  info: TrackList;
  set: TrackSet;
  hiddenCount: number;
  controller: TimelineController | null;
}) {
  const filter = useView((v) => v.filter);
  const hidden = useView((v) => v.hidden);
  const fit = () => controller?.setWindow({ t0: info.start, t1: info.end }, true);
  const zoom = (f: number) => {
    if (!controller) return;
    const { t0, t1 } = controller.win;
    const mid = (t0 + t1) / 2;
    const half = ((t1 - t0) * f) / 2;
    controller.setWindow({ t0: mid - half, t1: mid + half }, true);
  };
  return (
    <div className="timeline-toolbar">
      <input
        className="track-filter"
        data-testid="track-filter"
        placeholder="Filter tracks by name…"
        value={filter}
        onChange={(e) => viewStore.update({ filter: e.target.value }, { history: 'replace' })}
      />
      <button onClick={() => zoom(0.5)} title="Zoom in (W)" data-testid="zoom-in">
        +
      </button>
      <button onClick={() => zoom(2)} title="Zoom out (S)" data-testid="zoom-out">
        −
      </button>
      <button onClick={fit} title="Show the whole trace" data-testid="zoom-fit">
        Fit
      </button>
      {set.flows.length > 0 && (
        <span className="flow-toggles">
          Arrows:
          {set.flows.map((f) => (
            <label key={f.uri} title={`${f.count.toLocaleString('en')} links; drawn when the window is under 500 ms`}>
              <input
                type="checkbox"
                checked={!hidden.includes(f.uri)}
                onChange={() =>
                  viewStore.update(
                    { hidden: hidden.includes(f.uri) ? hidden.filter((u) => u !== f.uri) : [...hidden, f.uri] },
                    { history: 'replace' },
                  )
                }
              />
              {f.title}
            </label>
          ))}
        </span>
      )}
      {hiddenCount > 0 && (
        <button
          className="link"
          onClick={() =>
            viewStore.update({ hidden: hidden.filter((u) => u.startsWith('flow#')) }, { history: 'replace' })
          }
        >
          show {hiddenCount} hidden
        </button>
      )}
      <span
        className="help"
        title="W/S zoom · A/D pan · drag to pan · Ctrl+wheel zoom · [ ] findings · shift+drag a range · N add a note · L copy link · T copy as text"
      >
        W/S zoom · A/D pan · [ ] findings · shift+drag range · N note · L link · T text
      </span>
    </div>
  );
}
