/**
 * A fleet dataset (`?fleet=NAME`): per setting of a label, each metric's mean
 * and its p50/p90 across traces, and the change against the baseline setting
 * (fleet-report's numbers: the server answers its document), then the worst
 * traces. A worst trace the library holds opens in the trace view; one it
 * does not hold names its file, to upload or `stallscope open`.
 */
import { useEffect, useState } from 'react';
import { api } from '../api/client.ts';
import type { FleetViewAnswer } from '../../shared/contract/fleet.ts';
import { formatValue, significanceMark } from '../../shared/compare/format_compare.ts';
import { type FleetRoute, openFleet } from './fleet_route.ts';
import './fleet.css';

export function FleetView({ route }: { route: FleetRoute }) {
  const [answer, setAnswer] = useState<FleetViewAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [all, setAll] = useState(false);
  useEffect(() => {
    let live = true;
    setError(null);
    api.fleet(route.name, route.by, route.baseline).then(
      (a) => live && setAnswer(a),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [route.name, route.by, route.baseline]);

  return (
    <div className="fleet-view" data-testid="fleet-view">
      <header className="fleet-header">
        <a href="/" className="fleet-back">
          ← Library
        </a>
        <h1>Fleet: {route.name}</h1>
      </header>
      {error && (
        <div className="error" data-testid="fleet-error">
          {error}
        </div>
      )}
      {!answer && !error && <div className="muted">Loading the dataset…</div>}
      {answer && <FleetBody answer={answer} route={route} all={all} setAll={setAll} />}
    </div>
  );
}

function FleetBody({
  answer,
  route,
  all,
  setAll,
}: {
  answer: FleetViewAnswer;
  route: FleetRoute;
  all: boolean;
  setAll: (v: boolean) => void;
}) {
  const r = answer.report;
  const c = r.compare;
  const settings = r.settings.map((s) => s.value);
  const pct = new Map(r.percentiles.map((p) => [`${p.setting}\0${p.metric}\0${p.key ?? ''}`, p]));
  const rows = c.rows.filter((row) => all || row.changes.some((ch) => ch?.significant));
  /** Settings with one trace get no test: Welch's t needs two samples a side. */
  const singleTraceSettings = r.settings.filter((s) => s.traces.length < 2).map((s) => s.value);
  return (
    <>
      <div className="fleet-controls">
        <label>
          Group by{' '}
          <select
            data-testid="fleet-by"
            value={answer.by}
            onChange={(e) => openFleet({ name: route.name, by: e.target.value, baseline: null })}
          >
            {answer.labels.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <label>
          Baseline{' '}
          <select
            data-testid="fleet-baseline"
            value={settings[0]}
            onChange={(e) => openFleet({ name: route.name, by: answer.by, baseline: e.target.value })}
          >
            {settings.map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" data-testid="fleet-all" checked={all} onChange={(e) => setAll(e.target.checked)} />{' '}
          every metric (else only significant changes)
        </label>
      </div>
      <p className="muted">
        {r.settings
          .map(
            (s, i) =>
              `${s.value}: ${s.traces.length} trace${s.traces.length === 1 ? '' : 's'}${i === 0 ? ' (baseline)' : ''}`,
          )
          .join(' · ')}
        . Welch's t on per-trace values; * p &lt; {c.alpha}, ** p &lt; {c.alpha / 5}, *** p &lt; {c.alpha / 50}. Each
        cell: the mean, and p50 / p90 across traces.
      </p>
      <table className="fleet-table" data-testid="fleet-table">
        <thead>
          <tr>
            <th>Metric</th>
            {settings.map((s, i) => (
              <th key={s} data-testid="fleet-setting" className="num">
                {s}
                {i === 0 ? ' (baseline)' : ''}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={settings.length + 1} className="muted">
                {singleTraceSettings.length > 0
                  ? `No test: ${singleTraceSettings.join(', ')} ${singleTraceSettings.length === 1 ? 'has a single trace' : 'each have a single trace'} (Welch's t needs at least two a setting: record iterations). Tick "every metric" to see the changes.`
                  : 'No significant change. Tick "every metric" to see them all.'}
              </td>
            </tr>
          )}
          {rows.map((row) => {
            const name = row.key === null ? row.metric : `${row.metric} [${row.key}]`;
            return (
              <tr key={name} data-testid="fleet-row" data-metric={row.metric} data-key={row.key ?? ''}>
                <td>{name}</td>
                {settings.map((s, i) => {
                  const p = pct.get(`${s}\0${row.metric}\0${row.key ?? ''}`);
                  const ch = row.changes[i];
                  return (
                    <td
                      key={s}
                      className="num"
                      data-setting={s}
                      data-p50={p?.p50 ?? ''}
                      data-p90={p?.p90 ?? ''}
                      data-mean={row.sides[i]?.mean ?? ''}
                    >
                      <div>{formatValue(row.sides[i]?.mean ?? null, row.unit)}</div>
                      {p && (
                        <div className="muted">
                          p50 {formatValue(p.p50, row.unit)} · p90 {formatValue(p.p90, row.unit)}
                        </div>
                      )}
                      {ch && (
                        <div
                          className={`fleet-change ${ch.regression ? 'regression' : (ch.direction ?? '')}`}
                          data-testid="fleet-change"
                        >
                          {ch.change_pct === null
                            ? 'new'
                            : `${ch.change_pct > 0 ? '+' : ''}${ch.change_pct.toFixed(1)}%`}{' '}
                          {significanceMark(ch.test?.p, c.alpha)}
                          {ch.direction && ch.significant ? ` ${ch.direction}` : ''}
                        </div>
                      )}
                    </td>
                  );
                })}
              </tr>
            );
          })}
        </tbody>
      </table>
      <h2>Worst traces</h2>
      <p className="muted">Ranked by critical findings, then the impact of their findings.</p>
      <table className="fleet-table" data-testid="fleet-worst">
        <thead>
          <tr>
            <th>Trace</th>
            <th className="num">Critical</th>
            <th className="num">Findings</th>
            <th className="num">Impact</th>
            <th>Labels</th>
          </tr>
        </thead>
        <tbody>
          {answer.worst_traces.map((w) => (
            <tr
              key={w.trace_id}
              data-testid="fleet-worst-row"
              data-trace={w.trace_id}
              data-in-library={w.in_library ? 'yes' : 'no'}
            >
              <td>
                {w.in_library ? (
                  <a href={`/?trace=${w.trace_id}`} data-testid="fleet-open">
                    {w.name}
                  </a>
                ) : (
                  <span title={w.file}>
                    {w.name}{' '}
                    <span className="muted" data-testid="fleet-not-in-library">
                      not in this server's library: {w.file}
                    </span>
                  </span>
                )}
              </td>
              <td className="num">{w.critical}</td>
              <td className="num">{w.findings}</td>
              <td className="num">{formatValue(w.impact_ns, 'ns')}</td>
              <td>{labelsText(w.labels)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function labelsText(json: string): string {
  try {
    return Object.entries(JSON.parse(json) as Record<string, string>)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
  } catch {
    return '';
  }
}
