/**
 * An upload's detectors beside derive (detectors_beside_derive.ts): the
 * detectors that read none of derive's tables run on the events, and the
 * run over the finished model that takes their outputs gives what a run of
 * every detector there gives. The model is the one `ingest` alone builds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuckDb, type Engine } from '../engine/engine.ts';
import { BUILTIN_DETECTOR_DIR, DETECTOR_MACROS_FILE } from '../findings/detector_registry.ts';
import { type RunResult, runDetectors } from '../findings/run_detectors.ts';
import { DERIVE_STEPS } from '../model/derive_model.ts';
import { ingestFile, type IngestResult } from './ingest_file.ts';

const MODEL_DIR = path.resolve(__dirname, '../../queries/model');
/** 24k events with reclaim, shrinker, writeback and block events: io_latency and six more detectors have work. */
const FIXTURE = path.resolve(__dirname, '../../fixtures/memcg_walk.v7.dat');

let dirs: string[] = [];
let beside: IngestResult;
let alone: IngestResult;

beforeAll(async () => {
  dirs = [0, 1].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-beside-derive-')));
  beside = await ingestFile(FIXTURE, { dataDir: dirs[0], detectorsBesideDerive: true });
  alone = await ingestFile(FIXTURE, { dataDir: dirs[1] });
}, 120_000);

afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('DERIVE_STEPS', () => {
  it("declare the tables each step's SQL fills", () => {
    for (const step of DERIVE_STEPS) {
      const sql = fs.readFileSync(path.join(MODEL_DIR, step.file), 'utf8').replace(/--[^\n]*/g, '');
      const filled = new Set(
        [...sql.matchAll(/\bINSERT\s+INTO\s+([a-z_][a-z0-9_]*)/gi)].map((m) => m[1]!.toLowerCase()),
      );
      expect([...filled].sort(), step.file).toEqual([...step.writes].sort());
    }
  });
});

describe('detectors beside derive', () => {
  const noComments = (sql: string) => sql.replace(/--[^\n]*/g, '');
  /**
   * Detectors whose files name a table derive fills (DERIVE_STEPS' writes), or a table macro of
   * lib/macros.sql whose body names one (ss_block_requests: block_request).
   */
  const readingDerived = () => {
    const derived = new Set(DERIVE_STEPS.flatMap((s) => s.writes));
    const names = (sql: string) =>
      new Set(
        noComments(sql)
          .toLowerCase()
          .match(/[a-z_][a-z0-9_]*/g) ?? [],
      );
    const macros = noComments(fs.readFileSync(DETECTOR_MACROS_FILE, 'utf8'));
    for (const m of macros.matchAll(/MACRO\s+([a-z_][a-z0-9_]*)\s*\(\s*\)\s*AS\s+TABLE([^;]*);/gi))
      if ([...names(m[2]!)].some((w) => derived.has(w))) derived.add(m[1]!.toLowerCase());
    return new Set(
      fs
        .readdirSync(BUILTIN_DETECTOR_DIR)
        .filter((f) => f.endsWith('.sql'))
        .filter((f) =>
          [...names(fs.readFileSync(path.join(BUILTIN_DETECTOR_DIR, f), 'utf8'))].some((w) => derived.has(w)),
        )
        .map((f) => f.split('.')[0]!),
    );
  };

  let engine: Engine;
  let whole: RunResult;
  let taking: RunResult;

  beforeAll(async () => {
    engine = await openDuckDb(beside.dbPath, { readOnly: true, threads: 1 });
    whole = await runDetectors(engine, { samples: true });
    taking = await runDetectors(engine, { samples: true, ahead: beside.detectorsAhead! });
  }, 120_000);

  afterAll(() => engine?.close());

  it("ran every traced built-in detector that reads none of derive's tables", () => {
    const traced = whole.detectors.filter((d) => d.builtin && d.status === 'ok').map((d) => d.id);
    const blocked = readingDerived();
    expect(blocked.has('io_latency')).toBe(true);
    expect(traced).toContain('io_latency');
    expect([...beside.detectorsAhead!.outputs.keys()].sort()).toEqual(traced.filter((id) => !blocked.has(id)).sort());
  });

  it('a run taking their outputs gives what a run of every detector gives', () => {
    expect(taking.findings.length).toBeGreaterThan(0);
    expect(taking.findings).toEqual(whole.findings);
    expect(taking.summaries).toEqual(whole.summaries);
    expect(taking.metrics).toEqual(whole.metrics);
    expect(taking.detectors).toEqual(whole.detectors);
    expect(taking.overview).toEqual(whole.overview);
    expect(taking.samples!.size).toBeGreaterThan(0);
    expect(taking.samples).toEqual(whole.samples);
    expect(Object.keys(taking.timings)).toEqual(Object.keys(whole.timings));
  });

  it('is not taken by a run with other parameters', async () => {
    const param = { 'kswapd_escalation.warn_priority': '9' };
    const own = await runDetectors(engine, { samples: true, params: param });
    const given = await runDetectors(engine, { samples: true, params: param, ahead: beside.detectorsAhead! });
    expect(given.findings).toEqual(own.findings);
    expect(given.metrics).toEqual(own.metrics);
  });

  it('leave the model as an ingest alone builds it: trace_info rows in the same order', async () => {
    const rows = async (r: IngestResult) => {
      const e = await openDuckDb(r.dbPath, { readOnly: true });
      try {
        return (await e.query<{ key: string; value: string }>('SELECT key, value FROM trace_info ORDER BY rowid')).map(
          (x) => (x.key === 'ingest_finished_at' ? { key: x.key, value: '' } : x),
        );
      } finally {
        e.close();
      }
    };
    const [a, b] = [await rows(beside), await rows(alone)];
    expect(a.length).toBeGreaterThan(20);
    expect(a.at(-1)).toEqual({ key: 'complete', value: 'true' });
    expect(a).toEqual(b);
    expect(alone.detectorsAhead).toBeNull();
  });
});
