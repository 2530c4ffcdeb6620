/**
 * oom_kill over two real recordings of memcg OOM kills, against facts read
 * from the input independently of the decoders and the detector SQL:
 *
 *  - memcg_oom.v7.dat (trace-cmd, 6.18: mark_victim with every field): awk
 *    over `trace-cmd report -t` (ns timestamps) gives each mark_victim's
 *    fields, the memcg reclaim passes (begin -> next end) of the victim and
 *    of the task that emitted the event before the kill, and the victim's
 *    sched_process_exit;
 *  - perfetto_memcg_oom.pftrace.gz (tracebox: MarkVictimFtraceEvent has the
 *    pid alone): trace_processor_shell gives the kill, its thread, and the
 *    victim's memcg reclaim begin/end events, paired here the same way.
 *
 * And the kills rank first in a full run, above every critical stall of
 * larger impact; the server lists the detector and serves its findings.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../server/api/create_server.ts';
import type { LibraryLike } from '../../server/api/library_contract.ts';
import { type Engine, openDuckDb } from '../../server/engine/engine.ts';
import { type RunResult, runDetectors } from '../../server/findings/run_detectors.ts';
import { ingestFile } from '../../server/ingest/ingest_file.ts';
import { TraceLibrary } from '../../server/ingest/library.ts';
import { queryTraceProcessor } from '../support/decode/perfetto/test_trace_processor.ts';
import { PARSE, awk } from './report_awk.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'stallscope-golden-oom-'));
const engines: Engine[] = [];
afterAll(() => {
  for (const e of engines) e.close();
  rmSync(dir, { recursive: true, force: true });
});

async function open(file: string): Promise<Engine> {
  const { dbPath } = await ingestFile(file, { dataDir: join(dir, 'data') });
  const engine = await openDuckDb(dbPath, { readOnly: true });
  engines.push(engine);
  return engine;
}

/** A finding's values with numbers as JS numbers (the runner keeps DuckDB's BIGINTs as bigint). */
function nums(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]));
}

/** One reclaim pass: begin and end ts (ns), pages reclaimed. */
interface Pass {
  begin: bigint;
  end: bigint;
  reclaimed: number;
}

/** What a kill's finding must say about the passes before it (they all come well under gap_ns apart: checked). */
function episode(passes: Pass[], kill: bigint) {
  const before = passes.filter((p) => p.begin < kill).sort((a, b) => (a.begin < b.begin ? -1 : 1));
  for (let i = 1; i < before.length; i++) expect(before[i]!.begin - before[i - 1]!.end).toBeLessThan(1_000_000_000n);
  expect(kill - before.at(-1)!.end).toBeLessThan(1_000_000_000n);
  expect(kill - before[0]!.begin).toBeLessThan(10_000_000_000n); // all inside window_ns
  return {
    passes: before.length,
    first: before[0]!.begin,
    reclaim_ns: Number(before.reduce((a, p) => a + ((p.end < kill ? p.end : kill) - p.begin), 0n)),
    zero: before.filter((p) => p.reclaimed === 0).length,
    reclaimed: before.reduce((a, p) => a + p.reclaimed, 0),
  };
}

describe('memcg_oom.v7.dat: two memcg OOM kills (trace-cmd, 6.18)', () => {
  let engine: Engine;
  let run: RunResult;
  let report: string;
  beforeAll(async () => {
    engine = await open(join(FIXTURES, 'memcg_oom.v7.dat'));
    run = await runDetectors(engine, {});
    report = join(dir, 'memcg_oom.report-t.txt');
    writeFileSync(
      report,
      execFileSync('trace-cmd', ['report', '-t', '-i', join(FIXTURES, 'memcg_oom.v7.dat')], { maxBuffer: 1 << 30 }),
    );
  }, 120_000);

  it('one critical finding per mark_victim, with the fields the kernel printed', () => {
    // `pid=11200 comm=memhog total-vm=166204kB anon-rss=97664kB file-rss:1188kB shmem-rss:0kB uid=0 pgtables=236kB oom_score_adj=1000`
    const victims = awk(
      `${PARSE} { parse() } ev == "mark_victim" {
         s = $0; sub(/.*mark_victim: +/, "", s); gsub(/kB/, "", s); gsub(/[=:]/, " ", s); split(s, f, " ")
         printf "%.0f %s %s %s %s %s %s %s %s %s %s\\n", t, pid, f[2], f[4], f[6], f[8], f[10], f[12], f[14], f[16], f[18] }`,
      report,
    ).map((l) => l.split(' '));
    expect(victims).toHaveLength(2);
    const found = run.findings.filter((f) => f.detector === 'oom_kill');
    expect(found).toHaveLength(victims.length);
    for (const [t, killer, pid, comm, totalVm, anon, file, shmem, uid, pgtables, adj] of victims) {
      const f = found.find((x) => Number(x.values.pid) === Number(pid))!;
      expect(f, `victim ${pid}`).toBeDefined();
      expect(f.severity).toBe('critical');
      expect(f.kind).toBe('memcg');
      expect(f.tid).toBe(Number(pid));
      expect(nums(f.values)).toMatchObject({
        victim: comm,
        total_vm_kb: Number(totalVm),
        anon_rss_kb: Number(anon),
        file_rss_kb: Number(file),
        shmem_rss_kb: Number(shmem),
        uid: Number(uid),
        pgtables_kb: Number(pgtables),
        oom_score_adj: Number(adj),
      });
      // the victim ran the OOM killer itself (the charge that failed was its own page fault)
      expect(killer).toBe(pid);
      expect(f.values.killer).toBeUndefined();
      expect(f.title).toContain(`memcg OOM killed ${comm}[${pid}] (anon-rss ${anon} kB`);
      expect(f.ts_ns + f.dur_ns).toBe(BigInt(t!));
    }
  });

  it("the memcg reclaim before each kill, its episode and the victim's exit equal awk over the report", async () => {
    const passes = new Map<string, Pass[]>();
    for (const [pid, b, e, n] of awk(
      `${PARSE} { parse() }
       ev == "mm_vmscan_memcg_reclaim_begin" { b[pid] = t }
       ev == "mm_vmscan_memcg_reclaim_end" && (pid in b) { printf "%s %.0f %.0f %s\\n", pid, b[pid], t, field("nr_reclaimed"); delete b[pid] }`,
      report,
    ).map((l) => l.split(' '))) {
      if (!passes.has(pid!)) passes.set(pid!, []);
      passes.get(pid!)!.push({ begin: BigInt(b!), end: BigInt(e!), reclaimed: Number(n) });
    }
    const kills = awk(`${PARSE} { parse() } ev == "mark_victim" { printf "%.0f %s\\n", t, field("pid") }`, report).map(
      (l) => l.split(' '),
    );
    const exits = new Map(
      awk(`${PARSE} { parse() } ev == "sched_process_exit" { printf "%s %.0f\\n", field("pid"), t }`, report).map(
        (l) => l.split(' ') as [string, string],
      ),
    );
    for (const [t, pid] of kills) {
      const kill = BigInt(t!);
      const want = episode(passes.get(pid!)!, kill);
      const f = run.findings.find((x) => x.detector === 'oom_kill' && Number(x.values.pid) === Number(pid))!;
      expect(nums(f.values)).toMatchObject({
        reclaim_passes: want.passes,
        reclaim_ns: want.reclaim_ns,
        reclaim_zero_passes: want.zero,
        nr_reclaimed: want.reclaimed,
        first_reclaim_to_kill_ns: Number(kill - want.first),
        window_passes: want.passes,
        kill_to_exit_ns: Number(BigInt(exits.get(pid!)!) - kill),
      });
      expect(f.ts_ns).toBe(want.first);
      expect(f.impact_ns).toBe(kill - want.first);
      // no reaper event: each victim exited within ms, before OOM_REAPER_DELAY
      expect(f.values.reaper).toBeUndefined();
      // event_ids: the mark_victim first, then reclaim begin/ends, and the exit last
      const ids = f.event_ids;
      const names = await engine.query<{ id: bigint; name: string; ts: bigint }>(
        `SELECT id, name, ts FROM ftrace_event WHERE id IN (${ids.join(',')})`,
      );
      const byId = new Map(names.map((r) => [BigInt(r.id), r]));
      expect(byId.get(ids[0]!)).toMatchObject({ name: 'mark_victim', ts: kill });
      expect(byId.get(ids.at(-1)!)?.name).toBe('sched_process_exit');
      const reclaim = ids.slice(1, -1).map((i) => byId.get(i)!);
      expect(reclaim).toHaveLength(Math.min(48, 2 * want.passes));
      for (const r of reclaim) expect(r.name).toMatch(/^mm_vmscan_memcg_reclaim_(begin|end)$/);
    }
  });

  it('kills rank first, above critical reclaim stalls of larger impact; summary and metrics count them', () => {
    const ranked = run.findings.map((f) => [f.rank, f.detector, f.severity]);
    expect(ranked.slice(0, 2)).toEqual([
      [1, 'oom_kill', 'critical'],
      [2, 'oom_kill', 'critical'],
    ]);
    const second = run.findings[1]!;
    // a stall outranked by impact alone would come before the second kill (1.7 ms of reclaim)
    expect(
      run.findings.some(
        (f) => f.detector !== 'oom_kill' && f.severity === 'critical' && f.impact_ns > second.impact_ns,
      ),
    ).toBe(true);
    expect(run.overview.lines[0]!.detector).toBe('oom_kill');
    expect(run.summaries.oom_kill).toEqual([
      expect.objectContaining({ victim: 'memhog', kills: 2n, pids: '11200, 11202', oom_score_adj: '500, 1000' }),
    ]);
    expect(run.metrics.filter((m) => m.detector === 'oom_kill' && m.metric === 'oom.kills')).toEqual([
      expect.objectContaining({ scope: 'task', key: 'memhog', value: 2 }),
      expect.objectContaining({ scope: 'trace', key: null, value: 2 }),
    ]);
  });
});

describe('perfetto_memcg_oom.pftrace.gz: the memcg OOM kill of a tracebox recording (pid only)', () => {
  let run: RunResult;
  let file: string;
  beforeAll(async () => {
    file = join(dir, 'perfetto_memcg_oom.pftrace');
    writeFileSync(file, gunzipSync(readFileSync(join(FIXTURES, 'perfetto_memcg_oom.pftrace.gz'))));
    run = await runDetectors(await open(file), {});
  }, 120_000);

  it("gives trace_processor's victim, and the victim's memcg reclaim before the kill", () => {
    const [kills, reclaim] = queryTraceProcessor(file, [
      `select e.ts, t.tid, t.name, a.int_value as pid from ftrace_event e join thread t using (utid)
       join args a using (arg_set_id) where e.name = 'mark_victim' and a.key = 'pid' order by e.ts`,
      `select e.ts, e.name, t.tid, (select int_value from args a where a.arg_set_id = e.arg_set_id and a.key = 'nr_reclaimed') as nr
       from ftrace_event e join thread t using (utid)
       where e.name in ('mm_vmscan_memcg_reclaim_begin', 'mm_vmscan_memcg_reclaim_end') order by e.ts, e.id`,
    ]);
    expect(kills).toHaveLength(1);
    const kill = kills![0]!;
    // the victim's own charge ran the OOM killer: the event is on the victim's thread
    expect(Number(kill.tid)).toBe(Number(kill.pid));
    const passes: Pass[] = [];
    let begin: bigint | null = null;
    for (const r of reclaim!) {
      if (Number(r.tid) !== Number(kill.pid)) continue;
      if (r.name === 'mm_vmscan_memcg_reclaim_begin') begin = BigInt(r.ts as string | number);
      else if (begin !== null) {
        passes.push({ begin, end: BigInt(r.ts as string | number), reclaimed: Number(r.nr) });
        begin = null;
      }
    }
    const killTs = BigInt(kill.ts as string | number);
    const want = episode(passes, killTs);
    const found = run.findings.filter((f) => f.detector === 'oom_kill');
    expect(found).toHaveLength(1);
    const f = found[0]!;
    expect(f).toMatchObject({ severity: 'critical', kind: 'memcg', rank: 1, tid: Number(kill.pid) });
    expect(nums(f.values)).toMatchObject({
      pid: Number(kill.pid),
      victim: kill.name,
      reclaim_passes: want.passes,
      reclaim_ns: want.reclaim_ns,
      reclaim_zero_passes: want.zero,
      nr_reclaimed: want.reclaimed,
      first_reclaim_to_kill_ns: Number(killTs - want.first),
    });
    // Perfetto's message has no sizes; the recording did not enable sched_process_exit
    expect(f.values.anon_rss_kb).toBeUndefined();
    expect(f.values.kill_to_exit_ns).toBeUndefined();
    expect(f.title).toBe(
      `memcg OOM killed ${kill.name}[${kill.pid}] after ${(Number(killTs - want.first) / 1e6).toFixed(1)} ms of memcg reclaim ` +
        `(${want.passes} passes, ${(want.reclaim_ns / 1e6).toFixed(1)} ms in reclaim, ${want.zero} reclaimed nothing)`,
    );
  });
});

describe('the app: the detector is listed and its findings served', () => {
  it('GET /api/saved-detectors lists oom_kill built in; the findings put the kills first', async () => {
    const dataDir = join(dir, 'api');
    const library = await TraceLibrary.open(dataDir);
    const { app } = await buildApi({ library: library as unknown as LibraryLike, appDir: join(dataDir, 'no-app') });
    try {
      await app.ready();
      const id = (await library.ingest(join(FIXTURES, 'memcg_oom.v7.dat'))).id;
      const list = (await app.inject({ url: '/api/saved-detectors' })).json() as {
        detectors: Array<{ id: string; title: string; builtin: boolean; requires: string[] }>;
      };
      expect(list.detectors.find((d) => d.id === 'oom_kill')).toMatchObject({
        title: 'OOM kills',
        builtin: true,
        requires: ['oom:mark_victim'],
      });
      const r = await app.inject({ url: `/api/traces/${id}/findings` });
      expect(r.statusCode, r.body).toBe(200);
      const body = r.json() as {
        findings: Array<{ detector: string; rank: number }>;
        detectors: Array<{ id: string; status: string }>;
      };
      expect(body.detectors.find((d) => d.id === 'oom_kill')?.status).toBe('ok');
      expect(body.findings.filter((f) => f.rank <= 2).map((f) => f.detector)).toEqual(['oom_kill', 'oom_kill']);
    } finally {
      await app.close();
      await library.close();
    }
  }, 120_000);
});
