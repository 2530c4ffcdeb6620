/**
 * Runs detectors over one trace database and turns their rows into Findings,
 * their metrics files into Metrics, and both into the trace's overview.
 *
 * One call for the CLI (`stallscope analyze`) and the HTTP API:
 *
 *   const { findings, summaries, metrics, detectors, overview } = await runDetectors(engine, {
 *     detectors: ['shrinker_blocking'],            // default: all
 *     params: { 'shrinker_blocking.warn_ns': '5ms' },
 *     extraDirs: ['./my-queries'],                  // `--queries DIR`
 *   });
 *
 * A detector whose `@requires` tracepoints are not in the trace does not run:
 * its `detectors[]` entry says 'not_traced' and what to enable.
 */
import { readFile } from 'node:fs/promises';
import {
  DuckDBArrayValue,
  DuckDBDecimalValue,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { Engine, Row } from '../engine/engine.ts';
import { holdWhile, sessionOf, withUncapRetry } from '../engine/engine.ts';
import {
  DETECTOR_MACROS_FILE,
  type DetectorDef,
  type ParamValue,
  REQUIRED_COLUMNS,
  blankCommentsAndStrings,
  loadDetectors,
  resolveParams,
} from './detector_registry.ts';
import { inlineParams } from './inline_params.ts';
import { type Finding, assignIds, assignRanks, countBySeverity, isSeverity } from './finding.ts';
import { detectorCoverage, tracedEventNames } from './coverage.ts';
import { EmptyInputs, tableMacroWords } from './empty_inputs.ts';
import { type Metric, rowsToMetrics, sortMetrics, traceMetricsSql } from './metrics.ts';
import { type Overview, buildOverview } from './overview.ts';
import { nestEscalationsInStalls } from './same_pass.ts';
import { type TraceSamples, querySamples } from './samples.ts';
import type { DetectorRun } from '../../shared/contract/findings.ts';

export interface RunOptions {
  /** Detector ids to run (default: all). Unknown ids are an error. */
  detectors?: string[];
  /** 'detector.param' -> value text (e.g. '10ms', '6'). */
  params?: Record<string, string>;
  /** Extra directories of user detectors (`--queries DIR`). */
  extraDirs?: string[];
  /** Also run the detectors' samples files (per-event values, server/findings/samples.ts) into RunResult.samples. */
  samples?: boolean;
  /**
   * Run built-in statements whose tables are all empty too (default: they
   * are skipped as returning no rows, empty_inputs.ts); tests compare both.
   */
  runEmpty?: boolean;
  /**
   * Called once, when every selected detector's own statement has run and
   * before their summaries, metrics and samples do, with the threads (utid)
   * the findings name: an upload's first view summarises those threads'
   * timelines meanwhile instead of after the whole run.
   */
  onFindingThreads?: (utids: number[]) => void;
  /**
   * Outputs of built-in detectors already run (runDetectorsAhead): taken
   * instead of running them again, when this run uses their parameters
   * (no `params`) and statements (not `runEmpty`; `samples` only if they have them).
   */
  ahead?: DetectorsAhead;
}

export type { DetectorRun } from '../../shared/contract/findings.ts';
export interface RunResult {
  /** Ranked: severity (critical, warn, info), then impact (largest first), then ts; `rank` numbers this order. */
  findings: Finding[];
  /** Detector id -> its summary rows (detectors with a .summary.sql only). */
  summaries: Record<string, Row[]>;
  /** The trace's metrics (METRICS.md): trace-level rows and each detector's .metrics.sql. */
  metrics: Metric[];
  /** Every selected detector: ran or not traced, and its counts. */
  detectors: DetectorRun[];
  /** The story of the trace, built from the metrics and findings (server/findings/overview.ts). */
  overview: Overview;
  /** With `samples: true`: the per-event values behind the percentile metrics (METRICS.md, "Samples"). */
  samples?: TraceSamples;
  /** Detector id (and 'id.summary', 'id.metrics') -> wall time in ms. */
  timings: Record<string, number>;
}

/** A detector's SQL failed: names the file and, when DuckDB says, the line. */
export class DetectorRunError extends Error {
  constructor(
    readonly detector: string,
    readonly file: string,
    readonly line: number | null,
    readonly cause: unknown,
    detail: string,
  ) {
    super(`detector ${detector} (${file}${line != null ? `:${line}` : ''}): ${detail}`);
    this.name = 'DetectorRunError';
  }
}

const macrosLoaded = new WeakSet<object>();

/** Defines the shared `ss_*` TEMP macros on this connection (once per engine). */
export async function loadDetectorMacros(engine: Engine): Promise<void> {
  // By session, not engine: a released engine opened again has none of them (engine.ts openReleasable).
  const session = sessionOf(engine);
  if (macrosLoaded.has(session)) return;
  await engine.exec(await readFile(DETECTOR_MACROS_FILE, 'utf8'));
  macrosLoaded.add(session);
}

/**
 * Names of the table macros of lib/macros.sql marked `-- @per_run` (the line
 * right before their `CREATE ... MACRO name() AS TABLE`): expensive building
 * blocks that several detectors or a detector and its summary call.
 */
export function perRunMacroNames(macrosSql: string): string[] {
  return [...perRunMacroDefinitions(macrosSql).keys()];
}

/**
 * Each `@per_run` macro's `CREATE ... MACRO` statement (up to its closing
 * semicolon), by name: what release() runs to restore the computing
 * definitions of the macros a run materialised, instead of the whole macros
 * file (~40 ms a run).
 */
export function perRunMacroDefinitions(macrosSql: string): Map<string, string> {
  const code = blankCommentsAndStrings(macrosSql);
  const re =
    /^--\s*@per_run\b[^\n]*\r?\n\s*(CREATE\s+(?:OR\s+REPLACE\s+)?TEMP(?:ORARY)?\s+MACRO\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(\s*\)\s*AS\s+TABLE\b)/gim;
  const out = new Map<string, string>();
  for (const m of macrosSql.matchAll(re)) {
    const start = m.index + m[0].length - m[1]!.length;
    const end = code.indexOf(';', start);
    if (end < 0) throw new Error(`lib/macros.sql: @per_run macro ${m[2]} has no closing ';'`);
    out.set(m[2]!, macrosSql.slice(start, end + 1));
  }
  return out;
}

/**
 * The `@per_run` macros of one detector run: the first statement of the run
 * that calls one materialises it into a TEMP table and points the macro at
 * that table, so later statements (the summary, other detectors) read it
 * instead of computing it again. `release()` restores the computing
 * definitions and drops the tables: the next run may see other data.
 */
class PerRunTables {
  private readonly made: string[] = [];
  private readonly names: string[];

  /** `definitions`: perRunMacroDefinitions of the macros file, read once per run. */
  constructor(
    private readonly engine: Engine,
    private readonly definitions: Map<string, string>,
  ) {
    this.names = [...definitions.keys()];
  }

  /** Materialises the per-run macros `sql` calls that this run has not yet. */
  async prepare(sql: string): Promise<void> {
    const code = blankCommentsAndStrings(sql);
    for (const name of this.names) {
      if (this.made.includes(name) || !new RegExp(`\\b${name}\\s*\\(`, 'i').test(code)) continue;
      const table = `_ss_run_${name}`;
      this.made.push(name);
      await this.engine.exec(
        `CREATE OR REPLACE TEMP TABLE ${table} AS FROM ${name}();\n` +
          `CREATE OR REPLACE TEMP MACRO ${name}() AS TABLE FROM temp.main.${table};`,
      );
    }
  }

  async release(): Promise<void> {
    if (this.made.length === 0) return;
    await this.engine.exec(this.made.map((name) => this.definitions.get(name)!).join('\n'));
    for (const name of this.made) await this.engine.exec(`DROP TABLE IF EXISTS temp.main._ss_run_${name}`);
  }
}

/** A DuckDB value as plain JS: STRUCT -> object, LIST -> array, MAP -> [{key, value}], DECIMAL -> number. */
function toJs(v: DuckDBValue): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof DuckDBStructValue) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v.entries)) out[k] = toJs(x);
    return out;
  }
  if (v instanceof DuckDBListValue || v instanceof DuckDBArrayValue) return v.items.map(toJs);
  if (v instanceof DuckDBMapValue) return v.entries.map((e) => ({ key: toJs(e.key), value: toJs(e.value) }));
  if (v instanceof DuckDBDecimalValue) return v.toDouble();
  return String(v);
}

/**
 * Runs a query and converts its rows. Goes through the engine's connection
 * when it has one: @duckdb/node-api's own JS conversion (Engine.query) takes
 * ~70 us per row with STRUCT/LIST columns, 15x this converter, and a trace can
 * yield tens of thousands of findings.
 */
async function queryRows(engine: Engine, sql: string, params?: Record<string, DuckDBValue>): Promise<Row[]> {
  const conn = (engine as { connection?: Engine['connection'] }).connection;
  if (!conn || typeof conn.runAndReadAll !== 'function') return engine.query(sql, params);
  const reader = await withUncapRetry(engine, () => conn.runAndReadAll(sql, params));
  return reader.getRowObjects().map((r) => {
    const o: Row = {};
    for (const k in r) o[k] = toJs(r[k] as DuckDBValue);
    return o;
  });
}

async function runStatement(
  engine: Engine,
  det: DetectorDef,
  file: string,
  sql: string,
  values: Record<string, ParamValue>,
  perRun: PerRunTables,
): Promise<Row[]> {
  try {
    await perRun.prepare(sql);
    const inlined = inlineParams(sql, values);
    return await queryRows(engine, inlined.sql, Object.keys(inlined.params).length ? inlined.params : undefined);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const m = /LINE (\d+):/.exec(msg);
    const firstLine = msg.split('\n')[0] ?? msg;
    throw new DetectorRunError(det.id, file, m ? Number(m[1]) : null, e, m ? msg : firstLine);
  }
}

function toBigInt(v: unknown, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  throw new Error(`${what} must be an integer, got ${v === null ? 'NULL' : typeof v}`);
}

function toIntOrNull(v: unknown, what: string): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  throw new Error(`${what} must be an integer or NULL`);
}

/**
 * values as a plain object: a STRUCT comes as an object, a MAP as
 * [{key, value}], JSON as text. NULL-valued keys are dropped (not measured,
 * or not applicable to this kind of finding).
 */
export function normalizeValues(v: unknown): Record<string, unknown> {
  let obj: unknown = v;
  if (typeof obj === 'string') {
    try {
      obj = JSON.parse(obj);
    } catch {
      return { value: v };
    }
  }
  if (Array.isArray(obj) && obj.every((e) => e && typeof e === 'object' && 'key' in e && 'value' in e)) {
    obj = Object.fromEntries(obj.map((e) => [String((e as { key: unknown }).key), (e as { value: unknown }).value]));
  }
  if (obj === null || obj === undefined) return {};
  if (typeof obj !== 'object' || Array.isArray(obj)) return { value: obj };
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(obj as Record<string, unknown>)) {
    if (val !== null && val !== undefined) out[k] = val;
  }
  return out;
}

type RawFinding = Omit<Finding, 'tid' | 'comm' | 'id' | 'rank' | 'parent_id'> & {
  ref: string | null;
  parent_ref: string | null;
};

function rowToFinding(det: DetectorDef, row: Row, index: number): RawFinding {
  const where = `row ${index + 1}`;
  const severity = row.severity;
  if (!isSeverity(severity)) {
    throw new Error(`${where}: severity must be 'critical', 'warn' or 'info', got ${JSON.stringify(severity)}`);
  }
  const ids = row.event_ids;
  if (ids !== null && !Array.isArray(ids)) throw new Error(`${where}: event_ids must be a BIGINT[]`);
  const kind = row.kind;
  const dur = row.dur === null ? 0n : toBigInt(row.dur, `${where}: dur`);
  // impact: optional column; a detector that does not say is rated by its duration.
  const impact =
    row.impact === undefined || row.impact === null ? (dur > 0n ? dur : 0n) : toBigInt(row.impact, `${where}: impact`);
  return {
    detector: det.id,
    kind: typeof kind === 'string' && kind !== '' ? kind : det.id,
    severity,
    ts_ns: toBigInt(row.ts, `${where}: ts`),
    dur_ns: dur,
    cpu: toIntOrNull(row.cpu, `${where}: cpu`),
    utid: toIntOrNull(row.utid, `${where}: utid`),
    title: String(row.title ?? ''),
    values: normalizeValues(row.values),
    event_ids: (ids ?? []).filter((x) => x !== null).map((x, i) => toBigInt(x, `${where}: event_ids[${i}]`)),
    impact_ns: impact < 0n ? 0n : impact,
    ref: typeof row.ref === 'string' ? row.ref : null,
    parent_ref: typeof row.parent_ref === 'string' ? row.parent_ref : null,
  };
}

async function threadsByUtid(
  engine: Engine,
  utids: Set<number>,
): Promise<Map<number, { tid: number | null; name: string | null }>> {
  const out = new Map<number, { tid: number | null; name: string | null }>();
  if (utids.size === 0) return out;
  const list = [...utids].filter((u) => Number.isInteger(u)).join(',');
  const rows = await engine.query<{ utid: number; tid: number | null; name: string | null }>(
    `SELECT utid, tid, name FROM thread WHERE utid IN (${list})`,
  );
  for (const r of rows) out.set(r.utid, { tid: r.tid, name: r.name });
  return out;
}

/**
 * What one detector's statements gave (its own statement's findings, its
 * summary, metrics and samples) and how long each took: a run assembles the
 * findings, metrics and overview from these, in the detectors' order.
 */
export interface DetectorOutput {
  findings: RawFinding[];
  /** The summary's rows (null: the detector has no .summary.sql). */
  summary: Row[] | null;
  metrics: Metric[];
  samples: TraceSamples;
  timings: Record<string, number>;
}

/**
 * Built-in detectors' outputs from a run made before the whole model was
 * committed (runDetectorsAhead): a later run over the finished model takes
 * them instead of running those detectors again.
 */
export interface DetectorsAhead {
  /** By detector id; run with their default parameters. */
  outputs: ReadonlyMap<string, DetectorOutput>;
  /** Their samples files ran too (RunOptions.samples). */
  samples: boolean;
}

/** The statements of one detector run on one connection, sharing its per-run TEMP tables and empty-input lookups. */
class RunStatements {
  readonly perRun: PerRunTables;
  readonly emptyInputs: EmptyInputs;

  constructor(
    private readonly engine: Engine,
    macrosSql: string,
    private readonly runEmpty: boolean,
  ) {
    this.perRun = new PerRunTables(engine, perRunMacroDefinitions(macrosSql));
    // A built-in statement whose tables are all empty returns no rows: it is not run (empty_inputs.ts).
    this.emptyInputs = new EmptyInputs(engine, tableMacroWords(macrosSql));
  }

  /** A detector's statements, as runs look them up and skip them. */
  static sqlOf(det: DetectorDef, samples: boolean): string[] {
    return [det.sql, det.summarySql, det.metricsSql, samples ? det.samplesSql : null].filter(
      (x): x is string => x != null,
    );
  }

  private async skipped(det: DetectorDef, sql: string): Promise<boolean> {
    return det.builtin && !this.runEmpty && (await this.emptyInputs.nothingToRead(sql));
  }

  private async statement(
    det: DetectorDef,
    file: string,
    sql: string,
    values: Record<string, ParamValue>,
  ): Promise<Row[]> {
    return (await this.skipped(det, sql)) ? [] : runStatement(this.engine, det, file, sql, values, this.perRun);
  }

  /** The detector's own statement: its findings. */
  async own(det: DetectorDef, values: Record<string, ParamValue>, out: DetectorOutput): Promise<void> {
    const t0 = performance.now();
    const rows = await this.statement(det, det.file, det.sql, values);
    if (rows.length > 0) {
      const missing = REQUIRED_COLUMNS.filter((c) => !(c in rows[0]!));
      if (missing.length) {
        throw new DetectorRunError(det.id, det.file, null, null, `result lacks column(s) ${missing.join(', ')}`);
      }
    }
    rows.forEach((row, i) => {
      try {
        out.findings.push(rowToFinding(det, row, i));
      } catch (e) {
        throw new DetectorRunError(det.id, det.file, null, e, (e as Error).message);
      }
    });
    out.timings[det.id] = performance.now() - t0;
  }

  /** Its summary, metrics and (`samples`) samples: they add no finding. */
  async rest(
    det: DetectorDef,
    values: Record<string, ParamValue>,
    samples: boolean,
    out: DetectorOutput,
  ): Promise<void> {
    if (det.summarySql != null && det.summaryFile != null) {
      const s0 = performance.now();
      out.summary = await this.statement(det, det.summaryFile, det.summarySql, values);
      out.timings[`${det.id}.summary`] = performance.now() - s0;
    }
    if (det.metricsSql != null && det.metricsFile != null) {
      const m0 = performance.now();
      const rows = await this.statement(det, det.metricsFile, det.metricsSql, values);
      try {
        out.metrics.push(...rowsToMetrics(det.id, rows));
      } catch (e) {
        throw new DetectorRunError(det.id, det.metricsFile, null, e, (e as Error).message);
      }
      out.timings[`${det.id}.metrics`] = performance.now() - m0;
    }
    if (samples && det.samplesSql != null && det.samplesFile != null && !(await this.skipped(det, det.samplesSql))) {
      // While this run's pairs / windows are still materialised (@per_run): only the values' conversion costs.
      const s0 = performance.now();
      try {
        await this.perRun.prepare(det.samplesSql);
        await querySamples(this.engine, det, values, out.samples);
      } catch (e) {
        throw new DetectorRunError(det.id, det.samplesFile, null, e, (e as Error).message);
      }
      out.timings[`${det.id}.samples`] = performance.now() - s0;
    }
  }
}

function emptyOutput(): DetectorOutput {
  return { findings: [], summary: null, metrics: [], samples: new Map(), timings: {} };
}

/**
 * The detectors' statements' shared setup: the macros defined on the
 * connection (by DuckDB, on its own thread, while the detector files are
 * read and parsed here), the detector files and the macros' text.
 */
async function prepareRun(engine: Engine, extraDirs: string[]): Promise<{ all: DetectorDef[]; macrosSql: string }> {
  const definingMacros = loadDetectorMacros(engine);
  definingMacros.catch(() => undefined);
  const all = await loadDetectors(extraDirs);
  await definingMacros;
  return { all, macrosSql: await readFile(DETECTOR_MACROS_FILE, 'utf8') };
}

/**
 * Runs, on a database whose model is only partly committed, the built-in
 * detectors (with their default parameters) none of whose statements read
 * a relation of `notYet` (with the table macros they call): an upload runs
 * them beside derive, whose outputs most do not read (RunOptions.ahead).
 * `notYet`: lower-case names (derive_model.ts derivedRelations). Once
 * `stopped()`, no further detector starts: the later run does the rest.
 */
export async function runDetectorsAhead(
  engine: Engine,
  opts: { notYet: ReadonlySet<string>; samples?: boolean; stopped?: () => boolean },
): Promise<DetectorsAhead> {
  const samples = Boolean(opts.samples);
  const { all, macrosSql } = await prepareRun(engine, []);
  const statements = new RunStatements(engine, macrosSql, false);
  const traced = await tracedEventNames(engine);
  const ready: DetectorDef[] = [];
  for (const det of all) {
    if (!det.builtin || detectorCoverage(det, traced).status !== 'traced') continue;
    let reads = false;
    for (const sql of RunStatements.sqlOf(det, samples))
      if ((await statements.emptyInputs.dataRelationsOf(sql)).some((r) => opts.notYet.has(r))) reads = true;
    if (!reads) ready.push(det);
  }
  const outputs = new Map<string, DetectorOutput>();
  try {
    await statements.emptyInputs.prefetch(ready.flatMap((d) => RunStatements.sqlOf(d, samples)));
    // Each detector whole (its own statement, then the rest), so that a stopped run keeps complete outputs.
    for (const det of ready) {
      if (opts.stopped?.()) break;
      const out = emptyOutput();
      await statements.own(det, resolveParams(det, {}), out);
      await statements.rest(det, resolveParams(det, {}), samples, out);
      outputs.set(det.id, out);
    }
  } finally {
    await statements.perRun.release();
  }
  return { outputs, samples };
}

/** Runs on one engine, one after the other (they share its connection and per-run TEMP tables). */
const runsByEngine = new WeakMap<Engine, Promise<unknown>>();

/** Runs the selected detectors (and their summaries) and returns ordered findings. */
export async function runDetectors(engine: Engine, opts: RunOptions = {}): Promise<RunResult> {
  const previous = runsByEngine.get(engine) ?? Promise.resolve();
  // Held open throughout: the run's statements share TEMP macros and tables.
  const run = previous.catch(() => undefined).then(() => holdWhile(engine, () => runDetectorsNow(engine, opts)));
  runsByEngine.set(
    engine,
    run.catch(() => undefined),
  );
  return run;
}

async function runDetectorsNow(engine: Engine, opts: RunOptions): Promise<RunResult> {
  const { all, macrosSql } = await prepareRun(engine, opts.extraDirs ?? []);
  let selected = all;
  if (opts.detectors && opts.detectors.length > 0) {
    const known = new Map(all.map((d) => [d.id, d]));
    selected = opts.detectors.map((id) => {
      const d = known.get(id);
      if (!d) throw new Error(`unknown detector '${id}' (known: ${[...known.keys()].join(', ')})`);
      return d;
    });
  }
  // Validate every override before running anything.
  const overrides = opts.params ?? {};
  for (const key of Object.keys(overrides)) {
    const id = key.split('.')[0]!;
    if (!key.includes('.')) throw new Error(`parameter '${key}' must be written as detector.name`);
    if (!all.some((d) => d.id === id)) throw new Error(`parameter '${key}': unknown detector '${id}'`);
  }
  const paramsById = new Map(selected.map((d) => [d.id, resolveParams(d, overrides)]));
  // Outputs of a run ahead stand for built-in detectors run with their default parameters, as this run's.
  const ahead =
    opts.ahead && !opts.runEmpty && Object.keys(overrides).length === 0 && (opts.ahead.samples || !opts.samples)
      ? opts.ahead.outputs
      : new Map<string, DetectorOutput>();
  const aheadOf = (det: DetectorDef) => (det.builtin ? ahead.get(det.id) : undefined);

  const statements = new RunStatements(engine, macrosSql, Boolean(opts.runEmpty));
  const traced = await tracedEventNames(engine);
  const raw: RawFinding[] = [];
  const summaries: Record<string, Row[]> = {};
  const timings: Record<string, number> = {};
  const metrics: Metric[] = [];
  const runs: DetectorRun[] = [];
  const samples: TraceSamples = new Map();
  try {
    if (!opts.runEmpty) {
      const builtinSql = selected
        .filter((d) => d.builtin && !aheadOf(d) && detectorCoverage(d, traced).status === 'traced')
        .flatMap((d) => RunStatements.sqlOf(d, Boolean(opts.samples)));
      await statements.emptyInputs.prefetch(builtinSql);
    }
    metrics.push(...rowsToMetrics('trace', await queryRows(engine, await traceMetricsSql())));
    const ran: Array<{ det: DetectorDef; values: Record<string, ParamValue>; out: DetectorOutput }> = [];
    for (const det of selected) {
      const values = paramsById.get(det.id)!;
      const coverage = detectorCoverage(det, traced);
      const run: DetectorRun = {
        id: det.id,
        title: det.title,
        builtin: det.builtin,
        status: coverage.status === 'traced' ? 'ok' : 'not_traced',
        missing: coverage.missing,
        hint: coverage.hint,
        enabled_listed: coverage.enabledListed,
        counts: { critical: 0, warn: 0, info: 0 },
        impact: det.impact,
        severity_rule: det.severityRule,
        rank: det.rank,
        params: Object.fromEntries(det.params.map((p) => [p.name, String(values[p.name])])),
      };
      runs.push(run);
      if (run.status === 'not_traced') continue;
      const done = aheadOf(det);
      const out = done ?? emptyOutput();
      if (!done) await statements.own(det, values, out);
      ran.push({ det, values, out });
      raw.push(...out.findings);
      timings[det.id] = out.timings[det.id]!;
    }
    // The findings are all known: the summaries, metrics and samples below add none.
    opts.onFindingThreads?.([...new Set(raw.map((f) => f.utid).filter((u): u is number => u !== null))]);
    for (const { det, values, out } of ran) {
      if (!aheadOf(det)) await statements.rest(det, values, Boolean(opts.samples), out);
      if (out.summary !== null) summaries[det.id] = out.summary;
      metrics.push(...out.metrics);
      for (const [key, ms] of Object.entries(out.timings)) if (key !== det.id) timings[key] = ms;
      for (const [id, set] of out.samples) {
        const known = samples.get(id);
        if (!known) samples.set(id, set);
        else for (const [key, values] of set.byKey) known.byKey.set(key, values);
      }
    }
  } finally {
    await statements.perRun.release();
  }

  const threads = await threadsByUtid(engine, new Set(raw.map((f) => f.utid).filter((u): u is number => u !== null)));
  const findings: Finding[] = raw.map((f) => {
    const t = f.utid !== null ? threads.get(f.utid) : undefined;
    return {
      detector: f.detector,
      kind: f.kind,
      severity: f.severity,
      ts_ns: f.ts_ns,
      dur_ns: f.dur_ns,
      cpu: f.cpu,
      tid: t?.tid ?? null,
      comm: t?.name ?? null,
      utid: f.utid,
      title: f.title,
      values: f.values,
      event_ids: f.event_ids,
      id: 0,
      impact_ns: f.impact_ns,
      rank: 0,
      parent_id: null,
    };
  });
  assignIds(findings);
  // parent_ref -> the parent's id (refs are per detector)
  const byRef = new Map<string, Finding>();
  raw.forEach((r, i) => {
    if (r.ref !== null) byRef.set(`${r.detector}\0${r.ref}`, findings[i]!);
  });
  raw.forEach((r, i) => {
    if (r.parent_ref === null) return;
    const parent = byRef.get(`${r.detector}\0${r.parent_ref}`);
    if (parent && parent !== findings[i]) findings[i]!.parent_id = parent.id;
  });
  nestEscalationsInStalls(findings);
  assignRanks(findings, new Set(selected.filter((d) => d.rank === 'loss').map((d) => d.id)));
  for (const run of runs) run.counts = countBySeverity(findings.filter((f) => f.detector === run.id));
  sortMetrics(metrics);
  const overview = buildOverview({ findings, metrics, detectors: runs });
  return { findings, summaries, metrics, detectors: runs, overview, timings, ...(opts.samples ? { samples } : {}) };
}
