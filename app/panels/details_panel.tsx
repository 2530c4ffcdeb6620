/** Details of the selection: a finding's values and raw trace lines, or an event's / slice's fields. */
import { useEffect, useState, type ReactNode } from 'react';
import { api } from '../api/client.ts';
import type { EventInfo, Finding } from '../api/types.ts';
import type { Selection } from '../state/view_state.ts';
import { formatAbsTs, formatDuration } from '../timeline/time_format.ts';
import { DETECTOR_TITLES } from './findings_panel.tsx';

const MAX_LINES = 500;

interface Props {
  traceId: string;
  selection: Selection | null;
  finding: Finding | null;
  /** The finding's events once loaded (shared with the timeline highlight). */
  findingEvents: EventInfo[] | null;
  onSelect(sel: Selection): void;
  /** Shown under the selection's fields: its notes and actions (app/notes). */
  extra?: ReactNode;
}

type Loaded =
  | { kind: 'event'; event: EventInfo }
  | { kind: 'row'; table: string; row: Record<string, unknown>; events: EventInfo[] }
  | { kind: 'error'; message: string };

const ROW_TABLE = { sched: 'sched_slice', state: 'thread_state', slice: 'slice' } as const;

export function DetailsPanel({ traceId, selection, finding, findingEvents, onSelect, extra }: Props) {
  const [loaded, setLoaded] = useState<Loaded | null>(null);

  useEffect(() => {
    setLoaded(null);
    if (!selection || selection.kind === 'finding') return;
    let live = true;
    const p =
      selection.kind === 'event'
        ? api.event(traceId, selection.id).then((event): Loaded => ({ kind: 'event', event }))
        : api.row(traceId, ROW_TABLE[selection.kind], selection.id).then((r): Loaded => ({ kind: 'row', ...r }));
    p.then(
      (l) => live && setLoaded(l),
      (e: Error) => live && setLoaded({ kind: 'error', message: e.message }),
    );
    return () => { live = false; };
  }, [traceId, selection?.kind, selection?.id]);

  if (!selection) {
    return (
      <div className="details-panel empty" data-testid="details-panel">
        Select a finding on the right, or click anything on the timeline to see its fields.
      </div>
    );
  }
  if (selection.kind === 'finding') {
    if (!finding) return <div className="details-panel" data-testid="details-panel"><div className="error">No finding {selection.id} in this trace (the link may be stale).</div></div>;
    return (
      <div className="details-panel" data-testid="details-panel" data-kind="finding">
        <div className="details-cols">
          <div className="details-main">
            <h3>
              <span className={`sev-chip ${finding.severity}`}>{finding.severity}</span> {finding.title}
            </h3>
            <table className="kv">
              <tbody>
                <tr><th>Detector</th><td>{DETECTOR_TITLES[finding.detector] ?? finding.detector} <span className="muted">({finding.kind})</span></td></tr>
                <tr><th>Start</th><td>{formatDuration(finding.ts, 6)} <span className="muted">({formatAbsTs(finding.ts_ns)} s)</span></td></tr>
                <tr><th>Duration</th><td data-testid="details-duration">{formatDuration(finding.dur)}</td></tr>
                {finding.cpu !== null && <tr><th>CPU</th><td>{finding.cpu}</td></tr>}
                {(finding.comm || finding.tid !== null) && <tr><th>Task</th><td>{finding.comm ?? ''} {finding.tid !== null ? `(${finding.tid})` : ''}</td></tr>}
                {Object.entries(finding.values).map(([k, v]) => (
                  <tr key={k} data-testid={`value-${k}`}><th>{k}</th><td>{formatValue(v)}</td></tr>
                ))}
              </tbody>
            </table>
            {extra}
          </div>
          <div className="details-raw">
            <h4>Trace lines <span className="muted">({finding.event_ids.length} events)</span></h4>
            <RawLines events={findingEvents} onSelect={onSelect} total={finding.event_ids.length} />
          </div>
        </div>
      </div>
    );
  }
  if (!loaded) return <div className="details-panel" data-testid="details-panel"><span className="muted">Loading…</span></div>;
  if (loaded.kind === 'error') return <div className="details-panel" data-testid="details-panel"><div className="error">{loaded.message}</div></div>;
  if (loaded.kind === 'event') {
    const e = loaded.event;
    return (
      <div className="details-panel" data-testid="details-panel" data-kind="event">
        <div className="details-cols">
          <div className="details-main">
            <h3>{e.name} <span className="muted">event {e.id}</span></h3>
            <table className="kv">
              <tbody>
                <tr><th>Time</th><td>{formatDuration(e.ts, 6)} <span className="muted">({formatAbsTs(e.ts_ns)} s)</span></td></tr>
                <tr><th>CPU</th><td>{e.cpu}</td></tr>
                <tr><th>Task</th><td>{e.comm ?? '?'} ({e.tid ?? '?'})</td></tr>
                {Object.entries(e.fields).map(([k, v]) => <tr key={k}><th>{k}</th><td>{formatValue(v)}</td></tr>)}
              </tbody>
            </table>
            {extra}
          </div>
          <div className="details-raw">
            <h4>Trace line</h4>
            <RawLines events={[e]} onSelect={onSelect} total={1} />
          </div>
        </div>
      </div>
    );
  }
  const r = loaded.row;
  const title = loaded.table === 'sched_slice' ? 'Running' : loaded.table === 'thread_state' ? `Thread state ${String(r.state ?? '')}` : `${String(r.category ?? 'slice')}: ${String(r.name ?? '')}`;
  const skip = new Set(['ts', 'ts_ns', 'dur', 'tid', 'thread_name', 'utid']);
  return (
    <div className="details-panel" data-testid="details-panel" data-kind={loaded.table}>
      <div className="details-cols">
        <div className="details-main">
          <h3>{title} <span className="muted">{r.thread_name ? `${String(r.thread_name)} (${String(r.tid)})` : ''}</span></h3>
          <table className="kv">
            <tbody>
              <tr><th>Start</th><td>{formatDuration(Number(r.ts), 6)} <span className="muted">({formatAbsTs(String(r.ts_ns))} s)</span></td></tr>
              <tr><th>Duration</th><td data-testid="details-duration">{Number(r.dur) < 0 ? 'did not end in the trace' : formatDuration(Number(r.dur))}</td></tr>
              {Object.entries(r).filter(([k, v]) => !skip.has(k) && v !== null).map(([k, v]) => <tr key={k}><th>{k}</th><td>{formatValue(v)}</td></tr>)}
            </tbody>
          </table>
          {extra}
        </div>
        <div className="details-raw">
          <h4>Trace lines</h4>
          <RawLines events={loaded.events} onSelect={onSelect} total={loaded.events.length} />
        </div>
      </div>
    </div>
  );
}

function RawLines({ events, onSelect, total }: { events: EventInfo[] | null; onSelect(sel: Selection): void; total: number }) {
  if (!events) return <div className="muted">Loading…</div>;
  if (!events.length) return <div className="muted">No raw events recorded for this.</div>;
  return (
    <div className="raw-lines" data-testid="raw-lines">
      {events.slice(0, MAX_LINES).map((e) => (
        <div key={e.id} className="raw-line" onClick={() => onSelect({ kind: 'event', id: e.id })} title="Select this event">
          {e.line}
        </div>
      ))}
      {total > MAX_LINES && <div className="muted">… {total - MAX_LINES} more</div>}
    </div>
  );
}

function formatValue(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) ? v.toLocaleString('en') : v.toLocaleString('en', { maximumFractionDigits: 3 });
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
