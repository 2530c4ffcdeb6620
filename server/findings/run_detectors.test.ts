/**
 * The detector registry and runner: header parsing, parameter handling,
 * user detector directories, error reporting, ordering, JSON contract, report.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openDuckDb, toJson } from '../engine/engine.ts';
import {
  DetectorDefinitionError,
  listDetectors,
  loadDetectors,
  parseDetectorHeader,
  parseParamValue,
  referencedParams,
  resolveParams,
} from './detector_registry.ts';
import { findingToJson, reachesSeverity } from './finding.ts';
import { formatDuration, formatReport, formatTs } from './format_report.ts';
import { DetectorRunError, perRunMacroNames, runDetectors } from './run_detectors.ts';

const SCHEMA = readFileSync(new URL('../../queries/schema.sql', import.meta.url), 'utf8');
const BUILTIN = ['direct_reclaim_stall', 'kswapd_escalation', 'migration_pingpong', 'reclaim_writeback', 'shrinker_blocking'];

let db: Engine;
let dir: string;

const USER_DETECTOR = `-- my_long_slices: any slice longer than a threshold
-- @title Long slices
-- @description Slices of a category lasting at least min_ns.
-- @param min_ns BIGINT 5000000 -- report slices at least this long
-- @param category VARCHAR 'shrinker' -- slice category to look at
SELECT
  CASE WHEN dur >= 2 * $min_ns THEN 'critical' ELSE 'warn' END AS severity,
  ts, dur, cpu, utid,
  name || ' took ' || ss_fmt_dur(dur) AS title,
  {'name': name, 'missing': NULL::VARCHAR} AS "values",
  [begin_id, end_id] AS event_ids
FROM slice
WHERE category = $category AND dur >= $min_ns;
`;

beforeAll(async () => {
  db = await openDuckDb(':memory:');
  await db.exec(SCHEMA);
  await db.exec(`
    INSERT INTO thread (utid, tid, name) VALUES (1, 95, 'kswapd0'), (2, 4242, 'dd');
    INSERT INTO slice VALUES
      (10, 9007199254740993, 6000000, 1, 0, 'shrinker', 'super_cache_scan', 0, 10, 11),
      (20, 9007199254740000, 12000000, 2, 1, 'shrinker', 'ext4_es_scan', 0, 20, 21),
      (30, 100, 1000000, 2, 1, 'shrinker', 'short', 0, 30, 31);
  `);
  dir = mkdtempSync(join(tmpdir(), 'stallscope-detectors-'));
  writeFileSync(join(dir, 'my_long_slices.sql'), USER_DETECTOR);
  writeFileSync(join(dir, '_ignored.sql'), 'this is not a detector');
});

afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('detector header', () => {
  it('parses @id/@title/@description/@param with typed defaults', () => {
    const h = parseDetectorHeader(USER_DETECTOR, 'x.sql');
    expect(h).toEqual({
      id: null,
      title: 'Long slices',
      description: 'Slices of a category lasting at least min_ns.',
      params: [
        { name: 'min_ns', type: 'BIGINT', defaultText: '5000000', default: 5000000n, description: 'report slices at least this long' },
        { name: 'category', type: 'VARCHAR', defaultText: "'shrinker'", default: 'shrinker', description: 'slice category to look at' },
      ],
    });
  });

  it('rejects a malformed @param line with file and line', () => {
    expect(() => parseDetectorHeader('-- x\n-- @param warn\nSELECT 1', 'bad.sql')).toThrow(/bad\.sql:2: bad @param line/);
    expect(() => parseDetectorHeader('-- @param x FLOAT8 1\nSELECT 1', 'bad.sql')).toThrow(/bad\.sql:1: @param x: type FLOAT8/);
  });

  it('parses values: integers, durations for _ns params, booleans, quoted text', () => {
    expect(parseParamValue('warn_ns', 'BIGINT', '10ms')).toBe(10_000_000n);
    expect(parseParamValue('warn_ns', 'BIGINT', '1.5s')).toBe(1_500_000_000n);
    expect(parseParamValue('warn_ns', 'BIGINT', '250us')).toBe(250_000n);
    expect(parseParamValue('p', 'INTEGER', '6')).toBe(6n);
    expect(() => parseParamValue('p', 'INTEGER', '6ms')).toThrow(/expected an integer/);
    expect(parseParamValue('f', 'DOUBLE', '0.5')).toBe(0.5);
    expect(parseParamValue('b', 'BOOLEAN', 'false')).toBe(false);
    expect(parseParamValue('s', 'VARCHAR', "'it''s'")).toBe("it's");
  });

  it('finds $params outside comments and strings', () => {
    expect(referencedParams("SELECT $a, '$b' -- $c\n, $d_e /* $f */")).toEqual(['a', 'd_e']);
  });
});

describe('registry', () => {
  it('lists the built-in detectors, each with a title, description and params', async () => {
    const list = await listDetectors();
    expect(list.map((d) => d.id)).toEqual(BUILTIN);
    for (const d of list) {
      expect(d.title.length).toBeGreaterThan(5);
      expect(d.description.length).toBeGreaterThan(20);
      expect(d.params.length).toBeGreaterThan(0);
      for (const p of d.params) expect(p.description.length).toBeGreaterThan(5);
    }
  });

  it('adds user detectors from extra directories, ignoring _files', async () => {
    const list = await listDetectors([dir]);
    expect(list.map((d) => d.id)).toEqual([...BUILTIN, 'my_long_slices']);
    expect(list.at(-1)).toMatchObject({ builtin: false, hasSummary: false, params: [{ name: 'min_ns', default: '5000000' }, { name: 'category', default: "'shrinker'" }] });
  });

  it('rejects a duplicate id, an undeclared $param and two statements', async () => {
    const d2 = mkdtempSync(join(tmpdir(), 'stallscope-bad-'));
    try {
      writeFileSync(join(d2, 'shrinker_blocking.sql'), 'SELECT 1');
      await expect(loadDetectors([d2])).rejects.toThrow(/detector id 'shrinker_blocking' is already defined by/);
      rmSync(join(d2, 'shrinker_blocking.sql'));
      writeFileSync(join(d2, 'undeclared.sql'), '-- @param a INTEGER 1\nSELECT $a,\n  $b');
      await expect(loadDetectors([d2])).rejects.toThrow(/undeclared\.sql:3: \$b is used but not declared/);
      rmSync(join(d2, 'undeclared.sql'));
      writeFileSync(join(d2, 'two.sql'), 'SELECT 1;\nSELECT 2;');
      await expect(loadDetectors([d2])).rejects.toBeInstanceOf(DetectorDefinitionError);
    } finally {
      rmSync(d2, { recursive: true, force: true });
    }
  });

  it('resolves overrides, including warn_ms=5 for a warn_ns parameter', async () => {
    const [det] = (await loadDetectors()).filter((d) => d.id === 'shrinker_blocking');
    expect(resolveParams(det!, { 'shrinker_blocking.warn_ms': '5', 'other.x': '1' })).toEqual({ warn_ns: 5_000_000n, critical_ns: 100_000_000n });
    expect(() => resolveParams(det!, { 'shrinker_blocking.nope': '1' })).toThrow(/has no parameter 'nope' \(parameters: warn_ns, critical_ns\)/);
  });
});

describe('runDetectors', () => {
  it('runs a user detector alongside, joins thread, orders by severity then ts, drops NULL values', async () => {
    const r = await runDetectors(db, { detectors: ['my_long_slices'], extraDirs: [dir] });
    expect(r.findings).toEqual([
      {
        detector: 'my_long_slices', kind: 'my_long_slices', severity: 'critical',
        ts_ns: 9007199254740000n, dur_ns: 12_000_000n, cpu: 1, tid: 4242, comm: 'dd', utid: 2,
        title: 'ext4_es_scan took 12.0 ms', values: { name: 'ext4_es_scan' }, event_ids: [20n, 21n],
      },
      {
        detector: 'my_long_slices', kind: 'my_long_slices', severity: 'warn',
        ts_ns: 9007199254740993n, dur_ns: 6_000_000n, cpu: 0, tid: 95, comm: 'kswapd0', utid: 1,
        title: 'super_cache_scan took 6.0 ms', values: { name: 'super_cache_scan' }, event_ids: [10n, 11n],
      },
    ]);
    expect(Object.keys(r.timings)).toEqual(['my_long_slices']);
    // ts past 2^53 stays exact in the JSON contract
    expect(toJson(findingToJson(r.findings[1]!))).toBe(
      '{"detector":"my_long_slices","kind":"my_long_slices","severity":"warn","ts_ns":9007199254740993,"dur_ns":6000000,' +
        '"cpu":0,"tid":95,"comm":"kswapd0","utid":1,"title":"super_cache_scan took 6.0 ms","values":{"name":"super_cache_scan"},"event_ids":[10,11]}',
    );
    expect(reachesSeverity(r.findings, 'critical')).toBe(true);
  });

  it('applies parameter overrides', async () => {
    const r = await runDetectors(db, {
      detectors: ['my_long_slices'],
      extraDirs: [dir],
      params: { 'my_long_slices.min_ns': '1ms', 'my_long_slices.category': 'shrinker' },
    });
    expect(r.findings.map((f) => [f.severity, f.title])).toEqual([
      ['critical', 'ext4_es_scan took 12.0 ms'],
      ['critical', 'super_cache_scan took 6.0 ms'],
      ['warn', 'short took 1.0 ms'],
    ]);
  });

  it('rejects unknown detectors and parameters before running', async () => {
    await expect(runDetectors(db, { detectors: ['nope'] })).rejects.toThrow(/unknown detector 'nope'/);
    await expect(runDetectors(db, { params: { 'nope.x': '1' } })).rejects.toThrow(/unknown detector 'nope'/);
    await expect(runDetectors(db, { params: { 'shrinker_blocking.warn_ns': 'soon' } })).rejects.toThrow(/expected an integer or a duration/);
  });

  it('names the detector file and line of a SQL error', async () => {
    const d3 = mkdtempSync(join(tmpdir(), 'stallscope-err-'));
    try {
      writeFileSync(join(d3, 'broken.sql'), '-- @title Broken\nSELECT\n  no_such_column AS severity\nFROM slice');
      const err = await runDetectors(db, { detectors: ['broken'], extraDirs: [d3] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DetectorRunError);
      expect((err as DetectorRunError).line).toBe(3);
      expect((err as Error).message).toMatch(/^detector broken \(.*broken\.sql:3\): Binder Error/);
      writeFileSync(join(d3, 'broken.sql'), "SELECT 'bad' AS severity, 1 AS ts, 0 AS dur, 0 AS cpu, 0 AS utid, 't' AS title, NULL AS \"values\", [] AS event_ids");
      await expect(runDetectors(db, { detectors: ['broken'], extraDirs: [d3] })).rejects.toThrow(/row 1: severity must be/);
      writeFileSync(join(d3, 'broken.sql'), 'SELECT 1 AS ts');
      await expect(runDetectors(db, { detectors: ['broken'], extraDirs: [d3] })).rejects.toThrow(/lacks column\(s\) severity, dur, cpu, utid, title, values, event_ids/);
    } finally {
      rmSync(d3, { recursive: true, force: true });
    }
  });

  it('runs every built-in detector on an empty trace without findings, also read-only', async () => {
    const r = await runDetectors(db, {});
    expect(r.findings.filter((f) => f.detector !== 'my_long_slices')).toEqual([]);
    expect(Object.keys(r.timings).filter((k) => !k.endsWith('.summary'))).toEqual(BUILTIN);
    const path = join(dir, 'ro.duckdb');
    const w = await openDuckDb(path);
    await w.exec(SCHEMA);
    w.close();
    const ro = await openDuckDb(path, { readOnly: true });
    try {
      expect((await runDetectors(ro, {})).findings).toEqual([]);
    } finally {
      ro.close();
    }
  });
});

describe('per-run table macros', () => {
  it('finds the @per_run macros of lib/macros.sql', () => {
    const macros = readFileSync(new URL('../../queries/detectors/lib/macros.sql', import.meta.url), 'utf8');
    expect(perRunMacroNames(macros).sort()).toEqual(['ss_reclaim_passes', 'ss_reclaim_windows']);
    expect(perRunMacroNames('-- @per_run\nCREATE OR REPLACE TEMP MACRO a_b() AS TABLE SELECT 1;\nCREATE TEMP MACRO c() AS TABLE SELECT 2;')).toEqual(['a_b']);
  });

  it('computes them for one run only: the next run sees new rows, no TEMP table is left', async () => {
    const e = await openDuckDb(':memory:', { threads: 2 });
    try {
      await e.exec(SCHEMA);
      const windows = async () => (await runDetectors(e, { detectors: ['direct_reclaim_stall'] })).summaries.direct_reclaim_stall!;
      expect(await windows()).toEqual([]);
      await e.exec(`INSERT INTO thread (utid, tid, name) VALUES (1, 10, 'dd');
        INSERT INTO mm_vmscan_direct_reclaim_begin (id, ts, cpu, utid, event) VALUES (1, 1000, 0, 1, 'mm_vmscan_direct_reclaim_begin');
        INSERT INTO mm_vmscan_direct_reclaim_end (id, ts, cpu, utid, event, nr_reclaimed) VALUES (2, 5000, 0, 1, 'mm_vmscan_direct_reclaim_end', 32)`);
      const rows = await windows();
      expect(rows.map((r) => [r.kind, r.stalls, r.max_ns])).toEqual([['direct', 1n, 4000n]]);
      const left = await e.query(`SELECT table_name FROM duckdb_tables() WHERE table_name LIKE '_ss_run_%'`);
      expect(left).toEqual([]);
      // the macro computes again outside a run
      expect((await e.query('SELECT count(*) AS n FROM ss_reclaim_windows()'))[0]!.n).toBe(1n);
    } finally {
      e.close();
    }
  });
});

describe('format_report', () => {
  it('formats durations and exact timestamps', () => {
    expect(formatDuration(850n)).toBe('850 ns');
    expect(formatDuration(12_345n)).toBe('12.3 us');
    expect(formatDuration(412_500_001n)).toBe('412.5 ms');
    expect(formatDuration(2_345_000_000n)).toBe('2.35 s');
    expect(formatTs(9007199254740993n)).toBe('9007199.254740993');
  });

  it('groups findings by detector, worst first, with exact ns and values', async () => {
    const r = await runDetectors(db, { detectors: ['my_long_slices'], extraDirs: [dir] });
    const text = formatReport(r, { name: 'x.dat', format: 'trace_dat', cpus: 2, eventsTotal: 10 });
    expect(text).toBe(
      [
        'stallscope report: x.dat (trace_dat, 2 CPUs, 10 events)',
        '2 findings: 1 critical, 1 warn',
        '',
        '== my_long_slices: 2 findings (1 critical, 1 warn)',
        '  CRITICAL 9007199.254740000 s    12.0 ms  cpu1  dd[4242]',
        '      ext4_es_scan took 12.0 ms',
        '      ts=9007199254740000 ns  dur=12000000 ns  events=20,21',
        '      name=ext4_es_scan',
        '  WARN     9007199.254740993 s     6.0 ms  cpu0  kswapd0[95]',
        '      super_cache_scan took 6.0 ms',
        '      ts=9007199254740993 ns  dur=6000000 ns  events=10,11',
        '      name=super_cache_scan',
        '',
      ].join('\n'),
    );
  });
});
