/**
 * The notes overlay of the timeline: notes (markers and ranges, on one track
 * or across all) and the shift+drag range, drawn over the ruler, the track
 * areas and each track row, and hit-tested for the hover tip and a click.
 * The controller owns the canvases and the range being dragged; this owns
 * how notes look and which one is under the pointer (as the flow overlay
 * owns its arrows).
 */
import type { TimeScale } from '../time_axis/time_scale.ts';

/** A note drawn on the timeline: a marker (t0 == t1) or a range, on one track or across all. */
export interface NoteMark {
  id: string;
  t0: number;
  t1: number;
  track: string | null;
  /** Hover text (plain). */
  tip: string;
}

/** A time range selected with shift+drag. */
export interface RangeMark {
  t0: number;
  t1: number;
  track: string | null;
}

const NOTE_COLOR = '#f9ab00';
const NOTE_FILL = 'rgba(249,171,0,0.10)';
const NOTE_FILL_FOCUSED = 'rgba(249,171,0,0.22)';
const RANGE_COLOR = '#8e24aa';
const RANGE_FILL = 'rgba(142,36,170,0.12)';
/** Height of the notes strip at the bottom of the ruler. */
const NOTE_STRIP = 6;

export class NotesOverlay {
  private notes: NoteMark[] = [];
  private focused: string | null = null;

  get count(): number {
    return this.notes.length;
  }

  set(notes: NoteMark[], focused: string | null): void {
    this.notes = notes;
    this.focused = focused;
  }

  private span(scale: TimeScale, n: { t0: number; t1: number }): { x0: number; x1: number } | null {
    const x0 = scale.tsToPx(n.t0);
    const x1 = scale.tsToPx(n.t1);
    if (x1 < -8 || x0 > scale.width + 8) return null;
    return { x0, x1 };
  }

  /** Notes as a strip at the bottom of the ruler: bars for ranges, flags for instants; the range being selected. */
  drawRuler(ctx: CanvasRenderingContext2D, scale: TimeScale, h: number, range: RangeMark | null): void {
    for (const n of this.notes) {
      const s = this.span(scale, n);
      if (!s) continue;
      const focused = n.id === this.focused;
      ctx.fillStyle = NOTE_COLOR;
      ctx.globalAlpha = focused ? 1 : 0.8;
      if (s.x1 - s.x0 >= 3) {
        ctx.fillRect(s.x0, h - NOTE_STRIP, Math.max(2, s.x1 - s.x0), NOTE_STRIP);
      } else {
        const x = (s.x0 + s.x1) / 2;
        ctx.beginPath();
        ctx.moveTo(x - 5, h - NOTE_STRIP - 3);
        ctx.lineTo(x + 5, h - NOTE_STRIP - 3);
        ctx.lineTo(x, h);
        ctx.closePath();
        ctx.fill();
      }
      if (focused) {
        ctx.fillStyle = '#202124';
        ctx.fillRect(s.x0, h - 1, Math.max(2, s.x1 - s.x0), 1);
      }
      ctx.globalAlpha = 1;
    }
    if (range) {
      const s = this.span(scale, range);
      if (s) {
        ctx.fillStyle = 'rgba(142,36,170,0.35)';
        ctx.fillRect(s.x0, 0, Math.max(1, s.x1 - s.x0), h);
      }
    }
  }

  /** Track-less notes and ranges: a band across every track. */
  drawArea(ctx: CanvasRenderingContext2D, scale: TimeScale, h: number, range: RangeMark | null): void {
    for (const n of this.notes) {
      if (n.track) continue;
      const s = this.span(scale, n);
      if (!s) continue;
      const focused = n.id === this.focused;
      if (s.x1 - s.x0 >= 1) {
        ctx.fillStyle = focused ? NOTE_FILL_FOCUSED : NOTE_FILL;
        ctx.fillRect(s.x0, 0, s.x1 - s.x0, h);
      }
      ctx.fillStyle = NOTE_COLOR;
      ctx.globalAlpha = focused ? 0.9 : 0.45;
      ctx.fillRect(Math.round(s.x0), 0, 1, h);
      if (s.x1 - s.x0 >= 1) ctx.fillRect(Math.round(s.x1), 0, 1, h);
      ctx.globalAlpha = 1;
    }
    const r = range;
    if (r && !r.track) {
      const s = this.span(scale, r);
      if (s) {
        ctx.fillStyle = RANGE_FILL;
        ctx.fillRect(s.x0, 0, Math.max(1, s.x1 - s.x0), h);
        ctx.fillStyle = RANGE_COLOR;
        ctx.fillRect(Math.round(s.x0), 0, 1, h);
        ctx.fillRect(Math.round(s.x1), 0, 1, h);
      }
    }
  }

  /** Notes and the range selection on one track. */
  drawRow(
    ctx: CanvasRenderingContext2D,
    scale: TimeScale,
    uri: string,
    y: number,
    h: number,
    range: RangeMark | null,
  ): void {
    for (const n of this.notes) {
      if (n.track !== uri) continue;
      const s = this.span(scale, n);
      if (!s) continue;
      const focused = n.id === this.focused;
      if (s.x1 - s.x0 >= 2) {
        ctx.fillStyle = focused ? 'rgba(249,171,0,0.35)' : 'rgba(249,171,0,0.22)';
        ctx.fillRect(s.x0, y, s.x1 - s.x0, h);
        ctx.fillStyle = NOTE_COLOR;
        ctx.fillRect(s.x0, y, s.x1 - s.x0, 2);
      } else {
        ctx.fillStyle = NOTE_COLOR;
        drawPin(ctx, (s.x0 + s.x1) / 2, y, h, 2, 5, 7, 1);
      }
    }
    const r = range;
    if (r && r.track === uri) {
      const s = this.span(scale, r);
      if (s) {
        ctx.fillStyle = 'rgba(142,36,170,0.22)';
        ctx.fillRect(s.x0, y, Math.max(1, s.x1 - s.x0), h);
        ctx.fillStyle = RANGE_COLOR;
        ctx.fillRect(Math.round(s.x0), y, 1, h);
        ctx.fillRect(Math.round(s.x1), y, 1, h);
      }
    }
  }

  /** The note under x: in the ruler any note; on a track its own notes, or a track-less note's edge. */
  noteAt(scale: TimeScale, x: number, trackUri: string | null): NoteMark | null {
    let best: NoteMark | null = null;
    let bestD = Infinity;
    for (const n of this.notes) {
      const s = this.span(scale, n);
      if (!s) continue;
      const inside = x >= s.x0 - 4 && x <= s.x1 + 4;
      const nearEdge = Math.min(Math.abs(x - s.x0), Math.abs(x - s.x1)) <= 3;
      const hit = trackUri === null ? inside : n.track === trackUri ? inside : !n.track && nearEdge;
      if (!hit) continue;
      const d = Math.abs(x - (s.x0 + s.x1) / 2);
      if (d < bestD) {
        best = n;
        bestD = d;
      }
    }
    return best;
  }
}

/**
 * A marker pin at x: a vertical line of `lineWidth` over the row's height
 * (left edge at round(x) - `lineShift`) under a downward triangle of half
 * width `head` and height `headH`, in the current fill style.
 */
export function drawPin(
  ctx: CanvasRenderingContext2D,
  x: number,
  y: number,
  h: number,
  lineWidth: number,
  head: number,
  headH: number,
  lineShift: number,
): void {
  ctx.fillRect(Math.round(x) - lineShift, y, lineWidth, h);
  ctx.beginPath();
  ctx.moveTo(x - head, y);
  ctx.lineTo(x + head, y);
  ctx.lineTo(x, y + headH);
  ctx.closePath();
  ctx.fill();
}
