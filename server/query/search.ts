/**
 * One search box over a trace: threads (by name, tid, or their process's
 * pid), processes, event names, and text field values (a comm, a work
 * function, a shrinker, a flags word). Each hit names what to step through
 * on the timeline (`matches`): a thread's runs on a CPU, or the events of
 * a name or with a field value.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { TraceMeta } from '../api/trace_engines.ts';
import { COMMON_EVENT_COLUMNS, type Catalog } from './catalog.ts';
import { quoteIdent } from './field_filter.ts';
import { readRows } from './sandbox.ts';
import type { ProcessHit, EventNameHit, ValueHit, SearchResult, Match } from '../../shared/contract/query.ts';

export type {
  ThreadHit,
  ProcessHit,
  EventNameHit,
  ValueHit,
  SearchResult,
  Match,
} from '../../shared/contract/query.ts';
export const MAX_MATCHES = 10_000;

const num = (v: unknown): number => (typeof v === 'bigint' ? Number(v) : (v as number));

/** Event name -> count, computed once per trace (the same query as the query page's benchmark). */
export async function eventNameCounts(conn: DuckDBConnection): Promise<EventNameHit[]> {
  const rows = await readRows<{ name: string; n: bigint }>(
    conn,
    `SELECT name, count(*) AS n FROM ftrace_event GROUP BY 1 ORDER BY 2 DESC`,
  );
  return rows.map((r) => ({ name: r.name, count: num(r.n) }));
}

export async function search(
  conn: DuckDBConnection,
  catalog: Catalog,
  names: EventNameHit[],
  text: string,
): Promise<SearchResult> {
  const q = text.trim();
  const lq = q.toLowerCase();
  const asNumber = /^\d{1,9}$/.test(q) ? Number(q) : -1;
  const has = (t: string) => catalog.tables.some((x) => x.name === t);
  const threads = (
    await readRows<Record<string, unknown>>(
      conn,
      `SELECT t.utid, t.tid, t.name, t.upid, p.pid, p.name AS process,
            ${has('sched_slice') ? `coalesce((SELECT sum(greatest(dur, 0)) FROM sched_slice s WHERE s.utid = t.utid), 0)` : '0'} AS run_ns
     FROM thread t LEFT JOIN process p USING (upid)
     WHERE contains(lower(t.name), $1) OR t.tid = $2 OR p.pid = $2
     ORDER BY (t.tid = $2) DESC, run_ns DESC, t.utid LIMIT 50`,
      [lq, asNumber] as never,
    )
  ).map((r) => ({
    utid: num(r.utid),
    tid: r.tid as number | null,
    name: r.name as string | null,
    upid: r.upid as number | null,
    pid: r.pid as number | null,
    process: r.process as string | null,
    runNs: num(r.run_ns),
    events: 0,
  }));
  if (threads.length) {
    const counts = await readRows<{ utid: number; n: bigint }>(
      conn,
      `SELECT utid, count(*) AS n FROM ftrace_event WHERE utid IN (${threads.map((_, i) => `$${i + 1}`).join(', ')}) GROUP BY 1`,
      threads.map((t) => t.utid) as never,
    );
    const byUtid = new Map(counts.map((c) => [c.utid, num(c.n)]));
    for (const t of threads) t.events = byUtid.get(t.utid) ?? 0;
  }
  const procRows = has('process')
    ? await readRows<Record<string, unknown>>(
        conn,
        `SELECT p.upid, p.pid, p.name FROM process p WHERE contains(lower(p.name), $1) OR p.pid = $2 ORDER BY p.pid LIMIT 20`,
        [lq, asNumber] as never,
      )
    : [];
  const processes: ProcessHit[] = [];
  for (const p of procRows) {
    const members = await readRows<{ utid: number; tid: number | null; name: string | null }>(
      conn,
      `SELECT utid, tid, name FROM thread WHERE upid = $1 ORDER BY tid LIMIT 200`,
      [p.upid] as never,
    );
    processes.push({ upid: num(p.upid), pid: p.pid as number | null, name: p.name as string | null, threads: members });
  }
  const events = names.filter((n) => n.name.toLowerCase().includes(lq)).slice(0, 30);
  const values = lq.length >= 2 ? await valueHits(conn, catalog, lq) : [];
  return { query: q, threads, processes, events, values };
}

/** Text field values containing the query: per typed table column, and args' text values. */
async function valueHits(conn: DuckDBConnection, catalog: Catalog, lq: string): Promise<ValueHit[]> {
  const parts: string[] = [];
  for (const t of catalog.tables) {
    if (!t.typed) continue;
    for (const c of t.columns) {
      if (COMMON_EVENT_COLUMNS.has(c.name) || c.name === 'event' || c.type !== 'VARCHAR') continue;
      parts.push(
        `(SELECT '${t.name}' AS tbl, '${c.name}' AS field, ${quoteIdent(c.name)} AS value, count(*) AS n FROM ${quoteIdent(t.name)}
          WHERE contains(lower(${quoteIdent(c.name)}), $1) GROUP BY 3 ORDER BY 4 DESC LIMIT 20)`,
      );
    }
  }
  if (catalog.tables.some((t) => t.name === 'args')) {
    parts.push(`(SELECT 'args' AS tbl, key AS field, string_value AS value, count(*) AS n FROM args
      WHERE string_value IS NOT NULL AND contains(lower(string_value), $1) GROUP BY 2, 3 ORDER BY 4 DESC LIMIT 40)`);
  }
  if (!parts.length) return [];
  const rows = await readRows<{ tbl: string; field: string; value: string; n: bigint }>(
    conn,
    `SELECT * FROM (${parts.join(' UNION ALL ')}) ORDER BY n DESC LIMIT 60`,
    [lq] as never,
  );
  return rows.map((r) => ({ table: r.tbl, field: r.field, value: r.value, count: num(r.n) }));
}

export type MatchSpec =
  | { kind: 'thread'; utid: number }
  | { kind: 'event'; name: string }
  | { kind: 'value'; table: string; field: string; value: string };

/** The places a hit is found, in time order (at most MAX_MATCHES). */
export async function matches(
  conn: DuckDBConnection,
  catalog: Catalog,
  meta: TraceMeta,
  spec: MatchSpec,
): Promise<{ matches: Match[]; total: number }> {
  const rel = (v: unknown) => Number((v as bigint) - meta.base);
  const limit = BigInt(MAX_MATCHES);
  const asEvents = (rows: Array<Record<string, unknown>>): Match[] =>
    rows.map((r) => ({
      kind: 'event',
      id: num(r.id),
      ts: rel(r.ts),
      dur: 0,
      cpu: r.cpu as number | null,
      utid: r.utid as number | null,
    }));
  if (spec.kind === 'thread') {
    if (catalog.tables.some((t) => t.name === 'sched_slice')) {
      const [c] = await readRows<{ n: bigint }>(conn, `SELECT count(*) AS n FROM sched_slice WHERE utid = $1`, [
        spec.utid,
      ] as never);
      if (num(c?.n ?? 0n) > 0) {
        const rows = await readRows<Record<string, unknown>>(
          conn,
          `SELECT id, ts, dur, cpu, utid FROM sched_slice WHERE utid = $1 ORDER BY ts LIMIT $2`,
          [spec.utid, limit] as never,
        );
        return {
          total: num(c!.n),
          matches: rows.map((r) => ({
            kind: 'sched',
            id: num(r.id),
            ts: rel(r.ts),
            dur: Math.max(0, num(r.dur)),
            cpu: r.cpu as number,
            utid: r.utid as number,
          })),
        };
      }
    }
    const [c] = await readRows<{ n: bigint }>(conn, `SELECT count(*) AS n FROM ftrace_event WHERE utid = $1`, [
      spec.utid,
    ] as never);
    const rows = await readRows<Record<string, unknown>>(
      conn,
      `SELECT id, ts, cpu, utid FROM ftrace_event WHERE utid = $1 ORDER BY ts, id LIMIT $2`,
      [spec.utid, limit] as never,
    );
    return { total: num(c?.n ?? 0n), matches: asEvents(rows) };
  }
  if (spec.kind === 'event') {
    const [c] = await readRows<{ n: bigint }>(conn, `SELECT count(*) AS n FROM ftrace_event WHERE name = $1`, [
      spec.name,
    ] as never);
    const rows = await readRows<Record<string, unknown>>(
      conn,
      `SELECT id, ts, cpu, utid FROM ftrace_event WHERE name = $1 ORDER BY ts, id LIMIT $2`,
      [spec.name, limit] as never,
    );
    return { total: num(c?.n ?? 0n), matches: asEvents(rows) };
  }
  if (spec.table === 'args') {
    const from = `FROM args a JOIN ftrace_event e ON e.id = a.arg_set_id WHERE a.key = $1 AND a.string_value = $2`;
    const [c] = await readRows<{ n: bigint }>(conn, `SELECT count(*) AS n ${from}`, [spec.field, spec.value] as never);
    const rows = await readRows<Record<string, unknown>>(
      conn,
      `SELECT e.id, e.ts, e.cpu, e.utid ${from} ORDER BY e.ts, e.id LIMIT $3`,
      [spec.field, spec.value, limit] as never,
    );
    return { total: num(c?.n ?? 0n), matches: asEvents(rows) };
  }
  const table = catalog.tables.find((t) => t.typed && t.name === spec.table);
  if (!table || !table.columns.some((c) => c.name === spec.field && !COMMON_EVENT_COLUMNS.has(c.name))) {
    throw new Error(`no field ${spec.field} in table ${spec.table}`);
  }
  const from = `FROM ${quoteIdent(table.name)} WHERE ${quoteIdent(spec.field)} = $1`;
  const [c] = await readRows<{ n: bigint }>(conn, `SELECT count(*) AS n ${from}`, [spec.value] as never);
  const rows = await readRows<Record<string, unknown>>(
    conn,
    `SELECT id, ts, cpu, utid ${from} ORDER BY ts, id LIMIT $2`,
    [spec.value, limit] as never,
  );
  return { total: num(c?.n ?? 0n), matches: asEvents(rows) };
}
