/**
 * The query page and event list on a large model (>= 10M events), measured
 * through the query process the server uses (server/query/query_process.ts:
 * its own child process, sandboxed DuckDB instance and thread settings), so
 * the figures are what the app waits for, minus HTTP:
 *
 *   - `SELECT name, count(*) FROM ftrace_event GROUP BY 1` (first run:
 *     opens the sandbox instance; then the median of WARM_RUNS)
 *   - typed-table joins (shrink_inactive passes per task; switch-ins per
 *     task name through sched_switch x thread)
 *   - the event list of the whole trace: building its row index, then
 *     pages of 200 rows at random row numbers (a scrollbar dragged) and at
 *     consecutive ones (a wheel scrolling), unfiltered and filtered
 *
 * Targets (issue 30): each query under 1 s on the 10M-event model.
 *
 *   import { benchQuery } from './query_bench.ts';
 *   const r = await benchQuery(dbPath);
 *
 * or on its own: `npx tsx bench/query_bench.ts <trace.duckdb>`.
 */
import { openDuckDb } from '../server/engine/engine.ts';
import { TraceEngines } from '../server/api/trace_engines.ts';
import type { LibraryLike } from '../server/api/library_contract.ts';
import { QueryProcess } from '../server/query/query_process.ts';
import type { TraceRef } from '../server/query/query_service.ts';

const WARM_RUNS = 5;
const PAGE = 200;

export interface Timed {
  firstMs: number;
  medianMs: number;
  runs: number[];
  rows: number;
}

export interface ListBench {
  label: string;
  total: number;
  indexMs: number;
  randomPage: { medianMs: number; p95Ms: number; maxMs: number; pages: number };
  scrollPage: { medianMs: number; p95Ms: number; maxMs: number; pages: number };
}

export interface QueryBenchResult {
  events: number;
  queries: Record<string, Timed & { sql: string }>;
  eventList: ListBench[];
  targetMs: number;
}

const QUERIES: Record<string, string> = {
  'events by name': 'SELECT name, count(*) FROM ftrace_event GROUP BY 1',
  'typed join: reclaim per task': `SELECT t.name, count(*) AS passes, sum(e.nr_reclaimed) AS reclaimed
    FROM mm_vmscan_lru_shrink_inactive e JOIN thread t USING (utid) GROUP BY 1 ORDER BY 3 DESC LIMIT 20`,
  'typed join: switch-ins per task': `SELECT t.name, count(*) AS switch_ins
    FROM sched_switch s JOIN thread t ON t.tid = s.next_pid GROUP BY 1 ORDER BY 2 DESC LIMIT 20`,
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))]!;
const round = (x: number) => Math.round(x * 10) / 10;

/** A deterministic sequence of row numbers in [0, n). */
function rowNumbers(n: number, count: number): number[] {
  const out: number[] = [];
  let x = 12345;
  for (let i = 0; i < count; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out.push(Math.floor((x / 2 ** 32) * Math.max(1, n - PAGE)));
  }
  return out;
}

export async function benchQuery(dbPath: string, log: (s: string) => void = () => {}): Promise<QueryBenchResult> {
  // The trace's meta as the server computes it (time base, end, longest durations).
  const engines = new TraceEngines({
    openEngine: () => openDuckDb(dbPath, { readOnly: true }),
  } as unknown as LibraryLike);
  const open = await engines.get('bench');
  const meta = open.meta;
  const [{ n }] = await open.query<{ n: bigint }>('SELECT count(*) AS n FROM ftrace_event');
  (await (open as unknown as { engine: Promise<{ close(): void }> }).engine).close();
  const trace: TraceRef = { id: 'bench', dbPath, meta };
  const qp = new QueryProcess();
  await qp.warm();
  const result: QueryBenchResult = { events: Number(n), queries: {}, eventList: [], targetMs: 1000 };
  try {
    for (const [label, sql] of Object.entries(QUERIES)) {
      const runs: number[] = [];
      let rows = 0;
      for (let i = 0; i <= WARM_RUNS; i++) {
        const t0 = performance.now();
        const r = await qp.request({ op: 'run', trace, sql, timeoutMs: 120_000 });
        runs.push(performance.now() - t0);
        rows = r.rowCount;
      }
      const q = { sql, firstMs: round(runs[0]!), medianMs: round(median(runs.slice(1))), runs: runs.map(round), rows };
      result.queries[label] = q;
      log(`query ${label}: first ${q.firstMs} ms, then median ${q.medianMs} ms (${rows} rows)`);
    }
    const t1 = BigInt(meta.last - meta.base);
    const lists: Array<[string, Record<string, unknown>]> = [
      ['whole trace', {}],
      ['whole trace, sched_switch only', { names: ['sched_switch'] }],
      ['whole trace, nr_reclaimed < 10', { expr: 'nr_reclaimed < 10' }],
    ];
    for (const [label, filter] of lists) {
      const t0 = performance.now();
      const first = await qp.request({ op: 'eventList', trace, t0: 0n, t1, filter, from: 0, count: PAGE });
      const indexMs = performance.now() - t0;
      const time = async (from: number) => {
        const s = performance.now();
        await qp.request({ op: 'eventList', trace, t0: 0n, t1, filter, from, count: PAGE });
        return performance.now() - s;
      };
      const random: number[] = [];
      for (const r of rowNumbers(first.total, 20)) random.push(await time(r));
      const scroll: number[] = [];
      const start = Math.floor(first.total / 2);
      for (let k = 0; k < 20; k++) scroll.push(await time(start + k * PAGE));
      const stat = (xs: number[]) => ({
        medianMs: round(median(xs)),
        p95Ms: round(p95(xs)),
        maxMs: round(Math.max(...xs)),
        pages: xs.length,
      });
      const b: ListBench = {
        label,
        total: first.total,
        indexMs: round(indexMs),
        randomPage: stat(random),
        scrollPage: stat(scroll),
      };
      result.eventList.push(b);
      log(
        `event list, ${label}: ${b.total.toLocaleString('en-US')} rows; index + first page ${b.indexMs} ms; ` +
          `random pages median ${b.randomPage.medianMs} / p95 ${b.randomPage.p95Ms} ms; scrolling pages median ${b.scrollPage.medianMs} / p95 ${b.scrollPage.p95Ms} ms`,
      );
    }
  } finally {
    qp.close();
  }
  return result;
}

export function formatQueryBench(r: QueryBenchResult): string {
  const lines = [`query page on ${r.events.toLocaleString('en-US')} events (target < ${r.targetMs} ms each):`];
  for (const [label, q] of Object.entries(r.queries)) {
    lines.push(
      `  ${label.padEnd(34)} first ${String(q.firstMs).padStart(7)} ms, warm median ${String(q.medianMs).padStart(7)} ms: ${q.medianMs < r.targetMs ? 'MET' : 'NOT MET'}`,
    );
  }
  for (const b of r.eventList) {
    lines.push(
      `  event list, ${b.label}: ${b.total.toLocaleString('en-US')} rows, index + first page ${b.indexMs} ms, ` +
        `page of ${PAGE} at a random row: median ${b.randomPage.medianMs} / p95 ${b.randomPage.p95Ms} ms, scrolling: median ${b.scrollPage.medianMs} / p95 ${b.scrollPage.p95Ms} ms`,
    );
  }
  return `${lines.join('\n')}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const db = process.argv[2];
  if (!db) throw new Error('usage: npx tsx bench/query_bench.ts <trace.duckdb>');
  const r = await benchQuery(db, (s) => process.stdout.write(`${s}\n`));
  process.stdout.write(formatQueryBench(r));
}
