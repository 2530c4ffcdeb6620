/**
 * Fleet analysis on a corpus of 24 real recordings (fixtures/: trace.dat v6
 * and v7, trace-cmd report text, tracefs text, Perfetto, gzip) plus two bad
 * files made here (a trace.dat whose magic is overwritten, a trace.dat cut
 * at 150,000 bytes), labelled by a labels.csv:
 *
 * - `stallscope batch` writes every table; each trace's findings and metrics
 *   equal `stallscope analyze --json` on that file; the bad files are
 *   `failures` rows (stage, a message naming the file and offset) and the
 *   job exits 0;
 * - a rerun analyses nothing it finished (only the two failures again) and
 *   writes the same dataset;
 * - `stallscope fleet --master local[2]` (PySpark) writes the same dataset,
 *   row for row, in the canonical order;
 * - `stallscope fleet-report --by config` on the compare work's pair
 *   (vm.vfs_cache_pressure 100 against 1000, four runs each): the metrics
 *   that must move (super_cache_scan's freed objects and time blocked) with
 *   per-trace values from `trace-cmd report`, their means, change and Welch
 *   t computed here; --fail-on-regression exits 2 naming the blocked time.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openDuckDb } from '../../server/engine/engine.ts';
import { CANONICAL_ORDER, loadSchema } from '../../server/fleet/dataset.ts';
import { FLEET_COMPARE_RUNS, FLEET_OTHER_TRACES } from '../support/fleet/fleet_corpus.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const CLI = fileURLToPath(new URL('../../bin/stallscope.mjs', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'stallscope-fleet-test-'));
const corpus = join(work, 'corpus');
const dataDir = join(work, 'data');
const batchOut = join(work, 'batch');
const sparkOut = join(work, 'spark');
const labelsCsv = join(work, 'labels.csv');

const COMPARE = FLEET_COMPARE_RUNS;
const OTHERS = FLEET_OTHER_TRACES;
const GOOD = [...COMPARE, ...OTHERS];
const base = (f: string) => f.split('/').pop()!;

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

async function readTable(engine: Engine, dir: string, table: string): Promise<Record<string, unknown>[]> {
  return engine.query(
    `SELECT * FROM read_parquet('${join(dir, table, '*.parquet')}') ORDER BY ${CANONICAL_ORDER[table]!.split(', ')
      .map((c) => `"${c}" NULLS FIRST`)
      .join(', ')}`,
  );
}

let engine: Engine;
/** analyze --json of every trace, by trace id (the second test fills it). */
const analyses = new Map<
  string,
  {
    findings: {
      detector: string;
      impact_ns: number;
      severity: string;
      parent_id: number | null;
      comm: string | null;
    }[];
  }
>();
let firstRun: ReturnType<typeof cli>;

beforeAll(async () => {
  mkdirSync(corpus);
  for (const f of GOOD) symlinkSync(join(FIXTURES, f), join(corpus, base(f)));
  const corrupt = readFileSync(join(FIXTURES, 'syscalls.v7.dat'));
  corrupt.write('NOT A TRACE FILE', 0);
  writeFileSync(join(corpus, 'corrupt.v7.dat'), corrupt);
  writeFileSync(
    join(corpus, 'truncated.v7.dat'),
    readFileSync(join(FIXTURES, 'compare/vfs100.2.v7.dat')).subarray(0, 150_000),
  );
  copyFileSync(join(FIXTURES, 'README.md'), join(corpus, 'README.md')); // a side file: not an input
  const lines = ['file,config,iteration,host'];
  for (const f of COMPARE) {
    const [, config, it] = /^compare\/(vfs\d+)\.(\d)\./.exec(f)!;
    lines.push(`${base(f)},${config},${it},vm`);
  }
  for (const f of OTHERS) lines.push(`${base(f)},,,vm`);
  writeFileSync(labelsCsv, `${lines.join('\n')}\n`);
  engine = await openDuckDb(':memory:');
  firstRun = cli(['--data-dir', dataDir, 'batch', corpus, '--out', batchOut, '--labels', labelsCsv, '--jobs', '2']);
}, 600_000);

afterAll(() => {
  engine?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('stallscope batch', () => {
  it('writes every table; the bad files are failures and the job succeeds', async () => {
    expect(firstRun.status, firstRun.stderr).toBe(0);
    expect(firstRun.stderr).toContain('batch: 26 inputs, 0 already analysed, 26 to analyse with 2 job(s)');
    const traces = await readTable(engine, batchOut, 'traces');
    expect(traces.map((t) => base(String(t.file))).sort()).toEqual(GOOD.map(base).sort());
    const failures = await readTable(engine, batchOut, 'failures');
    expect(failures.map((f) => [base(String(f.file)), f.stage])).toEqual([
      ['corrupt.v7.dat', 'ingest'],
      ['truncated.v7.dat', 'ingest'],
    ]);
    expect(failures[0]!.message).toMatch(/corrupt\.v7\.dat: offset 0: not a trace/);
    expect(failures[1]!.message).toMatch(/truncated\.v7\.dat: offset 150000: truncated/);
    // trace ids are the sha256 of the bytes, computed here
    for (const f of failures) {
      expect(f.trace_id).toBe(execFileSync('sha256sum', [String(f.file)], { encoding: 'utf8' }).split(' ')[0]);
    }
    const labels = await readTable(engine, batchOut, 'labels');
    const vfs1000 = labels.filter((l) => l.name === 'config' && l.value === 'vfs1000');
    expect(vfs1000).toHaveLength(4);
    expect(labels.filter((l) => l.name === 'host')).toHaveLength(24);
    const manifest = JSON.parse(readFileSync(join(batchOut, 'dataset.json'), 'utf8'));
    expect(manifest).toMatchObject({ format: 'stallscope-fleet', schema_version: 1 });
  });

  it('has, for every trace, the findings and metrics of stallscope analyze --json', async () => {
    const traces = await readTable(engine, batchOut, 'traces');
    const findings = await readTable(engine, batchOut, 'findings');
    const metrics = await readTable(engine, batchOut, 'metrics');
    const detectors = await readTable(engine, batchOut, 'detectors');
    let compared = 0;
    for (const t of traces) {
      const r = cli(['--data-dir', dataDir, 'analyze', String(t.file), '--json', '--no-saved']);
      expect(r.status, r.stderr).toBe(0);
      const a = JSON.parse(r.stdout);
      analyses.set(String(t.trace_id), a);
      expect([t.trace_id, t.name, t.format, t.cpus, Number(t.events)]).toEqual([
        a.trace.id,
        a.trace.name,
        a.trace.format,
        a.trace.cpus,
        a.trace.events_total,
      ]);
      expect(Number(t.span_ns)).toBe(a.trace.last_ts_ns - a.trace.first_ts_ns);
      const mine = findings.filter((f) => f.trace_id === t.trace_id);
      expect(mine.length, String(t.file)).toBe(a.findings.length);
      mine.forEach((f, i) => {
        const e = a.findings[i];
        expect([
          Number(f.finding_id),
          Number(f.rank),
          f.parent_id === null ? null : Number(f.parent_id),
          f.detector,
          f.kind,
          f.severity,
          Number(f.ts_ns),
          Number(f.dur_ns),
          Number(f.impact_ns),
          f.cpu === null ? null : Number(f.cpu),
          f.tid === null ? null : Number(f.tid),
          f.comm,
          f.title,
        ]).toEqual([
          e.id,
          e.rank,
          e.parent_id,
          e.detector,
          e.kind,
          e.severity,
          e.ts_ns,
          e.dur_ns,
          e.impact_ns,
          e.cpu,
          e.tid,
          e.comm,
          e.title,
        ]);
        expect(JSON.parse(String(f.values))).toEqual(e.values);
        expect(JSON.parse(String(f.event_ids))).toEqual(e.event_ids);
      });
      const mm = metrics
        .filter((m) => m.trace_id === t.trace_id)
        .map((m) => [m.detector, m.metric, m.scope, m.key, m.value, m.unit, m.better]);
      const em = a.metrics.map((m: Record<string, unknown>) => [
        m.detector,
        m.metric,
        m.scope,
        m.key,
        m.value,
        m.unit,
        m.better,
      ]);
      const order = (x: unknown[]) => JSON.stringify(x);
      expect(mm.map(order).sort()).toEqual(em.map(order).sort());
      const dd = detectors
        .filter((d) => d.trace_id === t.trace_id)
        .map((d) => [d.detector, d.status, Number(d.critical), Number(d.warn), Number(d.info)]);
      expect(dd.sort()).toEqual(
        a.detectors
          .map((d: { id: string; status: string; counts: Record<string, number> }) => [
            d.id,
            d.status,
            d.counts.critical,
            d.counts.warn,
            d.counts.info,
          ])
          .sort(),
      );
      compared += mine.length;
    }
    expect(compared).toBeGreaterThan(100);
  }, 600_000);

  it('analyses nothing it finished on a rerun, retries the failures, and writes the same dataset', async () => {
    const schema = await loadSchema();
    const before = Object.fromEntries(
      await Promise.all(Object.keys(schema.tables).map(async (t) => [t, await readTable(engine, batchOut, t)])),
    );
    const r = cli(['--data-dir', dataDir, 'batch', corpus, '--out', batchOut, '--labels', labelsCsv, '--jobs', '2']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('batch: 26 inputs, 24 already analysed, 2 to analyse');
    expect(r.stderr.match(/^\[\d+\/\d+\] /gm)).toHaveLength(2);
    for (const t of Object.keys(schema.tables)) expect(await readTable(engine, batchOut, t), t).toEqual(before[t]);
  }, 300_000);
});

describe('stallscope fleet on Spark local[2]', () => {
  it('writes the same dataset as batch, row for row', async () => {
    const r = cli(['fleet', corpus, '--out', sparkOut, '--labels', labelsCsv, '--master', 'local[2]']);
    expect(r.status, r.stderr.slice(-3000)).toBe(0);
    expect(r.stderr).toContain('fleet: 0 already analysed, 26 to analyse');
    expect(JSON.parse(readFileSync(join(sparkOut, 'dataset.json'), 'utf8'))).toMatchObject({
      format: 'stallscope-fleet',
      schema_version: 1,
      writer: 'spark',
    });
    const schema = await loadSchema();
    for (const [table, cols] of Object.entries(schema.tables)) {
      const types = async (dir: string) =>
        engine.query(
          `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${join(dir, table, '*.parquet')}'))`,
        );
      expect(await types(sparkOut), table).toEqual(await types(batchOut));
      expect((await types(batchOut)).map((c) => c.column_name)).toEqual(cols.map(([c]) => c));
      const a = await readTable(engine, batchOut, table);
      const b = await readTable(engine, sparkOut, table);
      expect(b.length, table).toBe(a.length);
      expect(b, table).toEqual(a);
    }
  }, 600_000);

  it("resumes: a rerun analyses only the two failures (finished traces' done files untouched) and writes the same dataset", async () => {
    const doneDir = join(sparkOut, '.work', 'done');
    const done = readdirSync(doneDir)
      .filter((f) => f.endsWith('.ndjson'))
      .sort();
    expect(done).toHaveLength(24); // one per analysed trace; the two bad files leave none
    const mtimes = done.map((f) => statSync(join(doneDir, f)).mtimeMs);
    const schema = await loadSchema();
    const before: Record<string, unknown[]> = {};
    for (const t of Object.keys(schema.tables)) before[t] = await readTable(engine, sparkOut, t);
    const r = cli(['fleet', corpus, '--out', sparkOut, '--labels', labelsCsv, '--master', 'local[2]']);
    expect(r.status, r.stderr.slice(-3000)).toBe(0);
    expect(r.stderr).toContain('fleet: 24 already analysed, 2 to analyse');
    expect(done.map((f) => statSync(join(doneDir, f)).mtimeMs)).toEqual(mtimes);
    for (const t of Object.keys(schema.tables)) expect(await readTable(engine, sparkOut, t), t).toEqual(before[t]);
  }, 600_000);
});

describe('stallscope fleet on URIs (the pyarrow filesystems S3 and HDFS go through; file:// here)', () => {
  it('lists a directory URI as walk does, analyses local copies with the findings and metrics of batch, and a missing URI is a read failure', async () => {
    const dir = join(work, 'uri-corpus');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    mkdirSync(join(dir, '.hidden'));
    copyFileSync(join(FIXTURES, 'compare/vfs100.1.v7.dat'), join(dir, 'vfs100.1.v7.dat'));
    copyFileSync(join(FIXTURES, 'syscalls.v7.dat'), join(dir, 'sub', 'syscalls.v7.dat'));
    copyFileSync(join(FIXTURES, 'syscalls.v7.dat'), join(dir, '.hidden', 'syscalls.v7.dat')); // hidden: not an input
    copyFileSync(join(FIXTURES, 'README.md'), join(dir, 'README.md')); // a side file: not an input
    const out = join(work, 'spark-uri');
    const missing = `file://${join(work, 'no-such-trace.v7.dat')}`;
    const r = cli(['fleet', `file://${dir}`, missing, '--out', out, '--master', 'local[2]']);
    expect(r.status, r.stderr.slice(-3000)).toBe(0);
    expect(r.stderr).toContain('fleet: 3 inputs on local[2]');
    const sha = (f: string) => execFileSync('sha256sum', [f], { encoding: 'utf8' }).split(' ')[0]!;
    const expected = [
      { file: `file://${dir}/sub/syscalls.v7.dat`, trace_id: sha(join(FIXTURES, 'syscalls.v7.dat')) },
      { file: `file://${dir}/vfs100.1.v7.dat`, trace_id: sha(join(FIXTURES, 'compare/vfs100.1.v7.dat')) },
    ];
    const traces = await readTable(engine, out, 'traces');
    expect(traces.map((t) => ({ file: t.file, trace_id: t.trace_id }))).toEqual(expected);
    const ids = new Set(expected.map((e) => e.trace_id));
    for (const table of ['findings', 'metrics']) {
      const fromBatch = (await readTable(engine, batchOut, table)).filter((row) => ids.has(String(row.trace_id)));
      expect(fromBatch.length, table).toBeGreaterThan(0);
      expect(await readTable(engine, out, table), table).toEqual(fromBatch);
    }
    const failures = await readTable(engine, out, 'failures');
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ file: missing, stage: 'read' });
    expect(String(failures[0]!.message)).toMatch(/No such file or directory/);
  }, 600_000);
});

describe('the fleet views in Spark SQL and DuckDB', () => {
  it('give the same per-label percentiles and top detectors on the two datasets', async () => {
    const { openFleet } = await import('../../server/fleet/report.ts');
    const { sparkPython } = await import('../../server/fleet/spark.ts');
    const queries = [
      `SELECT setting, metric, scope, key, traces, mean, p50, p90, min, max FROM label_metric WHERE label = 'config' AND metric LIKE 'shrinker.%' ORDER BY setting, metric, scope, key NULLS FIRST`,
      `SELECT detector, findings, traces, impact_ns, worst_ns, critical FROM top_detector ORDER BY impact_ns DESC, detector`,
      `SELECT shrinker, traces, blocked_ns, worst_call_ns, calls FROM top_shrinker ORDER BY shrinker`,
    ];
    const duck = await openFleet(batchOut);
    try {
      const r = spawnSync(
        sparkPython(),
        [fileURLToPath(new URL('../../fleet/spark/views.py', import.meta.url)), sparkOut, ...queries, '--json'],
        {
          encoding: 'utf8',
          env: { ...process.env, SPARK_LOCAL_IP: '127.0.0.1' },
          maxBuffer: 1 << 26,
        },
      );
      expect(r.status, r.stderr.slice(-2000)).toBe(0);
      const all = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { query: number; row: Record<string, unknown> });
      for (const [qi, q] of queries.entries()) {
        const spark = all.filter((x) => x.query === qi).map((x) => x.row);
        const mine = await duck.query(q);
        expect(spark.length, q).toBe(mine.length);
        expect(mine.length, q).toBeGreaterThan(0);
        mine.forEach((row, i) => {
          for (const [k, v] of Object.entries(row)) {
            const w = spark[i]![k];
            if (typeof v === 'number' && !Number.isInteger(v))
              expect(Math.abs(Number(w) - v), `${q} ${k}`).toBeLessThanOrEqual(1e-9 * Math.abs(v)); // sums in another order
            else expect(w === null ? null : String(w), `${q} ${k}`).toBe(v === null ? null : String(v));
          }
        });
      }
    } finally {
      duck.close();
    }
  }, 300_000);
});

describe('stallscope fleet-report on the compare pair', () => {
  /** Per trace from trace-cmd report: super_cache_scan's end retvals summed, and its calls (start to the task's next end of it) summed. */
  function shrinkerFacts(file: string): { freed: number; blocked: number } {
    const report = execFileSync('trace-cmd', ['report', '-t', '-i', join(FIXTURES, file)], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let freed = 0;
    let blocked = 0;
    const open = new Map<string, { t: number; sym: string }>();
    for (const line of report.split('\n')) {
      const m = /-(\d+)\s+\[\d+\]\s*(\d+): (mm_shrink_slab_start|mm_shrink_slab_end):\s+(\w+)\+/.exec(line);
      if (!m) continue;
      const [, pid, ts, ev, sym] = m;
      if (ev === 'mm_shrink_slab_start') {
        open.set(pid!, { t: Number(ts), sym: sym! });
        continue;
      }
      const o = open.get(pid!);
      if (o && o.sym === sym && sym === 'super_cache_scan') blocked += Number(ts) - o.t;
      open.delete(pid!);
      if (sym === 'super_cache_scan') freed += Number(/return val (-?\d+)/.exec(line)![1]);
    }
    return { freed, blocked };
  }
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = (xs: number[]) => Math.sqrt(xs.reduce((a, b) => a + (b - avg(xs)) ** 2, 0) / (xs.length - 1));
  function welch(a: number[], b: number[]) {
    const va = sd(a) ** 2 / a.length;
    const vb = sd(b) ** 2 / b.length;
    return {
      t: (avg(a) - avg(b)) / Math.sqrt(va + vb),
      df: (va + vb) ** 2 / (va ** 2 / (a.length - 1) + vb ** 2 / (b.length - 1)),
    };
  }

  it('shows super_cache_scan moving at vfs_cache_pressure 1000, with the values of trace-cmd report', () => {
    const r = cli([
      'fleet-report',
      batchOut,
      '--by',
      'config',
      '--baseline',
      'vfs100',
      '--json',
      '--metric',
      '^shrinker\\.',
    ]);
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.settings.map((s: { value: string; traces: string[] }) => [s.value, s.traces.length])).toEqual([
      ['vfs100', 4],
      ['vfs1000', 4],
    ]);
    const files = (cfg: string) => [1, 2, 3, 4].map((i) => `compare/${cfg}.${i}.v7.dat`);
    // side order follows the settings' trace files (sorted by path)
    const facts = (cfg: string) => files(cfg).map(shrinkerFacts);
    const A = facts('vfs100');
    const B = facts('vfs1000');
    const row = (metric: string) =>
      j.compare.rows.find(
        (x: { metric: string; key: string | null }) => x.metric === metric && x.key === 'super_cache_scan',
      );
    for (const [metric, pick] of [
      ['shrinker.freed', 'freed'],
      ['shrinker.blocked_ns', 'blocked'],
    ] as const) {
      const x = row(metric);
      const a = A.map((f) => f[pick]);
      const b = B.map((f) => f[pick]);
      expect(x.sides[0].values, metric).toEqual(a);
      expect(x.sides[1].values, metric).toEqual(b);
      // at 100 the superblock shrinker frees nothing: a change from zero has no percentage
      if (avg(a) === 0) expect(x.changes[1].change_pct, metric).toBeNull();
      else expect(x.changes[1].change_pct, metric).toBeCloseTo(((avg(b) - avg(a)) / Math.abs(avg(a))) * 100, 6);
      const w = welch(a, b);
      expect(x.changes[1].test.method).toBe('welch_t');
      expect(x.changes[1].test.statistic, metric).toBeCloseTo(w.t, 6);
      expect(x.changes[1].test.df, metric).toBeCloseTo(w.df, 6);
      expect(x.changes[1].significant, metric).toBe(true);
    }
    expect(row('shrinker.freed').changes[1].direction).toBe('better');
    expect(row('shrinker.blocked_ns').changes[1].direction).toBe('worse');
    // top detectors over the whole fleet, summed here from every trace's analyze --json
    expect(analyses.size).toBe(24);
    const byDetector = new Map<string, { findings: number; impact: number; critical: number }>();
    for (const a of analyses.values()) {
      for (const f of a.findings.filter((x) => x.parent_id === null)) {
        const d = byDetector.get(f.detector) ?? { findings: 0, impact: 0, critical: 0 };
        d.findings++;
        d.impact += f.impact_ns;
        if (f.severity === 'critical') d.critical++;
        byDetector.set(f.detector, d);
      }
    }
    const expected = [...byDetector].sort((x, y) => y[1].impact - x[1].impact || (x[0] < y[0] ? -1 : 1)).slice(0, 10);
    expect(
      j.top.detectors.map((d: Record<string, unknown>) => [
        d.detector,
        Number(d.findings),
        Number(d.impact_ns),
        Number(d.critical),
      ]),
    ).toEqual(expected.map(([id, d]) => [id, d.findings, d.impact, d.critical]));
  }, 300_000);

  it('--fail-on-regression exits 2 and names the time blocked in super_cache_scan; the text report lists it', () => {
    const r = cli(['fleet-report', batchOut, '--by', 'config', '--baseline', 'vfs100', '--fail-on-regression', '10']);
    expect(r.status).toBe(2);
    expect(r.stdout).toMatch(/vfs1000 against vfs100: \d+ significant change/);
    expect(r.stdout).toMatch(/shrinker\.blocked_ns \[super_cache_scan\].* worse !/);
    expect(r.stdout).not.toMatch(/shrinker\.freed \[super_cache_scan\].*!/);
    expect(r.stderr).toMatch(/regressed by more than 10%/);
  }, 120_000);

  it('a setting of one trace says there is no test, rather than "0 significant changes", and fails nothing', () => {
    const dir = join(work, 'one-each');
    mkdirSync(dir);
    for (const f of ['compare/vfs100.1.v7.dat', 'compare/vfs1000.1.v7.dat'])
      symlinkSync(join(FIXTURES, f), join(dir, base(f)));
    const labels = join(work, 'one-each.csv');
    writeFileSync(labels, 'file,config\nvfs100.1.v7.dat,vfs100\nvfs1000.1.v7.dat,vfs1000\n');
    const out = join(work, 'one-each-ds');
    const b = cli(['--data-dir', dataDir, 'batch', dir, '--out', out, '--labels', labels]);
    expect(b.status, b.stderr).toBe(0);
    const r = cli(['fleet-report', out, '--by', 'config', '--fail-on-regression', '10']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('vfs1000 against vfs100: no test (vfs100 has 1 trace, vfs1000 has 1 trace;');
    expect(r.stdout).not.toMatch(/significant change/);
  }, 120_000);
});
