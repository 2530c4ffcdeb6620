/**
 * One query sandbox per open trace (sandbox.ts), the queries running in
 * them (so a cancel button can stop one by id), and caps on how many run at
 * once: user scripts take one of `maxRunning` slots and the app's own reads
 * (event list, search, range) one of `maxReads`, each waiting in line when
 * all are taken, so a few long scripts cannot hold up the event list.
 * Each running call holds one of libuv's pool threads for its duration:
 * the query process (query_worker.ts) sizes its pool above both caps.
 */
import { randomUUID } from 'node:crypto';
import { QueryError, QuerySandbox, type QueryResult, type RunOptions, type SandboxOptions } from './sandbox.ts';
import type { DuckDBConnection } from '@duckdb/node-api';

export interface RunningQuery {
  queryId: string;
  traceId: string;
  startedAt: number;
  sql: string;
  abort: AbortController;
}

export interface SandboxesOptions extends SandboxOptions {
  /** User scripts at once (default $STALLSCOPE_QUERY_CONCURRENCY or 3). */
  maxRunning?: number;
  /** The app's own reads at once (default 3). */
  maxReads?: number;
}

export const DEFAULT_MAX_RUNNING = 3;
export const DEFAULT_MAX_READS = 3;

class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  constructor(n: number) {
    this.free = n;
  }
  async take(signal?: AbortSignal): Promise<() => void> {
    if (this.free > 0) {
      this.free--;
      return () => this.give();
    }
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(go);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(new QueryError('the query was cancelled while waiting for a free slot', 'cancelled'));
      };
      signal?.addEventListener('abort', onAbort);
      this.waiting.push(go);
    });
    return () => this.give();
  }
  private give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

export class QuerySandboxes {
  private readonly open = new Map<string, Promise<QuerySandbox>>();
  private readonly runningQueries = new Map<string, RunningQuery>();
  private readonly slots: Slots;
  private readonly readSlots: Slots;

  constructor(
    private readonly dbPathOf: (traceId: string) => string | null,
    private readonly opts: SandboxesOptions = {},
  ) {
    this.slots = new Slots(
      opts.maxRunning ?? (Number(process.env.STALLSCOPE_QUERY_CONCURRENCY) || DEFAULT_MAX_RUNNING),
    );
    this.readSlots = new Slots(opts.maxReads ?? DEFAULT_MAX_READS);
  }

  sandbox(traceId: string): Promise<QuerySandbox> {
    let p = this.open.get(traceId);
    if (!p) {
      const path = this.dbPathOf(traceId);
      if (!path) return Promise.reject(new QueryError('this server has no data directory to query traces in', 'error'));
      p = QuerySandbox.open(path, this.opts);
      this.open.set(traceId, p);
      p.catch(() => this.open.delete(traceId));
    }
    return p;
  }

  /** A user's script. `queryId` (client-chosen, for cancel) defaults to a fresh one. */
  async run(
    traceId: string,
    sql: string,
    opts: RunOptions & { queryId?: string } = {},
  ): Promise<QueryResult & { queryId: string }> {
    const queryId = opts.queryId ?? randomUUID();
    if (this.runningQueries.has(queryId))
      throw new QueryError(`a query with id ${queryId} is already running`, 'error');
    const abort = new AbortController();
    const onOuter = () => abort.abort();
    opts.signal?.addEventListener('abort', onOuter);
    if (opts.signal?.aborted) abort.abort();
    const entry: RunningQuery = { queryId, traceId, startedAt: Date.now(), sql, abort };
    this.runningQueries.set(queryId, entry);
    try {
      const release = await this.slots.take(abort.signal);
      try {
        const sb = await this.sandbox(traceId);
        const r = await sb.run(sql, { ...opts, signal: abort.signal });
        return { ...r, queryId };
      } finally {
        release();
      }
    } finally {
      opts.signal?.removeEventListener('abort', onOuter);
      this.runningQueries.delete(queryId);
    }
  }

  /** The app's own parameterised reads (event list, search, range aggregates), on a fresh sandbox connection. */
  async read<T>(
    traceId: string,
    fn: (conn: DuckDBConnection) => Promise<T>,
    opts: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<T> {
    const release = await this.readSlots.take(opts.signal);
    try {
      const sb = await this.sandbox(traceId);
      return await sb.withConnection(fn, opts);
    } finally {
      release();
    }
  }

  /** Cancels a running (or waiting) query; false if there is none by that id. */
  cancel(queryId: string): boolean {
    const q = this.runningQueries.get(queryId);
    if (!q) return false;
    q.abort.abort();
    return true;
  }

  running(): RunningQuery[] {
    return [...this.runningQueries.values()];
  }

  /** The trace's model was replaced: close its sandbox (running queries are interrupted). */
  forget(traceId: string): void {
    const p = this.open.get(traceId);
    this.open.delete(traceId);
    for (const q of this.runningQueries.values()) if (q.traceId === traceId) q.abort.abort();
    void p?.then(
      (sb) => sb.close(),
      () => undefined,
    );
  }

  closeAll(): void {
    for (const id of [...this.open.keys()]) this.forget(id);
  }
}
