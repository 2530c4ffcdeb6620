/**
 * The story of the trace (server/findings/overview.ts), shown when a trace
 * opens: per detector, the lines a kernel developer would write in a mail,
 * each a link that filters the findings list to what it summarises and
 * selects the worst of them; "not traced" where the trace lacks the
 * tracepoints a detector needs ("not seen" in text, which cannot say what was enabled).
 */
import type { FindingsResponse, OverviewLine } from '../api/types.ts';
import { formatCount, formatDuration } from '../time_axis/time_format.ts';
import { notTracedLabel } from '../../shared/contract/labels.ts';

interface Props {
  findings: FindingsResponse;
  onLine(line: OverviewLine): void;
}

export function OverviewPanel({ findings, onLine }: Props) {
  const lines = findings.overview?.lines ?? [];
  const m = (id: string) => findings.metrics.find((x) => x.metric === id && x.key === null)?.value ?? null;
  const dur = m('trace.duration_ns');
  const events = m('trace.events');
  const lost = m('trace.lost_events');
  const notTracedChip = (id: string) =>
    notTracedLabel(findings.detectors?.find((d) => d.id === id)?.enabled_listed !== false);
  return (
    <div className="overview-panel" data-testid="overview-panel">
      <h3>
        What this trace shows
        <span className="muted small">
          {dur !== null ? ` · ${formatDuration(dur)}` : ''}
          {events !== null ? ` · ${formatCount(events)} events` : ''}
          {lost ? ` · ${formatCount(lost)} events lost by the kernel` : ''}
        </span>
      </h3>
      {lines.length === 0 && <div className="muted">No detector ran on this trace.</div>}
      <ul className="overview-lines">
        {lines.map((l, i) => (
          <li
            key={i}
            className={`overview-line ${l.status}`}
            data-testid={l.status === 'not_traced' ? 'overview-not-traced' : 'overview-line'}
            data-overview-detector={l.detector}
            data-finding-id={l.finding_id ?? ''}
          >
            <span className={`sev-chip ${l.status === 'not_traced' ? 'none' : (l.severity ?? 'ok')}`}>
              {l.status === 'not_traced' ? notTracedChip(l.detector) : (l.severity ?? 'ok')}
            </span>
            {l.finding_id !== null ? (
              <button
                className="link overview-link"
                onClick={() => onLine(l)}
                title={`Show ${l.count === 1 ? 'this finding' : `these ${l.count} findings`} and select the worst`}
              >
                {l.text}
              </button>
            ) : (
              <span className="overview-text">{l.text}</span>
            )}
            {l.count > 1 && <span className="muted small"> ({l.count} findings)</span>}
          </li>
        ))}
      </ul>
    </div>
  );
}
