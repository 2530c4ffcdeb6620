/**
 * Perfetto's own messages for softirq_entry / _exit / _raise,
 * irq_handler_entry / _exit, oom_score_adj_update and mark_victim
 * (FtraceEvent fields 24-26, 36-37, 326, 334) in a real tracebox recording
 * of a memcg OOM kill (fixtures/perfetto_memcg_oom.pftrace.gz): they import
 * with the counts trace_processor_shell reads from the same file, and the
 * victim's pid with the value it reads.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { openDuckDb } from '../../engine/engine.ts';
import { ingestFile } from '../../ingest/ingest_file.ts';
import { queryTraceProcessor } from '../../../tests/support/decode/perfetto/test_trace_processor.ts';

const dir = mkdtempSync(join(tmpdir(), 'stallscope-perfetto-irq-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('softirq, oom_score_adj_update and mark_victim from a tracebox recording', () => {
  it('import with trace_processor counts; no FtraceEvent field is reported as not decoded', async () => {
    const file = join(dir, 'perfetto_memcg_oom.pftrace');
    writeFileSync(
      file,
      gunzipSync(readFileSync(join(import.meta.dirname, '../../../fixtures/perfetto_memcg_oom.pftrace.gz'))),
    );
    const [tp, tpVictims] = queryTraceProcessor(file, [
      'select name, count(*) as n from ftrace_event group by name order by name',
      "select e.ts, a.int_value as pid from ftrace_event e join args a using (arg_set_id) where e.name = 'mark_victim' and a.key = 'pid' order by e.ts",
    ]);
    const { dbPath } = await ingestFile(file, { dataDir: join(dir, 'data') });
    const engine = await openDuckDb(dbPath, { readOnly: true });
    try {
      const ours = await engine.query<{ name: string; n: bigint }>(
        'SELECT name, count(*) AS n FROM ftrace_event GROUP BY name ORDER BY name',
      );
      const expected = Object.fromEntries(tp!.map((r) => [r.name, Number(r.n)]));
      expect(expected.softirq_entry).toBeGreaterThan(1000);
      expect(expected.oom_score_adj_update).toBeGreaterThan(0);
      expect(expected.mark_victim).toBe(1);
      expect(Object.fromEntries(ours.map((r) => [r.name, Number(r.n)]))).toEqual(expected);
      const undeclared = (await engine.query<{ reason: string }>('SELECT reason FROM ingest_problem'))
        .map((p) => p.reason)
        .filter((r) => /FtraceEvent field/.test(r));
      expect(undeclared).toEqual([]);
      const victims = await engine.query<{ ts: bigint; pid: bigint }>(
        `SELECT e.ts, a.int_value AS pid FROM ftrace_event e JOIN args a USING (arg_set_id)
         WHERE e.name = 'mark_victim' AND a.key = 'pid' ORDER BY e.ts`,
      );
      expect(victims.map((v) => [Number(v.ts), Number(v.pid)])).toEqual(
        tpVictims!.map((v) => [Number(v.ts), Number(v.pid)]),
      );
    } finally {
      engine.close();
    }
  }, 120_000);
});
