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
import { findingId, findingToJson, reachesSeverity } from './finding.ts';
import { formatDuration, formatReport, formatTs } from './format_report.ts';
import { DetectorRunError, perRunMacroDefinitions, perRunMacroNames, runDetectors } from './run_detectors.ts';

const SCHEMA = readFileSync(new URL('../../queries/schema.sql', import.meta.url), 'utf8');
const BUILTIN = [
  'direct_reclaim_stall',
  'dirty_throttled',
  'io_latency',
  'kswapd_escalation',
  'migration_pingpong',
  'oom_kill',
  'reclaim_throttled',
  'reclaim_writeback',
  'shrinker_blocking',
];

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
      requires: [],
      impact: null,
      severityRule: null,
      rank: null,
      params: [
        {
          name: 'min_ns',
          type: 'BIGINT',
          defaultText: '5000000',
          default: 5000000n,
          description: 'report slices at least this long',
        },
        {
          name: 'category',
          type: 'VARCHAR',
          defaultText: "'shrinker'",
          default: 'shrinker',
          description: 'slice category to look at',
        },
      ],
    });
  });

  it('parses @requires (alternatives with |), @impact and @severity', () => {
    const h = parseDetectorHeader(
      '-- @requires vmscan:a|vmscan:b sched:c\n-- @requires sched:d\n-- @impact the stall\n-- @severity critical at 100 ms;\n-- @severity warn at 1 ms\nSELECT 1',
      'x.sql',
    );
    expect(h.requires).toEqual([['vmscan:a', 'vmscan:b'], ['sched:c'], ['sched:d']]);
    expect(h.impact).toBe('the stall');
    expect(h.severityRule).toBe('critical at 100 ms; warn at 1 ms');
    expect(() => parseDetectorHeader('-- @requires mm_shrink_slab_start\nSELECT 1', 'bad.sql')).toThrow(
      /bad\.sql:1: @requires: 'mm_shrink_slab_start' is not a tracepoint written system:event/,
    );
  });

  it('rejects a malformed @param line with file and line', () => {
    expect(() => parseDetectorHeader('-- x\n-- @param warn\nSELECT 1', 'bad.sql')).toThrow(
      /bad\.sql:2: bad @param line/,
    );
    expect(() => parseDetectorHeader('-- @param x FLOAT8 1\nSELECT 1', 'bad.sql')).toThrow(
      /bad\.sql:1: @param x: type FLOAT8/,
    );
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
  it('lists the built-in detectors, each with a title, description, params, needs, impact and severity rule', async () => {
    const list = await listDetectors();
    expect(list.map((d) => d.id)).toEqual(BUILTIN);
    for (const d of list) {
      expect(d.title.length).toBeGreaterThan(5);
      expect(d.description.length).toBeGreaterThan(20);
      expect(d.params.length).toBeGreaterThan(0);
      expect(d.requires.length).toBeGreaterThan(0);
      expect(d.impact.length).toBeGreaterThan(20);
      expect(d.severity_rule).toMatch(/critical|warn/);
      expect(d.hasSummary).toBe(true);
      for (const p of d.params) expect(p.description.length).toBeGreaterThan(5);
    }
  });

  it('adds user detectors from extra directories, ignoring _files', async () => {
    const list = await listDetectors([dir]);
    expect(list.map((d) => d.id)).toEqual([...BUILTIN, 'my_long_slices']);
    expect(list.at(-1)).toMatchObject({
      builtin: false,
      hasSummary: false,
      params: [
        { name: 'min_ns', default: '5000000' },
        { name: 'category', default: "'shrinker'" },
      ],
    });
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
    expect(resolveParams(det!, { 'shrinker_blocking.warn_ms': '5', 'other.x': '1' })).toEqual({
      warn_ns: 5_000_000n,
      critical_ns: 100_000_000n,
    });
    expect(() => resolveParams(det!, { 'shrinker_blocking.nope': '1' })).toThrow(
      /has no parameter 'nope' \(parameters: warn_ns, critical_ns\)/,
    );
  });
});

describe('runDetectors', () => {
  it('runs a user detector alongside, joins thread, ranks by severity then impact, drops NULL values', async () => {
    const r = await runDetectors(db, { detectors: ['my_long_slices'], extraDirs: [dir] });
    const ids = r.findings.map((f) => f.id);
    expect(r.findings).toEqual([
      {
        detector: 'my_long_slices',
        kind: 'my_long_slices',
        severity: 'critical',
        ts_ns: 9007199254740000n,
        dur_ns: 12_000_000n,
        cpu: 1,
        tid: 4242,
        comm: 'dd',
        utid: 2,
        title: 'ext4_es_scan took 12.0 ms',
        values: { name: 'ext4_es_scan' },
        event_ids: [20n, 21n],
        // a detector without an impact column is rated by its duration
        id: findingId({
          detector: 'my_long_slices',
          kind: 'my_long_slices',
          ts_ns: 9007199254740000n,
          utid: 2,
          event_ids: [20n],
        }),
        impact_ns: 12_000_000n,
        rank: 1,
        parent_id: null,
      },
      {
        detector: 'my_long_slices',
        kind: 'my_long_slices',
        severity: 'warn',
        ts_ns: 9007199254740993n,
        dur_ns: 6_000_000n,
        cpu: 0,
        tid: 95,
        comm: 'kswapd0',
        utid: 1,
        title: 'super_cache_scan took 6.0 ms',
        values: { name: 'super_cache_scan' },
        event_ids: [10n, 11n],
        id: ids[1],
        impact_ns: 6_000_000n,
        rank: 2,
        parent_id: null,
      },
    ]);
    // stable ids: the same with other detectors run alongside, or in another order
    const again = await runDetectors(db, { extraDirs: [dir] });
    expect(again.findings.filter((f) => f.detector === 'my_long_slices').map((f) => f.id)).toEqual(ids);
    expect(Number.isSafeInteger(ids[1]) && ids[1]! < 2 ** 48).toBe(true);
    expect(Object.keys(r.timings)).toEqual(['my_long_slices']);
    expect(r.detectors).toMatchObject([
      { id: 'my_long_slices', status: 'ok', counts: { critical: 1, warn: 1, info: 0 } },
    ]);
    // ts past 2^53 stays exact in the JSON contract; new keys come after the old ones
    expect(toJson(findingToJson(r.findings[1]!))).toBe(
      '{"detector":"my_long_slices","kind":"my_long_slices","severity":"warn","ts_ns":9007199254740993,"dur_ns":6000000,' +
        '"cpu":0,"tid":95,"comm":"kswapd0","utid":1,"title":"super_cache_scan took 6.0 ms","values":{"name":"super_cache_scan"},"event_ids":[10,11],' +
        `"id":${ids[1]},"impact_ns":6000000,"rank":2,"parent_id":null}`,
    );
    expect(reachesSeverity(r.findings, 'critical')).toBe(true);
  });

  it('ranks the findings of a `@rank loss` detector before every finding of their severity, whatever the impacts', async () => {
    // A user's detector declaring its findings losses: the 6 ms kswapd0 slice
    // as a warn costing 1 ns. By impact it would rank after my_long_slices'
    // 6 ms warn; as a loss it ranks before it, after the critical.
    const losses = mkdtempSync(join(tmpdir(), 'stallscope-detectors-'));
    try {
      writeFileSync(
        join(losses, 'my_lost_slices.sql'),
        `-- my_lost_slices: a slice counted as something lost
-- @title Lost slices
-- @rank loss -- what it reports is not a duration
SELECT 'warn' AS severity, ts, dur, cpu, utid, 'lost ' || name AS title, {'name': name} AS "values",
  [begin_id] AS event_ids, 1::BIGINT AS impact
FROM slice WHERE name = 'super_cache_scan'
`,
      );
      const r = await runDetectors(db, { detectors: ['my_long_slices', 'my_lost_slices'], extraDirs: [dir, losses] });
      expect(r.findings.map((f) => [f.rank, f.detector, f.severity, f.impact_ns])).toEqual([
        [1, 'my_long_slices', 'critical', 12_000_000n],
        [2, 'my_lost_slices', 'warn', 1n],
        [3, 'my_long_slices', 'warn', 6_000_000n],
      ]);
      expect(r.detectors.map((d) => [d.id, d.rank])).toEqual([
        ['my_long_slices', 'impact'],
        ['my_lost_slices', 'loss'],
      ]);
      // The built-in that declares it.
      expect((await loadDetectors()).filter((d) => d.rank === 'loss').map((d) => d.id)).toEqual(['oom_kill']);
    } finally {
      rmSync(losses, { recursive: true, force: true });
    }
    expect(() => parseDetectorHeader('-- @rank sometimes\nSELECT 1', 'x.sql')).toThrow(
      /x\.sql:1: @rank: 'sometimes' is not one of impact, loss/,
    );
  });

  it('names the threads of its findings once, when every detector has run and before their summaries', async () => {
    const calls: number[][] = [];
    const r = await runDetectors(db, {
      detectors: ['my_long_slices'],
      extraDirs: [dir],
      onFindingThreads: (utids) => calls.push([...utids].sort()),
    });
    // the shrinker slices of at least min_ns (5 ms) are 10 (utid 1) and 20 (utid 2): the INSERT above
    expect(calls).toEqual([[1, 2]]);
    expect(r.findings.map((f) => f.utid).sort()).toEqual([1, 2]);
    // before the summaries: a summary that fails comes after the call
    const broken = mkdtempSync(join(tmpdir(), 'stallscope-detectors-'));
    try {
      writeFileSync(join(broken, 'my_long_slices.sql'), USER_DETECTOR);
      writeFileSync(join(broken, 'my_long_slices.summary.sql'), 'SELECT no_such_column FROM slice');
      const before: number[][] = [];
      await expect(
        runDetectors(db, {
          detectors: ['my_long_slices'],
          extraDirs: [broken],
          onFindingThreads: (utids) => before.push([...utids].sort()),
        }),
      ).rejects.toThrow(/my_long_slices\.summary\.sql/);
      expect(before).toEqual([[1, 2]]);
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
    // no findings: called with no threads
    const none: number[][] = [];
    await runDetectors(db, {
      detectors: ['my_long_slices'],
      extraDirs: [dir],
      params: { 'my_long_slices.min_ns': '1s' },
      onFindingThreads: (utids) => none.push(utids),
    });
    expect(none).toEqual([[]]);
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
    await expect(runDetectors(db, { params: { 'shrinker_blocking.warn_ns': 'soon' } })).rejects.toThrow(
      /expected an integer or a duration/,
    );
  });

  it('names the detector file and line of a SQL error', async () => {
    const d3 = mkdtempSync(join(tmpdir(), 'stallscope-err-'));
    try {
      writeFileSync(join(d3, 'broken.sql'), '-- @title Broken\nSELECT\n  no_such_column AS severity\nFROM slice');
      const err = await runDetectors(db, { detectors: ['broken'], extraDirs: [d3] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DetectorRunError);
      expect((err as DetectorRunError).line).toBe(3);
      expect((err as Error).message).toMatch(/^detector broken \(.*broken\.sql:3\): Binder Error/);
      writeFileSync(
        join(d3, 'broken.sql'),
        "SELECT 'bad' AS severity, 1 AS ts, 0 AS dur, 0 AS cpu, 0 AS utid, 't' AS title, NULL AS \"values\", [] AS event_ids",
      );
      await expect(runDetectors(db, { detectors: ['broken'], extraDirs: [d3] })).rejects.toThrow(
        /row 1: severity must be/,
      );
      writeFileSync(join(d3, 'broken.sql'), 'SELECT 1 AS ts');
      await expect(runDetectors(db, { detectors: ['broken'], extraDirs: [d3] })).rejects.toThrow(
        /lacks column\(s\) severity, dur, cpu, utid, title, values, event_ids/,
      );
    } finally {
      rmSync(d3, { recursive: true, force: true });
    }
  });

  it('says "not seen" for detectors whose tracepoints the trace lacks, also read-only', async () => {
    const r = await runDetectors(db, {});
    expect(r.findings.filter((f) => f.detector !== 'my_long_slices')).toEqual([]);
    // the trace has slices but none of the tracepoints any built-in detector needs: none ran
    expect(Object.keys(r.timings)).toEqual([]);
    // A hand-made model does not list the events its recording enabled (coverage.ts): "not seen", enable if off.
    const OFF = ' if it was off (this trace shows only events that fired)';
    expect(r.detectors.every((d) => !d.enabled_listed)).toBe(true);
    expect(r.detectors.map((d) => [d.id, d.status, d.hint])).toEqual([
      ['direct_reclaim_stall', 'not_traced', `enable vmscan:mm_vmscan_direct_reclaim_begin/end${OFF}`],
      ['dirty_throttled', 'not_traced', `enable writeback:balance_dirty_pages${OFF}`],
      ['io_latency', 'not_traced', `enable block:block_rq_issue, block:block_rq_complete${OFF}`],
      ['kswapd_escalation', 'not_traced', `enable vmscan:mm_vmscan_lru_shrink_inactive${OFF}`],
      ['migration_pingpong', 'not_traced', `enable sched:sched_migrate_task${OFF}`],
      ['oom_kill', 'not_traced', `enable oom:mark_victim${OFF}`],
      ['reclaim_throttled', 'not_traced', `enable vmscan:mm_vmscan_throttled${OFF}`],
      ['reclaim_writeback', 'not_traced', `enable vmscan:mm_vmscan_write_folio${OFF}`],
      ['shrinker_blocking', 'not_traced', `enable vmscan:mm_shrink_slab_start/end${OFF}`],
    ]);
    expect(r.overview.lines.map((l) => [l.status, l.text])).toContainEqual([
      'not_traced',
      `Slow shrinkers: not seen: enable vmscan:mm_shrink_slab_start/end${OFF}`,
    ]);
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
    expect(perRunMacroNames(macros).sort()).toEqual([
      'ss_migration_moves',
      'ss_reclaim_passes',
      'ss_reclaim_windows',
      'ss_shrinker_pairs',
    ]);
    expect(
      perRunMacroNames(
        '-- @per_run\nCREATE OR REPLACE TEMP MACRO a_b() AS TABLE SELECT 1;\nCREATE TEMP MACRO c() AS TABLE SELECT 2;',
      ),
    ).toEqual(['a_b']);
  });

  it("cuts each one's CREATE statement out of the file, up to its own semicolon", () => {
    const sql =
      "-- x\n-- @per_run\nCREATE OR REPLACE TEMP MACRO a() AS TABLE SELECT ';' AS s -- ; not here\n  FROM t;\n" +
      'CREATE TEMP MACRO b() AS TABLE SELECT 2;\n-- @per_run\nCREATE TEMP MACRO c() AS TABLE SELECT 3 /* ; */;\n';
    expect([...perRunMacroDefinitions(sql)]).toEqual([
      ['a', "CREATE OR REPLACE TEMP MACRO a() AS TABLE SELECT ';' AS s -- ; not here\n  FROM t;"],
      ['c', 'CREATE TEMP MACRO c() AS TABLE SELECT 3 /* ; */;'],
    ]);
    const macros = readFileSync(new URL('../../queries/detectors/lib/macros.sql', import.meta.url), 'utf8');
    const defs = perRunMacroDefinitions(macros);
    expect([...defs.keys()].sort()).toEqual(perRunMacroNames(macros).sort());
    // each is one statement: it starts with its CREATE and holds no other
    for (const [name, stmt] of defs) {
      expect(stmt).toMatch(new RegExp(`^CREATE OR REPLACE TEMP MACRO ${name}\\(\\) AS TABLE\\b`));
      expect(stmt.endsWith(';')).toBe(true);
      expect(stmt.match(/\bCREATE\s+(OR\s+REPLACE\s+)?TEMP/g)).toHaveLength(1);
    }
  });

  it('computes them for one run only: the next run sees new rows, no TEMP table is left', async () => {
    const e = await openDuckDb(':memory:', { threads: 2 });
    try {
      await e.exec(SCHEMA);
      const windows = async () =>
        (await runDetectors(e, { detectors: ['direct_reclaim_stall'] })).summaries.direct_reclaim_stall ?? [];
      // no reclaim events yet: not traced, no summary
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

  it('prints the overview, then the findings worst first with id, rank and impact, exact ns and values', async () => {
    const r = await runDetectors(db, { detectors: ['my_long_slices'], extraDirs: [dir] });
    const [a, b] = r.findings.map((f) => f.id);
    const text = formatReport(r, { name: 'x.dat', format: 'trace_dat', cpus: 2, eventsTotal: 10 });
    expect(text).toBe(
      [
        'stallscope report: x.dat (trace_dat, 2 CPUs, 10 events)',
        '2 findings: 1 critical, 1 warn',
        '',
        '-- overview',
        `  [CRITICAL]   Long slices: 2 findings, worst: ext4_es_scan took 12.0 ms  (finding:${a}, 2 findings)`,
        '',
        '-- findings, worst first',
        '  CRITICAL 9007199.254740000 s    12.0 ms  cpu1  dd[4242]  my_long_slices/my_long_slices',
        '      ext4_es_scan took 12.0 ms',
        `      finding:${a}  rank 1  impact 12.0 ms  ts=9007199254740000 ns  dur=12000000 ns  events=20,21`,
        '      name=ext4_es_scan',
        '  WARN     9007199.254740993 s     6.0 ms  cpu0  kswapd0[95]  my_long_slices/my_long_slices',
        '      super_cache_scan took 6.0 ms',
        `      finding:${b}  rank 2  impact 6.0 ms  ts=9007199254740993 ns  dur=6000000 ns  events=10,11`,
        '      name=super_cache_scan',
        '',
      ].join('\n'),
    );
    // --sort time --top 1: the earlier one only
    const top = formatReport(r, {}, { sort: 'time', top: 1 });
    expect(top).toMatch(/-- findings, in time order \(top 1 of 2\)\n {2}CRITICAL 9007199\.254740000/);
    expect(top).toMatch(/\.\.\. 1 more/);
  });
});
