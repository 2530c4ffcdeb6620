/**
 * Drives the canvas timeline outside React: owns the visible window, turns
 * input (wheel, drag, and W/S/A/D through keyboard_nav.ts) into window changes, and draws every visible
 * track synchronously from cached data in one requestAnimationFrame. Tracks
 * start their own fetches from `update()`; arriving data asks for a redraw.
 */
import { drawGrid, drawRuler } from '../renderers/ruler_renderer.ts';
import { HIGHLIGHT } from '../renderers/colors.ts';
import { NotesOverlay, drawPin, type NoteMark, type RangeMark } from '../renderers/notes_overlay.ts';
import type { Selection } from '../state/view_state.ts';
import type { FlowOverlay, Locate } from '../tracks/flow_track.ts';
import { NO_HIGHLIGHT, type Highlight, type Hit, type Track } from '../tracks/track.ts';
import { computeTicks } from '../time_axis/ruler.ts';
import { TimeScale, clampWindow, panWindow, zoomWindow, type TimeWindow } from '../time_axis/time_scale.ts';
import { KeyboardNav } from './keyboard_nav.ts';
import { RangeSelect } from './range_select.ts';

export interface LayoutRow {
  track: Track;
  /** Top within the area's content (CSS px). */
  y: number;
  h: number;
  collapsed: boolean;
}

export interface Area {
  canvas: HTMLCanvasElement;
  /** The scrolling element (scroll area) or null (pinned area: not scrolled). */
  scroller: HTMLElement | null;
  rows: LayoutRow[];
}

export interface ControllerCallbacks {
  onWindow(w: TimeWindow): void;
  /** A click on the timeline: what was hit (or null) and the track it was on. */
  onSelect(sel: Selection | null, track?: string): void;
  /** Shift+drag selected a time range (on the ruler: all tracks; on a track: that track), or cleared it. */
  onRange?(r: RangeMark | null): void;
  /** A click on a note's marker in the ruler. */
  onNote?(id: string): void;
}

declare global {
  interface Window {
    /** For tests and the UI bench: frame times and first paint of the timeline. */
    __stallscope?: { frames: number[]; firstPaintMs: number | null; draws: number; drawMs: number[] };
  }
}

export class TimelineController {
  win: TimeWindow;
  readonly bounds: TimeWindow;
  private tracks: Track[] = [];
  private flows: FlowOverlay[] = [];
  private readonly areas = new Map<string, Area>();
  private ruler: HTMLCanvasElement | null = null;
  private hl: Highlight = NO_HIGHLIGHT;
  private hoverUtid: number | null = null;
  private raf = 0;
  private width = 800;
  private mouseX: number | null = null;
  private drag: { x: number; t0: number; moved: boolean } | null = null;
  private painted = false;
  private hiddenFlows = new Set<string>();
  private tooltip: HTMLElement | null = null;
  private disposed = false;
  private readonly notes = new NotesOverlay();
  private readonly rangeSel: RangeSelect;
  private readonly keyNav: KeyboardNav;

  constructor(
    private readonly root: HTMLElement,
    bounds: TimeWindow,
    initial: TimeWindow | null,
    private readonly cb: ControllerCallbacks,
  ) {
    this.bounds = bounds;
    this.win = initial ?? { t0: bounds.t0, t1: bounds.t1 };
    window.__stallscope ??= { frames: [], firstPaintMs: null, draws: 0, drawMs: [] };
    this.rangeSel = new RangeSelect(root, (r) => this.cb.onRange?.(r));
    this.keyNav = new KeyboardNav({
      window: () => this.win,
      bounds: this.bounds,
      // Zooming keeps the time under the mouse in place, else the window's middle.
      anchor: () => (this.mouseX !== null ? this.scale().pxToTs(this.mouseX) : (this.win.t0 + this.win.t1) / 2),
      change: (w) => this.changeWindow(w),
      redraw: () => this.redraw(),
    });
    window.addEventListener('mousemove', this.onWindowMouseMove);
    window.addEventListener('mouseup', this.onWindowMouseUp);
    this.publishWindow();
  }

  dispose(): void {
    this.disposed = true;
    cancelAnimationFrame(this.raf);
    this.keyNav.dispose();
    window.removeEventListener('mousemove', this.onWindowMouseMove);
    window.removeEventListener('mouseup', this.onWindowMouseUp);
  }

  setTracks(tracks: Track[], flows: FlowOverlay[]): void {
    this.tracks = tracks;
    this.flows = flows;
    this.redraw();
  }

  setHiddenFlows(uris: string[]): void {
    this.hiddenFlows = new Set(uris);
    this.redraw();
  }

  setTooltipElement(el: HTMLElement | null): void {
    this.tooltip = el;
  }

  setRuler(canvas: HTMLCanvasElement | null): void {
    this.ruler = canvas;
    if (canvas) {
      canvas.onwheel = (e) => this.onWheel(e, true);
      canvas.onmousedown = (e) => this.onMouseDown(e, null);
      canvas.onmousemove = (e) => {
        if (this.drag?.moved || this.rangeSel.dragElement) return;
        const n = this.notes.noteAt(this.scale(), this.localX(e, canvas), null);
        if (n) this.showNoteTip(n, e);
        else this.setHover(null, null);
        canvas.style.cursor = n ? 'pointer' : '';
      };
      canvas.onmouseleave = () => this.setHover(null, null);
      canvas.onclick = (e) => {
        if (this.drag?.moved || this.rangeSel.suppressClick) return;
        const n = this.notes.noteAt(this.scale(), this.localX(e, canvas), null);
        if (n) this.cb.onNote?.(n.id);
      };
    }
    this.redraw();
  }

  setArea(id: string, area: Area | null): void {
    if (!area) {
      this.areas.delete(id);
      return;
    }
    const prev = this.areas.get(id);
    this.areas.set(id, area);
    if (prev?.canvas !== area.canvas) this.attach(id, area);
    this.redraw();
  }

  setWidth(width: number): void {
    if (Math.abs(width - this.width) < 0.5) return;
    this.width = Math.max(50, width);
    this.redraw();
  }

  setHighlight(hl: Highlight): void {
    this.hl = hl;
    this.redraw();
  }

  setNotes(notes: NoteMark[], focused: string | null): void {
    this.notes.set(notes, focused);
    this.root.dataset.notes = String(this.notes.count);
    this.redraw();
  }

  /** The shift+drag range, set from outside (cleared after a note is made). */
  setRange(r: RangeMark | null): void {
    if (this.rangeSel.set(r)) this.redraw();
  }

  /** Moves the window (from outside: URL, a finding click). */
  setWindow(w: TimeWindow, notify = false): void {
    const c = clampWindow(w, this.bounds);
    if (c.t0 === this.win.t0 && c.t1 === this.win.t1) return;
    this.win = c;
    this.publishWindow();
    if (notify) this.cb.onWindow(c);
    this.redraw();
  }

  private changeWindow(w: TimeWindow): void {
    this.win = w;
    this.publishWindow();
    this.cb.onWindow(w);
    this.redraw();
  }

  private publishWindow(): void {
    this.root.dataset.t0 = String(Math.floor(this.win.t0));
    this.root.dataset.t1 = String(Math.ceil(this.win.t1));
  }

  redraw(): void {
    if (this.raf || this.disposed) return;
    this.raf = requestAnimationFrame((now) => {
      this.raf = 0;
      this.keyNav.tick(now);
      const t = performance.now();
      this.draw();
      const s = window.__stallscope!;
      s.drawMs.push(performance.now() - t);
      s.frames.push(now);
      if (s.frames.length > 5000) {
        s.frames.splice(0, 2500);
        s.drawMs.splice(0, 2500);
      }
    });
  }

  // ---- drawing ---------------------------------------------------------

  private scale(): TimeScale {
    return new TimeScale(this.win.t0, this.win.t1, this.width);
  }

  draw(): void {
    const scale = this.scale();
    const ticks = computeTicks(scale);
    const dpr = window.devicePixelRatio || 1;
    if (this.ruler) {
      const ctx = prepare(this.ruler, this.width, 24, dpr);
      drawRuler(ctx, this.width, 24, ticks);
      this.drawFindingRange(ctx, scale, 0, 24, true);
      this.notes.drawRuler(ctx, scale, 24, this.rangeSel.range);
      const labels = ticks.map((t) => t.label).join('|');
      if (this.ruler.dataset.ticks !== labels) {
        this.ruler.dataset.ticks = labels;
        this.ruler.setAttribute('aria-label', `time ruler: ${ticks.map((t) => t.label).join(', ')}`);
      }
    }
    let allLoaded = true;
    for (const area of this.areas.values()) {
      const viewH = area.scroller ? area.scroller.clientHeight : area.rows.reduce((m, r) => Math.max(m, r.y + r.h), 0);
      const scrollTop = area.scroller?.scrollTop ?? 0;
      const ctx = prepare(area.canvas, this.width, viewH, dpr);
      ctx.clearRect(0, 0, this.width, viewH);
      drawGrid(ctx, viewH, ticks);
      this.drawFindingRange(ctx, scale, 0, viewH, false);
      this.notes.drawArea(ctx, scale, viewH, this.rangeSel.range);
      for (const row of area.rows) {
        const y = row.y - scrollTop;
        if (y + row.h < 0 || y > viewH) continue;
        row.track.update(this.win, this.width);
        ctx.save();
        ctx.beginPath();
        ctx.rect(0, y, this.width, row.h);
        ctx.clip();
        row.track.render({ ctx, scale, y, collapsed: row.collapsed, hl: this.hl, hoverUtid: this.hoverUtid });
        this.drawMarkers(ctx, scale, row, y);
        this.notes.drawRow(ctx, scale, row.track.uri, y, row.h, this.rangeSel.range);
        if (row.track.error) {
          ctx.fillStyle = '#c5221f';
          ctx.font = '11px system-ui, sans-serif';
          ctx.textBaseline = 'middle';
          ctx.fillText(`error: ${row.track.error}`, 8, y + row.h / 2);
        } else if (row.track.loading) {
          allLoaded = false;
          ctx.fillStyle = 'rgba(95,99,104,0.7)';
          ctx.font = '10px system-ui, sans-serif';
          ctx.textBaseline = 'middle';
          ctx.fillText('loading…', this.width - 54, y + row.h / 2);
        }
        ctx.restore();
        ctx.fillStyle = '#e8eaed';
        ctx.fillRect(0, y + row.h - 1, this.width, 1);
      }
      const locate: Locate = (cpu, utid) => {
        let cpuY: number | null = null;
        for (const row of area.rows) {
          const a = row.track.anchor(cpu, utid, row.collapsed);
          if (a === null) continue;
          if (row.track.uri.startsWith('thread#')) return row.y - scrollTop + a;
          cpuY ??= row.y - scrollTop + a;
        }
        return cpuY;
      };
      for (const f of this.flows) {
        if (this.hiddenFlows.has(f.uri)) continue;
        f.update(this.win, this.width);
        f.render(ctx, scale, locate, this.hl);
      }
    }
    const s = window.__stallscope!;
    s.draws++;
    // Whether every track in view has its data for this window: tracks grow as it arrives (slice
    // depths), so a layout read while one is loading can still move (tests wait on this).
    const loading = allLoaded ? 'false' : 'true';
    if (this.root.dataset.loading !== loading) this.root.dataset.loading = loading;
    if (!this.painted && allLoaded && this.areas.size > 0 && this.tracks.length > 0) {
      this.painted = true;
      s.firstPaintMs = performance.now();
      this.root.dataset.painted = 'true';
      performance.mark('stallscope:timeline-painted');
    }
  }

  private drawFindingRange(
    ctx: CanvasRenderingContext2D,
    scale: TimeScale,
    y: number,
    h: number,
    ruler: boolean,
  ): void {
    const r = this.hl.range;
    if (!r) return;
    const x0 = scale.tsToPx(r.ts);
    const x1 = scale.tsToPx(r.ts + r.dur);
    ctx.fillStyle = ruler ? 'rgba(26,115,232,0.25)' : 'rgba(26,115,232,0.07)';
    ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
    ctx.fillStyle = HIGHLIGHT;
    ctx.fillRect(Math.round(x0), y, 1, h);
    ctx.fillRect(Math.round(x1), y, 1, h);
  }

  private showNoteTip(n: NoteMark, e: MouseEvent): void {
    const tip = this.tooltip;
    if (!tip) return;
    tip.textContent = n.tip;
    tip.classList.add('note-tip');
    tip.style.display = 'block';
    const rootRect = this.root.getBoundingClientRect();
    tip.style.left = `${Math.min(e.clientX - rootRect.left + 12, rootRect.width - 380)}px`;
    tip.style.top = `${e.clientY - rootRect.top + 14}px`;
    tip.dataset.noteId = n.id;
  }

  private drawMarkers(ctx: CanvasRenderingContext2D, scale: TimeScale, row: LayoutRow, y: number): void {
    if (!this.hl.events.length) return;
    ctx.fillStyle = HIGHLIGHT;
    for (const e of this.hl.events) {
      if (e.ts < scale.t0 - scale.nsPerPx * 6 || e.ts > scale.t1 + scale.nsPerPx * 6) continue;
      if (!row.track.ownsEvent(e)) continue;
      drawPin(ctx, scale.tsToPx(e.ts), y, row.h, 1.5, 4, 6, 0.5);
    }
  }

  // ---- input -----------------------------------------------------------

  private attach(id: string, first: Area): void {
    const c = first.canvas;
    // Handlers look the area up on each event: its rows change with every layout.
    const area = () => this.areas.get(id) ?? first;
    c.onwheel = (e) => this.onWheel(e, false);
    c.onmousedown = (e) => this.onMouseDown(e, area());
    c.onmousemove = (e) => this.onHover(e, area());
    c.onmouseleave = () => {
      this.mouseX = null;
      this.setHover(null, null);
    };
    c.onclick = (e) => this.onClick(e, area());
    first.scroller?.addEventListener('scroll', () => this.redraw(), { passive: true });
  }

  private rowAt(area: Area, clientY: number): { row: LayoutRow; y: number } | null {
    const rect = area.canvas.getBoundingClientRect();
    const y = clientY - rect.top + (area.scroller?.scrollTop ?? 0);
    for (const row of area.rows) if (y >= row.y && y < row.y + row.h) return { row, y: y - row.y };
    return null;
  }

  private localX(e: MouseEvent, el: HTMLElement): number {
    return e.clientX - el.getBoundingClientRect().left;
  }

  private onWheel(e: WheelEvent, onRuler: boolean): void {
    const x = this.localX(e, e.currentTarget as HTMLElement);
    const scale = this.scale();
    if (e.ctrlKey || e.metaKey || onRuler) {
      e.preventDefault();
      const factor = Math.exp(Math.max(-1, Math.min(1, e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.002))));
      this.changeWindow(zoomWindow(this.win, scale.pxToTs(x), factor, this.bounds));
    } else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      e.preventDefault();
      const d = e.shiftKey ? e.deltaY || e.deltaX : e.deltaX;
      this.changeWindow(panWindow(this.win, d * scale.nsPerPx, this.bounds));
    }
    // Plain vertical wheel scrolls the track list.
  }

  private onMouseDown(e: MouseEvent, area: Area | null): void {
    if (e.button !== 0) return;
    if (e.shiftKey) {
      // Shift+drag selects a time range: from the ruler across all tracks, from a track on that track.
      e.preventDefault();
      const el = e.currentTarget as HTMLElement;
      const x = this.localX(e, el);
      const track = area ? (this.rowAt(area, e.clientY)?.row.track.uri ?? null) : null;
      this.rangeSel.start(el, x, this.scale().pxToTs(x), track);
      return;
    }
    this.drag = { x: e.clientX, t0: this.win.t0, moved: false };
  }

  private onWindowMouseMove = (e: MouseEvent): void => {
    const rangeEl = this.rangeSel.dragElement;
    if (rangeEl) {
      const x = Math.max(0, Math.min(this.width, this.localX(e, rangeEl)));
      if (this.rangeSel.move(x, this.scale().pxToTs(x))) this.redraw();
      return;
    }
    if (!this.drag) return;
    const dx = e.clientX - this.drag.x;
    if (Math.abs(dx) > 3) this.drag.moved = true;
    if (!this.drag.moved) return;
    const span = this.win.t1 - this.win.t0;
    const t0 = this.drag.t0 - dx * (span / this.width);
    this.changeWindow(clampWindow({ t0, t1: t0 + span }, this.bounds));
  };

  private onWindowMouseUp = (): void => {
    if (this.rangeSel.end()) {
      this.redraw();
      return;
    }
    // Keep `moved` until the click event that follows has seen it.
    const d = this.drag;
    setTimeout(() => {
      if (this.drag === d) this.drag = null;
    }, 0);
  };

  private hitAt(e: MouseEvent, area: Area): Hit | null {
    const r = this.rowAt(area, e.clientY);
    if (!r) return null;
    return r.row.track.hitTest(this.localX(e, area.canvas), r.y, this.scale(), r.row.collapsed);
  }

  private onClick(e: MouseEvent, area: Area): void {
    if (this.drag?.moved || this.rangeSel.suppressClick) return;
    const hit = this.hitAt(e, area);
    this.cb.onSelect(hit?.selection ?? null, this.rowAt(area, e.clientY)?.row.track.uri);
  }

  private onHover(e: MouseEvent, area: Area): void {
    this.mouseX = this.localX(e, area.canvas);
    if (this.drag?.moved || this.rangeSel.dragElement) return;
    const r = this.rowAt(area, e.clientY);
    const note = r ? this.notes.noteAt(this.scale(), this.mouseX, r.row.track.uri) : null;
    if (note) {
      this.setHover(null, null);
      this.showNoteTip(note, e);
      return;
    }
    const hit = this.hitAt(e, area);
    this.setHover(hit, e);
  }

  private setHover(hit: Hit | null, e: MouseEvent | null): void {
    const utid = hit?.utid ?? null;
    if (utid !== this.hoverUtid) {
      this.hoverUtid = utid !== null && utid > 0 ? utid : null;
      this.redraw();
    }
    const tip = this.tooltip;
    if (!tip) return;
    tip.classList.remove('note-tip');
    delete tip.dataset.noteId;
    if (!hit || !e) {
      tip.style.display = 'none';
      return;
    }
    tip.textContent = hit.tooltip;
    tip.style.display = 'block';
    const rootRect = this.root.getBoundingClientRect();
    tip.style.left = `${Math.min(e.clientX - rootRect.left + 12, rootRect.width - 260)}px`;
    tip.style.top = `${e.clientY - rootRect.top + 14}px`;
  }
}

/** Sizes a canvas for CSS size w x h at the device pixel ratio; returns its context scaled to CSS px. */
function prepare(canvas: HTMLCanvasElement, w: number, h: number, dpr: number): CanvasRenderingContext2D {
  const pw = Math.round(w * dpr);
  const ph = Math.round(h * dpr);
  if (canvas.width !== pw || canvas.height !== ph) {
    canvas.width = pw;
    canvas.height = ph;
    canvas.style.width = `${w}px`;
    canvas.style.height = `${h}px`;
  }
  const ctx = canvas.getContext('2d', { alpha: true })!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}
