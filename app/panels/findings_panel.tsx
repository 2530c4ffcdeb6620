/**
 * Every finding, ranked worst first (or in time order), filtered by severity,
 * detector, kind, task, shrinker, CPU and free text, with a detector's
 * findings for one task (or one shrinker) folded into a row with count and
 * worst. The list's logic is app/state/findings_query.ts; `]`/`[` step
 * through exactly what is shown.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import type { DetectorRun, Finding, Severity } from '../api/types.ts';
import {
  type FindingsQuery,
  DEFAULT_QUERY,
  type ListRow,
  facets,
  groupMembers,
  groupOpen,
  isFiltered,
  shownSummary,
} from '../state/findings_query.ts';
import { formatDuration } from '../time_axis/time_format.ts';
import { detectorLabel, kindLabel } from '../../shared/contract/labels.ts';

/** Rows rendered at first (more on demand): a large trace has thousands. */
const PAGE = 200;

interface Props {
  findings: Finding[];
  rows: ListRow[];
  /** Findings shown (the rows' findings), in the list's order. */
  listed: Finding[];
  counts: Record<Severity, number>;
  detectors: DetectorRun[];
  query: FindingsQuery;
  onQuery(q: FindingsQuery): void;
  /** Groups the user unfolded (by key). */
  expanded: ReadonlySet<string>;
  onToggleGroup(key: string): void;
  selected: number | null;
  onSelect(f: Finding): void;
  onStep(dir: 1 | -1): void;
}

const SEVS: Severity[] = ['critical', 'warn', 'info'];

export function FindingsPanel({
  findings,
  rows,
  listed,
  counts,
  detectors,
  query,
  onQuery,
  expanded,
  onToggleGroup,
  selected,
  onSelect,
  onStep,
}: Props) {
  const [limit, setLimit] = useState(PAGE);
  const listRef = useRef<HTMLDivElement>(null);
  const fc = useMemo(() => facets(findings), [findings]);
  const set = (patch: Partial<FindingsQuery>) => onQuery({ ...query, ...patch });

  // The selected finding's row is always rendered, and its group open.
  const selRow =
    selected === null
      ? -1
      : rows.findIndex((r) =>
          r.kind === 'finding' ? r.finding.index === selected : r.findings.some((f) => f.index === selected),
        );
  const visible = rows.slice(0, Math.max(limit, selRow + 20));

  useEffect(() => {
    if (selected === null) return;
    const el = listRef.current?.querySelector(`[data-finding-index="${selected}"]`);
    el?.scrollIntoView({ block: 'nearest' });
  }, [selected]);
  useEffect(() => setLimit(PAGE), [query]);

  const total = counts.info + counts.warn + counts.critical;
  const shown = listed.length;
  const notTraced = detectors.filter((d) => d.status === 'not_traced');
  const kinds = fc.kinds.filter(([k]) => query.detector === null || k.startsWith(`${query.detector}/`));
  return (
    <aside className="findings-panel" data-testid="findings-panel">
      <div className="panel-head">
        <h2>
          Findings <span className="muted">({total})</span>
        </h2>
        <div className="sev-filter" data-testid="findings-counts">
          {SEVS.map((s) => (
            <button
              key={s}
              className={`sev-chip ${s}${query.severities.includes(s) ? ' on' : ''}`}
              data-testid={`filter-sev-${s}`}
              aria-pressed={query.severities.includes(s)}
              disabled={!counts[s]}
              title={`Show only ${s} findings (click again to show all)`}
              onClick={() =>
                set({
                  severities: query.severities.includes(s)
                    ? query.severities.filter((x) => x !== s)
                    : [...query.severities, s],
                })
              }
            >
              {counts[s]} {s}
            </button>
          ))}
        </div>
        <div className="nav-row">
          <button
            onClick={() => onStep(-1)}
            data-testid="prev-finding"
            title="Previous finding in this list ([)"
            disabled={!shown}
          >
            ◂ Prev
          </button>
          <button
            onClick={() => onStep(1)}
            data-testid="next-finding"
            title="Next finding in this list (])"
            disabled={!shown}
          >
            Next ▸
          </button>
          <select
            value={query.sort}
            onChange={(e) => set({ sort: e.target.value as FindingsQuery['sort'] })}
            data-testid="findings-sort"
            title="Order of the list"
          >
            <option value="impact">worst first (impact)</option>
            <option value="time">in time order</option>
          </select>
          <label className="check" title="Fold a detector's findings for one task (or one shrinker) into one row">
            <input
              type="checkbox"
              checked={query.group}
              onChange={(e) => set({ group: e.target.checked })}
              data-testid="findings-group"
            />{' '}
            group
          </label>
        </div>
        <div className="filter-row">
          <select
            value={query.detector ?? ''}
            onChange={(e) => set({ detector: e.target.value || null, kind: null })}
            data-testid="filter-detector"
            title="Detector"
          >
            <option value="">all detectors</option>
            {fc.detectors.map(([d, n]) => (
              <option key={d} value={d}>
                {detectorLabel(d)} ({n})
              </option>
            ))}
          </select>
          <select
            value={query.kind ?? ''}
            onChange={(e) => {
              const v = e.target.value;
              set(v ? { detector: v.split('/')[0]!, kind: v.split('/')[1]! } : { kind: null });
            }}
            data-testid="filter-kind"
            title="Kind of finding"
          >
            <option value="">all kinds</option>
            {kinds.map(([k, n]) => (
              <option key={k} value={k}>
                {kindLabel(k.split('/')[0]!, k.split('/')[1]!)} ({n})
              </option>
            ))}
          </select>
        </div>
        <div className="filter-row">
          <select
            value={query.comm ?? ''}
            onChange={(e) => set({ comm: e.target.value || null })}
            data-testid="filter-comm"
            title="Task (comm)"
          >
            <option value="">all tasks</option>
            {query.comm !== null && !fc.comms.some(([c]) => c === query.comm) && (
              <option value={query.comm}>{query.comm} (0)</option>
            )}
            {fc.comms.map(([c, n]) => (
              <option key={c} value={c}>
                {c} ({n})
              </option>
            ))}
          </select>
          <select
            value={query.shrinker ?? ''}
            onChange={(e) => set({ shrinker: e.target.value || null })}
            data-testid="filter-shrinker"
            title="Shrinker"
            disabled={!fc.shrinkers.length}
          >
            <option value="">all shrinkers</option>
            {query.shrinker !== null && !fc.shrinkers.some(([c]) => c === query.shrinker) && (
              <option value={query.shrinker}>{query.shrinker} (0)</option>
            )}
            {fc.shrinkers.map(([c, n]) => (
              <option key={c} value={c}>
                {c} ({n})
              </option>
            ))}
          </select>
          <select
            value={query.cpu === null ? '' : String(query.cpu)}
            onChange={(e) => set({ cpu: e.target.value === '' ? null : Number(e.target.value) })}
            data-testid="filter-cpu"
            title="CPU of the finding"
          >
            <option value="">all CPUs</option>
            {fc.cpus.map(([c, n]) => (
              <option key={c} value={c}>
                CPU {c} ({n})
              </option>
            ))}
          </select>
        </div>
        <div className="filter-row">
          <input
            type="search"
            placeholder="search findings…"
            value={query.text}
            onChange={(e) => set({ text: e.target.value })}
            data-testid="filter-text"
          />
          {isFiltered(query) && (
            <button
              className="link"
              onClick={() => onQuery({ ...DEFAULT_QUERY, sort: query.sort, group: query.group })}
              data-testid="filter-clear"
            >
              clear
            </button>
          )}
        </div>
        <div className="muted small" data-testid="findings-shown">
          {shownSummary(findings, listed, isFiltered(query))}
        </div>
      </div>
      <div className="findings-list" ref={listRef} data-testid="findings-list">
        {total === 0 && (
          <div className="muted pad" data-testid="no-findings">
            {notTraced.length === detectors.length && detectors.length > 0
              ? 'No findings: this trace has none of the tracepoints the detectors need (see the overview).'
              : 'No findings: the detectors saw no reclaim or scheduler stalls in this trace.'}
          </div>
        )}
        {total > 0 && shown === 0 && <div className="muted pad">No finding matches the filters.</div>}
        <ul>
          {visible.map((r) =>
            r.kind === 'finding' ? (
              <FindingRow key={r.finding.index} f={r.finding} selected={selected} onSelect={onSelect} />
            ) : (
              <li
                key={r.key}
                className="finding-group-row"
                data-testid="finding-group-row"
                data-group-key={r.key}
                data-count={r.findings.length}
              >
                {(() => {
                  const open = groupOpen(r, expanded, selected);
                  const members = groupMembers(r);
                  return (
                    <>
                      <button
                        className="group-head"
                        aria-expanded={open}
                        data-testid="group-toggle"
                        onClick={() => onToggleGroup(r.key)}
                        title={open ? 'Show only the worst' : `Show all ${r.findings.length}`}
                      >
                        <span className="chevron">{open ? '▾' : '▸'}</span>
                        <span className="group-label">
                          <b>{r.label}</b> · {kindLabel(r.detector, r.worst.kind)}
                        </span>
                        <span className="group-count">
                          {r.findings.length} findings{r.counts.critical ? ` · ${r.counts.critical} critical` : ''}
                          {r.counts.warn ? ` · ${r.counts.warn} warn` : ''}
                        </span>
                      </button>
                      <ul className="group-members">
                        {(open ? members : members.slice(0, 1)).map((f) => (
                          <FindingRow key={f.index} f={f} selected={selected} onSelect={onSelect} />
                        ))}
                      </ul>
                    </>
                  );
                })()}
              </li>
            ),
          )}
          {rows.length > visible.length && (
            <li className="more">
              <button className="link" onClick={() => setLimit((n) => n + PAGE)} data-testid="findings-more">
                show {Math.min(PAGE, rows.length - visible.length)} more of {rows.length - visible.length}
              </button>
            </li>
          )}
        </ul>
      </div>
    </aside>
  );
}

function FindingRow({ f, selected, onSelect }: { f: Finding; selected: number | null; onSelect(f: Finding): void }) {
  return (
    <li
      className={`finding-row${f.index === selected ? ' selected' : ''}`}
      data-testid={`finding-${f.index}`}
      data-finding-index={f.index}
      data-detector={f.detector}
      data-kind={f.kind}
      data-severity={f.severity}
      data-comm={f.comm ?? ''}
      data-ts={f.ts}
      data-dur={f.dur}
      data-impact={f.impact}
      data-rank={f.rank}
      data-selected={f.index === selected ? 'true' : 'false'}
      onClick={() => onSelect(f)}
    >
      <span className={`sev-dot ${f.severity}`} title={f.severity} />
      <span className="finding-title">{f.title}</span>
      <span className="finding-meta">
        {formatDuration(f.ts, 4)}
        {f.dur > 0 && (
          <>
            {' '}
            · <b>{formatDuration(f.dur)}</b>
          </>
        )}
        {f.impact > 0 && f.impact !== f.dur && <> · impact {formatDuration(f.impact)}</>}
      </span>
    </li>
  );
}
