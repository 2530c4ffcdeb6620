/**
 * One open trace: timeline (left), findings (right), details (bottom).
 * Selecting a finding moves the timeline to it with context and links it:
 * its events are highlighted on every track they belong to, the rest dimmed.
 */
import { OpenInPerfetto } from '../perfetto/open_in_perfetto.tsx';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { api, ApiError } from '../api/client.ts';
import type { EventInfo, Finding, FindingsResponse, OverviewLine, TraceRecord, TrackList } from '../api/types.ts';
import { windowFor } from '../state/finding_nav.ts';
import {
  DEFAULT_QUERY,
  type FindingsQuery,
  childrenOf,
  listRows,
  navOrder,
  queryFindings,
  queryFromFilter,
  stepThrough,
} from '../state/findings_query.ts';
import { useView, viewStore } from '../state/view_store.ts';
import type { Selection } from '../state/view_state.ts';
import { formatBytes, formatCount, formatDuration } from '../time_axis/time_format.ts';
import { Timeline } from '../timeline/timeline.tsx';
import { isTyping } from '../timeline/keyboard_nav.ts';
import { buildTracks } from '../tracks/index.ts';
import { NO_HIGHLIGHT, type Highlight, type TrackEnv } from '../tracks/track.ts';
import { DetailsPanel, type TaskRef } from './details_panel.tsx';
import { OverviewPanel } from './overview_panel.tsx';
import { SummariesPanel } from './summaries_panel.tsx';
import { OutdatedModel } from './outdated_model.tsx';
import { FindingsPanel } from './findings_panel.tsx';
import { reconcileView } from '../notes/link_check.ts';
import { notesModel } from '../notes/notes_model.ts';
import { NoteEditor, NotesPanel } from '../notes/notes_ui.tsx';
import { RangeBar, SelectionNotes, noteOnSelection, useTraceNotes } from '../notes/trace_notes.tsx';
import { AnnotationsButtons, LinkNotesSection } from '../notes/link_notes_ui.tsx';
import { MissingTrace } from '../links/missing_trace.tsx';
import { EMPTY_VIEW } from '../state/view_state.ts';
import { Drawer, drawerState, showDrawerTab } from '../drawer/drawer.tsx';
import { onFindingsChanged } from '../query/findings_changed.ts';
import { openTrace } from '../query/query_state.ts';
import { SearchBox } from '../search/search_box.tsx';
import { SelectionTasks, useSelectedEvent } from '../search/task_links.tsx';
import { useAddedTracks } from '../tracks/added_tracks.ts';
import { useQueryTracks } from '../query/query_tracks.ts';
import { isTraceId } from '../../shared/contract/trace_id.ts';

interface Loaded {
  record: TraceRecord;
  tracks: TrackList;
  findings: FindingsResponse;
}

export function TraceView({ traceId }: { traceId: string }) {
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** Not in this library: the page asks for the file (app/links/missing_trace.tsx). */
  const [missing, setMissing] = useState(false);
  /** Bumped when the missing file was added: load again. */
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let live = true;
    setLoaded(null);
    setError(null);
    setMissing(false);
    Promise.all([api.trace(traceId), api.tracks(traceId), api.findings(traceId)]).then(
      ([record, tracks, findings]) => {
        if (!live) return;
        // A share link's window and finding, against this trace: the nearest sensible view, before the timeline opens.
        const byIndex = new Map(findings.findings.map((f) => [f.index, f]));
        const { patch, problems } = reconcileView(viewStore.get(), {
          start: tracks.start,
          end: tracks.end,
          findings: findings.findings.length,
          hasFinding: (id) => byIndex.has(id),
          uris: null,
          findingWindow: (i) => {
            const f = byIndex.get(i);
            return f ? windowFor(f) : null;
          },
        });
        if (Object.keys(patch).length) viewStore.update(patch, { history: 'replace' });
        notesModel.warn(problems);
        setLoaded({ record, tracks, findings });
      },
      (e: Error) => {
        if (!live) return;
        if (e instanceof ApiError && e.status === 404 && isTraceId(traceId)) {
          // A link to a trace this server does not have: ask for its file.
          setMissing(true);
          return;
        }
        if (e instanceof ApiError && (e.status === 404 || e.status === 400)) {
          notesModel.warn([
            `This link names trace ${traceId.slice(0, 12)}…, which is not a trace content hash (64 hex digits): showing the library.`,
          ]);
          viewStore.update({ ...EMPTY_VIEW }, { history: 'replace' });
          return;
        }
        setError(e.message);
      },
    );
    return () => {
      live = false;
    };
  }, [traceId, attempt]);

  // A detector saved from the query page: its findings join the list.
  useEffect(
    () =>
      onFindingsChanged(traceId, () => {
        api.findings(traceId).then(
          (findings) => setLoaded((l) => (l ? { ...l, findings } : l)),
          () => undefined,
        );
      }),
    [traceId],
  );

  if (missing) return <MissingTrace traceId={traceId} onReady={() => setAttempt((a) => a + 1)} />;

  if (error) {
    return (
      <div className="trace-error" data-testid="trace-error" role="alert">
        <h2>Cannot open this trace</h2>
        <p>{error}</p>
        <button onClick={() => viewStore.update({ trace: null, t0: null, t1: null, sel: null }, { history: 'push' })}>
          Back to the library
        </button>
      </div>
    );
  }
  if (!loaded)
    return (
      <div className="loading-trace" data-testid="trace-loading">
        Opening trace…
      </div>
    );
  return <LoadedTrace traceId={traceId} {...loaded} />;
}

function LoadedTrace({ traceId, record, tracks, findings }: Loaded & { traceId: string }) {
  const sel = useView((v) => v.sel);
  const threadNames = useMemo(() => new Map(tracks.threads.map((t) => [t.utid, t])), [tracks]);
  const envRef = useRef<TrackEnv | null>(null);
  const redrawRef = useRef<() => void>(() => {});
  useEffect(() => openTrace(traceId), [traceId]);
  const baseSet = useMemo(() => {
    const env: TrackEnv = {
      api,
      traceId,
      info: tracks,
      threadName: (utid) => {
        if (utid === null || Number.isNaN(utid)) return '?';
        const t = threadNames.get(utid);
        return t ? `${t.name ?? 'thread'} ${t.tid ?? ''}`.trim() : `utid ${utid}`;
      },
      redraw: () => redrawRef.current(),
    };
    envRef.current = env;
    return buildTracks(tracks, env);
  }, [traceId, tracks, threadNames]);
  // Threads added by hand (app/tracks/added_tracks.ts), then query results shown as tracks (app/query/query_tracks.ts).
  const set = useQueryTracks(useAddedTracks(baseSet, envRef.current!, tracks), envRef.current!, tracks);
  const selectedEvent = useSelectedEvent(traceId, sel);

  // The tab's (and the desktop window's) title names the trace.
  useEffect(() => {
    document.title = `${record.name} — stallscope`;
    return () => {
      document.title = 'stallscope';
    };
  }, [record.name]);

  // The findings list as the user has it: sorted, filtered, grouped; `]`/`[` step through it.
  const [query, setQuery] = useState<FindingsQuery>(DEFAULT_QUERY);
  const list = useMemo(() => queryFindings(findings.findings, query), [findings, query]);
  const rows = useMemo(() => listRows(list, query.group), [list, query.group]);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const toggleGroup = useCallback(
    (key: string) =>
      setExpanded((s) => {
        const n = new Set(s);
        if (n.has(key)) n.delete(key);
        else n.add(key);
        return n;
      }),
    [],
  );
  const byIndex = useMemo(() => new Map(findings.findings.map((f) => [f.index, f])), [findings]);
  const finding = sel?.kind === 'finding' ? (byIndex.get(sel.id) ?? null) : null;
  const order = useMemo(() => navOrder(rows, expanded, finding?.index ?? null), [rows, expanded, finding]);
  const children = useMemo(() => (finding ? childrenOf(findings.findings, finding.index) : []), [findings, finding]);
  const parent = finding && finding.parent_id !== null ? (byIndex.get(finding.parent_id) ?? null) : null;
  const detectorRun = finding ? (findings.detectors.find((d) => d.id === finding.detector) ?? null) : null;

  // The selected finding's first events (paged from the server: a finding of 30,000 events
  // cannot name them in a URL): for the details panel and for linking on the timeline.
  const [findingEvents, setFindingEvents] = useState<{ index: number; total: number; events: EventInfo[] } | null>(
    null,
  );
  useEffect(() => {
    if (!finding) return;
    let live = true;
    api.findingEvents(traceId, finding.index, 0, 500).then(
      (r) => live && setFindingEvents({ index: finding.index, total: r.total, events: r.events }),
      () => live && setFindingEvents({ index: finding.index, total: finding.event_ids.length, events: [] }),
    );
    return () => {
      live = false;
    };
  }, [traceId, finding]);
  const firstEvents = finding && findingEvents?.index === finding.index ? findingEvents : null;
  const events = firstEvents ? firstEvents.events : null;

  // The drawer shows the trace's overview until something is selected, then its details
  // (the Query and Events tabs keep their place: they follow the selection themselves).
  // Keyed by what is selected, not by the selection object (new at each view change), so a tab the
  // user picked stays until the selection itself changes.
  const selected = sel ? `${sel.kind}:${sel.id}` : null;
  useEffect(() => {
    const tab = drawerState.get().tab;
    if (selected !== null && (tab === 'overview' || tab === 'summaries')) showDrawerTab('details');
    else if (selected === null && tab === 'details') showDrawerTab('overview');
  }, [selected]);

  const hl: Highlight = useMemo(() => {
    if (finding) {
      return {
        active: finding.event_ids.length > 0,
        ids: new Set(finding.event_ids),
        events: events ?? [],
        range: { ts: finding.ts, dur: finding.dur },
        selection: sel,
      };
    }
    if (sel)
      return {
        ...NO_HIGHLIGHT,
        ids: sel.kind === 'event' ? new Set([sel.id]) : new Set<number>(),
        events: selectedEvent ? [selectedEvent] : [],
        selection: sel,
      };
    return NO_HIGHLIGHT;
  }, [finding, events, sel, selectedEvent]);

  const selectFinding = useCallback((f: Finding) => {
    notesModel.setRange(null);
    const sel: Selection = { kind: 'finding', id: f.index };
    viewStore.update({ sel, note: keepNoteRef.current(sel), ...windowFor(f) }, { history: 'push' });
  }, []);

  const step = useCallback(
    (dir: 1 | -1) => {
      const v = viewStore.get();
      const next = stepThrough(order, v.sel?.kind === 'finding' ? v.sel.id : null, dir);
      if (next) selectFinding(next);
    },
    [order, selectFinding],
  );

  const onOverviewLine = useCallback(
    (l: OverviewLine) => {
      if (l.filter) setQuery((q) => queryFromFilter(l.filter!, q));
      const f = l.finding_id !== null ? byIndex.get(l.finding_id) : undefined;
      if (f) selectFinding(f);
    },
    [byIndex, selectFinding],
  );

  /** A task named in a finding's values: its findings, its thread pinned at the top of the timeline. */
  const onTask = useCallback(
    (t: TaskRef) => {
      if (t.comm) setQuery((q) => ({ ...DEFAULT_QUERY, sort: q.sort, group: q.group, comm: t.comm }));
      const utid =
        t.utid ??
        (t.tid !== null
          ? (tracks.threads.find((th) => th.tid === t.tid && (t.comm === null || th.name === t.comm))?.utid ?? null)
          : null);
      if (utid !== null) {
        const uri = `thread#${utid}`;
        const v = viewStore.get();
        if (!v.pinned.includes(uri))
          viewStore.update(
            { pinned: [...v.pinned, uri], hidden: v.hidden.filter((h) => h !== uri) },
            { history: 'push' },
          );
      }
    },
    [tracks],
  );

  const tn = useTraceNotes(traceId, findings.findings, record);
  const tnRef = useRef(tn);
  tnRef.current = tn;
  /** The focused note stays in focus while what it is attached to stays selected. */
  const keepNote = (s: Selection | null): string | null => {
    const id = viewStore.get().note;
    const n = id ? tn.notes.find((x) => x.id === id) : null;
    return n && noteOnSelection(n, s) ? id : null;
  };
  const keepNoteRef = useRef(keepNote);
  keepNoteRef.current = keepNote;

  const onSelect = useCallback((s: Selection | null, track?: string) => {
    tnRef.current.lastTrack.current = track ?? null;
    notesModel.setRange(null);
    viewStore.update({ sel: s, note: keepNoteRef.current(s) }, { history: 'push' });
  }, []);

  // Tracks named by a share link that this trace does not have: dropped, with a message.
  useEffect(() => {
    const uris = new Set([...set.tracks.map((t) => t.uri), ...set.flows.map((f) => f.uri)]);
    const { patch, problems } = reconcileView(viewStore.get(), {
      start: tracks.start,
      end: tracks.end,
      findings: findings.findings.length,
      uris,
    });
    const trackPatch = {
      ...(patch.pinned ? { pinned: patch.pinned, hidden: patch.hidden, collapsed: patch.collapsed } : {}),
    };
    if (Object.keys(trackPatch).length) viewStore.update(trackPatch, { history: 'replace' });
    notesModel.warn(problems.filter((p) => /track/.test(p)));
  }, [set, tracks, findings]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === ']') {
        e.preventDefault();
        step(1);
      } else if (e.key === '[') {
        e.preventDefault();
        step(-1);
      } else if (e.key === 'Escape') {
        if (notesModel.get().editor) notesModel.closeEditor();
        else if (notesModel.get().range) notesModel.setRange(null);
        else viewStore.update({ sel: null, note: null }, { history: 'push' });
      } else if (e.key === 'l' || e.key === 'L') {
        e.preventDefault();
        tnRef.current.copyCurrentLink();
      } else if (e.key === 'n' || e.key === 'N') {
        e.preventDefault();
        void tnRef.current.addNote();
      } else if (e.key === 't' || e.key === 'T') {
        e.preventDefault();
        void tnRef.current.copyAsText();
      } else if (e.key === 'f' && viewStore.get().sel?.kind === 'finding') {
        const f = byIndex.get(viewStore.get().sel!.id);
        if (f) viewStore.update(windowFor(f), { history: 'replace' });
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [step, byIndex]);

  // A link naming a finding but no window: show the finding.
  useEffect(() => {
    const v = viewStore.get();
    if (finding && v.t0 === null) viewStore.update(windowFor(finding), { history: 'replace' });
  }, [finding]);

  return (
    <div className="trace-view" data-testid="trace-view" data-trace-id={traceId}>
      <header className="topbar">
        <button
          className="brand"
          onClick={() => viewStore.update({ trace: null, t0: null, t1: null, sel: null }, { history: 'push' })}
          title="Back to the library"
          data-testid="home"
        >
          stallscope
        </button>
        <span className="trace-name" data-testid="trace-name">
          {record.name}
        </span>
        <span className="trace-facts muted">
          {record.format}
          {record.formatVersion ? ` v${record.formatVersion}` : ''}
          {record.kernel ? ` · ${record.kernel}` : ''}
          {record.cpus ? ` · ${record.cpus} CPUs` : ''}
          {` · ${formatCount(record.eventsTotal)} events · ${formatBytes(record.sizeBytes)} · ${formatDuration(tracks.end - tracks.start)}`}
        </span>
        <SearchBox traceId={traceId} />
        <IngestGaps record={record} />
        {record.outdated && <OutdatedModel record={record} />}
        <span className="topbar-actions">
          <button
            onClick={() => void tn.addNote()}
            title="Add a note to the selection or the shift+drag range (N)"
            data-testid="topbar-add-note"
          >
            Add note
          </button>
          <button
            onClick={() => void tn.copyAsText()}
            title="Copy the selection as text for an email: trace lines, values, notes, link (T)"
            data-testid="topbar-copy-text"
          >
            Copy as text
          </button>
          <button
            className="primary"
            onClick={tn.copyCurrentLink}
            title="Copy a link to exactly this view (L)"
            data-testid="copy-link"
          >
            Copy link
          </button>
        </span>
      </header>
      <div className="trace-body">
        <div className="main-col">
          <Timeline
            traceId={traceId}
            info={tracks}
            set={set}
            hl={hl}
            onSelect={onSelect}
            onController={(c) => {
              redrawRef.current = c ? () => c.redraw() : () => {};
            }}
            notes={tn.marks}
            focusedNote={tn.focused}
            range={tn.range}
            onRange={tn.onRange}
            onNote={tn.focusNoteId}
          />
          <RangeBar tn={tn} />
          <Drawer
            traceId={traceId}
            info={tracks}
            tracks={set.tracks}
            details={
              <DetailsPanel
                traceId={traceId}
                selection={sel}
                finding={finding}
                findingEvents={firstEvents}
                children={children}
                parent={parent}
                detector={detectorRun}
                threads={threadNames}
                onSelect={onSelect}
                onSelectFinding={selectFinding}
                onTask={onTask}
                extra={
                  sel ? (
                    <>
                      <SelectionTasks traceId={traceId} sel={sel} info={tracks} />
                      <SelectionNotes tn={tn} sel={sel} />
                    </>
                  ) : null
                }
              />
            }
            overview={<OverviewPanel findings={findings} onLine={onOverviewLine} />}
            summaries={
              <SummariesPanel
                findings={findings}
                base={
                  record.firstTs !== null && /^\d+$/.test(String(record.firstTs))
                    ? BigInt(String(record.firstTs))
                    : null
                }
                onFilter={(f) => setQuery((q) => queryFromFilter(f, q))}
              />
            }
          />
        </div>
        <div className="side-col">
          <FindingsPanel
            findings={findings.findings}
            rows={rows}
            listed={list}
            counts={findings.counts}
            detectors={findings.detectors ?? []}
            query={query}
            onQuery={setQuery}
            expanded={expanded}
            onToggleGroup={toggleGroup}
            selected={finding?.index ?? null}
            onSelect={selectFinding}
            onStep={step}
          />
          <NotesPanel
            labelFor={tn.labelFor}
            focused={tn.focused}
            onFocus={tn.focusNote}
            onCopyLink={tn.copyNoteLink}
            onExport={tn.exportFile}
            exportExtra={
              <>
                <AnnotationsButtons tn={tn} />
                <OpenInPerfetto traceId={traceId} title={record.name} />
              </>
            }
            top={<LinkNotesSection tn={tn} />}
          />
        </div>
      </div>
      <NoteEditor />
    </div>
  );
}

/**
 * What the trace is missing, in the top bar where the trace is named: a
 * reviewer reading a stall off the timeline must know the file had lost
 * events or lines the decoder could not read. The details are in the model
 * (`ingest_problem`, `lost_events`) and `stallscope info FILE --json`.
 */
function IngestGaps({ record }: { record: TraceRecord }) {
  const cutOff = record.cutOff ?? null;
  const skipped = (record.skippedInputs ?? 0) - (cutOff ? 1 : 0);
  const lost = record.lostEvents ?? 0;
  const notices = record.lostEventNotices ?? 0;
  if (!cutOff && skipped === 0 && lost === 0 && notices === 0) return null;
  const unit = record.format === 'trace_dat' ? 'damaged byte range' : 'line';
  const parts: string[] = [];
  // A cut-off download: everything after the cut is missing, which matters more than any skipped line.
  if (cutOff) parts.push(`file cut off at compressed byte ${cutOff.where.toLocaleString('en')}: the rest is missing`);
  if (skipped > 0) parts.push(`${formatCount(skipped)} ${unit}${skipped === 1 ? '' : 's'} skipped`);
  if (lost > 0) parts.push(`${formatCount(lost)} event${lost === 1 ? '' : 's'} lost by the kernel`);
  // Notices without a count: the kernel overwrote or dropped events and did not say how many.
  else if (notices > 0) parts.push('events lost by the kernel (count not recorded)');
  const first = (record.firstSkipped ?? []).map(
    (p) => `${p.unit === 'line' ? 'line' : 'offset'} ${p.where}: ${p.reason}`,
  );
  return (
    <span
      className="ingest-gaps"
      data-testid="ingest-gaps"
      title={[
        'The trace is not complete. Skipped inputs are the ingest_problem table (where, reason, excerpt) and lost events the lost_events table; ' +
          '`stallscope info FILE --json` prints the first ones.',
        ...(cutOff ? ['', `Cut off: ${cutOff.reason}`] : []),
        ...(first.length ? ['', 'First skipped:', ...first] : []),
      ].join('\n')}
    >
      {parts.join(' · ')}
    </span>
  );
}
