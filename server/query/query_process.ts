/**
 * The server's side of the query process (query_worker.ts): user queries and
 * the app's heavier reads run in a child process of their own.
 *
 * Why a process: a running DuckDB call holds one of libuv's pool threads
 * (4 by default, shared with every file read, the timeline's track queries
 * and the ingest's DuckDB appends; only the environment can size it, before
 * Node starts). Four long queries in the server's own process stopped even
 * a 9-byte file read for 3.7 s here (measured: 4 x `count(*) FROM
 * range(3e9)`). The child has its own pool (sized above its caps), its own
 * memory, and can be killed: a query that does not stop within
 * KILL_AFTER_MS of its cancel takes the process down with it, and the next
 * request starts a new one.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ServiceAnswers, ServiceRequest } from './query_service.ts';
import { QueryError } from './sandbox.ts';
import { FilterError } from './field_filter.ts';
import { SaveDetectorError } from './user_detectors.ts';
import { DEFAULT_MAX_READS, DEFAULT_MAX_RUNNING } from './sandboxes.ts';

export const KILL_AFTER_MS = 10_000;

export interface SerializedError {
  name: string;
  message: string;
  kind?: QueryError['kind'];
  position?: number | null;
  line?: number | null;
  column?: number | null;
  status?: number;
}

export function serializeError(e: unknown): SerializedError {
  if (e instanceof QueryError)
    return { name: e.name, message: e.message, kind: e.kind, position: e.position, line: e.line, column: e.column };
  if (e instanceof FilterError) return { name: e.name, message: e.message, position: e.position };
  if (e instanceof SaveDetectorError) return { name: e.name, message: e.message, status: e.status };
  return { name: (e as Error)?.name ?? 'Error', message: (e as Error)?.message ?? String(e) };
}

export function deserializeError(s: SerializedError): Error {
  if (s.name === 'QueryError')
    return new QueryError(s.message, s.kind ?? 'error', s.position ?? null, s.line ?? null, s.column ?? null);
  if (s.name === 'FilterError') return new FilterError(s.message, s.position ?? 0);
  if (s.name === 'SaveDetectorError') return new SaveDetectorError(s.message, s.status);
  const e = new Error(s.message);
  e.name = s.name;
  return e;
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
  cleanup(): void;
  /** A stage began executing with this time limit. */
  started(timeoutMs: number): void;
}

const ENTRY = fileURLToPath(new URL('./query_worker.mjs', import.meta.url));

export class QueryProcess {
  private child: ChildProcess | null = null;
  private ready: Promise<void> | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  /** Booting: the child stays ref'd until it says it is ready (a caller may be waiting on nothing else). */
  private starting = false;

  /** Starts the process now (the server does at start, so the first query does not wait for it). */
  warm(): Promise<void> {
    return this.start();
  }

  private start(): Promise<void> {
    if (this.ready) return this.ready;
    const child = fork(ENTRY, [], {
      serialization: 'advanced',
      execArgv: [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: {
        ...process.env,
        // Above the sandboxes' caps, with room for the catalogue reads and DuckDB's own async work.
        UV_THREADPOOL_SIZE: String(
          Math.max(Number(process.env.UV_THREADPOOL_SIZE) || 0, DEFAULT_MAX_RUNNING + DEFAULT_MAX_READS + 4),
        ),
      },
    });
    this.child = child;
    this.starting = true;
    this.ready = new Promise<void>((resolve, reject) => {
      const onEarlyExit = (code: number | null) =>
        reject(new Error(`the query process exited while starting (${code})`));
      child.once('exit', onEarlyExit);
      child.on(
        'message',
        (m: {
          ready?: boolean;
          id?: number;
          ok?: boolean;
          started?: number;
          value?: unknown;
          error?: SerializedError;
        }) => {
          if (m.ready) {
            child.off('exit', onEarlyExit);
            this.starting = false;
            this.refresh();
            resolve();
            return;
          }
          const p = m.id !== undefined ? this.pending.get(m.id) : undefined;
          if (!p) return;
          if (typeof m.started === 'number') {
            p.started(m.started);
            return;
          }
          this.pending.delete(m.id!);
          p.cleanup();
          this.refresh();
          if (m.ok) p.resolve(m.value);
          else p.reject(deserializeError(m.error!));
        },
      );
    });
    child.on('exit', (code, signal) => {
      if (this.child === child) {
        this.child = null;
        this.ready = null;
        this.starting = false;
      }
      const why = new QueryError(
        `the query process stopped (${signal ?? `exit ${code}`})${this.closed ? '' : '; it restarts with the next query'}`,
        'cancelled',
      );
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        p.cleanup();
        p.reject(why);
      }
    });
    this.ready.catch(() => {
      this.ready = null;
    });
    this.refresh();
    return this.ready;
  }

  /** The child keeps the server alive only while requests are pending (a CLI or a test may end without closing it). */
  private refresh(): void {
    const c = this.child;
    if (!c) return;
    const busy = this.pending.size > 0 || this.starting;
    const ch = c.channel as { ref?(): void; unref?(): void } | undefined | null;
    if (busy) {
      c.ref();
      ch?.ref?.();
    } else {
      c.unref();
      ch?.unref?.();
    }
  }

  /**
   * Sends a request. Each stage of it that starts executing in the child
   * reports its time limit (the sandbox interrupts it then); no answer and
   * no next stage KILL_AFTER_MS past that limit means the interrupt did not
   * work, and the process is ended. A request still waiting for a slot has
   * no timer: waiting is not hanging.
   */
  async request<R extends ServiceRequest>(req: R, signal?: AbortSignal): Promise<ServiceAnswers[R['op']]> {
    if (this.closed) throw new QueryError('the server is stopping', 'cancelled');
    await this.start();
    const child = this.child!;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      let killTimer: ReturnType<typeof setTimeout> | null = null;
      let deadline: ReturnType<typeof setTimeout> | null = null;
      let running = false;
      const kill = () => {
        if (this.pending.has(id) && this.child === child) child.kill('SIGKILL');
      };
      const onAbort = () => {
        if (!this.pending.has(id)) return;
        child.send({ abort: id });
        // Only a stage that was executing can fail to stop; one waiting for a slot leaves the line at once.
        if (!running) return;
        // A query that does not stop when cancelled: end its process.
        killTimer = setTimeout(kill, KILL_AFTER_MS);
        killTimer.unref();
      };
      this.pending.set(id, {
        resolve: resolve as (v: unknown) => void,
        reject,
        cleanup: () => {
          signal?.removeEventListener('abort', onAbort);
          if (killTimer) clearTimeout(killTimer);
          if (deadline) clearTimeout(deadline);
        },
        started: (stageTimeoutMs: number) => {
          running = true;
          if (deadline) clearTimeout(deadline);
          deadline = setTimeout(kill, stageTimeoutMs + KILL_AFTER_MS);
          deadline.unref();
        },
      });
      signal?.addEventListener('abort', onAbort);
      this.refresh();
      child.send({ id, req });
      if (signal?.aborted) onAbort();
    });
  }

  /** Ends the process (server shutdown); pending requests fail. */
  close(): void {
    this.closed = true;
    const c = this.child;
    this.child = null;
    this.ready = null;
    if (c && c.exitCode === null) c.kill('SIGKILL');
  }
}
