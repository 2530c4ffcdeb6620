/**
 * Perfetto's own messages for softirq_entry / _exit / _raise,
 * irq_handler_entry / _exit and oom_score_adj_update (FtraceEvent fields
 * 24-26, 36-37, 326) in a real tracebox recording of a memcg OOM kill
 * (fixtures/perfetto_memcg_oom.pftrace.gz): they import with the counts
 * trace_processor_shell reads from the same file. mark_victim (field 334)
 * is not declared here: it stays reported as skipped.
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

describe('softirq and oom_score_adj_update from a tracebox recording', () => {
  it('import with trace_processor counts; only mark_victim is reported as not decoded', async () => {
    const file = join(dir, 'perfetto_memcg_oom.pftrace');
    writeFileSync(
      file,
      gunzipSync(readFileSync(join(import.meta.dirname, '../../../fixtures/perfetto_memcg_oom.pftrace.gz'))),
    );
    const [tp] = queryTraceProcessor(file, [
      'select name, count(*) as n from ftrace_event group by name order by name',
    ]);
    const { dbPath } = await ingestFile(file, { dataDir: join(dir, 'data') });
    const engine = await openDuckDb(dbPath, { readOnly: true });
    try {
      const ours = await engine.query<{ name: string; n: bigint }>(
        'SELECT name, count(*) AS n FROM ftrace_event GROUP BY name ORDER BY name',
      );
      const expected = Object.fromEntries(
        tp!.filter((r) => r.name !== 'mark_victim').map((r) => [r.name, Number(r.n)]),
      );
      expect(expected.softirq_entry).toBeGreaterThan(1000);
      expect(expected.oom_score_adj_update).toBeGreaterThan(0);
      expect(Object.fromEntries(ours.map((r) => [r.name, Number(r.n)]))).toEqual(expected);
      const undeclared = (await engine.query<{ reason: string }>('SELECT reason FROM ingest_problem'))
        .map((p) => p.reason)
        .filter((r) => /FtraceEvent field/.test(r));
      expect(undeclared).toEqual([expect.stringMatching(/^1 ftrace events of FtraceEvent field 334:/)]);
    } finally {
      engine.close();
    }
  }, 120_000);
});
