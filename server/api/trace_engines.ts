/**
 * Opens each trace's read-only DuckDB once and keeps it, with the facts every
 * window query needs (time base, end, longest durations for range pruning).
 * Queries on one engine run one at a time (one connection per trace).
 */
import type { Engine, QueryParams, Row } from '../engine/engine.ts';
import type { LibraryLike } from './library_contract.ts';

export interface TraceMeta {
  /** Absolute ns of the trace's first event: API times are relative to it. */
  base: bigint;
  /** Absolute ns of the last event (end of open slices). */
  last: bigint;
  /** Longest duration per derived table, to bound `ts >= t0 - maxDur` scans. */
  maxDur: Record<'sched_slice' | 'thread_state' | 'slice', bigint>;
  tables: Set<string>;
}

export interface OpenTrace {
  meta: TraceMeta;
  query<T = Row>(sql: string, params?: QueryParams): Promise<T[]>;
}

class SerialEngine implements OpenTrace {
  private tail: Promise<unknown> = Promise.resolve();
  constructor(readonly engine: Engine, readonly meta: TraceMeta) {}
  query<T = Row>(sql: string, params?: QueryParams): Promise<T[]> {
    const run = this.tail.then(() => this.engine.query<T>(sql, params));
    this.tail = run.catch(() => undefined);
    return run;
  }
}

export class TraceEngines {
  private readonly open = new Map<string, Promise<SerialEngine>>();
  constructor(private readonly library: LibraryLike) {}

  get(id: string): Promise<OpenTrace> {
    let p = this.open.get(id);
    if (!p) {
      p = this.load(id);
      this.open.set(id, p);
      p.catch(() => this.open.delete(id));
    }
    return p;
  }

  private async load(id: string): Promise<SerialEngine> {
    const engine = await this.library.openEngine(id);
    const tables = new Set(
      (await engine.query<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables`)).map((r) => r.name),
    );
    const info = new Map(
      (await engine.query<{ key: string; value: string }>(`SELECT key, value FROM trace_info`)).map((r) => [r.key, r.value]),
    );
    let base = toBig(info.get('first_ts'));
    let last = toBig(info.get('last_ts'));
    if (base === null || last === null) {
      const [r] = await engine.query<{ lo: bigint | null; hi: bigint | null }>(`SELECT min(ts) AS lo, max(ts) AS hi FROM ftrace_event`);
      base ??= r?.lo ?? 0n;
      last ??= r?.hi ?? base;
    }
    const maxDur = { sched_slice: 0n, thread_state: 0n, slice: 0n };
    for (const t of Object.keys(maxDur) as Array<keyof typeof maxDur>) {
      if (!tables.has(t)) continue;
      const [r] = await engine.query<{ m: bigint | null; open_from: bigint | null }>(
        `SELECT max(dur) AS m, min(ts) FILTER (WHERE dur < 0) AS open_from FROM ${t}`,
      );
      let m = r?.m ?? 0n;
      if (r?.open_from != null && last - r.open_from > m) m = last - r.open_from;
      maxDur[t] = m;
    }
    return new SerialEngine(engine, { base, last, maxDur, tables });
  }

  /** Forgets the engines; the library owns them and closes them (TraceLibrary.close). */
  forgetAll(): void {
    this.open.clear();
  }
}

function toBig(v: string | undefined): bigint | null {
  if (v === undefined || !/^-?\d+$/.test(v.trim())) return null;
  return BigInt(v.trim());
}
