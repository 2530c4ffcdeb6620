/** Every finding, grouped by detector, sorted by severity then time, with counts per severity. */
import { useEffect, useRef, useState } from 'react';
import type { Finding, Severity } from '../api/types.ts';
import type { FindingGroup } from '../state/finding_nav.ts';
import { formatDuration } from '../timeline/time_format.ts';
import { SeverityCounts } from './start_page.tsx';

/** Rows shown per detector at first (more on demand): a large trace has thousands, and rendering them all delays its first view. */
const PAGE = 50;

interface Props {
  groups: FindingGroup[];
  counts: Record<Severity, number>;
  selected: number | null;
  scope: 'all' | 'detector';
  onSelect(f: Finding): void;
  onStep(dir: 1 | -1): void;
  onScope(scope: 'all' | 'detector'): void;
}

export const DETECTOR_TITLES: Record<string, string> = {
  kswapd_escalation: 'kswapd priority escalation',
  shrinker_blocking: 'Slow shrinkers',
  reclaim_writeback: 'Writeback from reclaim',
  direct_reclaim_stall: 'Direct reclaim stalls',
  migration_pingpong: 'Migration ping-pong',
};

export function FindingsPanel({ groups, counts, selected, scope, onSelect, onStep, onScope }: Props) {
  const [folded, setFolded] = useState<Set<string>>(new Set());
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const listRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (selected === null) return;
    const el = listRef.current?.querySelector(`[data-finding-index="${selected}"]`);
    el?.scrollIntoView({ block: 'nearest' });
  }, [selected]);

  const total = counts.info + counts.warn + counts.critical;
  return (
    <aside className="findings-panel" data-testid="findings-panel">
      <div className="panel-head">
        <h2>Findings <span className="muted">({total})</span></h2>
        <div data-testid="findings-counts"><SeverityCounts counts={counts} /></div>
        <div className="nav-row">
          <button onClick={() => onStep(-1)} data-testid="prev-finding" title="Previous finding ([)" disabled={!total}>◂ Prev</button>
          <button onClick={() => onStep(1)} data-testid="next-finding" title="Next finding (])" disabled={!total}>Next ▸</button>
          <select value={scope} onChange={(e) => onScope(e.target.value as 'all' | 'detector')} data-testid="finding-scope" title="What [ and ] step through">
            <option value="all">across all detectors</option>
            <option value="detector">within this detector</option>
          </select>
        </div>
      </div>
      <div className="findings-list" ref={listRef}>
        {total === 0 && <div className="muted pad">No findings: the detectors saw no reclaim or scheduler stalls in this trace.</div>}
        {groups.map((g) => {
          const isFolded = folded.has(g.detector) && !g.findings.some((f) => f.index === selected);
          const showAll = expanded.has(g.detector);
          // The selected finding (reached with [ ] or a link) is always rendered, with a few after it.
          const selAt = selected === null ? -1 : g.findings.findIndex((f) => f.index === selected);
          const shown = showAll ? g.findings : g.findings.slice(0, Math.max(PAGE, selAt + 11));
          return (
            <section key={g.detector} className="finding-group" data-testid={`finding-group-${g.detector}`}>
              <h3 onClick={() => setFolded((s) => toggled(s, g.detector))}>
                <span className="chevron">{isFolded ? '▸' : '▾'}</span>
                {DETECTOR_TITLES[g.detector] ?? g.detector}
                <span className="group-counts"><SeverityCounts counts={g.counts} /></span>
              </h3>
              {!isFolded && (
                <ul>
                  {shown.map((f) => (
                    <li
                      key={f.index}
                      className={`finding-row${f.index === selected ? ' selected' : ''}`}
                      data-testid={`finding-${f.index}`}
                      data-finding-index={f.index}
                      data-detector={f.detector}
                      data-ts={f.ts}
                      data-dur={f.dur}
                      data-selected={f.index === selected ? 'true' : 'false'}
                      onClick={() => onSelect(f)}
                    >
                      <span className={`sev-dot ${f.severity}`} title={f.severity} />
                      <span className="finding-title">{f.title}</span>
                      <span className="finding-meta">
                        {formatDuration(f.ts, 4)}
                        {f.dur > 0 && <> · <b>{formatDuration(f.dur)}</b></>}
                      </span>
                    </li>
                  ))}
                  {!showAll && g.findings.length > shown.length && (
                    <li className="more">
                      <button className="link" onClick={() => setExpanded((s) => toggled(s, g.detector))}>
                        show all {g.findings.length}
                      </button>
                    </li>
                  )}
                </ul>
              )}
            </section>
          );
        })}
      </div>
    </aside>
  );
}

function toggled(s: Set<string>, k: string): Set<string> {
  const n = new Set(s);
  if (n.has(k)) n.delete(k);
  else n.add(k);
  return n;
}
