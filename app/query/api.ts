/**
 * The app's client for the query sandbox's routes (server/api/routes/query.ts):
 * SQL, schema, event list, search, range aggregates, save as detector. Wire
 * shapes are the server's own types (type-only imports: nothing is bundled).
 */
import { ApiError } from '../api/client.ts';
import type {
  Catalog,
  ColumnInfo,
  Match,
  QueryResult,
  RangeSummary,
  SearchResult,
} from '../../shared/contract/query.ts';
import type { EventListRow } from '../../shared/contract/events.ts';

export type { Catalog, ColumnInfo, EventListRow, Match, RangeSummary, SearchResult };

/** The query route's answer: the sandbox's result, with the id it ran under and the trace's base time. */
export interface QueryAnswer extends QueryResult {
  queryId: string;
  /** Absolute ns of the trace's first event (decimal string): model ts minus base = timeline ns. */
  base: string;
}

/** An error answer with where it happened (query text offset, 1-based line/column). */
export class PositionedError extends ApiError {
  constructor(
    status: number,
    message: string,
    readonly kind: string | null,
    readonly position: number | null,
    readonly line: number | null,
    readonly column: number | null,
  ) {
    super(status, message);
    this.name = 'PositionedError';
  }
}

async function call<T>(method: 'GET' | 'POST', url: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  // The access token rides on the app's HttpOnly cookie (server/api/access.ts).
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  const text = await res.text();
  let parsed: Record<string, unknown> | null = null;
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  } catch {
    throw new ApiError(res.status, `unexpected answer from the server (${res.status}): ${text.slice(0, 120)}`);
  }
  if (!res.ok) {
    const p = parsed ?? {};
    const num = (v: unknown) => (typeof v === 'number' ? v : null);
    throw new PositionedError(
      res.status,
      String(p.error ?? `HTTP ${res.status}`),
      typeof p.kind === 'string' ? p.kind : null,
      num(p.position),
      num(p.line),
      num(p.column),
    );
  }
  return parsed as T;
}

const enc = encodeURIComponent;
const qs = (o: Record<string, string | number | undefined | null>) =>
  new URLSearchParams(
    Object.entries(o)
      .filter(([, v]) => v !== undefined && v !== null && v !== '')
      .map(([k, v]) => [k, String(v)]),
  ).toString();

export interface ListFilter {
  names?: string[];
  cpus?: number[];
  task?: string;
  expr?: string;
}

function filterParams(f: ListFilter): Record<string, string | undefined> {
  return {
    names: f.names?.length ? f.names.join(',') : undefined,
    cpus: f.cpus?.length ? f.cpus.join(',') : undefined,
    task: f.task?.trim() || undefined,
    expr: f.expr?.trim() || undefined,
  };
}

export const queryApi = {
  run: (
    traceId: string,
    sql: string,
    opts: { queryId: string; timeoutMs?: number; maxRows?: number },
    signal?: AbortSignal,
  ) => call<QueryAnswer>('POST', `/api/traces/${enc(traceId)}/query`, { sql, ...opts }, signal),
  cancel: (queryId: string) => call<{ cancelled: boolean }>('POST', `/api/queries/${enc(queryId)}/cancel`, {}),
  schema: (traceId: string) => call<Catalog>('GET', `/api/traces/${enc(traceId)}/schema`),
  eventList: (
    traceId: string,
    w: { t0: number; t1: number },
    f: ListFilter,
    from: number,
    count: number,
    signal?: AbortSignal,
  ) =>
    call<{ total: number; from: number; rows: EventListRow[] }>(
      'GET',
      `/api/traces/${enc(traceId)}/event_list?${qs({ t0: Math.floor(w.t0), t1: Math.ceil(w.t1), ...filterParams(f), from, count })}`,
      undefined,
      signal,
    ),
  position: (
    traceId: string,
    w: { t0: number; t1: number },
    f: ListFilter,
    ts: number,
    id: number | null,
    signal?: AbortSignal,
  ) =>
    call<{ index: number; total: number }>(
      'GET',
      `/api/traces/${enc(traceId)}/event_list/position?${qs({ t0: Math.floor(w.t0), t1: Math.ceil(w.t1), ...filterParams(f), ts: Math.round(ts), id })}`,
      undefined,
      signal,
    ),
  search: (traceId: string, q: string, signal?: AbortSignal) =>
    call<SearchResult>('GET', `/api/traces/${enc(traceId)}/search?${qs({ q })}`, undefined, signal),
  matches: (traceId: string, spec: Record<string, string | number>, signal?: AbortSignal) =>
    call<{ total: number; matches: Match[] }>(
      'GET',
      `/api/traces/${enc(traceId)}/search/matches?${qs(spec)}`,
      undefined,
      signal,
    ),
  range: (traceId: string, t0: number, t1: number, tracks: string[], signal?: AbortSignal) =>
    call<RangeSummary>(
      'GET',
      `/api/traces/${enc(traceId)}/range?${qs({ t0: Math.floor(t0), t1: Math.ceil(t1), tracks: tracks.join(',') })}`,
      undefined,
      signal,
    ),
  saveDetector: (body: {
    traceId: string;
    id: string;
    title: string;
    description?: string;
    severity: string;
    sql: string;
    replace?: boolean;
  }) => call<{ id: string; file: string; findings: number; replaced: boolean }>('POST', '/api/saved-detectors', body),
};
