/**
 * The traces' timelines stacked, one row per trace, under one window of time
 * from each trace's first event: wheel over any row zooms all of them around
 * the pointer, dragging any row pans all of them, double-click shows
 * everything. Each row draws what the series give it (reclaim stall starts
 * per bin as bars, pages reclaimed per second as a line) and links to the
 * trace's own view at the same window.
 */
import { useEffect, useRef, useState } from 'react';
import type { CompareAnswer } from './compare_view.tsx';
import { sideColor } from './compare_charts.tsx';

interface Window {
  t0: number;
  t1: number;
}

const ROW_H = 46;

export function StackedTimelines({
  answer,
  initial,
  onWindow,
}: {
  answer: CompareAnswer;
  initial: Window | null;
  onWindow(w: Window | null): void;
}) {
  const rows = answer.traces.flatMap((side, si) =>
    side.map((t, ti) => ({ ...t, side: si, series: answer.series[si]![ti]! })),
  );
  const span = Math.max(1, ...rows.map((r) => r.duration_ns));
  const [win, setWin] = useState<Window>(initial ?? { t0: 0, t1: span });
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    onWindow(win.t0 === 0 && win.t1 === span ? null : win);
  }, [win.t0, win.t1]); // eslint-disable-line react-hooks/exhaustive-deps

  const clamp = (w: Window): Window => {
    const len = Math.min(span, Math.max(1000, w.t1 - w.t0));
    const t0 = Math.min(Math.max(0, w.t0), span - len);
    return { t0, t1: t0 + len };
  };

  return (
    <div className="stacked-timelines" data-testid="stacked-timelines">
      <div className="muted">
        {fmtS(win.t0)} – {fmtS(win.t1)} from each trace's first event · wheel: zoom all · drag: pan all · double-click:
        everything
      </div>
      {rows.map((r, i) => (
        <TimelineRow
          key={`${r.id}:${i}`}
          row={r}
          win={win}
          onChange={(w) => setWin(clamp(w))}
          onReset={() => setWin({ t0: 0, t1: span })}
        />
      ))}
    </div>
  );
}

function fmtS(ns: number): string {
  return `${(ns / 1e9).toFixed(ns < 1e8 ? 4 : 3)} s`;
}

function TimelineRow({
  row,
  win,
  onChange,
  onReset,
}: {
  row: { id: string; name: string; duration_ns: number; side: number; series: CompareAnswer['series'][number][number] };
  win: Window;
  onChange(w: Window): void;
  onReset(): void;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const drag = useRef<{ x: number; win: Window } | null>(null);
  const winRef = useRef(win);
  winRef.current = win;

  useEffect(() => {
    const c = canvas.current;
    if (!c) return;
    const w = c.clientWidth || 800;
    c.width = w * devicePixelRatio;
    c.height = ROW_H * devicePixelRatio;
    const g = c.getContext('2d')!;
    g.scale(devicePixelRatio, devicePixelRatio);
    g.clearRect(0, 0, w, ROW_H);
    const x = (s: number) => ((s * 1e9 - win.t0) / (win.t1 - win.t0)) * w;
    g.fillStyle = '#f4f4f4';
    g.fillRect(0, 0, Math.min(w, x(row.duration_ns / 1e9)), ROW_H);
    const starts = row.series.find((s) => s.series === 'reclaim_stall.starts_per_s');
    const reclaimed = row.series.find((s) => s.series === 'vmscan.pages_reclaimed_per_s');
    if (starts && starts.points.length > 1) {
      const step = starts.points[1]![0] - starts.points[0]![0];
      const max = Math.max(1e-9, ...starts.points.map((p) => p[1]));
      g.fillStyle = sideColor(row.side);
      for (const [t, v] of starts.points) {
        if (v <= 0) continue;
        const x0 = x(t);
        const x1 = x(t + step);
        if (x1 < 0 || x0 > w) continue;
        const h = (v / max) * (ROW_H - 6);
        g.fillRect(x0, ROW_H - h, Math.max(1, x1 - x0 - 0.5), h);
      }
    }
    if (reclaimed && reclaimed.points.length > 1) {
      const max = Math.max(1e-9, ...reclaimed.points.map((p) => p[1]));
      g.strokeStyle = '#333';
      g.lineWidth = 1;
      g.beginPath();
      reclaimed.points.forEach(([t, v], k) => {
        const px = x(t);
        const py = ROW_H - 2 - (v / max) * (ROW_H - 8);
        if (k === 0) g.moveTo(px, py);
        else g.lineTo(px, py);
      });
      g.stroke();
    }
  }, [win.t0, win.t1, row]);

  // Wheel: a non-passive listener, so the page does not scroll while zooming.
  useEffect(() => {
    const c = canvas.current;
    if (!c) return;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const w = winRef.current;
      const rect = c.getBoundingClientRect();
      const f = Math.min(1, Math.max(0, (e.clientX - rect.left) / rect.width));
      const at = w.t0 + f * (w.t1 - w.t0);
      const k = Math.exp(e.deltaY * 0.002);
      onChange({ t0: at - (at - w.t0) * k, t1: at + (w.t1 - at) * k });
    };
    c.addEventListener('wheel', onWheel, { passive: false });
    return () => c.removeEventListener('wheel', onWheel);
  }, [onChange]);

  return (
    <div
      className="timeline-row"
      data-testid="compare-timeline"
      data-trace-id={row.id}
      data-t0={Math.floor(win.t0)}
      data-t1={Math.ceil(win.t1)}
    >
      <div className="timeline-label" style={{ borderColor: sideColor(row.side) }}>
        <a
          href={`/?trace=${row.id}&t0=${Math.floor(win.t0)}&t1=${Math.ceil(win.t1)}`}
          title="Open this trace at this window"
        >
          {row.name}
        </a>
      </div>
      <canvas
        ref={canvas}
        className="timeline-canvas"
        style={{ height: ROW_H }}
        onMouseDown={(e) => {
          drag.current = { x: e.clientX, win: winRef.current };
        }}
        onMouseMove={(e) => {
          const d = drag.current;
          if (!d || !canvas.current) return;
          const dt = ((e.clientX - d.x) / canvas.current.clientWidth) * (d.win.t1 - d.win.t0);
          onChange({ t0: d.win.t0 - dt, t1: d.win.t1 - dt });
        }}
        onMouseUp={() => (drag.current = null)}
        onMouseLeave={() => (drag.current = null)}
        onDoubleClick={onReset}
      />
    </div>
  );
}
