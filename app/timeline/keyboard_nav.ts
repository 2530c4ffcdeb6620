/**
 * W/S/A/D on the timeline: W and S zoom in and out around the mouse (or the
 * window's middle), A and D pan. A tap moves at once; a held key keeps
 * moving smoothly, one step per animation frame (`tick`, called by the
 * controller's frame). Keys typed into a text field are the field's.
 */
import { panWindow, zoomWindow, type TimeWindow } from '../time_axis/time_scale.ts';

/** Zoom speed while W/S is held: e^ZOOM_RATE per second (about 20x). */
const ZOOM_RATE = 3;
/** Pan speed while A/D is held: window widths per second. */
const PAN_RATE = 0.9;
/** One tap of W/S/A/D: zoom factor and pan fraction applied at once. */
const TAP_ZOOM = 0.7;
const TAP_PAN = 0.15;
/** After a tap, holding the key starts moving smoothly this much later (ms). */
const HOLD_DELAY_MS = 120;

/** Is the key event typed into a text field (input, textarea, select, contenteditable)? */
export function isTyping(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return !!t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
}

/** The window after key `k` moved `win` for `dt` seconds held (or one tap), zooming around `anchor`. */
export function keyStep(
  k: string,
  dt: number,
  tap: boolean,
  win: TimeWindow,
  anchor: number,
  bounds: TimeWindow,
): TimeWindow {
  if (k === 'w' || k === 's') {
    const f = tap ? (k === 'w' ? TAP_ZOOM : 1 / TAP_ZOOM) : Math.exp((k === 'w' ? -1 : 1) * ZOOM_RATE * dt);
    return zoomWindow(win, anchor, f, bounds);
  }
  const span = win.t1 - win.t0;
  const d = (k === 'a' ? -1 : 1) * span * (tap ? TAP_PAN : PAN_RATE * dt);
  return panWindow(win, d, bounds);
}

/** What the keys move: the controller's window. */
export interface KeyTarget {
  window(): TimeWindow;
  readonly bounds: TimeWindow;
  /** The time zooming keeps in place (under the mouse, else the window's middle). */
  anchor(): number;
  change(w: TimeWindow): void;
  redraw(): void;
}

export class KeyboardNav {
  private readonly keys = new Set<string>();
  private last = 0;

  constructor(private readonly target: KeyTarget) {
    window.addEventListener('keydown', this.onKeyDown);
    window.addEventListener('keyup', this.onKeyUp);
    window.addEventListener('blur', this.onBlur);
  }

  dispose(): void {
    window.removeEventListener('keydown', this.onKeyDown);
    window.removeEventListener('keyup', this.onKeyUp);
    window.removeEventListener('blur', this.onBlur);
  }

  /** One animation frame at `now`: held keys move the window by the time since the last frame. */
  tick(now: number): void {
    if (this.keys.size === 0) return;
    if (now > this.last) {
      const dt = Math.min(0.05, (now - this.last) / 1000);
      for (const k of this.keys) this.apply(k, dt, false);
    }
    this.last = Math.max(this.last, now);
    this.target.redraw();
  }

  private apply(k: string, dt: number, tap: boolean): void {
    const t = this.target;
    t.change(keyStep(k, dt, tap, t.window(), t.anchor(), t.bounds));
  }

  private onBlur = (): void => {
    this.keys.clear();
  };

  private onKeyDown = (e: KeyboardEvent): void => {
    if (isTyping(e) || e.ctrlKey || e.metaKey || e.altKey) return;
    const k = e.key.toLowerCase();
    if (!['w', 'a', 's', 'd'].includes(k)) return;
    e.preventDefault();
    if (!this.keys.has(k)) {
      this.keys.add(k);
      // A tap moves at once; holding keeps moving smoothly (see tick).
      this.apply(k, 1, true);
      this.last = performance.now() + HOLD_DELAY_MS;
      this.target.redraw();
    }
  };

  private onKeyUp = (e: KeyboardEvent): void => {
    this.keys.delete(e.key.toLowerCase());
  };
}
