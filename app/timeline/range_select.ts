/**
 * Shift+drag on the timeline selects a time range: from the ruler across all
 * tracks, from a track on that track. Holds the range (drawn by the notes
 * overlay, published on the timeline's root as data-range-t0/t1 for tests),
 * and the drag that is making it. The controller feeds it mouse positions;
 * ranges end on whole ns.
 */
import type { RangeMark } from '../renderers/notes_overlay.ts';

interface RangeDrag {
  /** The element the drag started on: positions are measured against it. */
  el: HTMLElement;
  startTs: number;
  startX: number;
  track: string | null;
  /** Past the 2 px a click may wobble. */
  moved: boolean;
}

export class RangeSelect {
  range: RangeMark | null = null;
  private drag: RangeDrag | null = null;
  private justEnded = false;

  constructor(
    private readonly root: HTMLElement,
    /** A drag selected a range, or a click without a drag cleared it. */
    private readonly onRange: (r: RangeMark | null) => void,
  ) {}

  /** The element a drag in progress measures against, or null. */
  get dragElement(): HTMLElement | null {
    return this.drag?.el ?? null;
  }

  /** True from a drag's end until the click event that follows has seen it (that click is not a selection). */
  get suppressClick(): boolean {
    return this.justEnded;
  }

  /** The range, set from outside (cleared after a note is made); ignored while a drag makes one. */
  set(r: RangeMark | null): boolean {
    if (this.drag) return false;
    this.range = r;
    this.publish();
    return true;
  }

  start(el: HTMLElement, x: number, ts: number, track: string | null): void {
    this.drag = { el, startTs: ts, startX: x, track, moved: false };
  }

  /** The mouse at `x` px (time `ts`) during a drag: true when the range changed. */
  move(x: number, ts: number): boolean {
    const d = this.drag;
    if (!d) return false;
    if (Math.abs(x - d.startX) > 2) d.moved = true;
    if (!d.moved) return false;
    this.range = { t0: Math.min(d.startTs, ts), t1: Math.max(d.startTs, ts), track: d.track };
    this.publish();
    return true;
  }

  /** The mouse button released: false when no drag was in progress. */
  end(): boolean {
    const d = this.drag;
    if (!d) return false;
    this.drag = null;
    this.justEnded = true;
    setTimeout(() => {
      this.justEnded = false;
    }, 0);
    const r =
      d.moved && this.range && this.range.t1 > this.range.t0
        ? { ...this.range, t0: Math.floor(this.range.t0), t1: Math.ceil(this.range.t1) }
        : null;
    this.range = r;
    this.publish();
    this.onRange(r);
    return true;
  }

  private publish(): void {
    if (this.range) {
      this.root.dataset.rangeT0 = String(Math.floor(this.range.t0));
      this.root.dataset.rangeT1 = String(Math.ceil(this.range.t1));
    } else {
      delete this.root.dataset.rangeT0;
      delete this.root.dataset.rangeT1;
    }
  }
}
