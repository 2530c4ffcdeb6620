/**
 * A detector run on two connections (detector_lanes.ts): which detectors
 * must share one, how the lanes take them, and that a real run gives what
 * one connection's run gives, failures included.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openDuckDb, openReleasable, toJson } from '../engine/engine.ts';
import { ingestFile } from '../ingest/ingest_file.ts';
import { engineOver } from '../query/user_detectors.ts';
import { DETECTOR_MACROS_FILE, loadDetectors } from './detector_registry.ts';
import { DETECTOR_LANE, detectorGroups, runOnLanes } from './detector_lanes.ts';
import { type RunResult, perRunMacroNames, runDetectors } from './run_detectors.ts';

describe('detectorGroups', () => {
  it('puts the built-in detectors whose files call one per-run macro in one group, each other alone, in order', async () => {
    const dets = (await loadDetectors()).filter((d) => d.builtin);
    const names = perRunMacroNames(fs.readFileSync(DETECTOR_MACROS_FILE, 'utf8'));
    const groups = detectorGroups(dets, names).map((g) => g.map((i) => dets[i]!.id));
    // From the files (grep 'NAME *(' queries/detectors/*.sql): ss_reclaim_windows is called by
    // direct_reclaim_stall, oom_kill, reclaim_throttled, reclaim_writeback and shrinker_blocking
    // (which alone calls ss_shrinker_pairs too), ss_reclaim_passes by kswapd_escalation only,
    // ss_migration_moves by migration_pingpong only.
    expect(groups).toEqual([
      ['direct_reclaim_stall', 'oom_kill', 'reclaim_throttled', 'reclaim_writeback', 'shrinker_blocking'],
      ['dirty_throttled'],
      ['io_latency'],
      ['kswapd_escalation'],
      ['migration_pingpong'],
    ]);
  });
});

describe('runOnLanes', () => {
  const tick = () => new Promise((r) => setTimeout(r, 5));

  it("runs groups on whichever lane is free, every detector's rest on its own lane once no group is left", async () => {
    const log: string[] = [];
    const findingsLane = new Map<number, string>();
    let busy = 0;
    let mostBusy = 0;
    let ended = 0;
    let endedAtAll = -1;
    const work = async (what: string, i: number, lane: string) => {
      busy++;
      mostBusy = Math.max(mostBusy, busy);
      log.push(`${what} ${i} ${lane}`);
      await tick();
      busy--;
    };
    await runOnLanes(
      ['A', 'B'],
      [[0, 3], [1], [2]],
      async (i, lane) => {
        findingsLane.set(i, lane);
        await work('findings', i, lane);
        ended++;
      },
      async (i, lane) => {
        expect(lane).toBe(findingsLane.get(i));
        await work('rest', i, lane);
      },
      () => (endedAtAll = ended),
    );
    expect(mostBusy).toBe(2);
    expect(findingsLane.size).toBe(4);
    // Group [0, 3] stays on one lane.
    expect(findingsLane.get(3)).toBe(findingsLane.get(0));
    // On each lane its findings before its rests; all findings reported once the last has ended.
    for (const lane of ['A', 'B']) {
      const mine = log.filter((l) => l.endsWith(` ${lane}`));
      const firstRest = mine.findIndex((l) => l.startsWith('rest'));
      expect(mine.slice(firstRest).some((l) => l.startsWith('findings'))).toBe(false);
    }
    expect(endedAtAll).toBe(4);
    expect(log.filter((l) => l.startsWith('rest')).length).toBe(4);
  });

  it('a lane still being made joins when ready; one that could not be made takes no group', async () => {
    const lanesOf = new Map<number, string>();
    let makeLate!: (l: string) => void;
    const late = new Promise<string>((r) => (makeLate = r));
    setTimeout(() => makeLate('late'), 15);
    await runOnLanes(
      ['now', late, Promise.reject(new Error('no connection')), Promise.resolve(null)],
      [[0], [1], [2], [3], [4], [5]],
      async (i, lane) => {
        lanesOf.set(i, lane);
        await tick();
      },
      async () => undefined,
      () => undefined,
    );
    expect(lanesOf.get(0)).toBe('now');
    expect(new Set(lanesOf.values())).toEqual(new Set(['now', 'late']));
    expect(lanesOf.size).toBe(6);
  });

  it('after a failure takes no more groups and throws the first failing detector in order', async () => {
    const ran: string[] = [];
    let all = false;
    const err = await runOnLanes(
      ['A', 'B'],
      [[0], [1], [2], [3], [4]],
      async (i) => {
        ran.push(`findings ${i}`);
        // 2 fails first (sooner than 1), then 1: the error is 1's.
        await new Promise((r) => setTimeout(r, i === 1 ? 30 : 5));
        if (i === 1 || i === 2) throw new Error(`detector ${i}`);
      },
      async (i) => {
        ran.push(`rest ${i}`);
      },
      () => (all = true),
    ).catch((e: unknown) => e);
    expect((err as Error).message).toBe('detector 1');
    expect(all).toBe(false);
    expect(ran.some((r) => r.startsWith('rest'))).toBe(false);
    expect(ran).not.toContain('findings 4');
  });
});

describe('a run on two connections', () => {
  // Reclaim by kswapd with direct reclaim, shrinkers and migrations: findings from detectors of several groups.
  const FIXTURE = path.resolve(__dirname, '../../fixtures/reclaim_kswapd.full.v7.dat');
  let dataDir: string;
  let dbPath: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-lanes-'));
    ({ dbPath } = await ingestFile(FIXTURE, { dataDir }));
  }, 120_000);

  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  const plain = (r: RunResult) =>
    toJson({
      findings: r.findings,
      summaries: r.summaries,
      metrics: r.metrics,
      detectors: r.detectors,
      overview: r.overview,
      samples: [...r.samples!].map(([id, s]) => [
        id,
        s.detector,
        s.unit,
        s.scope,
        [...s.byKey].map(([k, v]) => [k, [...v]]),
      ]),
    });

  it("gives one connection's findings, summaries, metrics, samples and overview", async () => {
    const oneConnection = await openDuckDb(dbPath, { readOnly: true });
    // As the library opens a trace (library.ts openEngine): its lanes find their connection through it.
    const releasable = await openReleasable(dbPath, { readOnly: true, threads: 1 });
    const direct = await openDuckDb(dbPath, { readOnly: true, threads: 1 });
    try {
      // A borrowed connection has no second one (beside() is itself): one lane.
      const one = await runDetectors(engineOver(oneConnection.connection), { samples: true });
      const groupsWithFindings = new Set(
        one.findings.map((f) =>
          ['direct_reclaim_stall', 'oom_kill', 'reclaim_throttled', 'reclaim_writeback', 'shrinker_blocking'].includes(
            f.detector,
          )
            ? 'reclaim'
            : f.detector,
        ),
      );
      expect(groupsWithFindings.size).toBeGreaterThanOrEqual(2);
      expect(plain(await runDetectors(releasable, { samples: true }))).toEqual(plain(one));
      expect(plain(await runDetectors(direct, { samples: true }))).toEqual(plain(one));
      expect((direct as Engine & { besideNow(l: number): Engine | null }).besideNow(DETECTOR_LANE)).not.toBeNull();
    } finally {
      oneConnection.close();
      releasable.close();
      direct.close();
    }
  }, 120_000);

  it('opens no second connection when only one group has a statement to run', async () => {
    const engine = await openDuckDb(dbPath, { readOnly: true, threads: 1 });
    try {
      await runDetectors(engine, { detectors: ['migration_pingpong', 'kswapd_escalation'] });
      expect((engine as Engine & { besideNow(l: number): Engine | null }).besideNow(DETECTOR_LANE)).not.toBeNull();
      const alone = await openDuckDb(dbPath, { readOnly: true, threads: 1 });
      try {
        await runDetectors(alone, { detectors: ['kswapd_escalation'] });
        expect((alone as Engine & { besideNow(l: number): Engine | null }).besideNow(DETECTOR_LANE)).toBeNull();
      } finally {
        alone.close();
      }
    } finally {
      engine.close();
    }
  }, 120_000);

  it('a run that failed on one lane leaves no per-run table on either connection, and the next run works', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-lanes-broken-'));
    const engine = await openDuckDb(dbPath, { readOnly: true, threads: 1 });
    try {
      for (const id of ['broken_b', 'broken_a'])
        fs.writeFileSync(
          path.join(dir, `${id}.sql`),
          `-- @title ${id}\n-- @description fails\nSELECT 'warn' AS severity, ts, 0 AS dur, NULL AS cpu, NULL AS utid, '' AS title, NULL AS "values", [] AS event_ids FROM no_such_table_${id};\n`,
        );
      const err = await runDetectors(engine, {
        detectors: ['shrinker_blocking', 'broken_b', 'kswapd_escalation', 'broken_a'],
        extraDirs: [dir],
      }).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/^detector broken_b \(/);
      const tempTables = async (e: Engine) =>
        (
          await e.query<{ n: bigint }>(
            `SELECT count(*) AS n FROM duckdb_tables() WHERE temporary AND table_name LIKE '_ss_run_%'`,
          )
        )[0]!.n;
      expect(await tempTables(engine)).toBe(0n);
      expect(await tempTables(await engine.beside(DETECTOR_LANE))).toBe(0n);
      const again = await runDetectors(engine, { detectors: ['shrinker_blocking', 'kswapd_escalation'] });
      expect(again.detectors.map((d) => d.status)).toEqual(['ok', 'ok']);
    } finally {
      engine.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
