/**
 * The panel under the timeline, in tabs (as Perfetto's bottom panel):
 * Details of the selection, the trace's Overview and Summaries (triage),
 * the Query page, the Events of the visible window, and the Range aggregates. Its height is dragged at its top edge
 * and remembered. A new shift+drag range opens the Range tab.
 */
import { lazy, Suspense, useEffect, useRef, useState, type ReactNode } from 'react';
import type { TrackList } from '../api/types.ts';
import { EventList } from '../event_list/event_list.tsx';
import { RangePanel, useRangeInLink } from '../range/range_panel.tsx';
import { smallStore } from '../state/small_store.ts';
import { useView } from '../state/view_store.ts';
import type { Track } from '../tracks/track.ts';
import './drawer.css';

// The query page (CodeMirror, ~400 kB) loads when its tab is first opened: the timeline's first paint does not wait for it.
const QueryPage = lazy(() => import('../query/query_page.tsx').then((m) => ({ default: m.QueryPage })));

export type DrawerTab = 'details' | 'overview' | 'summaries' | 'query' | 'events' | 'range';

const HEIGHT_KEY = 'stallscope.drawerHeight';
const MIN_H = 120;

export const drawerState = smallStore({
  tab: 'details' as DrawerTab,
  height: (typeof localStorage !== 'undefined' && Number(localStorage.getItem(HEIGHT_KEY))) || 300,
});

export function showDrawerTab(tab: DrawerTab): void {
  drawerState.set({ tab });
}

interface Props {
  traceId: string;
  info: TrackList;
  tracks: Track[];
  /** The Details tab's content (app/panels/details_panel.tsx). */
  details: ReactNode;
  /** The Overview tab: the trace's story per detector (app/panels/overview_panel.tsx). */
  overview: ReactNode;
  /** The Summaries tab: per-process, per-shrinker... tables (app/panels/summaries_panel.tsx). */
  summaries: ReactNode;
}

const TABS: Array<[DrawerTab, string, string]> = [
  ['details', 'Details', "The selection's fields and trace lines"],
  ['overview', 'Overview', 'What each detector found, in a few lines'],
  ['summaries', 'Summaries', 'Per process, per shrinker, per kswapd, per task: sortable tables'],
  ['query', 'Query', "SQL on the trace's model (Ctrl+Enter runs)"],
  ['events', 'Events', 'Every event of the visible window, filtered'],
  ['range', 'Range', 'Thread states, CPU time, events and slices of the shift+drag range'],
];

export function Drawer({ traceId, info, tracks, details, overview, summaries }: Props) {
  const tab = drawerState.use((s) => s.tab);
  const height = drawerState.use((s) => s.height);
  const range = useView((v) => v.range);
  const sel = useView((v) => v.sel);
  const lastSel = useRef(sel);
  const [queryMounted, setQueryMounted] = useState(tab === 'query');
  // null at first: a link that carries a range opens on its aggregates.
  const lastRange = useRef<typeof range>(null);
  useRangeInLink(traceId);

  useEffect(() => {
    if (tab === 'query') setQueryMounted(true);
  }, [tab]);

  // A new range (a drag, or a link's) opens its aggregates.
  useEffect(() => {
    const prev = lastRange.current;
    lastRange.current = range;
    if (range && (!prev || prev.t0 !== range.t0 || prev.t1 !== range.t1 || prev.track !== range.track))
      showDrawerTab('range');
  }, [range]);

  // Something selected while the Range tab is open: show its details (Events and Query follow the selection themselves).
  useEffect(() => {
    const prev = lastSel.current;
    lastSel.current = sel;
    if (sel && (prev?.kind !== sel.kind || prev?.id !== sel.id) && drawerState.get().tab === 'range')
      showDrawerTab('details');
  }, [sel]);

  const onDrag = (e: React.MouseEvent) => {
    e.preventDefault();
    const y0 = e.clientY;
    const h0 = height;
    const move = (ev: MouseEvent) =>
      drawerState.set({ height: Math.max(MIN_H, Math.min(window.innerHeight - 200, h0 + (y0 - ev.clientY))) });
    const up = () => {
      window.removeEventListener('mousemove', move);
      window.removeEventListener('mouseup', up);
      localStorage.setItem(HEIGHT_KEY, String(drawerState.get().height));
    };
    window.addEventListener('mousemove', move);
    window.addEventListener('mouseup', up);
  };

  return (
    <div className="drawer" style={{ height }} data-testid="drawer" data-tab={tab}>
      <div className="drawer-grip" onMouseDown={onDrag} title="Drag to resize" />
      <div className="drawer-tabs" role="tablist">
        {TABS.map(([id, label, title]) => (
          <button
            key={id}
            role="tab"
            aria-selected={tab === id}
            className={tab === id ? 'on' : ''}
            onClick={() => showDrawerTab(id)}
            title={title}
            data-testid={`tab-${id}`}
          >
            {label}
            {id === 'range' && range ? ' •' : ''}
          </button>
        ))}
      </div>
      <div className="drawer-body">
        {tab === 'details' && <div className="drawer-details">{details}</div>}
        {tab === 'overview' && (
          <div className="drawer-details details-panel" data-kind="overview">
            {overview}
          </div>
        )}
        {tab === 'summaries' && (
          <div className="drawer-details details-panel" data-kind="summaries">
            {summaries}
          </div>
        )}
        {queryMounted && (
          <div className="drawer-pane" style={{ display: tab === 'query' ? undefined : 'none' }}>
            <Suspense fallback={<div className="muted pad">Loading the query page…</div>}>
              <QueryPage traceId={traceId} info={info} />
            </Suspense>
          </div>
        )}
        {tab === 'events' && (
          <div className="drawer-pane">
            <EventList traceId={traceId} info={info} />
          </div>
        )}
        {tab === 'range' && (
          <div className="drawer-pane">
            <RangePanel traceId={traceId} tracks={tracks} />
          </div>
        )}
      </div>
    </div>
  );
}
