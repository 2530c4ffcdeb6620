/**
 * Block requests per device, flushes included (queries/model/derive_block.sql),
 * against awk over `trace-cmd report` of three recordings with flushes:
 * many_systems (XFS on a loop device and dm: 6,821 flushes on 7,0),
 * dirty_throttle and memcg_writer (a few flushes each).
 *
 * awk counts, per device: block_rq_issue events; flush issues (zero length,
 * rwbs with F); flushes completed, pairing a flush completion with the
 * device's latest flush issue not yet completed (the kernel keeps one flush
 * in flight per flush queue, so they complete in issue order; the flush
 * completes at sector (sector_t)-1, not at the sector 0 it was issued at);
 * and data requests completed, a completion closing the latest open issue of
 * its (dev, sector).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { type Engine, openDuckDb } from '../../server/engine/engine.ts';
import { metricValue } from '../../server/findings/metrics.ts';
import { runDetectors } from '../../server/findings/run_detectors.ts';
import { ingestFile } from '../../server/ingest/ingest_file.ts';
import { PARSE, awk, traceCmdReport } from './report_awk.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'stallscope-golden-flush-'));
const engines: Engine[] = [];
afterAll(() => {
  for (const e of engines) e.close();
  rmSync(dir, { recursive: true, force: true });
});

type Facts = { dev: string; issues: number; flushes: number; flushesDone: number; dataDone: number };

function awkFacts(report: string): Facts[] {
  return awk(
    `${PARSE} { parse() }
     function at(k,   i) { for (i = 1; i <= NF; i++) if ($i == ev ":") return $(i + k); return "" }
     ev == "block_rq_issue" { d = at(1); r = at(2); sec = at(5); nr = at(7); dev[d] = 1; iss[d]++
       if (nr == 0 && r ~ /F/) { fl[d]++; openf[d] = 1 } else it[d " " sec] = 1 }
     ev == "block_rq_complete" { d = at(1); r = at(2); sec = at(4); nr = at(6)
       if (nr == 0 && r ~ /F/) { if (openf[d]) { fdone[d]++; openf[d] = 0 } }
       else if ((d " " sec) in it) { ddone[d]++; delete it[d " " sec] } }
     END { for (d in dev) print d, iss[d] + 0, fl[d] + 0, fdone[d] + 0, ddone[d] + 0 }`,
    report,
  ).map((l) => {
    const [dev, issues, flushes, flushesDone, dataDone] = l.split(' ');
    return {
      dev: dev!,
      issues: Number(issues),
      flushes: Number(flushes),
      flushesDone: Number(flushesDone),
      dataDone: Number(dataDone),
    };
  });
}

describe.each([
  ['corpus/many_systems.v7.dat', 3],
  ['dirty_throttle.v7.dat', 0],
  ['memcg_writer.v7.dat', 0],
])('%s: block requests per device, flushes paired', (name, dataSlack) => {
  it('issues, flushes, completed flushes and completed requests per device equal awk over the report', async () => {
    const dat = join(FIXTURES, name);
    const facts = awkFacts(traceCmdReport(dat, dir));
    expect(facts.some((f) => f.flushes > 0)).toBe(true);
    const { dbPath } = await ingestFile(dat, { dataDir: join(dir, 'data') });
    const engine = await openDuckDb(dbPath, { readOnly: true });
    engines.push(engine);
    const rows = await engine.query<{
      dev: string;
      issues: bigint;
      flushes: bigint;
      flushes_done: bigint;
      data_done: bigint;
    }>(
      `SELECT CAST(dev >> 20 AS VARCHAR) || ',' || CAST(dev & 1048575 AS VARCHAR) AS dev, count(*) AS issues,
         count(*) FILTER (WHERE op = 'F') AS flushes,
         count(*) FILTER (WHERE op = 'F' AND complete_ts IS NOT NULL) AS flushes_done,
         count(*) FILTER (WHERE op <> 'F' AND complete_ts IS NOT NULL) AS data_done
       FROM block_request GROUP BY dev ORDER BY dev`,
    );
    expect(rows.map((r) => r.dev).sort()).toEqual(facts.map((f) => f.dev).sort());
    const run = await runDetectors(engine, { detectors: ['io_latency'] });
    for (const f of facts) {
      const r = rows.find((x) => x.dev === f.dev)!;
      expect(Number(r.issues), `${f.dev} issues`).toBe(f.issues);
      expect(Number(r.flushes), `${f.dev} flushes`).toBe(f.flushes);
      expect(Number(r.flushes_done), `${f.dev} flushes completed`).toBe(f.flushesDone);
      // data requests: SQL measures a requeued request from its last issue, awk from its first open one
      expect(Math.abs(Number(r.data_done) - f.dataDone), `${f.dev} data requests completed`).toBeLessThanOrEqual(
        dataSlack,
      );
      // the detector's request count per device is every completed request, flushes included
      expect(metricValue(run.metrics, 'io.requests', f.dev), `${f.dev} io.requests`).toBe(
        Number(r.flushes_done) + Number(r.data_done),
      );
    }
  }, 600_000);
});
