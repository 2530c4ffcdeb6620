/**
 * Range aggregates (the drawer's Range tab): what a shift+drag range holds,
 * for the tracks it covers (server/query/range_summary.ts): time per thread
 * state per thread, CPU time per thread, event counts by name, and the
 * slices in the range with count / sum / mean / longest. Also keeps the
 * range in the view, so share links carry it (`r0`, `r1`, `rtrack`).
 */
import { useEffect, useRef, useState } from 'react';
import { notesModel } from '../notes/notes_model.ts';
import { useView, viewStore } from '../state/view_store.ts';
import type { ViewState } from '../state/view_state.ts';
import { formatCount, formatDuration } from '../time_axis/time_format.ts';
import { stateColor, stateLabel } from '../renderers/colors.ts';
import type { Track } from '../tracks/track.ts';
import { queryApi, type RangeSummary } from '../query/api.ts';
import './range.css';

const STATE_ORDER = ['Running', 'R', 'R+', 'D', 'S', 'I', 'T', 't', 'X', 'Z', 'P', 'W', 'K'];

/** The shift+drag range and the view's `range` kept equal, both ways (the range lives in notesModel). */
export function useRangeInLink(traceId: string): void {
  const restored = useRef(false);
  useEffect(() => {
    restored.current = false;
    const same = (a: ViewState['range'], b: { t0: number; t1: number; track: string | null } | null) =>
      (!a && !b) ||
      (!!a &&
        !!b &&
        Math.floor(a.t0) === Math.floor(b.t0) &&
        Math.ceil(a.t1) === Math.ceil(b.t1) &&
        (a.track ?? null) === (b.track ?? null));
    const fromNotes = () => {
      const n = notesModel.get();
      if (n.trace !== traceId) return;
      const v = viewStore.get();
      if (!restored.current) {
        // First sight of this trace's notes state: a link's range becomes the selection.
        restored.current = true;
        if (v.range && !n.range) {
          notesModel.setRange({ t0: v.range.t0, t1: v.range.t1, track: v.range.track });
          return;
        }
      }
      if (!same(v.range, n.range)) {
        viewStore.update(
          {
            range: n.range
              ? { t0: Math.floor(n.range.t0), t1: Math.ceil(n.range.t1), track: n.range.track ?? null }
              : null,
          },
          { history: 'replace' },
        );
      }
    };
    const fromView = (v: ViewState, prev: ViewState) => {
      if (!restored.current || same(v.range, prev.range)) return;
      const n = notesModel.get();
      if (n.trace === traceId && !same(v.range, n.range)) notesModel.setRange(v.range ? { ...v.range } : null);
    };
    const un1 = notesModel.subscribe(fromNotes);
    const un2 = viewStore.subscribe(fromView);
    fromNotes();
    return () => {
      un1();
      un2();
    };
  }, [traceId]);
}

interface Props {
  traceId: string;
  /** Every track on the timeline (a range made on the ruler covers the shown ones). */
  tracks: Track[];
}

export function RangePanel({ traceId, tracks }: Props) {
  const range = useView((v) => v.range);
  const hidden = useView((v) => v.hidden);
  const [data, setData] = useState<RangeSummary | null>(null);
  const [error, setError] = useState<string | null>(null);
  const covered = range?.track
    ? [range.track]
    : tracks
        .filter((t) => !hidden.includes(t.uri))
        .map((t) => t.uri)
        .filter((u) => /^(thread|cpu|slice)#/.test(u));
  const coveredKey = covered.join(',');

  useEffect(() => {
    setData(null);
    setError(null);
    if (!range) return;
    const ac = new AbortController();
    queryApi.range(traceId, range.t0, range.t1, covered, ac.signal).then(setData, (e: Error) => {
      if (!ac.signal.aborted) setError(e.message);
    });
    return () => ac.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [traceId, range?.t0, range?.t1, range?.track, coveredKey]);

  if (!range) {
    return (
      <div className="range-panel empty muted" data-testid="range-panel">
        Shift+drag on the ruler (all tracks) or on a track to select a time range: its thread states, CPU time, events
        and slices appear here.
      </div>
    );
  }
  const span = range.t1 - range.t0;
  const title = range.track ? (tracks.find((t) => t.uri === range.track)?.title ?? range.track) : 'all tracks shown';
  return (
    <div className="range-panel" data-testid="range-panel" data-t0={range.t0} data-t1={range.t1}>
      <div className="range-head">
        Range <b>{formatDuration(span)}</b> from {formatDuration(range.t0, 6)} on <b>{title}</b>
        {!data && !error && <span className="muted"> · loading…</span>}
        {error && <span className="error"> · {error}</span>}
      </div>
      {data && (
        <div className="range-grid">
          <StatesTable data={data} span={span} />
          <CpuTable data={data} span={span} />
          <EventsTable data={data} />
          <SlicesTable data={data} />
        </div>
      )}
    </div>
  );
}

function pct(ns: number, of: number): string {
  return of > 0 ? `${((100 * ns) / of).toFixed(1)}%` : '';
}

function StatesTable({ data, span }: { data: RangeSummary; span: number }) {
  const byThread = new Map<number, { name: string; states: Map<string, number> }>();
  for (const s of data.threadStates) {
    const t = byThread.get(s.utid) ?? { name: `${s.name ?? 'thread'} ${s.tid ?? ''}`, states: new Map() };
    t.states.set(s.state, (t.states.get(s.state) ?? 0) + s.durNs);
    byThread.set(s.utid, t);
  }
  const states = [...new Set(data.threadStates.map((s) => s.state))].sort((a, b) => rank(a) - rank(b));
  if (!byThread.size)
    return (
      <section>
        <h4>Thread states</h4>
        <div className="muted">No thread track in the range.</div>
      </section>
    );
  return (
    <section data-testid="range-states">
      <h4>
        Thread states <span className="muted">(time in the range)</span>
      </h4>
      <table className="agg">
        <thead>
          <tr>
            <th>thread</th>
            {states.map((s) => (
              <th key={s} title={stateLabel(s)}>
                <span className="state-swatch" style={{ background: stateColor(s) }} />
                {s}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {[...byThread].slice(0, 200).map(([utid, t]) => (
            <tr key={utid} data-testid={`range-thread-${utid}`}>
              <td>{t.name}</td>
              {states.map((s) => {
                const ns = t.states.get(s);
                return (
                  <td key={s} className="num" data-testid={`range-state-${utid}-${s}`} data-ns={ns ?? 0}>
                    {ns ? (
                      <>
                        {formatDuration(ns)} <span className="muted">{pct(ns, span)}</span>
                      </>
                    ) : (
                      ''
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function rank(s: string): number {
  const i = STATE_ORDER.indexOf(s);
  return i < 0 ? STATE_ORDER.length : i;
}

function CpuTable({ data, span }: { data: RangeSummary; span: number }) {
  if (!data.cpuTime.length) return null;
  const total = data.cpuTime.reduce((a, c) => a + c.durNs, 0);
  return (
    <section data-testid="range-cpu">
      <h4>
        CPU time per thread <span className="muted">({formatDuration(total)} on the CPUs covered)</span>
      </h4>
      <table className="agg">
        <thead>
          <tr>
            <th>thread</th>
            <th>time</th>
            <th>of range</th>
            <th>CPUs</th>
          </tr>
        </thead>
        <tbody>
          {data.cpuTime.slice(0, 100).map((c) => (
            <tr key={c.utid}>
              <td>{c.utid === 0 ? 'idle (swapper)' : `${c.name ?? 'thread'} ${c.tid ?? ''}`}</td>
              <td className="num" data-ns={c.durNs}>
                {formatDuration(c.durNs)}
              </td>
              <td className="num">{pct(c.durNs, span)}</td>
              <td>{c.cpus.join(', ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function EventsTable({ data }: { data: RangeSummary }) {
  if (!data.eventCounts.length) return null;
  return (
    <section data-testid="range-events">
      <h4>
        Events by name <span className="muted">({formatCount(data.eventCounts.reduce((a, e) => a + e.count, 0))})</span>
      </h4>
      <table className="agg">
        <tbody>
          {data.eventCounts.slice(0, 100).map((e) => (
            <tr key={e.name}>
              <td>{e.name}</td>
              <td className="num" data-testid={`range-count-${e.name}`}>
                {formatCount(e.count)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function SlicesTable({ data }: { data: RangeSummary }) {
  if (!data.slices.length) return null;
  return (
    <section data-testid="range-slices">
      <h4>Slices in the range</h4>
      <table className="agg">
        <thead>
          <tr>
            <th>category</th>
            <th>name</th>
            <th>count</th>
            <th>sum</th>
            <th>mean</th>
            <th>longest</th>
          </tr>
        </thead>
        <tbody>
          {data.slices.slice(0, 100).map((s) => (
            <tr key={`${s.category}/${s.name}`} data-testid={`range-slice-${s.category}`}>
              <td>{s.category}</td>
              <td>{s.name}</td>
              <td className="num">
                {formatCount(s.count)}
                {s.open ? (
                  <span className="muted" title="did not end in the trace">
                    {' '}
                    ({s.open} open)
                  </span>
                ) : null}
              </td>
              <td className="num">{formatDuration(s.sumNs)}</td>
              <td className="num">{formatDuration(s.avgNs)}</td>
              <td className="num" data-ns={s.maxNs}>
                {formatDuration(s.maxNs)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
