/**
 * Helpers for the detector SQL tests (DuckDB sqllogictest in spirit): a fresh
 * in-memory trace database from queries/schema.sql, a few hand-written rows
 * per table, then the detector under test.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Engine, openDuckDb } from '../../server/engine/engine.ts';
import { loadDetectorMacros, runDetectors } from '../../server/findings/run_detectors.ts';
import type { Finding } from '../../server/findings/finding.ts';

const SCHEMA = fileURLToPath(new URL('../../queries/schema.sql', import.meta.url));
const DERIVE_SLICES = fileURLToPath(new URL('../../queries/model/derive_slices.sql', import.meta.url));
const DERIVE_SCHED = fileURLToPath(new URL('../../queries/model/derive_sched.sql', import.meta.url));

/** A fresh trace database with the schema and the detector macros. */
export async function newTraceDb(): Promise<Engine> {
  const engine = await openDuckDb(':memory:', { threads: 2 });
  await engine.exec(readFileSync(SCHEMA, 'utf8'));
  await loadDetectorMacros(engine);
  return engine;
}

function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'bigint' || typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return `'${String(v).replace(/'/g, "''")}'`;
}

/** INSERTs rows (objects keyed by column name; missing columns stay NULL). */
export async function insert(engine: Engine, table: string, rows: Record<string, unknown>[]): Promise<void> {
  for (const row of rows) {
    const cols = Object.keys(row);
    await engine.exec(
      `INSERT INTO ${table} (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map((c) => literal(row[c])).join(', ')})`,
    );
  }
}

/** Sets trace_info first_ts / last_ts (the trace bounds detectors measure open calls against). */
export async function setTraceBounds(engine: Engine, first: bigint, last: bigint): Promise<void> {
  await insert(engine, 'trace_info', [
    { key: 'first_ts', value: String(first) },
    { key: 'last_ts', value: String(last) },
  ]);
}

/** The lead's sched_slice / thread_state derivation (derive_slices reads them). */
export async function deriveSched(engine: Engine): Promise<void> {
  await engine.exec(readFileSync(DERIVE_SCHED, 'utf8'));
}

export async function deriveSlices(engine: Engine): Promise<void> {
  await engine.exec(readFileSync(DERIVE_SLICES, 'utf8'));
}

const SEV = { critical: 0, warn: 1, info: 2 } as const;

/**
 * The findings of one detector in severity, then time order (as the tests
 * list them), without utid (tests name tid/comm) and without the ranking
 * fields (id, rank, parent_id, impact_ns: `rankedOf` has them).
 */
export async function findingsOf(
  engine: Engine,
  detector: string,
  params: Record<string, string> = {},
): Promise<Omit<Finding, 'utid' | 'detector' | 'id' | 'rank' | 'parent_id' | 'impact_ns'>[]> {
  const { findings } = await runDetectors(engine, { detectors: [detector], params });
  const first = (f: Finding) => f.event_ids[0] ?? -1n;
  return [...findings]
    .sort(
      (a, b) =>
        SEV[a.severity] - SEV[b.severity] ||
        (a.ts_ns < b.ts_ns ? -1 : a.ts_ns > b.ts_ns ? 1 : first(a) < first(b) ? -1 : first(a) > first(b) ? 1 : 0),
    )
    .map(({ utid: _u, detector: _d, id: _i, rank: _r, parent_id: _p, impact_ns: _m, ...rest }) => rest);
}

/** The findings of one detector as the runner ranks them (worst first), with id, rank, impact and parent. */
export async function rankedOf(
  engine: Engine,
  detector: string,
  params: Record<string, string> = {},
): Promise<Finding[]> {
  return (await runDetectors(engine, { detectors: [detector], params })).findings;
}

export async function summaryOf(engine: Engine, detector: string, params: Record<string, string> = {}) {
  const { summaries } = await runDetectors(engine, { detectors: [detector], params });
  return summaries[detector] ?? [];
}
