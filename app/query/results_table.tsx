/**
 * A query result as a virtualised table (@tanstack/react-virtual): only the
 * rows in view are in the DOM, so 100k rows scroll like 100. Columns are
 * sized once from their header and first rows. Cells of `utid` / `tid` /
 * `upid` / `cpu` columns link to the thread's, process's or CPU's track.
 */
import { memo, useEffect, useMemo, useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { ColumnInfo } from './api.ts';
import { formatCell } from './query_track.ts';

const ROW_H = 21;
const CHAR_W = 7.2;

interface Props {
  columns: ColumnInfo[];
  cols: unknown[][];
  rowCount: number;
  selectedRow: number | null;
  onRowClick(row: number): void;
  /** A thread / process / CPU cell's link. */
  onEntity(kind: 'utid' | 'tid' | 'upid' | 'pid' | 'cpu', value: number): void;
}

const ENTITY = new Set(['utid', 'tid', 'upid', 'pid', 'cpu']);

export function ResultsTable({ columns, cols, rowCount, selectedRow, onRowClick, onEntity }: Props) {
  const scroller = useRef<HTMLDivElement>(null);
  const widths = useMemo(
    () =>
      columns.map((c, k) => {
        let w = c.name.length;
        const col = cols[k]!;
        for (let i = 0; i < Math.min(rowCount, 200); i++) w = Math.max(w, formatCell(col[i]).length);
        return Math.round(Math.min(60, Math.max(4, w)) * CHAR_W + 16);
      }),
    [columns, cols, rowCount],
  );
  const total = widths.reduce((a, b) => a + b, 0) + 56;
  const v = useVirtualizer({
    count: rowCount,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_H,
    overscan: 16,
  });

  useEffect(() => {
    if (selectedRow !== null && selectedRow >= 0 && selectedRow < rowCount)
      v.scrollToIndex(selectedRow, { align: 'auto' });
  }, [selectedRow, rowCount, v]);

  const numeric = useMemo(() => columns.map((c) => /INT|DOUBLE|FLOAT|DECIMAL/.test(c.type)), [columns]);
  return (
    <div className="results-scroll" ref={scroller} data-testid="query-results" data-rows={rowCount}>
      <div className="results-head" style={{ width: total }}>
        <span className="results-rownum">#</span>
        {columns.map((c, k) => (
          <span key={k} className="results-cell head" style={{ width: widths[k] }} title={`${c.name} ${c.type}`}>
            {c.name}
          </span>
        ))}
      </div>
      <div style={{ height: v.getTotalSize(), width: total, position: 'relative' }}>
        {v.getVirtualItems().map((item) => (
          <ResultRow
            key={item.index}
            i={item.index}
            start={item.start}
            selected={item.index === selectedRow}
            columns={columns}
            cols={cols}
            widths={widths}
            numeric={numeric}
            onRowClick={onRowClick}
            onEntity={onEntity}
          />
        ))}
      </div>
    </div>
  );
}

interface RowProps {
  i: number;
  start: number;
  selected: boolean;
  columns: ColumnInfo[];
  cols: unknown[][];
  widths: number[];
  numeric: boolean[];
  onRowClick(row: number): void;
  onEntity(kind: 'utid' | 'tid' | 'upid' | 'pid' | 'cpu', value: number): void;
}

/** One row; unchanged rows are not rendered again as the list scrolls (memo). */
const ResultRow = memo(function ResultRow({
  i,
  start,
  selected,
  columns,
  cols,
  widths,
  numeric,
  onRowClick,
  onEntity,
}: RowProps) {
  return (
    <div
      className={`results-row${selected ? ' selected' : ''}`}
      style={{ transform: `translateY(${start}px)`, height: ROW_H }}
      onClick={() => onRowClick(i)}
      data-testid="query-row"
      data-row={i}
    >
      <span className="results-rownum">{i + 1}</span>
      {columns.map((c, k) => {
        const val = cols[k]![i];
        const text = formatCell(val);
        const name = c.name.toLowerCase();
        const link = ENTITY.has(name) && typeof val === 'number';
        return (
          <span
            key={k}
            className={`results-cell${numeric[k] ? ' num' : ''}${val === null ? ' null' : ''}`}
            style={{ width: widths[k] }}
            title={text.length > 40 ? text : undefined}
          >
            {link ? (
              <button
                className="link"
                title={
                  name === 'cpu'
                    ? `Show CPU ${text}'s track`
                    : name === 'upid' || name === 'pid'
                      ? 'Give each thread of this process a track'
                      : 'Give this thread a track'
                }
                data-testid={`entity-${name}`}
                onClick={(e) => {
                  e.stopPropagation();
                  onEntity(name as 'utid', val);
                }}
              >
                {text}
              </button>
            ) : (
              text
            )}
          </span>
        );
      })}
    </div>
  );
});
