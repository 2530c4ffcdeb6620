/**
 * The detector registry: every `*.sql` file of queries/detectors/ (built in)
 * and of any directory the user adds (`--queries DIR`) is one detector.
 *
 * A detector file opens with a comment header the registry parses:
 *
 *   -- @id my_detector            (optional: defaults to the file stem)
 *   -- @title One line            (optional: defaults to the id)
 *   -- @description One line      (optional)
 *   -- @param warn_ns BIGINT 10000000 -- what the parameter means
 *   -- @requires vmscan:mm_shrink_slab_start vmscan:mm_shrink_slab_end
 *                                 (tracepoints it needs; `a|b`: either; without them
 *                                 the detector reports "not traced", not zero findings)
 *   -- @impact One line           (what a finding's impact_ns measures)
 *   -- @severity One line         (the severity rule; repeatable)
 *   -- @rank loss                 (optional: its findings are losses, e.g. a process
 *                                 killed, and rank before every stall of their severity;
 *                                 the default, `impact`, ranks by impact_ns)
 *
 * and then is ONE SELECT returning finding rows (see REQUIRED_COLUMNS). Its
 * parameters are DuckDB named prepared-statement parameters (`$warn_ns`).
 * A companion `<stem>.summary.sql` (one SELECT, same parameters) returns
 * summary rows, and `<stem>.metrics.sql` (one SELECT, same parameters)
 * the detector's metrics (server/findings/metrics.ts); `<stem>.samples.sql`
 * (optional) the per-event values behind its percentile metrics, for
 * comparing traces (server/compare/samples.ts). Files whose name
 * starts with `_` and the `lib/` directory are not detectors;
 * `lib/macros.sql` holds macros every detector may call.
 */
import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Built-in detectors: <repo>/queries/detectors. */
export const BUILTIN_DETECTOR_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../queries/detectors');

/** Macros run on the connection before any detector (server/findings/run_detectors.ts). */
export const DETECTOR_MACROS_FILE = join(BUILTIN_DETECTOR_DIR, 'lib', 'macros.sql');

/** Columns every detector SELECT returns; `kind` is optional (defaults to the id). */
export const REQUIRED_COLUMNS = ['severity', 'ts', 'dur', 'cpu', 'utid', 'title', 'values', 'event_ids'] as const;

export type ParamType = 'INTEGER' | 'BIGINT' | 'DOUBLE' | 'VARCHAR' | 'BOOLEAN';
const PARAM_TYPES: readonly ParamType[] = ['INTEGER', 'BIGINT', 'DOUBLE', 'VARCHAR', 'BOOLEAN'];

export interface DetectorParam {
  name: string;
  type: ParamType;
  /** The default as written in the header. */
  defaultText: string;
  /** The default, parsed: bigint for INTEGER/BIGINT, number, string or boolean. */
  default: ParamValue;
  description: string;
}

export type ParamValue = bigint | number | string | boolean;

/**
 * Tracepoints a detector needs, as `system:event` names: every group must be
 * in the trace, a group is satisfied by any one of its alternatives.
 */
export type Requirement = string[];

export interface DetectorDef {
  id: string;
  title: string;
  description: string;
  params: DetectorParam[];
  /** Absolute path of the detector's SQL file. */
  file: string;
  sql: string;
  /** `<stem>.summary.sql` next to it, if any. */
  summaryFile: string | null;
  summarySql: string | null;
  /** `<stem>.metrics.sql` next to it, if any. */
  metricsFile: string | null;
  metricsSql: string | null;
  /** `<stem>.samples.sql` next to it, if any: per-event values for compare (server/compare/samples.ts). */
  samplesFile: string | null;
  samplesSql: string | null;
  /** `@requires` groups (empty: needs nothing in particular). */
  requires: Requirement[];
  /** `@impact`: what impact_ns measures ('' when not stated: then it is the finding's duration). */
  impact: string;
  /** `@severity` lines: the severity rule. */
  severityRule: string;
  /** `@rank`: 'loss' (before every stall of its severity: finding.ts rankComparator) or 'impact' (the default). */
  rank: DetectorRank;
  builtin: boolean;
}

/** How a detector's findings rank within their severity (`@rank`). */
export type DetectorRank = 'impact' | 'loss';
const RANKS: readonly DetectorRank[] = ['impact', 'loss'];

/** What `stallscope detectors` lists and GET /api/detectors returns. */
export interface DetectorInfo {
  id: string;
  title: string;
  description: string;
  file: string;
  builtin: boolean;
  hasSummary: boolean;
  params: { name: string; type: ParamType; default: string; description: string }[];
  /** Tracepoints it needs (`@requires`): each group as `a|b`. */
  requires: string[];
  impact: string;
  severity_rule: string;
  /** `@rank`: 'loss' findings rank before every stall of their severity. */
  rank: DetectorRank;
}

export class DetectorDefinitionError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | null,
    message: string,
  ) {
    super(`${file}${line != null ? `:${line}` : ''}: ${message}`);
    this.name = 'DetectorDefinitionError';
  }
}

const PARAM_LINE = /^@param\s+([A-Za-z_][A-Za-z0-9_]*)\s+([A-Za-z0-9]+)\s+('(?:[^']|'')*'|\S+)\s*(?:--\s*(.*))?$/;

export interface ParsedHeader {
  id: string | null;
  title: string | null;
  description: string | null;
  params: DetectorParam[];
  requires: Requirement[];
  impact: string | null;
  severityRule: string | null;
  rank: DetectorRank | null;
}

const REQUIREMENT = /^[A-Za-z0-9_]+:[A-Za-z0-9_]+$/;

/** Parses the `--` comment lines before the first line of SQL. */
export function parseDetectorHeader(text: string, file: string): ParsedHeader {
  const out: ParsedHeader = {
    id: null,
    title: null,
    description: null,
    params: [],
    requires: [],
    impact: null,
    severityRule: null,
    rank: null,
  };
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    if (!line.startsWith('--')) break;
    const body = line.replace(/^--+\s?/, '').trim();
    if (!body.startsWith('@')) continue;
    const lineNo = i + 1;
    const tag = /^@([a-z_]+)\b\s*(.*)$/.exec(body);
    if (!tag) continue;
    const [, name, rest] = tag as unknown as [string, string, string];
    switch (name) {
      case 'id':
        out.id = rest.trim();
        break;
      case 'title':
        out.title = rest.trim();
        break;
      case 'description':
        out.description = rest.trim();
        break;
      case 'requires':
        for (const group of rest.trim().split(/\s+/).filter(Boolean)) {
          const alts = group.split('|');
          const bad = alts.find((a) => !REQUIREMENT.test(a));
          if (bad !== undefined) {
            throw new DetectorDefinitionError(
              file,
              lineNo,
              `@requires: '${bad}' is not a tracepoint written system:event`,
            );
          }
          out.requires.push(alts);
        }
        break;
      case 'impact':
        out.impact = `${out.impact ? `${out.impact} ` : ''}${rest.trim()}`;
        break;
      case 'severity':
        out.severityRule = `${out.severityRule ? `${out.severityRule} ` : ''}${rest.trim()}`;
        break;
      case 'rank': {
        // `@rank loss -- why`: the word, then an optional comment.
        const rank = rest.replace(/--.*$/, '').trim() as DetectorRank;
        if (!RANKS.includes(rank)) {
          throw new DetectorDefinitionError(file, lineNo, `@rank: '${rank}' is not one of ${RANKS.join(', ')}`);
        }
        out.rank = rank;
        break;
      }
      case 'param': {
        const m = PARAM_LINE.exec(body);
        if (!m) {
          throw new DetectorDefinitionError(
            file,
            lineNo,
            `bad @param line (expected "@param name TYPE default -- description"): ${body}`,
          );
        }
        const type = m[2]!.toUpperCase() as ParamType;
        if (!PARAM_TYPES.includes(type)) {
          throw new DetectorDefinitionError(
            file,
            lineNo,
            `@param ${m[1]}: type ${m[2]} is not one of ${PARAM_TYPES.join(', ')}`,
          );
        }
        if (out.params.some((p) => p.name === m[1])) {
          throw new DetectorDefinitionError(file, lineNo, `@param ${m[1]} declared twice`);
        }
        let value: ParamValue;
        try {
          value = parseParamValue(m[1]!, type, m[3]!);
        } catch (e) {
          throw new DetectorDefinitionError(file, lineNo, (e as Error).message);
        }
        out.params.push({
          name: m[1]!,
          type,
          defaultText: m[3]!,
          default: value,
          description: (m[4] ?? '').trim(),
        });
        break;
      }
      default:
        // Unknown tags are allowed (future use), but not silently misspelled core ones.
        if (['params', 'parameter', 'titel', 'desc', 'require', 'needs'].includes(name)) {
          throw new DetectorDefinitionError(file, lineNo, `unknown tag @${name}`);
        }
    }
  }
  return out;
}

const DURATION_UNITS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9 };

/**
 * Parses a parameter value given as text (header default, or `--param
 * id.name=value`). INTEGER/BIGINT take integers; parameters whose name ends in
 * `_ns` also take a duration with a unit ('10ms', '1.5s', '250us', '100ns').
 * VARCHAR takes text, optionally 'quoted'. BOOLEAN takes true/false/1/0.
 */
export function parseParamValue(name: string, type: ParamType, text: string): ParamValue {
  const t = text.trim();
  switch (type) {
    case 'INTEGER':
    case 'BIGINT': {
      if (/^[-+]?\d+$/.test(t)) {
        const v = BigInt(t);
        if (type === 'INTEGER' && (v > 2147483647n || v < -2147483648n)) {
          throw new Error(`${name}: ${t} does not fit an INTEGER`);
        }
        return v;
      }
      const d = /^([-+]?\d+(?:\.\d+)?)\s*(ns|us|µs|ms|s)$/.exec(t);
      if (d && name.endsWith('_ns')) {
        const ns = Number(d[1]) * DURATION_UNITS[d[2]!]!;
        if (!Number.isFinite(ns)) throw new Error(`${name}: bad duration ${t}`);
        return BigInt(Math.round(ns));
      }
      throw new Error(
        `${name}: expected an integer${name.endsWith('_ns') ? ' or a duration like 10ms' : ''}, got '${t}'`,
      );
    }
    case 'DOUBLE': {
      const v = Number(t);
      if (t === '' || !Number.isFinite(v)) throw new Error(`${name}: expected a number, got '${t}'`);
      return v;
    }
    case 'BOOLEAN':
      if (/^(true|1|yes)$/i.test(t)) return true;
      if (/^(false|0|no)$/i.test(t)) return false;
      throw new Error(`${name}: expected true or false, got '${t}'`);
    case 'VARCHAR':
      return /^'.*'$/s.test(t) ? t.slice(1, -1).replace(/''/g, "'") : t;
  }
}

/** SQL text with comments and string literals blanked (same length, same lines). */
export function blankCommentsAndStrings(sql: string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      while (i < sql.length && sql[i] !== '\n') {
        out += ' ';
        i++;
      }
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      const stop = end < 0 ? sql.length : end + 2;
      for (; i < stop; i++) out += sql[i] === '\n' ? '\n' : ' ';
    } else if (c === "'" || c === '"') {
      out += c;
      i++;
      while (i < sql.length) {
        if (sql[i] === c && sql[i + 1] === c) {
          out += '  ';
          i += 2;
        } else if (sql[i] === c) {
          break;
        } else {
          out += sql[i] === '\n' ? '\n' : ' ';
          i++;
        }
      }
      if (i < sql.length) {
        out += c;
        i++;
      }
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Names of the `$name` parameters a statement uses. */
export function referencedParams(sql: string): string[] {
  const code = blankCommentsAndStrings(sql);
  const names = new Set<string>();
  for (const m of code.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)) names.add(m[1]!);
  return [...names];
}

function lineOf(text: string, index: number): number {
  let n = 1;
  for (let i = 0; i < index && i < text.length; i++) if (text[i] === '\n') n++;
  return n;
}

/** Checks one SELECT: a single statement, only declared parameters. */
function validateStatement(sql: string, file: string, params: DetectorParam[]): void {
  const code = blankCommentsAndStrings(sql);
  if (code.trim() === '') throw new DetectorDefinitionError(file, null, 'no SQL statement');
  const body = code.replace(/;\s*$/, '');
  const semi = body.indexOf(';');
  if (semi >= 0) {
    throw new DetectorDefinitionError(
      file,
      lineOf(code, semi),
      'more than one statement (a detector is ONE SELECT; put shared macros in a lib file)',
    );
  }
  if (!/^\s*(WITH|SELECT|FROM|\()/i.test(body)) {
    throw new DetectorDefinitionError(file, null, 'the statement must be a SELECT (or WITH ... SELECT)');
  }
  const declared = new Set(params.map((p) => p.name));
  for (const m of code.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)) {
    if (!declared.has(m[1]!)) {
      throw new DetectorDefinitionError(
        file,
        lineOf(code, m.index ?? 0),
        `$${m[1]} is used but not declared with an @param line`,
      );
    }
  }
}

/** Loads and validates one detector file (and its summary companion). */
export async function loadDetectorFile(file: string, builtin: boolean): Promise<DetectorDef> {
  const sql = await readFile(file, 'utf8');
  const stem = basename(file).replace(/\.sql$/, '');
  const header = parseDetectorHeader(sql, file);
  const id = header.id ?? stem;
  if (!/^[a-z][a-z0-9_]*$/.test(id)) {
    throw new DetectorDefinitionError(file, null, `detector id '${id}' must match [a-z][a-z0-9_]*`);
  }
  validateStatement(sql, file, header.params);
  const summaryFile = join(dirname(file), `${stem}.summary.sql`);
  let summarySql: string | null = null;
  if (existsSync(summaryFile)) {
    summarySql = await readFile(summaryFile, 'utf8');
    validateStatement(summarySql, summaryFile, header.params);
  }
  const metricsFile = join(dirname(file), `${stem}.metrics.sql`);
  let metricsSql: string | null = null;
  if (existsSync(metricsFile)) {
    metricsSql = await readFile(metricsFile, 'utf8');
    validateStatement(metricsSql, metricsFile, header.params);
  }
  const samplesFile = join(dirname(file), `${stem}.samples.sql`);
  let samplesSql: string | null = null;
  if (existsSync(samplesFile)) {
    samplesSql = await readFile(samplesFile, 'utf8');
    validateStatement(samplesSql, samplesFile, header.params);
  }
  return {
    id,
    title: header.title ?? id,
    description: header.description ?? '',
    params: header.params,
    file,
    sql,
    summaryFile: summarySql != null ? summaryFile : null,
    summarySql,
    metricsFile: metricsSql != null ? metricsFile : null,
    metricsSql,
    samplesFile: samplesSql != null ? samplesFile : null,
    samplesSql,
    requires: header.requires,
    impact: header.impact ?? '',
    severityRule: header.severityRule ?? '',
    rank: header.rank ?? 'impact',
    builtin,
  };
}

async function detectorFilesIn(dir: string): Promise<string[]> {
  const st = await stat(dir).catch(() => null);
  if (!st || !st.isDirectory()) throw new Error(`detector directory not found: ${dir}`);
  const names = await readdir(dir);
  return names
    .filter(
      (n) =>
        n.endsWith('.sql') &&
        !n.endsWith('.summary.sql') &&
        !n.endsWith('.metrics.sql') &&
        !n.endsWith('.samples.sql') &&
        !n.startsWith('_'),
    )
    .sort()
    .map((n) => join(dir, n));
}

async function detectorsIn(dir: string, builtin = false): Promise<DetectorDef[]> {
  const out: DetectorDef[] = [];
  for (const file of await detectorFilesIn(dir)) out.push(await loadDetectorFile(file, builtin));
  return out;
}

let builtinLoaded: Promise<DetectorDef[]> | null = null;

/**
 * The built-in detectors, read and validated once per process: they ship
 * with the program, and reading them cost every upload 5-13 ms (36 on the
 * first). User detectors are still read on every run (their directory
 * changes while the server runs; user_detectors.ts stamps it).
 */
function builtinDetectors(): Promise<DetectorDef[]> {
  if (!builtinLoaded) {
    builtinLoaded = detectorsIn(BUILTIN_DETECTOR_DIR, true);
    // A failed read is not cached: the next run reports it again.
    builtinLoaded.catch(() => {
      builtinLoaded = null;
    });
  }
  return builtinLoaded;
}

/**
 * All detectors: the built-in ones, then those of `extraDirs` in order.
 * Two detectors with the same id are an error (rename the file or set @id).
 */
export async function loadDetectors(extraDirs: readonly string[] = []): Promise<DetectorDef[]> {
  const out: DetectorDef[] = [];
  const byId = new Map<string, DetectorDef>();
  const dirs: [string, boolean][] = [
    [BUILTIN_DETECTOR_DIR, true],
    ...extraDirs.map((d) => [resolve(d), false] as [string, boolean]),
  ];
  const seenDirs = new Set<string>();
  for (const [dir, builtin] of dirs) {
    if (seenDirs.has(dir)) continue;
    seenDirs.add(dir);
    for (const def of builtin ? await builtinDetectors() : await detectorsIn(dir)) {
      const file = def.file;
      const prev = byId.get(def.id);
      if (prev) {
        throw new DetectorDefinitionError(file, null, `detector id '${def.id}' is already defined by ${prev.file}`);
      }
      byId.set(def.id, def);
      out.push(def);
    }
  }
  return out;
}

export function detectorInfo(d: DetectorDef): DetectorInfo {
  return {
    id: d.id,
    title: d.title,
    description: d.description,
    file: d.file,
    builtin: d.builtin,
    hasSummary: d.summarySql != null,
    params: d.params.map((p) => ({
      name: p.name,
      type: p.type,
      default: p.defaultText,
      description: p.description,
    })),
    requires: d.requires.map((g) => g.join('|')),
    impact: d.impact,
    severity_rule: d.severityRule,
    rank: d.rank,
  };
}

/** Detectors with their parameters and defaults (for `stallscope detectors`). */
export async function listDetectors(extraDirs: readonly string[] = []): Promise<DetectorInfo[]> {
  return (await loadDetectors(extraDirs)).map(detectorInfo);
}

/**
 * Parameter values for one detector: defaults overridden by `overrides`
 * ('id.name' -> text, as given on the command line). Throws on an unknown
 * parameter of this detector or a value that does not parse.
 */
export function resolveParams(det: DetectorDef, overrides: Record<string, string> = {}): Record<string, ParamValue> {
  const out: Record<string, ParamValue> = {};
  for (const p of det.params) out[p.name] = p.default;
  for (const [key, text] of Object.entries(overrides)) {
    const dot = key.indexOf('.');
    if (dot < 0) throw new Error(`parameter '${key}' must be written as detector.name`);
    if (key.slice(0, dot) !== det.id) continue;
    let name = key.slice(dot + 1);
    let valueText = text;
    let p = det.params.find((q) => q.name === name);
    // 'warn_ms=5' for a 'warn_ns' parameter: the unit in the name applies to the value.
    const unitName = /^(.*)_(ms|us|s)$/.exec(name);
    if (!p && unitName && /^[-+]?\d+(\.\d+)?$/.test(text.trim())) {
      const q = det.params.find((x) => x.name === `${unitName[1]}_ns`);
      if (q) {
        p = q;
        name = q.name;
        valueText = `${text.trim()}${unitName[2]}`;
      }
    }
    if (!p) {
      const known = det.params.map((q) => q.name).join(', ') || 'none';
      throw new Error(`detector ${det.id} has no parameter '${name}' (parameters: ${known})`);
    }
    out[name] = parseParamValue(`${det.id}.${name}`, p.type, valueText);
  }
  return out;
}

/**
 * What the built-in detectors' output depends on besides the model: the
 * text of every file under queries/detectors (detectors, summaries, macros),
 * as a sha256. A findings cache made under another stamp is stale (an
 * upgrade changed a detector or added one).
 */
export async function builtinDetectorsStamp(): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const name of (await readdir(dir)).sort()) {
      const full = join(dir, name);
      if ((await stat(full)).isDirectory()) await walk(full, `${rel}${name}/`);
      else if (name.endsWith('.sql'))
        hash
          .update(`${rel}${name}\0`)
          .update(await readFile(full))
          .update('\0');
    }
  };
  await walk(BUILTIN_DETECTOR_DIR, '');
  return hash.digest('hex');
}
