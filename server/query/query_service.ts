/**
 * Everything the query process answers (query_worker.ts): user scripts and
 * the app's heavier reads, on the per-trace sandboxes (sandboxes.ts), with
 * the per-trace facts they reuse (catalogue, args keys, event name counts,
 * event list indexes).
 *
 * Each request names its trace by id, the path of its database and the
 * trace's meta (time base, end, longest durations) as the main process
 * knows them.
 */
import type { TraceMeta } from '../api/trace_engines.ts';
import { readCatalog, type Catalog } from './catalog.ts';
import {
  argKeysLookup,
  buildIndex,
  listRows,
  rowAt,
  rowIds,
  type EventListFilter,
  type EventListRow,
  type ListContext,
  type ListIndex,
} from './event_list.ts';
import { coveredBy, rangeSummary, type RangeSummary } from './range_summary.ts';
import { QueryError, type QueryResult } from './sandbox.ts';
import { QuerySandboxes } from './sandboxes.ts';
import {
  eventNameCounts,
  matches,
  search,
  type EventNameHit,
  type Match,
  type MatchSpec,
  type SearchResult,
} from './search.ts';
import { saveDetector, type SaveRequest } from './user_detectors.ts';

/** The app's own reads get this long. */
export const READ_TIMEOUT_MS = 30_000;
const INDEXES_KEPT = 16;
/** How long a detector may take on the trace it is saved from. */
export const SAVE_TEST_MS = 60_000;

export interface TraceRef {
  id: string;
  dbPath: string;
  meta: TraceMeta;
}

export type ServiceRequest =
  | { op: 'run'; trace: TraceRef; sql: string; queryId?: string; timeoutMs?: number; maxRows?: number }
  | { op: 'cancel'; queryId: string }
  | { op: 'status'; queryId: string }
  | { op: 'catalog'; trace: TraceRef }
  | { op: 'eventList'; trace: TraceRef; t0: bigint; t1: bigint; filter: EventListFilter; from: number; count: number }
  | {
      op: 'position';
      trace: TraceRef;
      t0: bigint;
      t1: bigint;
      filter: EventListFilter;
      ts: bigint;
      eventId: bigint | null;
    }
  | { op: 'search'; trace: TraceRef; text: string }
  | { op: 'matches'; trace: TraceRef; spec: MatchSpec }
  | { op: 'range'; trace: TraceRef; t0: bigint; t1: bigint; tracks: string[] }
  | { op: 'saveDetector'; trace: TraceRef; dataDir: string; request: SaveRequest; origin: string; replace: boolean }
  | { op: 'forget'; traceId: string };

export interface ServiceAnswers {
  run: QueryResult & { queryId: string };
  cancel: { cancelled: boolean };
  status: { running: boolean; startedAt: number | null };
  catalog: Catalog;
  eventList: { total: number; rows: EventListRow[] };
  position: { index: number; total: number };
  search: SearchResult;
  matches: { matches: Match[]; total: number };
  range: RangeSummary;
  saveDetector: { id: string; file: string; findings: number; replaced: boolean };
  forget: { forgotten: boolean };
}

interface PerTrace {
  lc: Promise<ListContext> | null;
  names: Promise<EventNameHit[]> | null;
  indexes: Map<string, Promise<ListIndex>>;
}

export class QueryService {
  private readonly traces = new Map<string, PerTrace>();
  readonly sandboxes: QuerySandboxes;
  private readonly paths = new Map<string, string>();

  constructor(opts: ConstructorParameters<typeof QuerySandboxes>[1] = {}) {
    this.sandboxes = new QuerySandboxes((id) => this.paths.get(id) ?? null, opts);
  }

  private per(t: TraceRef): PerTrace {
    this.paths.set(t.id, t.dbPath);
    let s = this.traces.get(t.id);
    if (!s) {
      s = { lc: null, names: null, indexes: new Map() };
      this.traces.set(t.id, s);
    }
    return s;
  }

  private listContext(t: TraceRef, signal?: AbortSignal): Promise<ListContext> {
    const s = this.per(t);
    if (!s.lc) {
      s.lc = this.sandboxes.read(
        t.id,
        async (conn) => {
          const catalog = await readCatalog(conn);
          return { meta: t.meta, catalog, argKeysFor: argKeysLookup(catalog) };
        },
        { timeoutMs: READ_TIMEOUT_MS, signal },
      );
      s.lc.catch(() => {
        s.lc = null;
      });
    }
    return s.lc;
  }

  private index(t: TraceRef, t0: bigint, t1: bigint, f: EventListFilter, signal?: AbortSignal): Promise<ListIndex> {
    const s = this.per(t);
    const key = JSON.stringify([String(t0), String(t1), f.names ?? [], f.cpus ?? [], f.task ?? '', f.expr ?? '']);
    let p = s.indexes.get(key);
    if (p) {
      s.indexes.delete(key);
      s.indexes.set(key, p);
      return p;
    }
    p = this.listContext(t, signal).then((lc) =>
      this.sandboxes.read(t.id, (conn) => buildIndex(conn, lc, t.meta.base + t0, t.meta.base + t1, f), {
        timeoutMs: READ_TIMEOUT_MS,
        signal,
      }),
    );
    s.indexes.set(key, p);
    p.catch(() => s.indexes.delete(key));
    if (s.indexes.size > INDEXES_KEPT) s.indexes.delete(s.indexes.keys().next().value!);
    return p;
  }

  async handle<R extends ServiceRequest>(req: R, signal?: AbortSignal): Promise<ServiceAnswers[R['op']]> {
    return (await this.dispatch(req, signal)) as ServiceAnswers[R['op']];
  }

  private async dispatch(req: ServiceRequest, signal?: AbortSignal): Promise<ServiceAnswers[keyof ServiceAnswers]> {
    // Every read registers the trace's database path first: a range or search request can be the first
    // thing a page asks about a trace (a link with a range), and the sandbox opens the file by that path.
    const read = <T>(t: TraceRef, fn: Parameters<QuerySandboxes['read']>[1]) => {
      this.per(t);
      return this.sandboxes.read(t.id, fn, { timeoutMs: READ_TIMEOUT_MS, signal }) as Promise<T>;
    };
    switch (req.op) {
      case 'run':
        this.per(req.trace);
        return this.sandboxes.run(req.trace.id, req.sql, {
          queryId: req.queryId,
          timeoutMs: req.timeoutMs,
          maxRows: req.maxRows,
          signal,
        });
      case 'cancel':
        return { cancelled: this.sandboxes.cancel(req.queryId) };
      case 'status': {
        const q = this.sandboxes.running().find((x) => x.queryId === req.queryId);
        return { running: !!q, startedAt: q?.startedAt ?? null };
      }
      case 'catalog':
        return (await this.listContext(req.trace, signal)).catalog;
      case 'eventList': {
        const index = await this.index(req.trace, req.t0, req.t1, req.filter, signal);
        const rows = await read<EventListRow[]>(req.trace, async (conn) =>
          listRows(conn, req.trace.meta, await rowIds(conn, index, req.from, req.count), req.from),
        );
        return { total: index.total, rows };
      }
      case 'position': {
        const index = await this.index(req.trace, req.t0, req.t1, req.filter, signal);
        const at = await read<number>(req.trace, (conn) =>
          rowAt(conn, index, req.trace.meta.base + req.ts, req.eventId),
        );
        return { index: at, total: index.total };
      }
      case 'search': {
        const s = this.per(req.trace);
        const lc = await this.listContext(req.trace, signal);
        if (!s.names) {
          s.names = this.sandboxes.read(req.trace.id, (conn) => eventNameCounts(conn), { timeoutMs: READ_TIMEOUT_MS });
          s.names.catch(() => {
            s.names = null;
          });
        }
        const names = await s.names;
        return read<SearchResult>(req.trace, (conn) => search(conn, lc.catalog, names, req.text));
      }
      case 'matches': {
        const lc = await this.listContext(req.trace, signal);
        return read(req.trace, (conn) => matches(conn, lc.catalog, req.trace.meta, req.spec));
      }
      case 'range':
        return read<RangeSummary>(req.trace, (conn) =>
          rangeSummary(conn, req.trace.meta, req.t0, req.t1, coveredBy(req.tracks)),
        );
      case 'saveDetector': {
        this.per(req.trace);
        // The query's own columns first (no rows), then the detector's test run.
        const probe = await this.sandboxes.run(req.trace.id, req.request.sql, { maxRows: 0, signal });
        // A saved detector runs on every trace the library opens, without a time limit of its own:
        // one that does not finish here in SAVE_TEST_MS is not kept.
        const saved = await this.sandboxes.read(
          req.trace.id,
          (conn) =>
            saveDetector(req.dataDir, req.request, {
              columns: probe.columns.map((c) => c.name),
              conn,
              origin: req.origin,
              replace: req.replace,
            }),
          { timeoutMs: SAVE_TEST_MS, signal },
        );
        return { id: saved.id, file: saved.file, findings: saved.findings, replaced: saved.replaced };
      }
      case 'forget':
        this.traces.delete(req.traceId);
        this.sandboxes.forget(req.traceId);
        return { forgotten: true };
      default:
        throw new QueryError(`unknown request ${(req as { op: string }).op}`, 'error');
    }
  }

  close(): void {
    this.sandboxes.closeAll();
  }
}
