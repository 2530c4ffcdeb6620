/**
 * The clipboard, for share links and text.
 *
 * A share link is the app's URL for the current view (app/state/view_state.ts)
 * with the notes in focus in its fragment (app/links/make_link.ts):
 *   <origin>/?trace=<sha256>&t0=<ns>&t1=<ns>&sel=finding:<n>&pin=cpu:1&hide=...&note=<noteId>#link=v1.<payload>
 * t0/t1 are integer ns from the trace's first event, so a user can edit the
 * window by hand. The access token is never part of it.
 */
import { notesModel } from './notes_model.ts';

/** Copies text: the async clipboard API, else a selected textarea and execCommand('copy'). */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    /* fall back below (permission denied, unfocused document) */
  }
  const ta = document.createElement('textarea');
  ta.value = text;
  ta.setAttribute('readonly', '');
  ta.style.position = 'fixed';
  ta.style.top = '-1000px';
  ta.style.opacity = '0';
  document.body.appendChild(ta);
  const prev = document.activeElement as HTMLElement | null;
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  ta.remove();
  prev?.focus?.();
  return ok;
}

/** Copies the link and says so; the toast also shows the link (select it by hand if copying was refused). */
export async function copyLink(url: string): Promise<void> {
  const ok = await copyText(url);
  notesModel.toast(ok ? 'ok' : 'error', ok ? 'Link copied' : 'Could not copy: select the link below', url);
}
