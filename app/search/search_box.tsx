/**
 * Search (`/` or Ctrl+F): one box that finds threads (by name or tid),
 * processes, event names and text field values, and steps through the
 * matches on the timeline (Enter / Shift+Enter, or the arrows): each step
 * selects the match (an event, or a thread's run on a CPU) and moves the
 * window to it. A thread found gets a track with one click.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { useView, viewStore } from '../state/view_store.ts';
import { formatCount, formatDuration } from '../time_axis/time_format.ts';
import { isTyping } from '../timeline/keyboard_nav.ts';
import { showThread } from '../tracks/added_tracks.ts';
import { queryApi, type Match, type SearchResult } from '../query/api.ts';
import { revealTime } from '../state/reveal.ts';
import './search.css';

interface Stepping {
  label: string;
  matches: Match[];
  total: number;
  index: number;
}

type Item =
  | { kind: 'thread'; utid: number; label: string; detail: string }
  | { kind: 'process'; utids: number[]; label: string; detail: string }
  | { kind: 'event'; name: string; label: string; detail: string }
  | { kind: 'value'; table: string; field: string; value: string; label: string; detail: string };

function itemsOf(r: SearchResult): Item[] {
  return [
    ...r.threads.map((t): Item => ({
      kind: 'thread',
      utid: t.utid,
      label: `${t.name ?? 'thread'} ${t.tid ?? ''}`,
      detail: `thread${t.process ? ` of ${t.process} ${t.pid}` : ''} · ${formatCount(t.events)} events · ran ${formatDuration(t.runNs)}`,
    })),
    ...r.processes.map((p): Item => ({
      kind: 'process',
      utids: p.threads.map((t) => t.utid),
      label: `${p.name ?? 'process'} ${p.pid ?? ''}`,
      detail: `process · ${p.threads.length} threads`,
    })),
    ...r.events.map((e): Item => ({
      kind: 'event',
      name: e.name,
      label: e.name,
      detail: `event · ${formatCount(e.count)}`,
    })),
    ...r.values.map((v): Item => ({
      kind: 'value',
      table: v.table,
      field: v.field,
      value: v.value,
      label: `${v.field} = ${v.value}`,
      detail: `${v.table === 'args' ? 'field' : v.table} · ${formatCount(v.count)}`,
    })),
  ];
}

export function SearchBox({ traceId }: { traceId: string }) {
  const input = useRef<HTMLInputElement>(null);
  const [text, setText] = useState('');
  const [result, setResult] = useState<SearchResult | null>(null);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [stepping, setStepping] = useState<Stepping | null>(null);
  const sel = useView((v) => v.sel);

  // `/` or Ctrl+F: focus the box (Ctrl+F only replaces the browser's find on a trace).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (
        (e.key === '/' && !isTyping(e) && !e.ctrlKey && !e.metaKey) ||
        ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'f')
      ) {
        e.preventDefault();
        input.current?.focus();
        input.current?.select();
        if (result) setOpen(true);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [result]);

  // Search as you type (debounced).
  useEffect(() => {
    const q = text.trim();
    if (!q) {
      setResult(null);
      return;
    }
    const ac = new AbortController();
    const id = setTimeout(() => {
      setBusy(true);
      queryApi.search(traceId, q, ac.signal).then(
        (r) => {
          setResult(r);
          setActive(0);
          setError(null);
          setBusy(false);
        },
        (e: Error) => {
          if (!ac.signal.aborted) {
            setError(e.message);
            setBusy(false);
          }
        },
      );
    }, 250);
    return () => {
      clearTimeout(id);
      ac.abort();
    };
  }, [text, traceId]);

  const go = useCallback((s: Stepping, index: number) => {
    const m = s.matches[index];
    if (!m) return;
    setStepping({ ...s, index });
    viewStore.update({ sel: { kind: m.kind, id: m.id } }, { history: 'push' });
    revealTime(m.ts, m.dur, true);
  }, []);

  const step = useCallback(
    (dir: 1 | -1) => {
      if (!stepping || !stepping.matches.length) return;
      const n = stepping.matches.length;
      go(stepping, (stepping.index + dir + n) % n);
    },
    [stepping, go],
  );

  const choose = async (item: Item, addTrack: boolean) => {
    setOpen(false);
    if (item.kind === 'process') {
      for (const u of item.utids.slice(0, 64)) showThread(u);
      return;
    }
    if (item.kind === 'thread' && addTrack) showThread(item.utid);
    const spec: Record<string, string | number> =
      item.kind === 'thread'
        ? { kind: 'thread', utid: item.utid }
        : item.kind === 'event'
          ? { kind: 'event', name: item.name }
          : { kind: 'value', table: item.table, field: item.field, value: item.value };
    try {
      const r = await queryApi.matches(traceId, spec);
      const s: Stepping = { label: item.label, matches: r.matches, total: r.total, index: 0 };
      if (!r.matches.length) {
        setStepping(s);
        return;
      }
      // Start at the first match at or after the window's middle, so stepping continues from where one is.
      const v = viewStore.get();
      const mid = v.t0 !== null && v.t1 !== null ? (v.t0 + v.t1) / 2 : 0;
      const from = Math.max(
        0,
        r.matches.findIndex((m) => m.ts >= mid),
      );
      go(s, item.kind === 'thread' ? 0 : from);
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const items = result ? itemsOf(result) : [];
  const onKeyDown = (e: React.KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'Escape') {
      setOpen(false);
      input.current?.blur();
      return;
    }
    if (open && items.length) {
      if (e.key === 'ArrowDown') {
        e.preventDefault();
        setActive((a) => Math.min(items.length - 1, a + 1));
        return;
      }
      if (e.key === 'ArrowUp') {
        e.preventDefault();
        setActive((a) => Math.max(0, a - 1));
        return;
      }
      if (e.key === 'Enter') {
        e.preventDefault();
        void choose(items[active]!, true);
        return;
      }
    }
    if (e.key === 'Enter' && stepping) {
      e.preventDefault();
      step(e.shiftKey ? -1 : 1);
    }
  };

  const at =
    stepping && sel && stepping.matches[stepping.index]?.id === sel.id ? stepping.index : (stepping?.index ?? 0);
  return (
    <span className="search-box" data-testid="search-box">
      <input
        ref={input}
        value={text}
        placeholder="Search threads, events, values  ( / )"
        onChange={(e) => {
          setText(e.target.value);
          setOpen(true);
        }}
        onFocus={() => result && setOpen(true)}
        onBlur={() => setTimeout(() => setOpen(false), 200)}
        onKeyDown={onKeyDown}
        data-testid="search-input"
      />
      {busy && <span className="muted search-busy">…</span>}
      {stepping && (
        <span className="search-steps" data-testid="search-steps">
          <span title={stepping.label}>{stepping.label.slice(0, 28)}</span>{' '}
          {stepping.matches.length ? (
            <b data-testid="search-position">
              {at + 1} / {formatCount(stepping.total)}
            </b>
          ) : (
            <span className="muted">no matches</span>
          )}
          {stepping.total > stepping.matches.length && (
            <span className="muted" title="Stepping covers the first 10,000">
              {' '}
              (first {formatCount(stepping.matches.length)})
            </span>
          )}
          <button className="icon" onClick={() => step(-1)} aria-label="previous match" data-testid="search-prev">
            ◀
          </button>
          <button className="icon" onClick={() => step(1)} aria-label="next match" data-testid="search-next">
            ▶
          </button>
          <button className="icon" onClick={() => setStepping(null)} aria-label="stop stepping">
            ×
          </button>
        </span>
      )}
      {open && text.trim() && (
        <div className="search-results" data-testid="search-results" onMouseDown={(e) => e.preventDefault()}>
          {error && <div className="error pad">{error}</div>}
          {!error && result && items.length === 0 && <div className="muted pad">Nothing matches “{result.query}”.</div>}
          {items.map((it, i) => (
            <div
              key={`${it.kind}-${it.label}-${i}`}
              className={`search-item${i === active ? ' active' : ''}`}
              onMouseEnter={() => setActive(i)}
              onClick={() => void choose(it, it.kind === 'thread')}
              data-testid={`search-item-${it.kind}`}
              data-label={it.label}
            >
              <span className="search-label">{it.label}</span>
              <span className="muted search-detail">{it.detail}</span>
              {it.kind === 'thread' && (
                <button
                  className="link"
                  onClick={(e) => {
                    e.stopPropagation();
                    setOpen(false);
                    showThread(it.utid);
                  }}
                  data-testid="search-add-track"
                >
                  + track
                </button>
              )}
            </div>
          ))}
        </div>
      )}
    </span>
  );
}
