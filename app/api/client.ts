/**
 * Typed client for the stallscope API. Every request goes through `getJson`,
 * which turns a `{error}` answer into an ApiError carrying the message.
 */
import type { FleetListAnswer, FleetViewAnswer } from '../../shared/contract/fleet.ts';
import type {
  EventInfo,
  FindingsResponse,
  JobState,
  TraceList,
  TraceRecord,
  TrackData,
  TrackList,
  UploadAccepted,
} from './types.ts';

export class ApiError extends Error {
  /** The parsed answer, when there was one. */
  body: unknown = null;
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * The access token, when the server has one, travels in an HttpOnly cookie:
 * the server sets it when the page is opened with `?token=` (the URL it
 * printed), and the browser sends it with every same-origin request (fetch,
 * EventSource, downloads). The page never reads it, and `?token=` is taken
 * out of the address bar at once, so it stays out of history, bookmarks
 * and copied links.
 */
export function dropTokenFromAddressBar(): void {
  const url = new URL(location.href);
  if (!url.searchParams.has('token')) return;
  url.searchParams.delete('token');
  history.replaceState(history.state, '', `${url.pathname}${url.search}${url.hash}`);
}

async function getJson<T>(url: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(url, { signal });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    throw new ApiError(res.status, `unexpected answer from the server (${res.status}): ${text.slice(0, 120)}`);
  }
  if (!res.ok) throw new ApiError(res.status, (body as { error?: string })?.error ?? `HTTP ${res.status}`);
  return body as T;
}

/**
 * A request with an optional JSON body; `{error}` answers become ApiError
 * (with the parsed body in `body`, e.g. the current note of a 409).
 */
export async function requestJson<T>(method: string, url: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    if (!res.ok)
      throw new ApiError(res.status, `unexpected answer from the server (${res.status}): ${text.slice(0, 120)}`);
    return text as T;
  }
  if (!res.ok) {
    const err = new ApiError(res.status, (parsed as { error?: string })?.error ?? `HTTP ${res.status}`);
    err.body = parsed;
    throw err;
  }
  return parsed as T;
}

/** A text answer (excerpts, exports). */
export async function requestText(url: string): Promise<string> {
  const res = await fetch(url);
  const text = await res.text();
  if (!res.ok) {
    let msg = `HTTP ${res.status}`;
    try {
      msg = (JSON.parse(text) as { error?: string }).error ?? msg;
    } catch {
      /* not JSON */
    }
    throw new ApiError(res.status, msg);
  }
  return text;
}

const enc = encodeURIComponent;

export type TrackKind = 'cpu' | 'thread' | 'slice' | 'counter' | 'instant' | 'flow';

/** The parameter that names the track, for kinds the server can answer for several tracks at once. */
const BATCH_KEY: Partial<Record<TrackKind, string>> = {
  cpu: 'cpu',
  thread: 'utid',
  slice: 'category',
  counter: 'track',
};

interface Waiter {
  value: string;
  resolve(d: TrackData): void;
  reject(e: unknown): void;
  signal?: AbortSignal;
}

/** Collects track requests made in the same tick into one request per (path, other params). */
class TrackBatcher {
  private readonly groups = new Map<
    string,
    { path: string; key: string; params: Record<string, string>; waiters: Waiter[] }
  >();
  private scheduled = false;

  add(
    path: string,
    key: string,
    value: string,
    params: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<TrackData> {
    const id = `${path}?${new URLSearchParams(params)}|${key}`;
    let g = this.groups.get(id);
    if (!g) {
      g = { path, key, params, waiters: [] };
      this.groups.set(id, g);
    }
    const group = g;
    const p = new Promise<TrackData>((resolve, reject) => group.waiters.push({ value, resolve, reject, signal }));
    if (!this.scheduled) {
      this.scheduled = true;
      setTimeout(() => this.flush(), 0);
    }
    return p;
  }

  private flush(): void {
    this.scheduled = false;
    const groups = [...this.groups.values()];
    this.groups.clear();
    for (const g of groups) {
      const live = g.waiters.filter((w) => !w.signal?.aborted);
      for (const w of g.waiters) if (w.signal?.aborted) w.reject(new DOMException('aborted', 'AbortError'));
      if (!live.length) continue;
      const values = [...new Set(live.map((w) => w.value))];
      const q = new URLSearchParams({ ...g.params, [g.key]: values.join(',') });
      // Abort the request only when every track waiting on it gave up.
      const abort = new AbortController();
      for (const w of live)
        w.signal?.addEventListener('abort', () => {
          if (live.every((x) => x.signal?.aborted)) abort.abort();
        });
      getJson<TrackData | { batch: Record<string, TrackData> }>(`${g.path}?${q}`, abort.signal).then(
        (r) => {
          for (const w of live) {
            const d =
              values.length === 1 ? (r as TrackData) : (r as { batch: Record<string, TrackData> }).batch[w.value];
            if (d) w.resolve(d);
            else w.reject(new ApiError(500, `no data for ${g.key}=${w.value}`));
          }
        },
        (e) => {
          for (const w of live) w.reject(e);
        },
      );
    }
  }
}

const batcher = new TrackBatcher();

export const api = {
  /** Fleet datasets the server was started with (serve --fleet DIR). */
  fleets: () => getJson<FleetListAnswer>('/api/fleet'),
  /** One dataset's fleet-report document and worst traces, by label `by` (default: the first label). */
  fleet: (name: string, by: string | null, baseline: string | null) =>
    getJson<FleetViewAnswer>(
      `/api/fleet/${enc(name)}?${new URLSearchParams({ ...(by ? { by } : {}), ...(baseline ? { baseline } : {}) }).toString()}`,
    ),
  traces: () => getJson<TraceList>('/api/traces'),
  trace: (id: string) => getJson<TraceRecord>(`/api/traces/${enc(id)}`),
  findings: (id: string) => getJson<FindingsResponse>(`/api/traces/${enc(id)}/findings`),
  tracks: (id: string) => getJson<TrackList>(`/api/traces/${enc(id)}/tracks`),
  /**
   * One track's data for a window. Requests of the same kind for the same
   * window made in the same tick (every CPU track, every counter...) are sent
   * as one request with a list of keys: the server answers them with one scan.
   */
  trackData: (
    id: string,
    kind: TrackKind,
    params: Record<string, string | number>,
    win: { t0: number; t1: number; px: number },
    signal?: AbortSignal,
  ): Promise<TrackData> => {
    const key = BATCH_KEY[kind];
    const q: Record<string, string> = {
      ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])),
      t0: String(Math.floor(win.t0)),
      t1: String(Math.ceil(win.t1)),
      px: String(Math.round(win.px)),
    };
    if (!key || !(key in q))
      return getJson<TrackData>(`/api/traces/${enc(id)}/tracks/${kind}?${new URLSearchParams(q)}`, signal);
    const value = q[key]!;
    delete q[key];
    return batcher.add(`/api/traces/${enc(id)}/tracks/${kind}`, key, value, q, signal);
  },
  row: (id: string, table: 'sched_slice' | 'thread_state' | 'slice', rowId: number) =>
    getJson<{ table: string; row: Record<string, unknown>; events: EventInfo[] }>(
      `/api/traces/${enc(id)}/rows/${table}/${rowId}`,
    ),
  event: (id: string, eventId: number) => getJson<EventInfo>(`/api/traces/${enc(id)}/events/${eventId}`),
  /** A finding's events, a page at a time (its ids stay on the server: a large finding's do not fit a URL). */
  findingEvents: (id: string, findingId: number, offset: number, limit: number) =>
    getJson<{ total: number; offset: number; events: EventInfo[] }>(
      `/api/traces/${enc(id)}/findings/${findingId}/events?offset=${offset}&limit=${limit}`,
    ),
  events: (id: string, ids: number[]) =>
    ids.length === 0
      ? Promise.resolve({ events: [] as EventInfo[] })
      : getJson<{ events: EventInfo[] }>(`/api/traces/${enc(id)}/events?ids=${ids.join(',')}`),

  /** Streams a file to the server (raw body) with upload progress; resolves with the ingest job id. */
  upload(
    file: File,
    onProgress: (sent: number, total: number) => void,
    /** expectSha256: the content the file must have (a share link's trace): another file is refused (409, `body.actual`). */
    opts: { expectSha256?: string } = {},
  ): Promise<UploadAccepted> {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(
        'POST',
        `/api/traces?name=${enc(file.name)}${opts.expectSha256 ? `&expect=${enc(opts.expectSha256)}` : ''}`,
      );
      xhr.setRequestHeader('content-type', 'application/octet-stream');
      let sent = 0;
      xhr.upload.onprogress = (e) => {
        sent = e.loaded;
        onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
      };
      xhr.onerror = () =>
        reject(
          new ApiError(
            0,
            `the upload was cut off after ${sent === 0 ? 'no bytes' : `${sent.toLocaleString('en')} of ${file.size.toLocaleString('en')} bytes`}: ` +
              'the connection to the server was lost (network down, or the server stopped); nothing was added to the library',
          ),
        );
      xhr.onabort = () => reject(new ApiError(0, 'the upload was cancelled'));
      xhr.onload = () => {
        let body: Partial<UploadAccepted> & { error?: string } = {};
        try {
          body = JSON.parse(xhr.responseText);
        } catch {
          /* handled below */
        }
        if (xhr.status >= 200 && xhr.status < 300 && body.jobId) resolve(body as UploadAccepted);
        else {
          const err = new ApiError(xhr.status, body.error ?? `upload failed (HTTP ${xhr.status})`);
          err.body = body;
          reject(err);
        }
      };
      xhr.send(file);
    });
  },

  /**
   * Follows an ingest job's Server-Sent Events until done or failed. If the
   * feed breaks (the server restarted, the network dropped), asks for the job
   * once a second until the server answers again (up to `waitMs`): a restarted
   * server reports the job as failed, with why. Returns a cancel function.
   */
  followJob(
    jobId: string,
    onState: (s: JobState) => void,
    onLost: (message: string) => void,
    opts: { onReconnecting?: () => void; waitMs?: number } = {},
  ): () => void {
    let cancelled = false;
    let es: EventSource | null = null;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const settle = (s: JobState) => {
      onState(s);
      if (s.phase === 'done' || s.phase === 'failed') cancel();
    };
    const cancel = () => {
      cancelled = true;
      es?.close();
      if (timer) clearTimeout(timer);
    };
    const poll = (deadline: number) => {
      if (cancelled) return;
      getJson<JobState>(`/api/jobs/${enc(jobId)}`).then(
        (s) => {
          if (cancelled) return;
          if (s.phase === 'done' || s.phase === 'failed') settle(s);
          else {
            onState(s);
            listen();
          } // still running: back to the live feed
        },
        (e: unknown) => {
          if (cancelled) return;
          if (e instanceof ApiError && e.status === 404) {
            cancel();
            onLost(
              'the server restarted and no longer knows this upload; nothing was added to the library. Upload the file again.',
            );
          } else if (Date.now() > deadline) {
            cancel();
            onLost(
              'lost the connection to the server while ingesting, and it did not come back; check that it is running, then retry',
            );
          } else {
            timer = setTimeout(() => poll(deadline), 1000);
          }
        },
      );
    };
    const listen = () => {
      es = new EventSource(`/api/jobs/${enc(jobId)}/events`);
      es.addEventListener('progress', (ev) => settle(JSON.parse((ev as MessageEvent<string>).data) as JobState));
      es.onerror = () => {
        if (cancelled) return;
        es?.close();
        opts.onReconnecting?.();
        poll(Date.now() + (opts.waitMs ?? 120_000));
      };
    };
    listen();
    return cancel;
  },
};

export type Api = typeof api;
