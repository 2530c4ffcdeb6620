/**
 * A Perfetto recording whose config lists its ftrace events one by one
 * (fixtures/perfetto_memcg_oom.pftrace.gz, config in
 * fixtures/recording/perfetto_memcg_oom.cfg.pbtxt): an event the config
 * enabled that never fired (mm_vmscan_write_folio: no swap) is traced, with
 * nothing found, not "not traced: enable ...". Expected values come from the
 * config file and from trace_processor_shell, never from stallscope.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { type Engine, openDuckDb } from '../../engine/engine.ts';
import { runDetectors } from '../../findings/run_detectors.ts';
import { ingestFile } from '../../ingest/ingest_file.ts';
import { queryTraceProcessor } from '../../../tests/support/decode/perfetto/test_trace_processor.ts';

const FIXTURES = join(import.meta.dirname, '../../../fixtures');
const TRACE = join(FIXTURES, 'perfetto_memcg_oom.pftrace.gz');
const CONFIG = join(FIXTURES, 'recording/perfetto_memcg_oom.cfg.pbtxt');
const dataDir = mkdtempSync(join(tmpdir(), 'stallscope-perfetto-cfg-'));
const engines: Engine[] = [];
afterAll(() => {
  for (const e of engines) e.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The config's ftrace_events as 'group:name', read from the config file itself. */
function configEvents(): string[] {
  const names = [...readFileSync(CONFIG, 'utf8').matchAll(/^\s*ftrace_events:\s*"([^"]+)"/gm)].map((m) =>
    m[1]!.replace('/', ':'),
  );
  return [...new Set(names)].sort();
}

describe('a Perfetto config that lists its events', () => {
  it('records the enabled events, and a detector whose event never fired is traced', async () => {
    const plain = join(dataDir, 'perfetto_memcg_oom.pftrace');
    writeFileSync(plain, gunzipSync(readFileSync(TRACE)));
    const [counts] = queryTraceProcessor(plain, [
      'select name, count(*) as n from ftrace_event group by name order by name',
    ]);
    const fired = new Map(counts!.map((r) => [String(r.name), Number(r.n)]));
    // The recording: memcg reclaim happened, reclaim wrote nothing (the event was enabled, none fired).
    expect(fired.get('mm_vmscan_memcg_reclaim_begin')).toBeGreaterThan(0);
    expect(fired.has('mm_vmscan_write_folio')).toBe(false);
    expect(configEvents()).toContain('vmscan:mm_vmscan_write_folio');

    const { dbPath } = await ingestFile(TRACE, { dataDir });
    const engine = await openDuckDb(dbPath, { readOnly: true });
    engines.push(engine);
    const [row] = await engine.query<{ value: string }>(`SELECT value FROM trace_info WHERE key = 'meta.events'`);
    expect(row?.value.split(',')).toEqual(configEvents());

    const { detectors } = await runDetectors(engine, {});
    const writeback = detectors.find((d) => d.id === 'reclaim_writeback');
    expect(writeback?.status).toBe('ok');
    expect(writeback?.counts).toEqual({ critical: 0, warn: 0, info: 0 });
    // Events neither enabled nor seen stay "not traced".
    expect(detectors.find((d) => d.id === 'io_latency')?.status).toBe('not_traced');
  });
});

describe('a Perfetto config that enables whole groups (vmscan/*, workqueue/*) beside single events', () => {
  // fixtures/perfetto_reclaim.pftrace, config fixtures/recording/perfetto_reclaim.cfg.pbtxt
  const RECLAIM = join(FIXTURES, 'perfetto_reclaim.pftrace');
  const RECLAIM_CONFIG = join(FIXTURES, 'recording/perfetto_reclaim.cfg.pbtxt');

  it("an event of an enabled group that never fired is traced; an event outside the config is 'not traced', for sure", async () => {
    const entries = [...readFileSync(RECLAIM_CONFIG, 'utf8').matchAll(/^\s*ftrace_events:\s*"([^"]+)"/gm)].map((m) =>
      m[1]!.replace('/', ':'),
    );
    expect(entries).toContain('vmscan:*');
    expect(entries).not.toContain('writeback:balance_dirty_pages');
    const [counts] = queryTraceProcessor(RECLAIM, [
      'select name, count(*) as n from ftrace_event group by name order by name',
    ]);
    const fired = new Set(counts!.map((r) => String(r.name)));
    // kswapd reclaimed; no task reclaimed directly or was throttled, no page written by reclaim
    expect(fired.has('mm_vmscan_lru_shrink_inactive')).toBe(true);
    for (const e of ['mm_vmscan_direct_reclaim_begin', 'mm_vmscan_throttled', 'mm_vmscan_write_folio'])
      expect(fired.has(e), e).toBe(false);

    const { dbPath } = await ingestFile(RECLAIM, { dataDir });
    const engine = await openDuckDb(dbPath, { readOnly: true });
    engines.push(engine);
    const [row] = await engine.query<{ value: string }>(`SELECT value FROM trace_info WHERE key = 'meta.events'`);
    expect(row?.value.split(',')).toEqual([...new Set(entries)].sort());

    const { detectors } = await runDetectors(engine, {});
    const status = (id: string) => detectors.find((d) => d.id === id);
    // vmscan/* enabled them: ran, found nothing (before: "not seen: enable ... if it was off")
    for (const id of ['direct_reclaim_stall', 'reclaim_throttled', 'reclaim_writeback']) {
      expect(status(id)?.status, id).toBe('ok');
      expect(status(id)?.counts, id).toEqual({ critical: 0, warn: 0, info: 0 });
    }
    // writeback was enabled event by event, without balance_dirty_pages: not traced, no "if it was off"
    expect(status('dirty_throttled')?.status).toBe('not_traced');
    expect(status('dirty_throttled')?.hint).toBe('enable writeback:balance_dirty_pages');
  });
});
