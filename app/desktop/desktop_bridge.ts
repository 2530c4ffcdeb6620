/**
 * The page's side of the desktop window (desktop/, desktop/src-tauri/src/shell.rs).
 * Inert in a browser: the shell defines `window.__STALLSCOPE_DESKTOP__`
 * before the app's code runs, and only then does any of this act.
 *
 * Shell -> page, `window.stallscopeDesktop`:
 *   followJob(jobId, name)  the server is ingesting a file the user opened
 *                           (File > Open, Open Recent, a drop, the command
 *                           line): the start page follows it as it follows an
 *                           upload, and opens the trace when it is done
 *   openFailed(name, why)   the file could not be opened: shown as an upload's error
 *   menu(action)            a native menu item: presses the app's own button
 *                           for it, so menus, buttons and keys do the same
 * Page -> shell: the command `desktop_action` with "ready" (the calls above
 * can come) or "open-dialog" (the system file chooser, as File > Open).
 */
import { viewStore } from '../state/view_store.ts';

export type DesktopOpen =
  { jobId: string; name: string; error?: undefined } | { name: string; error: string; jobId?: undefined };

interface DesktopGlobals {
  __STALLSCOPE_DESKTOP__?: { shareOrigin?: string };
  __TAURI_INTERNALS__?: { invoke(cmd: string, args?: Record<string, unknown>): Promise<unknown> };
  stallscopeDesktop?: DesktopApi;
}

interface DesktopApi {
  followJob(jobId: string, name: string): void;
  openFailed(name: string, error: string): void;
  menu(action: string): void;
}

const globals = (typeof window === 'undefined' ? {} : window) as DesktopGlobals;

/** Is this page in the desktop window? */
export const inDesktop = globals.__STALLSCOPE_DESKTOP__ !== undefined;

/**
 * Where share links point: the page's own origin in a browser; in the desktop
 * window the team server set in its settings, else `stallscope://open`
 * (which the desktop app opens).
 */
export function shareOrigin(): string {
  return globals.__STALLSCOPE_DESKTOP__?.shareOrigin ?? location.origin;
}

/** Shows the system file chooser (File > Open); false outside the desktop window. */
export function desktopOpenDialog(): boolean {
  if (!inDesktop || !globals.__TAURI_INTERNALS__) return false;
  void globals.__TAURI_INTERNALS__.invoke('desktop_action', { action: 'open-dialog' });
  return true;
}

/** Menu actions: the app's own button (by its test id) to press, or field to focus. */
const MENU_BUTTONS: Record<string, string> = {
  'close-trace': 'home',
  'copy-link': 'copy-link',
  'copy-text': 'topbar-copy-text',
  'zoom-in': 'zoom-in',
  'zoom-out': 'zoom-out',
  'zoom-fit': 'zoom-fit',
  'next-finding': 'next-finding',
  'prev-finding': 'prev-finding',
};

const pending: DesktopOpen[] = [];
let listener: ((o: DesktopOpen) => void) | null = null;

function deliver(o: DesktopOpen): void {
  // Progress is shown on the start page: leave an open trace for it.
  if (viewStore.get().trace)
    viewStore.update({ trace: null, t0: null, t1: null, sel: null, note: null }, { history: 'push' });
  if (listener) listener(o);
  else pending.push(o);
}

/**
 * The start page follows files the desktop window opens (one listener at a
 * time; opens that came while none was listening are delivered at once).
 */
export function onDesktopOpen(l: (o: DesktopOpen) => void): () => void {
  listener = l;
  for (const o of pending.splice(0)) l(o);
  return () => {
    if (listener === l) listener = null;
  };
}

if (inDesktop) {
  globals.stallscopeDesktop = {
    followJob: (jobId, name) => deliver({ jobId, name }),
    openFailed: (name, error) => deliver({ name, error }),
    menu(action) {
      if (action === 'find') {
        const field = document.querySelector<HTMLInputElement>('[data-testid="track-filter"]');
        field?.focus();
        field?.select();
        return;
      }
      const id = MENU_BUTTONS[action];
      const button = id ? document.querySelector<HTMLButtonElement>(`[data-testid="${id}"]`) : null;
      if (button && !button.disabled) button.click();
    },
  };
  void globals.__TAURI_INTERNALS__
    ?.invoke('desktop_action', { action: 'ready' })
    .catch((e: unknown) => console.error('desktop bridge:', e));
}
