/**
 * "Open a link from another stallscope": a share link names the server it
 * was made on (a colleague's laptop, a team server); pasted here it opens
 * the same view, with the link's notes, on this one. Only the link's query
 * (the view) and fragment (notes, trace facts) are used: its host is never
 * contacted.
 */
import { useState } from 'react';

/** This server's address for a share link made elsewhere, or why it is not one. */
export function localLinkFor(text: string, origin: string): { url: string } | { error: string } {
  let u: URL;
  try {
    u = new URL(text.trim(), origin);
  } catch {
    return { error: 'That is not a link.' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return { error: 'That is not a stallscope link (it must start with http:// or https://).' };
  if (!/^[0-9a-f]{64}$/.test(u.searchParams.get('trace') ?? ''))
    return { error: 'That is not a stallscope share link: it has no trace=<sha256>.' };
  // Another server's access token is no use here (and not this page's to keep).
  u.searchParams.delete('token');
  return { url: `${origin}/${u.search}${u.hash}` };
}

export function OpenLinkBox() {
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const open = () => {
    const r = localLinkFor(text, location.origin);
    if ('error' in r) return setError(r.error);
    location.assign(r.url);
  };
  return (
    <form
      className="open-link"
      data-testid="open-link"
      onSubmit={(e) => {
        e.preventDefault();
        open();
      }}
    >
      <label>
        Open a link from another stallscope{' '}
        <input
          data-testid="open-link-input"
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            setError(null);
          }}
          placeholder="http://127.0.0.1:7420/?trace=…#link=v1.…"
        />
      </label>
      <button type="submit" data-testid="open-link-go" disabled={!text.trim()}>
        Open here
      </button>
      {error && (
        <span className="error" data-testid="open-link-error">
          {error}
        </span>
      )}
    </form>
  );
}
