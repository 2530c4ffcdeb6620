/**
 * The event list: every event of a time window (KernelShark's list,
 * Perfetto's ftrace events tab), filtered, in (ts, id) order, addressable by
 * row number so the app can show any stretch of millions of rows.
 *
 * Row numbers come from an index of the filtered window: event counts in
 * 4096 equal time buckets (one GROUP BY scan). Row i is then found in its
 * bucket with a bounded `ORDER BY ts, id LIMIT/OFFSET` inside that bucket's
 * time range; a bucket holding more than BUCKET_SPLIT rows gets an index of
 * its own the first time a row inside it is asked for. An index is kept per
 * (trace, window, filters) for the next pages (LRU).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { lookupEvents } from '../api/event_lookup.ts';
import type { OpenTrace, TraceMeta } from '../api/trace_engines.ts';
import type { Catalog } from './catalog.ts';
import { filterToSql, fieldsOf, intLit, ParamList, parseFilter, type FilterContext } from './field_filter.ts';
import { readRows } from './sandbox.ts';
import type { EventListRow } from '../../shared/contract/events.ts';

export interface EventListFilter {
  /** Event names (exact). */
  names?: string[];
  cpus?: number[];
  /** A thread name substring (case-insensitive), or a tid. */
  task?: string;
  /** Field expression (field_filter.ts). */
  expr?: string;
}

export type { EventListRow } from '../../shared/contract/events.ts';
const BUCKETS = 4096;
const BUCKET_SPLIT = 20_000;

interface IndexNode {
  start: bigint;
  width: bigint;
  counts: number[];
  /** cum[b]: rows before bucket b. */
  cum: number[];
  children: Map<number, IndexNode>;
}

export interface ListIndex {
  total: number;
  root: IndexNode;
  where: string;
  params: unknown[];
}

/** Catalogue facts the filters need, read once per trace. */
export interface ListContext {
  meta: TraceMeta;
  catalog: Catalog;
  /** Of these field names, the ones some event stores in `args` (asked once per name). */
  argKeysFor(conn: DuckDBConnection, fields: string[]): Promise<ReadonlySet<string>>;
}

/**
 * Which field names occur in `args`, found per name when a filter first
 * names it (listing every key would read all of `args`: 10M-event traces
 * hold tens of millions of rows there).
 */
export function argKeysLookup(catalog: Catalog): ListContext['argKeysFor'] {
  const known = new Map<string, boolean>();
  const hasArgs = catalog.tables.some((t) => t.name === 'args');
  return async (conn, fields) => {
    for (const f of fields) {
      if (known.has(f) || !hasArgs) continue;
      const [r] = await readRows<{ n: bigint }>(
        conn,
        `SELECT count(*) AS n FROM (SELECT 1 FROM args WHERE key = $1 LIMIT 1)`,
        [f] as never,
      );
      known.set(f, Number(r?.n ?? 0n) > 0);
    }
    return new Set(fields.filter((f) => known.get(f)));
  };
}

/** The WHERE clause (over `ftrace_event e`) and its parameters for a window and filters. */
export async function listWhere(
  conn: DuckDBConnection,
  lc: ListContext,
  a0: bigint,
  a1: bigint,
  f: EventListFilter,
): Promise<{ where: string; params: unknown[] }> {
  const p = new ParamList();
  // The window's end is included: the trace's last event is at its very end.
  const conds = [`e.ts >= ${intLit(a0)}`, `e.ts <= ${intLit(a1)}`];
  if (f.names?.length) conds.push(`e.name IN (${f.names.map((n) => p.add(n)).join(', ')})`);
  if (f.cpus?.length) conds.push(`e.cpu IN (${f.cpus.map((c) => intLit(c)).join(', ')})`);
  if (f.task?.trim()) {
    const t = f.task.trim();
    const byTid = /^\d{1,9}$/.test(t) ? ` OR tid = ${p.add(Number(t))}` : '';
    conds.push(`e.utid IN (SELECT utid FROM thread WHERE contains(lower(name), ${p.add(t.toLowerCase())})${byTid})`);
  }
  if (f.expr?.trim()) {
    const tree = parseFilter(f.expr);
    const [r] = await readRows<{ lo: bigint | null; hi: bigint | null }>(
      conn,
      `SELECT min(id) AS lo, max(id) AS hi FROM ftrace_event WHERE ts >= ${intLit(a0)} AND ts <= ${intLit(a1)}`,
    );
    const argKeys = await lc.argKeysFor(conn, fieldsOf(tree));
    const ctx: FilterContext = { catalog: lc.catalog, argKeys, a0, a1: a1 + 1n, idLo: r?.lo ?? 0n, idHi: r?.hi ?? -1n };
    conds.push(filterToSql(tree, ctx, p));
  }
  return { where: conds.join(' AND '), params: p.values };
}

async function buildNode(
  conn: DuckDBConnection,
  where: string,
  params: unknown[],
  start: bigint,
  end: bigint,
): Promise<IndexNode> {
  const span = end - start;
  const width = span / BigInt(BUCKETS) + 1n;
  const rows = await readRows<{ b: bigint; n: bigint }>(
    conn,
    `SELECT (e.ts - ${intLit(start)}) // ${intLit(width)} AS b, count(*) AS n FROM ftrace_event e
     WHERE ${where} AND e.ts >= ${intLit(start)} AND e.ts < ${intLit(end)} GROUP BY 1`,
    params as never,
  );
  const counts = new Array<number>(BUCKETS).fill(0);
  for (const r of rows) counts[Number(r.b)] = Number(r.n);
  const cum = new Array<number>(BUCKETS + 1);
  cum[0] = 0;
  for (let b = 0; b < BUCKETS; b++) cum[b + 1] = cum[b]! + counts[b]!;
  return { start, width, counts, cum, children: new Map() };
}

export async function buildIndex(
  conn: DuckDBConnection,
  lc: ListContext,
  a0: bigint,
  a1: bigint,
  f: EventListFilter,
): Promise<ListIndex> {
  const { where, params } = await listWhere(conn, lc, a0, a1, f);
  const root = await buildNode(conn, where, params, a0, a1 + 1n);
  return { total: root.cum[BUCKETS]!, root, where, params };
}

/** The bucket holding row i (cum[b] <= i < cum[b+1]). */
function bucketOf(node: IndexNode, i: number): number {
  let lo = 0;
  let hi = BUCKETS - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (node.cum[mid]! <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Ids of rows [from, from + count) in (ts, id) order. */
export async function rowIds(conn: DuckDBConnection, index: ListIndex, from: number, count: number): Promise<bigint[]> {
  const out: bigint[] = [];
  const end = Math.min(index.total, from + count);
  let i = Math.max(0, from);
  while (i < end) {
    const got = await idsFrom(conn, index, index.root, i, end - i);
    if (got.length === 0) break;
    out.push(...got);
    i += got.length;
  }
  return out;
}

/** Up to `count` ids from row `i` of `node` (relative row numbers), staying inside one bucket run. */
async function idsFrom(
  conn: DuckDBConnection,
  index: ListIndex,
  node: IndexNode,
  i: number,
  count: number,
): Promise<bigint[]> {
  const b = bucketOf(node, i);
  if (node.counts[b]! > BUCKET_SPLIT && node.width > 1n) {
    let child = node.children.get(b);
    if (!child) {
      const s = node.start + BigInt(b) * node.width;
      child = await buildNode(conn, index.where, index.params, s, s + node.width);
      node.children.set(b, child);
    }
    return idsFrom(conn, index, child, i - node.cum[b]!, Math.min(count, node.cum[b + 1]! - i));
  }
  // From bucket b, as many following buckets as the count needs (each small).
  let last = b;
  while (last + 1 < BUCKETS && node.cum[last + 1]! < i + count && node.counts[last + 1]! <= BUCKET_SPLIT) last++;
  const t0 = node.start + BigInt(b) * node.width;
  const t1 = node.start + BigInt(last + 1) * node.width;
  const rows = await readRows<{ id: bigint }>(
    conn,
    `SELECT e.id FROM ftrace_event e WHERE ${index.where} AND e.ts >= ${intLit(t0)} AND e.ts < ${intLit(t1)}
     ORDER BY e.ts, e.id LIMIT ${intLit(Math.min(count, node.cum[last + 1]! - i))} OFFSET ${intLit(i - node.cum[b]!)}`,
    index.params as never,
  );
  return rows.map((r) => r.id);
}

/** Row number of the first row at or after (ts, id) (absolute ns); total if none. */
export async function rowAt(conn: DuckDBConnection, index: ListIndex, ts: bigint, id: bigint | null): Promise<number> {
  let node = index.root;
  let before = 0;
  for (;;) {
    if (ts < node.start) return before;
    const b = Number((ts - node.start) / node.width);
    if (b >= BUCKETS) return before + node.cum[BUCKETS]!;
    const child = node.children.get(b);
    if (child) {
      before += node.cum[b]!;
      node = child;
      continue;
    }
    const t0 = node.start + BigInt(b) * node.width;
    const cond =
      id === null
        ? `e.ts < ${intLit(ts)}`
        : `(e.ts < ${intLit(ts)} OR (e.ts = ${intLit(ts)} AND e.id < ${intLit(id)}))`;
    const [r] = await readRows<{ c: bigint }>(
      conn,
      `SELECT count(*) AS c FROM ftrace_event e WHERE ${index.where} AND e.ts >= ${intLit(t0)} AND ${cond}`,
      index.params as never,
    );
    return before + node.cum[b]! + Number(r?.c ?? 0n);
  }
}

/** The rows themselves: common columns and the arguments as trace-cmd prints them. */
export async function listRows(
  conn: DuckDBConnection,
  meta: TraceMeta,
  ids: bigint[],
  firstIndex: number,
): Promise<EventListRow[]> {
  const tr: OpenTrace = { meta, query: (sql, params) => readRows(conn, sql, params as never) };
  const events = await lookupEvents(tr, ids);
  const byId = new Map(events.map((e) => [String(e.id), e]));
  return ids.map((id, k) => {
    const e = byId.get(String(id))!;
    const at = e.line.indexOf(`: ${e.name}: `);
    return {
      index: firstIndex + k,
      id: e.id,
      ts: e.ts,
      cpu: e.cpu,
      utid: e.utid,
      tid: e.tid,
      comm: e.comm,
      name: e.name,
      args: at >= 0 ? e.line.slice(at + e.name.length + 4) : '',
    };
  });
}
