/**
 * The compare view (`?compare=ID,ID`): the table of metrics with the change
 * against the first side and its significance, log2 histograms and CDFs of
 * stalls and shrinker calls overlaid, a chart per time series with a line
 * per trace, and the traces' timelines stacked under one window (zoom or pan
 * any of them and the others follow). The data is GET /api/compare; the
 * table's text is the CLI's (shared/compare/format_compare.ts), so a mail
 * gets what `stallscope compare` prints.
 */
import { useEffect, useMemo, useState } from 'react';
import type { CompareResult } from '../../shared/contract/compare.ts';
import { formatCompareTable, formatValue, significanceMark } from '../../shared/compare/format_compare.ts';
import { requestJson } from '../api/client.ts';
import { copyText } from '../notes/share.ts';
import { notesModel } from '../notes/notes_model.ts';
import {
  type CompareRoute,
  isEventName,
  leaveCompare,
  replaceCompareWindow,
  setCompareAlign,
  setCompareBaseline,
} from './compare_route.ts';
import { CdfChart, HistogramChart, SeriesChart, sideColor } from './compare_charts.tsx';
import { StackedTimelines } from './stacked_timelines.tsx';
import './compare.css';

export interface SeriesData {
  series: string;
  key: string | null;
  unit: string;
  points: [number, number][];
}

export interface CompareAnswer {
  compare: CompareResult;
  traces: { id: string; name: string; duration_ns: number }[][];
  bin_ns: number;
  series: SeriesData[][][];
  /** per side, per trace: the series ids its events give none of */
  not_traced?: string[][][];
  /** the event the series are aligned on, each trace's offset to its first one (s; null: none in that trace) */
  align?: { event: string; offset_s: (number | null)[][] } | null;
}

export function CompareView({ route }: { route: CompareRoute }) {
  // The answer is fetched again when this text changes, not when the route object does (it is new at each render).
  const url = `/api/compare?sides=${encodeURIComponent(route.sides.map((s) => s.join('~')).join(','))
    .replace(/%2C/g, ',')
    .replace(/%7E/gi, '~')}${route.align ? `&align=${encodeURIComponent(route.align)}` : ''}`;
  const [alignText, setAlignText] = useState(route.align ?? '');
  const [answer, setAnswer] = useState<CompareAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [filter, setFilter] = useState('');
  const [onlySignificant, setOnlySignificant] = useState(false);

  useEffect(() => {
    let live = true;
    setAnswer(null);
    setError(null);
    requestJson<CompareAnswer>('GET', url)
      .then((a) => live && setAnswer(a))
      .catch((e: Error) => live && setError(e.message));
    return () => {
      live = false;
    };
  }, [url]);

  const timelineAnswer = useMemo(() => (answer ? unaligned(answer) : null), [answer]);
  const c = answer?.compare;
  const rows = useMemo(() => {
    if (!c) return [];
    return c.rows
      .map((r, i) => ({ r, i }))
      .filter(
        ({ r }) =>
          (!filter || `${r.metric} ${r.key ?? ''}`.includes(filter)) &&
          (!onlySignificant || r.changes.some((x) => x?.significant)),
      );
  }, [c, filter, onlySignificant]);

  const copyTable = async () => {
    if (!c) return;
    const shown = { ...c, rows: rows.map(({ r }) => r) };
    const ok = await copyText(formatCompareTable(shown));
    notesModel.toast(ok ? 'ok' : 'error', ok ? 'Table copied as text' : 'Could not copy: the clipboard was refused');
  };
  const copyLink = async () => {
    const ok = await copyText(location.href);
    notesModel.toast(ok ? 'ok' : 'error', ok ? 'Link copied' : 'Could not copy: the clipboard was refused');
  };

  return (
    <div className="compare-view" data-testid="compare-view">
      <header className="compare-header">
        <button className="brand" onClick={leaveCompare} data-testid="compare-home" title="Back to the library">
          stallscope
        </button>
        <h1>Compare</h1>
        {c && (
          <span className="compare-sides">
            {c.sides.map((s, i) => (
              <span key={i} className="compare-side" style={{ borderColor: sideColor(i) }} data-testid="compare-side">
                {i === 0 ? 'baseline ' : ''}
                <strong>{s.label}</strong>
                {s.traces.length > 1 ? ` (${s.traces.length} runs)` : ''}
                {i > 0 && (
                  <button
                    className="compare-make-baseline"
                    data-testid="compare-make-baseline"
                    title={`Compare against ${s.label}`}
                    onClick={() => setCompareBaseline(route, i)}
                  >
                    make baseline
                  </button>
                )}
              </span>
            ))}
          </span>
        )}
        <span className="spacer" />
        <button onClick={copyLink} data-testid="compare-copy-link">
          Copy link
        </button>
      </header>
      {error && (
        <div className="error" role="alert">
          Could not compare: {error}
        </div>
      )}
      {!answer && !error && <div className="muted">Comparing…</div>}
      {answer && c && (
        <>
          <section className="compare-section">
            <h2>Metrics</h2>
            <div className="compare-legend muted">
              Change against <strong>{c.sides[0]!.label}</strong>; * p &lt; {c.alpha}, ** p &lt; {c.alpha / 5}, *** p
              &lt; {c.alpha / 50} (
              {c.sides.every((s) => s.traces.length >= 2)
                ? "Welch's t over the runs"
                : 'Mann-Whitney U on the events of stall and call percentiles; one run a side: record iterations for the rest'}
              ).
            </div>
            <div className="compare-tools">
              <input
                placeholder="filter metrics"
                value={filter}
                onChange={(e) => setFilter(e.target.value)}
                data-testid="compare-filter"
              />
              <label>
                <input
                  type="checkbox"
                  checked={onlySignificant}
                  onChange={(e) => setOnlySignificant(e.target.checked)}
                  data-testid="compare-only-significant"
                />{' '}
                significant only
              </label>
              <button onClick={copyTable} data-testid="compare-copy-table">
                Copy table as text
              </button>
            </div>
            <div className="compare-table-wrap">
              <table className="compare-table" data-testid="compare-table">
                <thead>
                  <tr>
                    <th>metric</th>
                    {c.sides.map((s, i) => (
                      <th key={i} className="num" style={{ color: sideColor(i) }}>
                        {s.label}
                        {s.traces.length > 1 ? ` (${s.traces.length})` : ''}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {rows.map(({ r, i }) => (
                    <tr key={i} data-testid="compare-row" data-metric={r.metric} data-key={r.key ?? ''}>
                      <td className="metric">
                        {r.metric}
                        {r.key !== null && <span className="key"> [{r.key}]</span>}
                      </td>
                      {r.sides.map((sv, si) => {
                        const ch = r.changes[si];
                        const mark = ch ? significanceMark(ch.test?.p, c.alpha) : '';
                        return (
                          <td
                            key={si}
                            className={`num ${ch?.direction ?? ''} ${ch?.significant ? 'significant' : ''}`}
                            data-testid="compare-cell"
                          >
                            {formatValue(sv.mean, r.unit)}
                            {sv.n > 1 && <span className="muted"> ± {formatValue(sv.stddev, r.unit)}</span>}
                            {ch && ch.change_pct !== null && (
                              <span
                                className="pct"
                                title={
                                  ch.test
                                    ? `${ch.test.method === 'welch_t' ? "Welch's t" : 'Mann-Whitney U'}, p = ${ch.test.p.toPrecision(3)}`
                                    : 'no test'
                                }
                              >
                                {' '}
                                ({ch.change_pct > 0 ? '+' : ''}
                                {ch.change_pct.toFixed(1)}%{mark ? ` ${mark}` : ''})
                              </span>
                            )}
                          </td>
                        );
                      })}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
          <section className="compare-section">
            <h2>Latency distributions</h2>
            <div className="compare-grid">
              {c.histograms.map((h) => (
                <figure
                  key={`${h.samples}:${h.key ?? ''}`}
                  className="compare-figure"
                  data-testid="compare-histogram"
                  data-samples={h.samples}
                  data-key={h.key ?? ''}
                >
                  <figcaption>
                    {h.samples}
                    {h.key !== null ? ` [${h.key}]` : ''} <span className="muted">log2 buckets, µs</span>
                  </figcaption>
                  <HistogramChart counts={h.counts} labels={c.sides.map((s) => s.label)} />
                  <CdfChart counts={h.counts} labels={c.sides.map((s) => s.label)} />
                </figure>
              ))}
              {c.histograms.length === 0 && <div className="muted">No stalls or shrinker calls in these traces.</div>}
            </div>
          </section>
          <section className="compare-section">
            <h2>Over time</h2>
            <form
              className="compare-align"
              onSubmit={(e) => {
                e.preventDefault();
                const v = alignText.trim();
                if (v === '' || isEventName(v)) setCompareAlign(route, v === '' ? null : v);
              }}
            >
              <label>
                Align on the first{' '}
                <input
                  data-testid="compare-align"
                  placeholder="event name (empty: each trace's start)"
                  value={alignText}
                  onChange={(e) => setAlignText(e.target.value)}
                />
              </label>{' '}
              <button type="submit">Align</button>
              {answer.align && (
                <span className="muted" data-testid="compare-align-offsets">
                  {' '}
                  {answer.traces
                    .flatMap((side, si) =>
                      side.map((t, ti) => {
                        const o = answer.align!.offset_s[si]![ti];
                        return `${t.name}: ${o === null || o === undefined ? 'none (from its start)' : `+${o.toFixed(6)} s`}`;
                      }),
                    )
                    .join('; ')}
                </span>
              )}
            </form>
            <div className="compare-grid">
              {seriesList(answer).map((s) => (
                <figure key={s.id} className="compare-figure" data-testid="compare-series" data-series={s.id}>
                  <figcaption>
                    {s.id}{' '}
                    <span className="muted">
                      {s.unit === 'per_s' ? 'per second' : s.unit}, seconds from each trace's{' '}
                      {answer.align ? `first ${answer.align.event}` : 'start'}
                    </span>
                  </figcaption>
                  <SeriesChart lines={s.lines} />
                  {s.notTraced.length > 0 && (
                    <div className="muted" data-testid="series-not-traced">
                      not traced in {s.notTraced.join(', ')}
                    </div>
                  )}
                </figure>
              ))}
            </div>
          </section>
          <section className="compare-section">
            <h2>Timelines</h2>
            <StackedTimelines
              answer={timelineAnswer!}
              initial={route.window}
              onWindow={(w) => replaceCompareWindow(route, w)}
            />
          </section>
        </>
      )}
    </div>
  );
}

/** The answer with its series back on each trace's start (the timelines' window and links count from it). */
function unaligned(a: CompareAnswer): CompareAnswer {
  if (!a.align) return a;
  return {
    ...a,
    series: a.series.map((side, si) =>
      side.map((trace, ti) => {
        const o = a.align!.offset_s[si]![ti] ?? 0;
        return trace.map((s) => ({ ...s, points: s.points.map(([t, v]) => [t + o, v] as [number, number]) }));
      }),
    ),
  };
}

/** One chart per series id (and key), a line per trace: side colour, iterations dashed after the first. */
function seriesList(a: CompareAnswer): {
  id: string;
  unit: string;
  notTraced: string[];
  lines: { label: string; side: number; run: number; points: [number, number][] }[];
}[] {
  const out = new Map<
    string,
    {
      id: string;
      unit: string;
      notTraced: string[];
      lines: { label: string; side: number; run: number; points: [number, number][] }[];
    }
  >();
  a.series.forEach((side, si) =>
    side.forEach((trace, ti) =>
      trace.forEach((s) => {
        const id = s.key === null ? s.series : `${s.series} [${s.key}]`;
        let e = out.get(id);
        if (!e) {
          const missing = (a.not_traced ?? []).flatMap((side2, sj) =>
            side2.flatMap((ids, tj) => (ids.includes(s.series) ? [a.traces[sj]![tj]!.name] : [])),
          );
          out.set(id, (e = { id, unit: s.unit, notTraced: missing, lines: [] }));
        }
        e.lines.push({ label: a.traces[si]![ti]!.name, side: si, run: ti, points: s.points });
      }),
    ),
  );
  return [...out.values()].sort((x, y) => (x.id < y.id ? -1 : 1));
}
