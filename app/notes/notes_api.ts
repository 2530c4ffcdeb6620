/** The notes, excerpt and export endpoints (server/api/routes/notes.ts, export.ts). */
import { requestJson, requestText } from '../api/client.ts';
import type { NewAnchor, Note } from './types.ts';

const enc = encodeURIComponent;
const base = (trace: string) => `/api/traces/${enc(trace)}`;

export const notesApi = {
  list: (trace: string) => requestJson<{ notes: Note[] }>('GET', `${base(trace)}/notes`).then((r) => r.notes),
  create: (trace: string, body: { anchor: NewAnchor; text: string; author: string }) =>
    requestJson<Note>('POST', `${base(trace)}/notes`, body),
  update: (trace: string, id: string, body: { version: number; text?: string; author?: string }) =>
    requestJson<Note>('PATCH', `${base(trace)}/notes/${enc(id)}`, body),
  remove: (trace: string, id: string, version: number) =>
    requestJson<null>('DELETE', `${base(trace)}/notes/${enc(id)}?version=${version}`),
  /** Plain text for an email: `params` as GET /api/traces/:id/excerpt takes them. */
  excerpt: (trace: string, params: Record<string, string>) =>
    requestText(`${base(trace)}/excerpt?${new URLSearchParams(params)}`),
  /** Downloads an export (the access token travels in its cookie, never in a URL). */
  async download(trace: string, kind: 'json' | 'md'): Promise<void> {
    const res = await fetch(`${base(trace)}/export.${kind}`);
    if (!res.ok)
      throw new Error(
        ((await res.json().catch(() => null)) as { error?: string } | null)?.error ?? `HTTP ${res.status}`,
      );
    const name =
      /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? `stallscope-export.${kind}`;
    const url = URL.createObjectURL(await res.blob());
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  },
};
