/**
 * The event list (the drawer's Events tab): every event of the visible
 * window, in time order, as KernelShark's list and Perfetto's ftrace events
 * tab show them: ts, CPU, task, event, fields. Filters: event names, CPUs,
 * task, and a field expression (`nr_reclaimed < 10`, `comm ~ kworker`; the
 * server parses it, server/query/field_filter.ts).
 *
 * Any number of rows: the list is virtualised and fetches pages of rows by
 * row number as they scroll into view. Graph follows: a row click selects
 * its event on the timeline; a timeline selection scrolls the list to it.
 */
import { memo, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { api } from '../api/client.ts';
import { useView, viewStore } from '../state/view_store.ts';
import { formatCount, formatDuration } from '../time_axis/time_format.ts';
import { PositionedError, queryApi, type EventListRow, type ListFilter } from '../query/api.ts';
import { ArgsText, TaskText } from '../search/task_links.tsx';
import type { TrackList } from '../api/types.ts';
import './event_list.css';

const ROW_H = 20;
const PAGE = 200;
/** The window the list shows follows the timeline once it has been still this long. */
const SETTLE_MS = 300;

interface Props {
  traceId: string;
  info: TrackList;
}

export function EventList({ traceId, info }: Props) {
  const t0 = useView((v) => v.t0);
  const t1 = useView((v) => v.t1);
  const sel = useView((v) => v.sel);
  const [win, setWin] = useState<{ t0: number; t1: number } | null>(null);
  const [names, setNames] = useState('');
  const [cpus, setCpus] = useState('');
  const [task, setTask] = useState('');
  const [expr, setExpr] = useState('');
  const [applied, setApplied] = useState<ListFilter>({});
  const [total, setTotal] = useState<number | null>(null);
  const [error, setError] = useState<{ message: string; field: 'expr' | null } | null>(null);
  const [knownNames, setKnownNames] = useState<string[]>([]);
  const pages = useRef(new Map<number, EventListRow[] | 'loading'>());
  const [, setRev] = useState(0);
  const [selectedIndex, setSelectedIndex] = useState<number | null>(null);
  const scroller = useRef<HTMLDivElement>(null);

  // The window, once the timeline settles.
  useEffect(() => {
    if (t0 === null || t1 === null) return;
    const id = setTimeout(() => setWin({ t0, t1 }), SETTLE_MS);
    return () => clearTimeout(id);
  }, [t0, t1]);

  useEffect(() => {
    queryApi
      .run(traceId, 'SELECT name FROM ftrace_event GROUP BY 1 ORDER BY count(*) DESC', {
        queryId: `n${Date.now().toString(36)}`,
      })
      .then(
        (r) => setKnownNames((r.cols[0] ?? []) as string[]),
        () => undefined,
      );
  }, [traceId]);

  const key = useMemo(() => JSON.stringify([win, applied]), [win, applied]);
  const keyRef = useRef(key);
  keyRef.current = key;

  // A new window or filter: a new list (total first, with the first page).
  useEffect(() => {
    if (!win) return;
    pages.current = new Map();
    setTotal(null);
    setError(null);
    const ac = new AbortController();
    queryApi.eventList(traceId, win, applied, 0, PAGE, ac.signal).then(
      (r) => {
        pages.current.set(0, r.rows);
        setTotal(r.total);
      },
      (e: Error) => {
        if (ac.signal.aborted) return;
        setError({ message: e.message, field: e instanceof PositionedError && e.kind === 'filter' ? 'expr' : null });
        setTotal(0);
      },
    );
    return () => ac.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, traceId]);

  const v = useVirtualizer({
    count: total ?? 0,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_H,
    overscan: 30,
  });
  const items = v.getVirtualItems();

  // Pages of the rows in view.
  useEffect(() => {
    if (!win || total === null || items.length === 0) return;
    const first = Math.floor(items[0]!.index / PAGE);
    const last = Math.floor(items[items.length - 1]!.index / PAGE);
    for (let p = first; p <= last; p++) {
      if (pages.current.has(p)) continue;
      pages.current.set(p, 'loading');
      const myKey = key;
      queryApi.eventList(traceId, win, applied, p * PAGE, PAGE).then(
        (r) => {
          if (keyRef.current !== myKey) return;
          pages.current.set(p, r.rows);
          setRev((n) => n + 1);
        },
        () => pages.current.delete(p),
      );
    }
  });

  // Graph follows: the timeline's selection scrolls the list to its row.
  useEffect(() => {
    if (!sel || !win || total === null || sel.kind === 'finding') return;
    let live = true;
    const at =
      sel.kind === 'event'
        ? api.event(traceId, sel.id).then((e) => ({ ts: e.ts, id: e.id as number | null }))
        : api
            .row(
              traceId,
              sel.kind === 'sched' ? 'sched_slice' : sel.kind === 'state' ? 'thread_state' : 'slice',
              sel.id,
            )
            .then((r) => ({ ts: Number(r.row.ts), id: null }));
    at.then((p) => queryApi.position(traceId, win, applied, p.ts, p.id)).then(
      (r) => {
        if (!live) return;
        const i = Math.min(r.index, Math.max(0, (total ?? 1) - 1));
        setSelectedIndex(i);
        v.scrollToIndex(i, { align: 'center' });
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [sel?.kind, sel?.id, key, total]);

  const apply = () => {
    const cpuList = cpus
      .split(/[\s,]+/)
      .filter(Boolean)
      .map(Number)
      .filter((n) => Number.isInteger(n) && n >= 0);
    setApplied({ names: names.split(/[\s,]+/).filter(Boolean), cpus: cpuList, task: task.trim(), expr: expr.trim() });
  };

  const rowAt = (i: number): EventListRow | null => {
    const page = pages.current.get(Math.floor(i / PAGE));
    return page && page !== 'loading' ? (page[i % PAGE] ?? null) : null;
  };

  const utidOfTid = useMemo(() => {
    const m = new Map<number, number>();
    for (const t of info.threads) if (t.tid !== null && !m.has(t.tid)) m.set(t.tid, t.utid);
    return (tid: number) => m.get(tid) ?? null;
  }, [info]);

  const onRow = useCallback((r: EventListRow) => {
    setSelectedIndex(r.index);
    viewStore.update({ sel: { kind: 'event', id: r.id } }, { history: 'push' });
  }, []);

  return (
    <div className="event-list" data-testid="event-list">
      <form
        className="event-filters"
        onSubmit={(e) => {
          e.preventDefault();
          apply();
        }}
      >
        <input
          list="event-names"
          placeholder="events (comma-separated)"
          value={names}
          onChange={(e) => setNames(e.target.value)}
          data-testid="filter-names"
          title="Event names, e.g. mm_shrink_slab_start,mm_shrink_slab_end"
        />
        <datalist id="event-names">
          {knownNames.map((n) => (
            <option key={n} value={n} />
          ))}
        </datalist>
        <input
          placeholder="CPUs"
          value={cpus}
          onChange={(e) => setCpus(e.target.value)}
          data-testid="filter-cpus"
          className="narrow"
          title={`CPU numbers, e.g. 0,1 (this trace: ${info.cpus.map((c) => c.cpu).join(', ')})`}
        />
        <input
          placeholder="task (name or tid)"
          value={task}
          onChange={(e) => setTask(e.target.value)}
          data-testid="filter-task"
        />
        <input
          placeholder="field expression: nr_reclaimed < 10 && comm ~ kworker"
          value={expr}
          onChange={(e) => setExpr(e.target.value)}
          data-testid="filter-expr"
          className={`wide${error?.field === 'expr' ? ' invalid' : ''}`}
          title="A field compared with a value: == != < <= > >= (numbers or text), ~ !~ (contains; * ? [ ] make it a glob), & (bit test). Join with && || ! ( ). CPU, common_pid and COMM are the event's CPU, task tid and task name."
        />
        <button type="submit" data-testid="filter-apply">
          Filter
        </button>
        <span className="muted event-count" data-testid="event-count" data-total={total ?? ''}>
          {total === null ? 'loading…' : `${formatCount(total)} event${total === 1 ? '' : 's'}`}
          {win ? ` in ${formatDuration(win.t1 - win.t0)} shown` : ''}
        </span>
      </form>
      {error && (
        <div className="error event-error" data-testid="event-list-error">
          {error.message}
        </div>
      )}
      <div className="event-rows" ref={scroller}>
        <div className="event-row head">
          <span className="c-ts">ts</span>
          <span className="c-cpu">CPU</span>
          <span className="c-task">task</span>
          <span className="c-name">event</span>
          <span className="c-args">fields</span>
        </div>
        <div style={{ height: v.getTotalSize(), position: 'relative' }}>
          {items.map((it) => (
            <EventRow
              key={it.index}
              index={it.index}
              start={it.start}
              row={rowAt(it.index)}
              selected={it.index === selectedIndex}
              onRow={onRow}
              utidOfTid={utidOfTid}
            />
          ))}
        </div>
      </div>
    </div>
  );
}

/** One row; a row whose event and place did not change is not rendered again as the list scrolls (memo). */
const EventRow = memo(function EventRow({
  index,
  start,
  row: r,
  selected,
  onRow,
  utidOfTid,
}: {
  index: number;
  start: number;
  row: EventListRow | null;
  selected: boolean;
  onRow(r: EventListRow): void;
  utidOfTid(tid: number): number | null;
}) {
  return (
    <div
      className={`event-row${selected ? ' selected' : ''}`}
      style={{ transform: `translateY(${start}px)`, height: ROW_H }}
      onClick={() => r && onRow(r)}
      data-testid="event-row"
      data-index={index}
      data-id={r?.id ?? ''}
    >
      {r ? (
        <>
          <span className="c-ts">{formatDuration(r.ts, 6)}</span>
          <span className="c-cpu">{r.cpu}</span>
          <span className="c-task">
            <TaskText utid={r.utid} name={r.comm} tid={r.tid} />
          </span>
          <span className="c-name">{r.name}</span>
          <span className="c-args" title={r.args}>
            <ArgsText text={r.args} utidOfTid={utidOfTid} />
          </span>
        </>
      ) : (
        <span className="muted">…</span>
      )}
    </div>
  );
});
