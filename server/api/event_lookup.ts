/**
 * Looks events up by id: the common columns, the typed table row (or args)
 * and the line as `trace-cmd report` prints it:
 *   `comm-pid [cpu] sec.usec: name: args`
 */
import { typedTableFor } from '../model/typed_tables.ts';
import { reportLine as formatReportLine } from '../notes/report_line.ts';
import type { OpenTrace } from './trace_engines.ts';
import type { EventInfo } from '../../shared/contract/events.ts';
import { compareBigints, idsSubquery } from '../engine/union_view_ids.ts';

export type { EventInfo } from '../../shared/contract/events.ts';
const COMMON = new Set(['id', 'ts', 'cpu', 'utid', 'event']);

export async function lookupEvents(tr: OpenTrace, ids: bigint[]): Promise<EventInfo[]> {
  if (ids.length === 0) return [];
  const base = await tr.query<{
    id: bigint;
    ts: bigint;
    cpu: number;
    utid: number | null;
    name: string;
    system: string | null;
    raw: string | null;
    arg_set_id: bigint | null;
    tid: number | null;
    comm: string | null;
  }>(`
    SELECT e.id, e.ts, e.cpu, e.utid, e.name, e.system, e.raw, e.arg_set_id, t.tid, t.name AS comm
    FROM ftrace_event e LEFT JOIN thread t ON t.utid = e.utid
    WHERE e.id IN ${idsSubquery(ids)}`);
  // Sorted here, not by the statement (engine/union_view_ids.ts).
  base.sort((a, b) => compareBigints(a.ts, b.ts) || compareBigints(a.id, b.id));
  // Typed rows, one query per table.
  const byTable = new Map<string, bigint[]>();
  for (const e of base) {
    const t = typedTableFor(e.name);
    if (t && tr.meta.tables.has(t)) byTable.set(t, [...(byTable.get(t) ?? []), e.id]);
  }
  const typed = new Map<string, Record<string, unknown>>();
  for (const [table, tids] of byTable) {
    const rows = await tr.query(`SELECT * FROM "${table}" WHERE id IN ${idsSubquery(tids)}`);
    for (const r of rows) typed.set(String(r.id), r);
  }
  const argIds = base.filter((e) => e.arg_set_id !== null && !typed.has(String(e.id))).map((e) => e.arg_set_id!);
  const args = new Map<string, Record<string, unknown>>();
  if (argIds.length && tr.meta.tables.has('args')) {
    const rows = await tr.query<{
      arg_set_id: bigint;
      arg_index: number;
      key: string;
      int_value: bigint | null;
      string_value: string | null;
      real_value: number | null;
    }>(
      `SELECT arg_set_id, arg_index, key, int_value, string_value, real_value FROM args WHERE arg_set_id IN ${idsSubquery(argIds)}`,
    );
    rows.sort((a, b) => compareBigints(a.arg_set_id, b.arg_set_id) || a.arg_index - b.arg_index);
    for (const r of rows) {
      const k = String(r.arg_set_id);
      const o = args.get(k) ?? {};
      o[r.key] = r.int_value ?? r.string_value ?? r.real_value;
      args.set(k, o);
    }
  }
  return base.map((e) => {
    const row = typed.get(String(e.id));
    let fields: Record<string, unknown> = {};
    let table: string | null = null;
    if (row) {
      table = typedTableFor(e.name);
      for (const [k, v] of Object.entries(row)) if (!COMMON.has(k) && v !== null) fields[k] = v;
    } else if (e.arg_set_id !== null && args.has(String(e.arg_set_id))) {
      table = 'args';
      fields = args.get(String(e.arg_set_id))!;
    }
    const info: EventInfo = {
      id: Number(e.id),
      ts_ns: e.ts.toString(),
      ts: Number(e.ts - tr.meta.base),
      cpu: e.cpu,
      utid: e.utid,
      tid: e.tid,
      comm: e.comm,
      name: e.name,
      system: e.system,
      fields: jsonable(fields),
      table,
      line: '',
    };
    info.line = reportLine(info, e.ts, e.raw);
    return info;
  });
}

function jsonable(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    out[k] =
      typeof v === 'bigint'
        ? v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER)
          ? Number(v)
          : v.toString()
        : v;
  }
  return out;
}

/** `comm-pid [cpu] sec.usec: name: args`, as `trace-cmd report` prints events (server/notes/report_line.ts). */
export function reportLine(e: EventInfo, absTs: bigint, raw: string | null): string {
  return formatReportLine(e, absTs, raw);
}
