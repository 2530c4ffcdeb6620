/**
 * Details of the selection: a finding's values (structured ones as small
 * tables: priority steps with relative and absolute times, movers and wakers
 * as "comm pid on CPU n" links that select that task) and its raw trace
 * lines, paged from the server whatever the finding's size; or an event's /
 * slice's / thread state's fields.
 */
import { useEffect, useState, type ReactNode } from 'react';
import { api } from '../api/client.ts';
import type { DetectorRun, EventInfo, Finding, ThreadInfo } from '../api/types.ts';
import type { Selection } from '../state/view_state.ts';
import { formatAbsTs, formatDuration } from '../time_axis/time_format.ts';
import { detectorLabel, kindLabel } from '../../shared/contract/labels.ts';

/** Lines per page of a finding's events. */
const PAGE = 500;

/** A task a value names: select it (filter its findings, pin its thread). */
export interface TaskRef {
  utid: number | null;
  tid: number | null;
  comm: string | null;
}

interface Props {
  traceId: string;
  selection: Selection | null;
  finding: Finding | null;
  /** The first page of the finding's events once loaded (shared with the timeline highlight). */
  findingEvents: { total: number; events: EventInfo[] } | null;
  /** The findings it covers (a repeated ramp-up's episodes), and the one covering it. */
  children: Finding[];
  parent: Finding | null;
  detector: DetectorRun | null;
  threads: Map<number, ThreadInfo>;
  onSelect(sel: Selection): void;
  onSelectFinding(f: Finding): void;
  onTask(t: TaskRef): void;
  /** Shown under the selection's fields: its notes and actions (app/notes). */
  extra?: ReactNode;
}

type Loaded =
  | { kind: 'event'; event: EventInfo }
  | { kind: 'row'; table: string; row: Record<string, unknown>; events: EventInfo[] }
  | { kind: 'error'; message: string };

const ROW_TABLE = { sched: 'sched_slice', state: 'thread_state', slice: 'slice' } as const;

export function DetailsPanel({
  traceId,
  selection,
  finding,
  findingEvents,
  children,
  parent,
  detector,
  threads,
  onSelect,
  onSelectFinding,
  onTask,
  extra,
}: Props) {
  const [loaded, setLoaded] = useState<Loaded | null>(null);

  // Loaded by what is selected (kind and id), not by the selection object, which is new at each view change.
  const selKind = selection?.kind;
  const selId = selection?.id;
  useEffect(() => {
    setLoaded(null);
    if (selKind === undefined || selId === undefined || selKind === 'finding') return;
    let live = true;
    const p =
      selKind === 'event'
        ? api.event(traceId, selId).then((event): Loaded => ({ kind: 'event', event }))
        : api.row(traceId, ROW_TABLE[selKind], selId).then((r): Loaded => ({ kind: 'row', ...r }));
    p.then(
      (l) => live && setLoaded(l),
      (e: Error) => live && setLoaded({ kind: 'error', message: e.message }),
    );
    return () => {
      live = false;
    };
  }, [traceId, selKind, selId]);

  if (!selection) {
    return (
      <div className="details-panel empty" data-testid="details-panel">
        Select a finding on the right, or click anything on the timeline to see its fields.
      </div>
    );
  }
  if (selection.kind === 'finding') {
    if (!finding)
      return (
        <div className="details-panel" data-testid="details-panel">
          <div className="error">No finding {selection.id} in this trace (the link may be stale).</div>
        </div>
      );
    return (
      <div className="details-panel" data-testid="details-panel" data-kind="finding">
        <div className="details-cols">
          <div className="details-main">
            <h3>
              <span className={`sev-chip ${finding.severity}`}>{finding.severity}</span> {finding.title}
            </h3>
            <table className="kv">
              <tbody>
                <tr>
                  <th>Detector</th>
                  <td>
                    {detectorLabel(finding.detector)}{' '}
                    <span className="muted">({kindLabel(finding.detector, finding.kind)})</span>
                  </td>
                </tr>
                <tr>
                  <th>Start</th>
                  <td>
                    {formatDuration(finding.ts, 6)} <span className="muted">({formatAbsTs(finding.ts_ns)} s)</span>
                  </td>
                </tr>
                <tr>
                  <th>Duration</th>
                  <td data-testid="details-duration">{formatDuration(finding.dur)}</td>
                </tr>
                <tr>
                  <th>Impact</th>
                  <td data-testid="details-impact" title={detector?.impact ? `Impact: ${detector.impact}` : undefined}>
                    {formatDuration(finding.impact)} <span className="muted">(rank {finding.rank})</span>
                  </td>
                </tr>
                {(detector?.severity_rule || detector?.impact) && (
                  <tr>
                    <th>Rated</th>
                    <td>
                      <details className="rule" data-testid="details-severity-rule">
                        <summary className="muted">why {finding.severity}</summary>
                        {detector?.severity_rule && <div>{detector.severity_rule}</div>}
                        {detector?.impact && <div className="muted">Impact: {detector.impact}</div>}
                      </details>
                    </td>
                  </tr>
                )}
                {finding.cpu !== null && (
                  <tr>
                    <th>CPU</th>
                    <td>{finding.cpu}</td>
                  </tr>
                )}
                {(finding.comm || finding.tid !== null) && (
                  <tr>
                    <th>Task</th>
                    <td>
                      <TaskLink t={{ utid: null, tid: finding.tid, comm: finding.comm }} onTask={onTask} />
                    </td>
                  </tr>
                )}
                {parent && (
                  <tr>
                    <th>Part of</th>
                    <td>
                      <button className="link" data-testid="details-parent" onClick={() => onSelectFinding(parent)}>
                        {parent.title}
                      </button>
                    </td>
                  </tr>
                )}
                {Object.entries(finding.values).map(([k, v]) => (
                  <ValueRow key={k} name={k} v={v} finding={finding} threads={threads} onTask={onTask} />
                ))}
              </tbody>
            </table>
            {children.length > 0 && (
              <div className="children" data-testid="details-children">
                <h4>
                  Covers {children.length} finding{children.length === 1 ? '' : 's'}
                </h4>
                <ul>
                  {children.map((c) => (
                    <li key={c.index}>
                      <span className={`sev-dot ${c.severity}`} />{' '}
                      <button className="link" onClick={() => onSelectFinding(c)}>
                        {c.title}
                      </button>
                    </li>
                  ))}
                </ul>
              </div>
            )}
            {extra}
          </div>
          <div className="details-raw">
            <FindingLines traceId={traceId} finding={finding} first={findingEvents} onSelect={onSelect} />
          </div>
        </div>
      </div>
    );
  }
  if (!loaded)
    return (
      <div className="details-panel" data-testid="details-panel">
        <span className="muted">Loading…</span>
      </div>
    );
  if (loaded.kind === 'error')
    return (
      <div className="details-panel" data-testid="details-panel">
        <div className="error">{loaded.message}</div>
      </div>
    );
  if (loaded.kind === 'event') {
    const e = loaded.event;
    return (
      <div className="details-panel" data-testid="details-panel" data-kind="event">
        <div className="details-cols">
          <div className="details-main">
            <h3>
              {e.name} <span className="muted">event {e.id}</span>
            </h3>
            <table className="kv">
              <tbody>
                <tr>
                  <th>Time</th>
                  <td>
                    {formatDuration(e.ts, 6)} <span className="muted">({formatAbsTs(e.ts_ns)} s)</span>
                  </td>
                </tr>
                <tr>
                  <th>CPU</th>
                  <td>{e.cpu}</td>
                </tr>
                <tr>
                  <th>Task</th>
                  <td>
                    <TaskLink t={{ utid: e.utid, tid: e.tid, comm: e.comm }} onTask={onTask} />
                  </td>
                </tr>
                {Object.entries(e.fields).map(([k, v]) => (
                  <tr key={k}>
                    <th>{k}</th>
                    <td>{formatValue(v)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {extra}
          </div>
          <div className="details-raw">
            <h4>Trace line</h4>
            <RawLines events={[e]} onSelect={onSelect} />
          </div>
        </div>
      </div>
    );
  }
  const r = loaded.row;
  const title =
    loaded.table === 'sched_slice'
      ? 'Running'
      : loaded.table === 'thread_state'
        ? `Thread state ${String(r.state ?? '')}`
        : `${String(r.category ?? 'slice')}: ${String(r.name ?? '')}`;
  const skip = new Set(['ts', 'ts_ns', 'dur', 'tid', 'thread_name', 'utid', 'waker_utid', 'waker_id']);
  const endLost = loaded.table === 'slice' && r.end_id === null && Number(r.dur) >= 0;
  const wakerEvent =
    loaded.table === 'thread_state' && r.waker_id !== null && r.waker_id !== undefined
      ? loaded.events.find((e) => e.id === Number(r.waker_id))
      : undefined;
  const waker = r.waker_utid !== null && r.waker_utid !== undefined ? threads.get(Number(r.waker_utid)) : undefined;
  return (
    <div className="details-panel" data-testid="details-panel" data-kind={loaded.table}>
      <div className="details-cols">
        <div className="details-main">
          <h3>
            {title} <span className="muted">{r.thread_name ? `${String(r.thread_name)} (${String(r.tid)})` : ''}</span>
          </h3>
          <table className="kv">
            <tbody>
              <tr>
                <th>Start</th>
                <td>
                  {formatDuration(Number(r.ts), 6)} <span className="muted">({formatAbsTs(String(r.ts_ns))} s)</span>
                </td>
              </tr>
              <tr>
                <th>Duration</th>
                <td data-testid="details-duration">
                  {Number(r.dur) < 0 ? 'did not end in the trace' : formatDuration(Number(r.dur))}
                  {endLost && (
                    <span className="muted" data-testid="details-end-lost">
                      {' '}
                      (its end event was lost: drawn to the thread's next event, which it had returned by)
                    </span>
                  )}
                </td>
              </tr>
              {(waker || wakerEvent) && (
                <tr>
                  <th>Woken by</th>
                  <td data-testid="details-waker">
                    <TaskLink
                      t={{
                        utid: Number(r.waker_utid ?? null),
                        tid: waker?.tid ?? wakerEvent?.tid ?? null,
                        comm: waker?.name ?? wakerEvent?.comm ?? null,
                      }}
                      cpu={wakerEvent?.cpu ?? null}
                      onTask={onTask}
                    />
                    {wakerEvent && (
                      <>
                        {' '}
                        <button className="link muted" onClick={() => onSelect({ kind: 'event', id: wakerEvent.id })}>
                          (its sched_waking)
                        </button>
                      </>
                    )}
                  </td>
                </tr>
              )}
              {Object.entries(r)
                .filter(([k, v]) => !skip.has(k) && v !== null)
                .map(([k, v]) => (
                  <tr key={k}>
                    <th>{k}</th>
                    <td>{formatValue(v)}</td>
                  </tr>
                ))}
            </tbody>
          </table>
          {extra}
        </div>
        <div className="details-raw">
          <h4>Trace lines</h4>
          <RawLines events={loaded.events} onSelect={onSelect} />
        </div>
      </div>
    </div>
  );
}

/** "comm pid on CPU n": selects the task (filters its findings, pins its thread). */
function TaskLink({
  t,
  cpu = null,
  count,
  onTask,
}: {
  t: TaskRef;
  cpu?: number | null;
  count?: number;
  onTask(t: TaskRef): void;
}) {
  const text = `${t.comm ?? '?'} ${t.tid ?? '?'}${cpu !== null ? ` on CPU ${cpu}` : ''}`;
  return (
    <span className="task-ref">
      <button
        className="link"
        data-testid="task-link"
        data-tid={t.tid ?? ''}
        onClick={() => onTask(t)}
        title="Show this task: its findings, its thread pinned on the timeline"
      >
        {text}
      </button>
      {count !== undefined && <span className="muted"> ×{count}</span>}
    </span>
  );
}

function ValueRow({
  name,
  v,
  finding,
  threads,
  onTask,
}: {
  name: string;
  v: unknown;
  finding: Finding;
  threads: Map<number, ThreadInfo>;
  onTask(t: TaskRef): void;
}) {
  if (v === false) return null; // flags that are not set say nothing
  if (name === 'priority_steps' && Array.isArray(v)) {
    return (
      <tr data-testid={`value-${name}`}>
        <th>priority steps</th>
        <td>
          <table className="mini" data-testid="priority-steps">
            <thead>
              <tr>
                <th>priority</th>
                <th>after</th>
                <th>at</th>
              </tr>
            </thead>
            <tbody>
              {(v as Array<{ priority: number; at_ns: number }>).map((s, i) => (
                <tr key={i}>
                  <td>{s.priority}</td>
                  <td>+{formatDuration(Number(s.at_ns))}</td>
                  <td className="muted">
                    {formatDuration(finding.ts + Number(s.at_ns), 6)}{' '}
                    <span>({formatAbsTs(String(BigInt(finding.ts_ns) + BigInt(Math.round(Number(s.at_ns)))))} s)</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </td>
      </tr>
    );
  }
  if ((name === 'movers' || name === 'wakers') && Array.isArray(v)) {
    return (
      <tr data-testid={`value-${name}`}>
        <th>{name === 'movers' ? 'moved by' : 'woken by'}</th>
        <td>
          {(
            v as Array<{
              tid: number | null;
              comm: string | null;
              cpu?: number | null;
              utid?: number | null;
              count: number;
            }>
          ).map((t, i) => (
            <div key={i}>
              <TaskLink
                t={{
                  utid: t.utid ?? null,
                  tid: t.tid,
                  comm: t.comm ?? (t.utid != null ? (threads.get(t.utid)?.name ?? null) : null),
                }}
                cpu={t.cpu ?? null}
                count={t.count}
                onTask={onTask}
              />
            </div>
          ))}
        </td>
      </tr>
    );
  }
  const label = name.replace(/_ns$/, '').replace(/_/g, ' ');
  let text: string;
  if (/_ns$/.test(name) && typeof v === 'number') text = formatDuration(v);
  else if (v === true) text = 'yes';
  else if (Array.isArray(v) && v.every((x) => typeof x !== 'object')) text = v.join(', ');
  else text = formatValue(v);
  return (
    <tr data-testid={`value-${name}`}>
      <th>{label}</th>
      <td>{text}</td>
    </tr>
  );
}

/** A finding's events, a page at a time from the server (never their ids in a URL). */
function FindingLines({
  traceId,
  finding,
  first,
  onSelect,
}: {
  traceId: string;
  finding: Finding;
  first: { total: number; events: EventInfo[] } | null;
  onSelect(sel: Selection): void;
}) {
  const [more, setMore] = useState<EventInfo[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    setMore([]);
    setError(null);
  }, [finding.index]);
  const events = first ? [...first.events, ...more] : null;
  const total = first?.total ?? finding.event_ids.length;
  const loadMore = () => {
    if (!events) return;
    setBusy(true);
    api.findingEvents(traceId, finding.index, events.length, PAGE).then(
      (r) => {
        setMore((m) => [...m, ...r.events]);
        setBusy(false);
      },
      (e: Error) => {
        setError(e.message);
        setBusy(false);
      },
    );
  };
  return (
    <>
      <h4>
        Trace lines{' '}
        <span className="muted" data-testid="raw-lines-count">
          ({total.toLocaleString('en')} event{total === 1 ? '' : 's'})
        </span>
      </h4>
      {error && <div className="error">{error}</div>}
      <RawLines events={events} onSelect={onSelect} />
      {events && events.length < total && (
        <button className="link" disabled={busy} onClick={loadMore} data-testid="raw-lines-more">
          {busy
            ? 'loading…'
            : `show ${Math.min(PAGE, total - events.length).toLocaleString('en')} more of ${(total - events.length).toLocaleString('en')}`}
        </button>
      )}
    </>
  );
}

function RawLines({ events, onSelect }: { events: EventInfo[] | null; onSelect(sel: Selection): void }) {
  if (!events) return <div className="muted">Loading…</div>;
  if (!events.length) return <div className="muted">No raw events recorded for this.</div>;
  return (
    <div className="raw-lines" data-testid="raw-lines">
      {events.map((e) => (
        <div
          key={e.id}
          className="raw-line"
          onClick={() => onSelect({ kind: 'event', id: e.id })}
          title="Select this event"
        >
          {e.line}
        </div>
      ))}
    </div>
  );
}

function formatValue(v: unknown): string {
  if (typeof v === 'number')
    return Number.isInteger(v) ? v.toLocaleString('en') : v.toLocaleString('en', { maximumFractionDigits: 3 });
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
