/**
 * The detectors' summary tables (what `stallscope analyze` prints under the
 * findings: per process, per shrinker, per kswapd thread, per migrated task,
 * per thread writing from reclaim), sortable by any column. A row's task or
 * shrinker filters the findings list to it.
 */
import { useMemo, useState } from 'react';
import type { FindingsResponse } from '../api/types.ts';
import { formatDuration } from '../time_axis/time_format.ts';

interface Props {
  findings: FindingsResponse;
  /** Absolute ns of the trace's first event (for `*_ts` columns). */
  base: bigint | null;
  onFilter(f: { detector: string; comm?: string; shrinker?: string }): void;
}

const TITLES: Record<string, string> = {
  direct_reclaim_stall: 'Reclaim stalls per process',
  shrinker_blocking: 'Shrinker calls per shrinker',
  kswapd_escalation: 'kswapd episodes per kswapd thread',
  migration_pingpong: 'Migrations per task',
  reclaim_writeback: 'Pages written by reclaim, per thread',
};

/** Columns that name what a row is about, and the findings filter they give. */
const FILTER_COLUMNS: Record<string, { col: string; as: 'comm' | 'shrinker' }> = {
  direct_reclaim_stall: { col: 'process', as: 'comm' },
  shrinker_blocking: { col: 'shrinker', as: 'shrinker' },
  kswapd_escalation: { col: 'thread', as: 'comm' },
  migration_pingpong: { col: 'task', as: 'comm' },
  reclaim_writeback: { col: 'thread', as: 'comm' },
};

/** Columns not worth a column in the app (keys only). */
const HIDDEN = new Set(['upid', 'worst_tid']);

export function SummariesPanel({ findings, base, onFilter }: Props) {
  const entries = Object.entries(findings.summaries ?? {}).filter(([, rows]) => Array.isArray(rows) && rows.length > 0);
  if (entries.length === 0)
    return (
      <div className="summaries-panel muted" data-testid="summaries-panel">
        No summary tables: the detectors that make them found nothing to summarise.
      </div>
    );
  return (
    <div className="summaries-panel" data-testid="summaries-panel">
      {entries.map(([detector, rows]) => (
        <SummaryTable key={detector} detector={detector} rows={rows} base={base} onFilter={onFilter} />
      ))}
    </div>
  );
}

function num(v: unknown): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  return null;
}

function cellText(col: string, v: unknown, base: bigint | null): string {
  if (v === null || v === undefined) return '';
  if (/_ns$/.test(col) && num(v) !== null) return formatDuration(num(v)!);
  if (
    /(^|_)ts$/.test(col) &&
    base !== null &&
    (typeof v === 'number' || typeof v === 'string') &&
    /^\d+$/.test(String(v))
  ) {
    return formatDuration(Number(BigInt(String(v)) - base), 4);
  }
  if (typeof v === 'number')
    return Number.isInteger(v) ? v.toLocaleString('en') : v.toLocaleString('en', { maximumFractionDigits: 4 });
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function SummaryTable({
  detector,
  rows,
  base,
  onFilter,
}: {
  detector: string;
  rows: Array<Record<string, unknown>>;
  base: bigint | null;
  onFilter: Props['onFilter'];
}) {
  const cols = Object.keys(rows[0]!).filter((c) => !HIDDEN.has(c));
  const [sort, setSort] = useState<{ col: string; desc: boolean } | null>(null);
  const sorted = useMemo(() => {
    if (!sort) return rows;
    const out = [...rows];
    out.sort((a, b) => {
      const x = a[sort.col];
      const y = b[sort.col];
      const nx = num(x);
      const ny = num(y);
      const c = nx !== null && ny !== null ? nx - ny : String(x ?? '').localeCompare(String(y ?? ''));
      return sort.desc ? -c : c;
    });
    return out;
  }, [rows, sort]);
  const link = FILTER_COLUMNS[detector];
  return (
    <section className="summary" data-testid={`summary-${detector}`}>
      <h4>
        {TITLES[detector] ?? detector} <span className="muted">({rows.length})</span>
      </h4>
      <table className="summary-table">
        <thead>
          <tr>
            {cols.map((c) => (
              <th
                key={c}
                data-testid={`summary-th-${c}`}
                aria-sort={sort?.col === c ? (sort.desc ? 'descending' : 'ascending') : 'none'}
                onClick={() =>
                  setSort((s) =>
                    s?.col === c ? { col: c, desc: !s.desc } : { col: c, desc: typeof rows[0]![c] !== 'string' },
                  )
                }
                title="Sort by this column (again: the other way)"
              >
                {c.replace(/_/g, ' ')}
                {sort?.col === c ? (sort.desc ? ' ▾' : ' ▴') : ''}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {sorted.map((r, i) => (
            <tr key={i}>
              {cols.map((c) => (
                <td key={c} className={typeof r[c] === 'string' && num(r[c]) === null ? 'text' : 'num'}>
                  {link && c === link.col && r[c] ? (
                    <button
                      className="link"
                      onClick={() => onFilter({ detector, [link.as]: String(r[c]) })}
                      title="Show this one's findings"
                    >
                      {cellText(c, r[c], base)}
                    </button>
                  ) : (
                    cellText(c, r[c], base)
                  )}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
